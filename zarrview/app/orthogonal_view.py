"""Orthogonal views beside the image: the XZ section below it and the YZ section to its right,
through a point of the plane, as in Fiji's and napari's orthogonal views.

The panels live in the image pane's own grid (between the image and its histogram), so that
the XZ panel shares the image's x axis and the YZ panel its y axis (pyqtgraph's ``setXLink``
and ``setYLink``: panning or zooming one moves the other). A cross marks the point on all
three: on the image at (row, column), on the sections at the row or column and at the Z slider.

The point moves on a click, not on hover: hovering would change the sections while the mouse
travels across the image to reach them. A click on the image moves the point; a click on the
XZ panel moves the column and the Z slider, one on the YZ panel the row and the Z slider. The
sections are read by their view model (``viewing.image.orthogonal.SectionsModel``) on a driver
of their own (newest only, the previous read cancelled); nothing is read on the GUI thread. They are drawn
through the image's levels and lookup table (NaN in the missing colour), which they follow when
the histogram or colour map changes, or in the channels' colours in composite mode; in physical
proportions where the image has pixel sizes (OME-Zarr); and the YZ panel runs the way the image's
rows do (north up where the image is), its plot area edge to edge with the image's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, QRect, QRectF, Qt, QTimer
from PySide6.QtWidgets import QComboBox, QGraphicsItem, QGraphicsView, QLabel, QVBoxLayout, QWidget

from ..scheduling import Driver, WorkerPool
from ..viewing.image import orthogonal as ortho
from ..viewing.image.axes import dim_names
from ..viewing.image.section_readout import XZ, YZ, section_readout
from ..viewing.image.state import ViewState
from ..viewing.ome.view import symbol
from .bridge import post

if TYPE_CHECKING:
    from .data_view import DataView

#: the share of the pane's height (width) the XZ (YZ) panel takes at least and at most
PANEL_SHARE = (0.25, 0.5)
CROSS_PEN = pg.mkPen((255, 220, 0, 200), width=1, style=Qt.PenStyle.DashLine)


class SectionPanel(pg.PlotWidget):
    """One section: its image, the cross over it, and its clicks reported in panel coordinates."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.getPlotItem()
        self.plot.invertY(True)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.item = pg.ImageItem()
        self.plot.addItem(self.item)
        self.across = pg.InfiniteLine(angle=0, pen=CROSS_PEN, movable=False)
        self.down = pg.InfiniteLine(angle=90, pen=CROSS_PEN, movable=False)
        for line in (self.across, self.down):
            line.setZValue(50)
            self.plot.addItem(line)
        self.clicked = lambda x, y: None
        self.hovered: Callable[[float, float], None] = lambda x, y: None
        self.scene().sigMouseClicked.connect(self._clicked)
        self.scene().sigMouseMoved.connect(self._moved_over)

    def _clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.double() or self.item.image is None:
            return
        p = self.plot.getViewBox().mapSceneToView(event.scenePos())
        self.clicked(p.x(), p.y())

    def _moved_over(self, pos: Any) -> None:
        if self.item.image is not None:
            p = self.plot.getViewBox().mapSceneToView(pos)
            self.hovered(p.x(), p.y())


class OrthogonalViews(QObject):
    """``show(on)`` from the View menu. While on and the array shown has a dimension on a
    slider, the panels follow the data view: its clicks, its sliders and every plane it shows."""

    def __init__(self, pool: WorkerPool, data: DataView) -> None:
        super().__init__(data)
        self.data = data
        self.pane = data.image
        self.on = False
        self.model = ortho.SectionsModel()
        self.driver: Driver[ortho.SectionAsk, ortho.SectionRequest, ortho.Sections] = Driver(
            self.model, pool, self._answered, post=lambda fn: post(fn, self), name="orthogonal sections")
        self.xz = SectionPanel()
        self.yz = SectionPanel()
        self.z_combo = QComboBox()
        self.z_combo.setToolTip("The dimension the sections run along")
        self.z_combo.currentIndexChanged.connect(self._z_picked)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.corner = QWidget()
        lay = QVBoxLayout(self.corner)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(QLabel("Sections along"))
        lay.addWidget(self.z_combo)
        lay.addWidget(self.note, 1)
        self.cross = (pg.InfiniteLine(angle=0, pen=CROSS_PEN, movable=False),
                      pg.InfiniteLine(angle=90, pen=CROSS_PEN, movable=False))
        #: (row, column) of the point in level-0 indices of the plane, and the array it is of
        self.point: tuple[int, int] | None = None
        self.z_dim: int | None = None
        self.shown_for: tuple[Any, ...] | None = None  # (array, rows dim, columns dim) of the point
        self._arranged = False
        #: the physical size of a level-0 element along rows, columns and Z
        self.sizes = ortho.Proportions()
        self._laid_out: tuple[Any, ...] | None = None
        #: one alignment once the layout has settled, however many resizes it took
        self._align_soon = QTimer(self)
        self._align_soon.setSingleShot(True)
        self._align_soon.setInterval(0)
        self._align_soon.timeout.connect(self._align)
        for panel, linked in ((self.xz, "sigXRangeChanged"), (self.yz, "sigYRangeChanged")):
            vb = panel.plot.getViewBox()
            vb.disableAutoRange()
            getattr(vb, linked).connect(lambda *_, p=panel: self._fit_z(p))
            vb.sigResized.connect(lambda *_, p=panel: self._fit_z(p))
            vb.sigResized.connect(lambda *_: self._align_soon.start())
            vb.sigRangeChangedManually.connect(lambda *_: data.release_region())  # a person moved the image too
        self.pane.view.getViewBox().sigResized.connect(lambda *_: self._align_soon.start())
        self.xz.clicked = lambda x, z: self._moved(col=x, z=z)
        self.yz.clicked = lambda z, y: self._moved(row=y, z=z)
        #: the sections drawn, whose values the readout under the cursor gives
        self.sections: ortho.Sections | None = None
        #: what their colours were made from (sections, lookup table, levels): made again only on a change
        self._drawn_look: tuple[Any, ...] | None = None
        self.xz.hovered = lambda x, z: self._hovered(XZ, x, z)
        self.yz.hovered = lambda z, y: self._hovered(YZ, z, y)
        data.loaded.connect(self.refresh)
        data.plane_moved.connect(self.refresh)
        data.pixel_clicked.connect(lambda row, col: self._moved(row=row, col=col))
        hist = self.pane.ui.histogram.item
        hist.sigLevelsChanged.connect(lambda *_: self._follow_levels())
        hist.sigLookupTableChanged.connect(lambda *_: self._follow_levels())

    # -- the menu's side ----------------------------------------------------------------------
    def show(self, on: bool = True) -> None:
        self.on = on
        if on:
            self._arrange()
        self.refresh()

    @property
    def visible(self) -> bool:
        return self.xz.isVisible()

    # -- following the data view --------------------------------------------------------------
    def refresh(self) -> None:
        """The panels as the data view's state asks: hidden when off or without a Z, else the
        cross where the point is and the sections read again if they changed."""
        state = self.data.state
        choices = ortho.z_choices(state) if state is not None else []
        if not (self.on and state is not None and choices and 0 not in state.array.shape):
            self._hide()
            return
        assert state is not None
        self._offer(state, choices)
        assert self.z_dim is not None
        which = (state.array, state.y_dim, state.x_dim)
        if self.point is None or self.shown_for != which:
            rows, cols = state.plane_shape
            # the middle of what is on screen: the pane's range where it draws a plane (the state
            # hears of a zoom only once the view rests), else the region the state asks for
            drawn = self.pane.shown is not None and self.pane.shown.tiles()
            r0, r1, c0, c1 = self.pane.visible()[0] if drawn else state.region or (0.0, float(rows), 0.0, float(cols))
            # the element holding the middle, a millionth of a pixel's rounding aside (a region kept
            # in a saved view is rounded so): a middle on an edge is the element after it
            self.point, self.shown_for = (math.floor(round((r0 + r1) / 2, 6)), math.floor(round((c0 + c1) / 2, 6))), which
            self.sections = None  # another array or other axes: nothing of the old sections stays
            self.model.forget()
            self.xz.item.clear()
            self.yz.item.clear()
        self._show_panels(state)
        self.yz.plot.invertY(not state.rows_up)  # it shares the image's rows: north up where the image is
        row, col = self.point
        point = (row, col, state.indices[self.z_dim])
        self._place_cross(ortho.clipped(state, point, self.z_dim))
        self.driver.show(ortho.SectionAsk(state, point, self.z_dim))

    def _moved(self, row: float | None = None, col: float | None = None, z: float | None = None) -> None:
        """A click on the image or a panel: the point (and the Z slider) move there."""
        state = self.data.state
        if not self.on or state is None or self.point is None or self.z_dim is None:
            return
        rows, cols = state.plane_shape
        r = self.point[0] if row is None else int(row // 1)
        c = self.point[1] if col is None else int(col // 1)
        if not (0 <= r < rows and 0 <= c < cols):
            return
        self.point = (r, c)
        if z is not None and 0 <= int(z // 1) < state.array.shape[self.z_dim] and int(z // 1) != state.indices[self.z_dim]:
            self.data.set_index(self.z_dim, int(z // 1))  # the slider moves, and the plane_moved refreshes
        else:
            self.refresh()

    def _hovered(self, panel: str, x: float, y: float) -> None:
        text = "" if self.sections is None else section_readout(self.sections, panel, x, y)
        if text:
            self.data.status.emit(text)

    def _offer(self, state: ViewState, choices: list[int]) -> None:
        """The Z picker lists the dimensions on a slider; the one picked stays while it is there."""
        names = dim_names(state.array, state.axis_names)
        items = [(f"{names[d]} ({state.array.shape[d]})", d) for d in choices]
        current = [(self.z_combo.itemText(i), self.z_combo.itemData(i)) for i in range(self.z_combo.count())]
        if self.z_dim not in choices:
            self.z_dim = ortho.default_z(state)
        if items != current:
            self.z_combo.blockSignals(True)
            self.z_combo.clear()
            for text, d in items:
                self.z_combo.addItem(text, d)
            self.z_combo.blockSignals(False)
        self.z_combo.blockSignals(True)
        self.z_combo.setCurrentIndex(max(0, self.z_combo.findData(self.z_dim)))
        self.z_combo.blockSignals(False)

    def _z_picked(self, index: int) -> None:
        d = self.z_combo.itemData(index)
        if isinstance(d, int) and d != self.z_dim:
            self.z_dim = d
            self.model.forget()
            self.refresh()

    # -- answers ---------------------------------------------------------------------------
    @property
    def pending(self) -> ortho.SectionRequest | None:
        """The sections being read, if any."""
        return self.driver.inflight

    def _answered(self, got: ortho.Sections) -> None:
        self.note.setText(got.message or got.status)
        if got.kept:  # reading, or cancelled: what is drawn stays
            return
        if got.xz is None or got.yz is None:
            self.xz.item.clear()
            self.yz.item.clear()
            self.sections = None
            return
        req, before = got.request, self.sections.request if self.sections is not None else None
        assert req is not None
        first = before is None or before.z_dim != req.z_dim or before.key[0] != req.key[0] \
            or self.xz.item.image is None
        self.sections = got
        self._follow_levels()
        for panel, rect in ((self.xz, got.xz_rect), (self.yz, got.yz_rect)):
            panel.item.setRect(QRectF(*rect))
        if first:
            self._centre(got)

    def _centre(self, got: ortho.Sections) -> None:
        """Z in the middle of each panel, at the scale the linked axis gives it."""
        _, z0, _, zh = got.xz_rect
        self._fit_z(self.xz, z0 + zh / 2)
        z0, _, zw, _ = got.yz_rect
        self._fit_z(self.yz, z0 + zw / 2)

    def _fit_z(self, panel: SectionPanel, centre: float | None = None) -> None:
        """The panel's Z axis at the scale its linked axis has, in physical proportion (a micron
        as long across as down), around ``centre`` (else where it is); a Z without the plane's
        unit fills the panel. Z is set by hand, not by pyqtgraph's aspect lock, which would as
        soon change the linked axis and so the image's."""
        vb = panel.plot.getViewBox()
        got = self.sections
        if self.sizes.z_unit is None and got is not None and got.xz is not None:
            # Z is no length of the plane's (a time, a band, units unknown): proportions mean nothing,
            # so the section fills its panel rather than lie in a thin strip across it
            if panel is self.xz:
                _, z0, _, depth = got.xz_rect
                vb.setYRange(z0, z0 + depth, padding=0)
            else:
                z0, _, depth, _ = got.yz_rect
                vb.setXRange(z0, z0 + depth, padding=0)
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        w, h = vb.width(), vb.height()
        sy, sx, sz = self.sizes.rows, self.sizes.cols, self.sizes.z
        if panel is self.xz and x1 > x0 and w > 0:  # Z down, columns across
            span = h / (w / (x1 - x0) * sz / sx)
            c = (y0 + y1) / 2 if centre is None else centre
            vb.setYRange(c - span / 2, c + span / 2, padding=0)
        elif panel is self.yz and y1 > y0 and h > 0:  # rows down, Z across
            span = w / (h / (y1 - y0) * sz / sy)
            c = (x0 + x1) / 2 if centre is None else centre
            vb.setXRange(c - span / 2, c + span / 2, padding=0)

    def _follow_levels(self) -> None:
        """The sections through the image's own levels and lookup table, NaN in the missing
        colour, or in the channels' colours where the sections are their composite."""
        got = self.sections
        if got is None or got.xz is None or got.yz is None or got.request is None:
            return
        lo, hi = (float(v) for v in self.pane.ui.histogram.item.getLevels())
        drawn, table = self._drawn_look, self.pane.table
        if drawn is not None and drawn[0] is got and drawn[1] is table and drawn[2:] == (lo, hi):
            return  # the histogram may say the same levels again: the sections' colours stand
        self._drawn_look = (got, table, lo, hi)
        comp = got.request.state.composite
        for panel, image in ((self.xz, got.xz), (self.yz, got.yz)):
            pixels = ortho.section_pixels(image, comp, (lo, hi), self.pane.table)
            panel.item.setImage(pixels, autoLevels=False, levels=(0, 255))

    # -- layout ----------------------------------------------------------------------------
    def _arrange(self) -> None:
        """Once: the image, then the YZ panel, then the histogram; the XZ panel and the Z picker
        under the first two. The pane's unused ROI and menu buttons leave the grid."""
        if self._arranged:
            return
        self._arranged = True
        ui = self.pane.ui
        grid = ui.gridLayout
        for w in (ui.graphicsView, ui.histogram, ui.roiBtn, ui.menuBtn):
            grid.removeWidget(w)
        grid.addWidget(ui.graphicsView, 0, 0)
        grid.addWidget(self.yz, 0, 1)
        grid.addWidget(ui.histogram, 0, 2, 2, 1)
        grid.addWidget(self.xz, 1, 0)
        grid.addWidget(self.corner, 1, 1)
        for w in (self.xz, self.yz, self.corner):
            w.hide()

    def _show_panels(self, state: ViewState) -> None:
        """The panels shown, sized and labelled for the plane and Z (again only when they change)."""
        assert self.z_dim is not None
        image = self.data.ome
        units = [a.unit for a in image.first.axes] if image is not None and image.multiscales else None
        sizes = ortho.proportions(state, self.z_dim, units)
        layout = (state.array, state.y_dim, state.x_dim, self.z_dim, sizes)
        grid = self.pane.ui.gridLayout
        if layout != self._laid_out:
            self._laid_out, self.sizes = layout, sizes
            rows, cols = state.plane_shape
            depth = state.array.shape[self.z_dim] * sizes.z
            lo, hi = PANEL_SHARE
            down = min(hi, max(lo, depth / (depth + rows * sizes.rows)))
            across = min(hi, max(lo, depth / (depth + cols * sizes.cols)))
            grid.setRowStretch(0, round(1000 * (1 - down)))
            grid.setRowStretch(1, round(1000 * down))
            grid.setColumnStretch(0, round(1000 * (1 - across)))
            grid.setColumnStretch(1, round(1000 * across))
            name = dim_names(state.array, state.axis_names)[self.z_dim]
            label = f"{name} ({symbol(sizes.z_unit)})" if sizes.z_unit else name
            for plot, side in ((self.xz.plot, "left"), (self.yz.plot, "bottom")):
                plot.setLabel(side, label)
                plot.getAxis(side).setScale(sizes.z if sizes.z_unit else 1.0)  # ticks in µm where Z is in µm
            self.xz.plot.hideAxis("bottom")
            self.yz.plot.hideAxis("left")
        if not self.xz.isVisible():
            (x0, x1), (y0, y1) = self.pane.view.viewRange()
            for w in (self.xz, self.yz, self.corner):
                w.show()
            grid.activate()  # the image shrinks now, and keeps showing what it showed
            self.pane.view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
            self.xz.plot.setXLink(self.pane.view)
            self.yz.plot.setYLink(self.pane.view)
            for line in self.cross:
                line.setZValue(50)
                self.pane.view.addItem(line)
        self._align_soon.start()

    def _align(self) -> None:
        """Each panel's plot area beside the image's, edge to edge along the axis they share:
        linking only shares the range, so a title or an axis on one side alone would draw the
        same latitude (row) at another height on the screen."""
        if not self.xz.isVisible():
            return
        image = _global_rect(self.pane.ui.graphicsView, self.pane.view.getViewBox())
        for panel, along_rows in ((self.yz, True), (self.xz, False)):
            rect = _global_rect(panel, panel.plot.getViewBox())
            left, top, right, bottom = panel.plot.layout.getContentsMargins()
            if along_rows:
                top, bottom = max(0.0, top + image.top() - rect.top()), max(0.0, bottom + rect.bottom() - image.bottom())
            else:
                left, right = max(0.0, left + image.left() - rect.left()), max(0.0, right + rect.right() - image.right())
            now = panel.plot.layout.getContentsMargins()
            if max(abs(a - b) for a, b in zip((left, top, right, bottom), now)) >= 1:  # a pixel, not rounding
                panel.plot.layout.setContentsMargins(left, top, right, bottom)
        self.data.reframe()  # a region the view was opened at, as it was before the panels' links moved it

    def _hide(self) -> None:
        self.driver.discard()
        if not self._arranged or not self.xz.isVisible():
            return
        (x0, x1), (y0, y1) = self.pane.view.viewRange()
        for w in (self.xz, self.yz, self.corner):
            w.hide()
        self.xz.plot.setXLink(None)
        self.yz.plot.setYLink(None)
        for line in self.cross:
            self.pane.view.removeItem(line)
        self._laid_out = None
        grid = self.pane.ui.gridLayout
        grid.setRowStretch(1, 0)
        grid.setColumnStretch(1, 0)
        grid.activate()
        self.pane.view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)

    def _place_cross(self, point: tuple[int, int, int]) -> None:
        row, col, z = (v + 0.5 for v in point)
        self.cross[0].setPos(row)
        self.cross[1].setPos(col)
        self.xz.across.setPos(z)
        self.xz.down.setPos(col)
        self.yz.across.setPos(row)
        self.yz.down.setPos(z)


def _global_rect(view: QGraphicsView, item: QGraphicsItem) -> QRect:
    """Where ``item`` of ``view``'s scene lies on the screen."""
    shown = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
    return QRect(view.mapToGlobal(shown.topLeft()), shown.size())
