"""Painting a Scene: the coarse tile and the full-resolution tile over it, each at its place in
data coordinates, with NaN in its own colour, and the view's range reported back.

The pixels are made on a worker (``viewing.image.rendering``: each tile reduced to about the
screen's resolution, through the levels and lookup table or the channels' composite, NaN in its
colour); the GUI thread hands them to Qt as they are. One frame is made at a time: what is asked
meanwhile (a levels drag, another plane) is made next, newest only, and the image shown stays
until it lands (``rendering.Rendering``, the view model the pane's driver runs). The histogram
beside the plane is counted there too: pyqtgraph's own would count the rendered colours, so it is
detached from the image item and given the counts. It is drawn after the frame, in a repaint of
its own: redrawing it costs about as much as the frame's, and the new plane is what the user
waits for.

Label layers are drawn as RGBA images over each tile, with their layer's opacity: those of the
coarse tile between it and the detail tile (which hides them where it has its own), those of the
detail tile above it, all below the hatched boxes of failed chunks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from ..scheduling import Driver, WorkerPool
from ..viewing import Scene
from ..viewing.image.rendering import Frame, FrameOrder, FrameRequest, Look, Rendered, Rendering, Shown, reduction
from .bridge import post
from .draw_box import DrawBox
from .failure_boxes import FailureBoxes

pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)

#: milliseconds a pan or zoom must rest before the visible region is read
SETTLE_MS = 120
#: milliseconds between a frame and the histogram of its values (one histogram for many frames)
HISTOGRAM_DELAY_MS = 30

log = logging.getLogger(__name__)


class FrameItem(pg.ImageItem):
    """An image item showing a rendered tile's premultiplied ARGB words as they are: the QImage
    wraps them, with no levels, lookup table or conversion on the GUI thread."""

    rendered: Rendered | None = None

    def show_rendered(self, rendered: Rendered | None) -> None:
        if rendered is self.rendered:
            return
        self.rendered = rendered
        if rendered is None:
            self.clear()
            return
        self.setImage(rendered.pixels, autoLevels=False)
        self.setRect(QRectF(*rendered.rect()))

    def render(self) -> None:
        image = self.image
        if image is None or image.size == 0:
            self._unrenderable = True
            return
        self.qimage = pg.functions.ndarray_to_qimage(image, QImage.Format.Format_ARGB32_Premultiplied)
        self._renderRequired = False
        self._unrenderable = False


class ImagePane(pg.ImageView):
    """``region_changed(region, screen_scale)`` fires once the view rests after a pan or zoom;
    ``levels_changed`` when the user drags the histogram; ``hovered(row, col)`` under the mouse;
    ``clicked(row, col)`` on a single left click on the image; ``frame_shown`` with each frame
    put on screen (what draws the same pixels elsewhere, a blend over another image, follows)."""

    frame_shown = Signal(object)

    def __init__(self, pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__(parent, view=pg.PlotItem(viewBox=DrawBox()))  # a plot item, so that axes can be shown
        self.view.removeItem(self.imageItem)  # pyqtgraph's own converts the data on the GUI thread
        self.imageItem: FrameItem = FrameItem()
        self.view.addItem(self.imageItem)
        self.show_axes(False)
        self.ui.roiBtn.hide()
        self.ui.menuBtn.hide()
        self.view.invertY(True)
        self.region_changed: Callable[[tuple[float, float, float, float], tuple[float, float]], None] = lambda r, s: None
        self.levels_changed: Callable[[tuple[float, float]], None] = lambda lv: None
        self.hovered: Callable[[int, int], None] = lambda r, c: None
        self.clicked: Callable[[int, int], None] = lambda r, c: None
        self.detail = FrameItem()
        self.detail.setZValue(10)
        self.view.addItem(self.detail)
        self.failures = FailureBoxes(self.view)
        #: (tile slot, layer name) -> the item drawing that tile's plane of that layer
        self.label_items: dict[tuple[str, str], pg.ImageItem] = {}
        self.shown: Scene | None = None
        self._painting = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self._report_region)
        self.view.sigRangeChanged.connect(lambda *_: self._timer.start())
        hist = self.ui.histogram.item
        hist.imageItem = lambda: None  # its counts and levels are the data's, not the rendered colours'
        hist.vb.disableAutoRange()
        self._histogram_range: tuple[tuple[float, float], float] | None = None
        hist.sigLevelsChanged.connect(self._levels_dragged)
        hist.sigLookupTableChanged.connect(lambda *_: self._table_changed())
        self._table: np.ndarray | None = None
        self.frames = Rendering()
        self.driver: Driver[FrameOrder | None, FrameRequest, Shown] = Driver(
            self.frames, pool, self._drawn, post=lambda fn: post(fn, self),
            name="render")
        self._histogram: tuple[np.ndarray, np.ndarray] | None = None  # counted, waiting to be drawn
        self._histogram_timer = QTimer(self)
        self._histogram_timer.setSingleShot(True)
        self._histogram_timer.setInterval(HISTOGRAM_DELAY_MS)
        self._histogram_timer.timeout.connect(self._draw_histogram)
        self._waiting: list[Callable[[], None]] = []
        #: whether the plane's colours come from its levels and colour map (False for a label
        #: image, drawn in its labels' own colours): the histogram and colour bar show only then
        self.colour_bar = True
        #: why the last frame could not be drawn, or None once one is (``--screenshot`` reports it)
        self.render_error: str | None = None
        self.getImageItem().scene().sigMouseMoved.connect(self._mouse_moved)
        self.getImageItem().scene().sigMouseClicked.connect(self._mouse_clicked)

    @property
    def table(self) -> np.ndarray | None:
        """The histogram's 256 colours that frames are made with (None: its grey ramp)."""
        return self._table

    @property
    def rendering(self) -> bool:
        """Whether a frame is being made or its histogram is still to be drawn (what is shown is not
        the newest scene's yet)."""
        return self.frames.making or self._histogram is not None

    def when_drawn(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the newest scene's pixels are in the image items (now if they are)."""
        if not self.frames.making:
            fn()
        else:
            self._waiting.append(fn)

    # -- painting ---------------------------------------------------------------------------
    def paint(self, scene: Scene, y_dim: int, x_dim: int) -> None:
        """Show ``scene``; ``y_dim``/``x_dim`` place its failure boxes. Its pixels are asked of a
        worker (nothing where the frame shown or being made already shows them)."""
        previous, self.shown = self.shown, scene
        # a composite is drawn in the channels' colours through their windows: the histogram's
        # levels and gradient do not apply, so it is not offered
        self.ui.histogram.setVisible(not scene.composite and self.colour_bar)
        self._painting = True
        try:
            hist = self.ui.histogram.item
            if scene.tiles() and not scene.composite and not _same_levels(hist.getLevels(), scene.levels):
                hist.setLevels(*scene.levels)
            if (previous is None or scene.coarse is not previous.coarse or scene.detail is not previous.detail
                    or scene.labels != previous.labels):
                self._draw_labels(scene)
                self.failures.clear()
                for tile in scene.tiles():
                    if tile.failures:
                        self.failures.mark(tile.failures, y_dim, x_dim)
        finally:
            self._painting = False
        self._render()

    def _render(self) -> None:
        """Ask for the frame of the scene shown, at the current zoom (the model makes nothing
        where the frame made or being made already shows it)."""
        scene = self.shown
        if scene is None or not scene.tiles():
            self.driver.show(None)
            return
        base, over = (scene.coarse, scene.detail) if scene.coarse is not None else (scene.detail, None)
        assert base is not None  # the scene has tiles
        look = Look(scene.levels, self._table, tuple(scene.channels) if scene.composite else ())
        _, (sy, sx) = self.visible()
        ratio = self.devicePixelRatioF()  # device pixels per scene pixel (a high-density screen)
        scale = (sy * ratio, sx * ratio)
        self.driver.show(FrameOrder(base, over, look, (reduction(base, scale),
                                                       (1, 1) if over is None else reduction(over, scale))))

    def _drawn(self, shown: Shown) -> None:
        if shown.made:
            error = shown.error
            self.render_error = None if error is None else f"cannot render the image: {error}"
            if error is not None:
                log.error("cannot render the image: %s", error)
        if shown.frame is not None:
            self._show(shown.frame)
        if not shown.made:
            return
        if shown.newest:
            waiting, self._waiting = self._waiting, []
            for fn in waiting:
                fn()
        elif shown.error is not None:  # the driver reads on only after a frame: the newest is asked again
            self.driver.show(self.driver.state)

    def _show(self, frame: Frame) -> None:
        self.getImageItem().show_rendered(frame.base)
        self.detail.show_rendered(frame.over)
        self.frame_shown.emit(frame)
        if frame.histogram is not None:
            self._histogram = frame.histogram
            if not self._histogram_timer.isActive():  # not restarted: a drag's histogram follows it
                self._histogram_timer.start()

    def _draw_histogram(self) -> None:
        if self._histogram is None:
            return
        (edges, counts), self._histogram = self._histogram, None
        self.ui.histogram.item.plot.setData(edges, counts)
        if len(edges):
            self._fit_histogram(float(edges[0]), float(edges[-1]), float(counts.max()))

    def _fit_histogram(self, lo: float, hi: float, top: float) -> None:
        """The histogram's range, kept while the next plane's values and counts fit it about as
        well: pyqtgraph's auto range would move it, and repaint it once more, at every step."""
        levels = self.ui.histogram.item.getLevels()
        lo, hi = min(lo, float(levels[0])), max(hi, float(levels[1]))
        span = (hi - lo) or 1.0
        old = self._histogram_range
        if old is not None:
            (o_lo, o_hi), o_top = old
            if (abs(o_lo - lo) <= 0.05 * span and abs(o_hi - hi) <= 0.05 * span
                    and 0.5 * o_top <= top <= o_top):
                return
        vb = self.ui.histogram.item.vb
        self._histogram_range = ((lo, hi), top * 1.1)
        # vertical: values run up the view, counts to the left of the gradient (the plot is rotated)
        vb.setRange(xRange=(-top * 1.1, 0.0), yRange=(lo - 0.02 * span, hi + 0.02 * span), padding=0)

    def _table_changed(self) -> None:
        """The histogram's colour map changed: its 256 colours, for the next frames."""
        gradient = self.ui.histogram.item.gradient
        self._table = None if gradient.isLookupTrivial() else np.asarray(
            gradient.getLookupTable(256, alpha=gradient.usesAlpha()), np.uint8)
        self._render()

    def _draw_labels(self, scene: Scene) -> None:
        """Each tile's plane of each label layer, shown or hidden and as opaque as its layer says;
        a plane's image is set only when the plane is new."""
        base, over = (scene.coarse, scene.detail) if scene.coarse is not None else (scene.detail, None)
        wanted = {}
        for slot, tile, z in (("base", base, 5.0), ("over", over, 15.0)):
            for k, layer in enumerate(scene.labels):
                plane = None if tile is None else tile.label(layer.name)
                if plane is not None and plane.values.size:
                    wanted[(slot, layer.name)] = (plane, layer, z + k / 100)
        for key in [k for k in self.label_items if k not in wanted]:
            self.view.removeItem(self.label_items.pop(key))
        for key, (plane, layer, z) in wanted.items():
            item = self.label_items.get(key)
            if item is None:
                item = self.label_items[key] = pg.ImageItem()
                self.view.addItem(item)
            if getattr(item, "plane", None) is not plane:
                item.setImage(plane.rgba, autoLevels=False, levels=None)
                item.setRect(QRectF(*plane.rect()))
                item.plane = plane
            item.setZValue(z)
            item.setOpacity(float(layer.opacity))
            item.setVisible(bool(layer.visible))

    def show_region(self, region: tuple[float, float, float, float]) -> None:
        r0, r1, c0, c1 = region
        self.view.setRange(xRange=(c0, c1), yRange=(r0, r1), padding=0)

    def show_plane(self, rows: int, cols: int) -> None:
        self.view.setRange(xRange=(0, cols), yRange=(0, rows), padding=0.02)

    def show_axes(self, shown: bool, y_name: str = "", x_name: str = "") -> None:
        """Axes along the left and bottom with ticks in data coordinates (element indices),
        labelled with the dimension names; hidden by default to give the image the room."""
        for side, name in (("left", y_name), ("bottom", x_name)):
            self.view.showAxis(side, shown)
            if shown:
                self.view.setLabel(side, name)

    # -- input ------------------------------------------------------------------------------
    def visible(self) -> tuple[tuple[float, float, float, float], tuple[float, float]]:
        """The visible region (r0, r1, c0, c1) and screen pixels per data pixel (rows, columns)."""
        (x0, x1), (y0, y1) = self.view.viewRange()
        rect = self.view.getViewBox().sceneBoundingRect()
        sy = rect.height() / (y1 - y0) if y1 > y0 else 1.0
        sx = rect.width() / (x1 - x0) if x1 > x0 else 1.0
        return (y0, y1, x0, x1), (max(sy, 1e-9), max(sx, 1e-9))

    def _report_region(self) -> None:
        if self.shown is not None and self.shown.tiles() and self.isVisible():
            self._render()  # the zoom may want the tiles at another reduction
            self.region_changed(*self.visible())

    def _levels_dragged(self, *_: Any) -> None:
        if not self._painting:
            lo, hi = self.ui.histogram.item.getLevels()
            self.levels_changed((float(lo), float(hi)))

    def _mouse_moved(self, pos: Any) -> None:
        if self.shown is None or not self.shown.tiles():
            return
        p = self.view.getViewBox().mapSceneToView(pos)
        self.hovered(int(np.floor(p.y())), int(np.floor(p.x())))

    def _mouse_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.double():
            return
        if self.shown is None or not self.shown.tiles():
            return
        p = self.view.getViewBox().mapSceneToView(event.scenePos())
        self.clicked(int(np.floor(p.y())), int(np.floor(p.x())))


def _same_levels(current: Any, wanted: tuple[float, float]) -> bool:
    if current is None or len(current) != 2:
        return False
    tolerance = 1e-12 * max(1.0, abs(wanted[0]), abs(wanted[1]))
    return all(abs(float(c) - float(w)) <= tolerance for c, w in zip(current, wanted, strict=True))
