"""Painting a Scene: the coarse tile and the full-resolution tile over it, each at its place in
data coordinates, with NaN in its own colour, and the view's range reported back.

pyqtgraph leaves NaN pixels transparent; each tile therefore gets a backdrop in the NaN
colour directly beneath it (and above the tile below), so a NaN reads as "no value" and never
as the view's background, the colormap's ends, or the preview underneath.

Label layers are drawn as RGBA images over each tile, with their layer's opacity: those of the
coarse tile between it and the detail tile (which hides them where it has its own), those of the
detail tile above it, all below the hatched boxes of failed chunks.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsRectItem, QWidget

from ..viewing import Scene, Tile
from ..viewing.image.contrast import NAN_RGBA
from .draw_box import DrawBox
from .failure_boxes import FailureBoxes

pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)

#: milliseconds a pan or zoom must rest before the visible region is read
SETTLE_MS = 120


class ImagePane(pg.ImageView):
    """``region_changed(region, screen_scale)`` fires once the view rests after a pan or zoom;
    ``levels_changed`` when the user drags the histogram; ``hovered(row, col)`` under the mouse;
    ``clicked(row, col)`` on a single left click on the image."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, view=pg.PlotItem(viewBox=DrawBox()))  # a plot item, so that axes can be shown
        self.show_axes(False)
        self.ui.roiBtn.hide()
        self.ui.menuBtn.hide()
        self.view.invertY(True)
        self.region_changed: Callable[[tuple[float, float, float, float], tuple[float, float]], None] = lambda r, s: None
        self.levels_changed: Callable[[tuple[float, float]], None] = lambda lv: None
        self.hovered: Callable[[int, int], None] = lambda r, c: None
        self.clicked: Callable[[int, int], None] = lambda r, c: None
        self.detail = pg.ImageItem()
        self.detail.setZValue(10)
        self.view.addItem(self.detail)
        self.backdrops = [self._backdrop(-1), self._backdrop(9)]
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
        hist.sigLevelsChanged.connect(self._levels_dragged)
        hist.sigLookupTableChanged.connect(lambda *_: self._sync_detail())
        self.getImageItem().scene().sigMouseMoved.connect(self._mouse_moved)
        self.getImageItem().scene().sigMouseClicked.connect(self._mouse_clicked)

    def quickMinMax(self, data: np.ndarray) -> list[tuple[float, float]]:  # noqa: N802 - pyqtgraph's name
        """pyqtgraph sizes the histogram from the data's min and max, which are NaN for a plane
        of NaN and infinite with an infinity in it ("Cannot set range [nan, nan]"): the finite
        values decide, and a plane without any gets (0, 1)."""
        flat = data.reshape(-1)
        if flat.size > 1 << 20:  # as pyqtgraph does: a subsample sizes the histogram well enough
            flat = flat[:: flat.size >> 20]
        if flat.dtype.kind == "f":
            flat = flat[np.isfinite(flat)]
        if not flat.size:
            return [(0.0, 1.0)]
        return [(float(flat.min()), float(flat.max()))]

    def _backdrop(self, z: float) -> QGraphicsRectItem:
        item = QGraphicsRectItem()
        item.setBrush(QBrush(QColor(*NAN_RGBA)))
        item.setPen(pg.mkPen(None))
        item.setZValue(z)
        item.setVisible(False)
        self.view.addItem(item)
        return item

    # -- painting ---------------------------------------------------------------------------
    def paint(self, scene: Scene, y_dim: int, x_dim: int) -> None:
        """Draw ``scene``'s tiles; ``y_dim``/``x_dim`` place its failure boxes. Only what changed
        is touched: pyqtgraph re-renders a whole image (milliseconds for a 2048x2048 plane) on
        any call that sets its image or levels, even to the same values."""
        previous, self.shown = self.shown, scene
        # a composite is drawn in the channels' colours through their windows: the histogram's
        # levels and gradient do not apply, so it is not offered
        self.ui.histogram.setVisible(not scene.composite)
        if (previous is not None and scene.coarse is previous.coarse and scene.detail is previous.detail
                and scene.labels == previous.labels
                and (not scene.tiles() or _same_levels(self.getImageItem().levels, scene.levels))):
            return  # only the words around the image changed
        self._painting = True
        try:
            with warnings.catch_warnings():  # pyqtgraph's histogram of a plane of NaN warns "All-NaN slice"
                warnings.simplefilter("ignore", RuntimeWarning)
                self._draw(scene, previous)
            self._draw_labels(scene)
            self.failures.clear()
            for tile in scene.tiles():
                if tile.failures:
                    self.failures.mark(tile.failures, y_dim, x_dim)
        finally:
            self._painting = False

    def _draw(self, scene: Scene, previous: Scene | None) -> None:
        """The tiles and levels of ``scene``, touching only what differs from ``previous``."""
        base, over = (scene.coarse, scene.detail) if scene.coarse is not None else (scene.detail, None)
        shown_base = None if previous is None else (previous.coarse or previous.detail)
        if base is None:
            self.clear()
            self.detail.clear()
            for b in self.backdrops:
                b.setVisible(False)
        else:
            if base is not shown_base or self.image is None:
                self.setImage(base.image, autoRange=False, autoLevels=False, levels=scene.levels,
                              axes=_axes(base.image))
                self.getImageItem().setRect(QRectF(*base.rect()))
                self._place(self.backdrops[0], base)
            if not _same_levels(self.getImageItem().levels, scene.levels):
                self.setLevels(*scene.levels)
                self.getImageItem().setLevels(scene.levels)
            if over is None:
                if previous is not None and previous.detail is not None and previous.coarse is not None:
                    self.detail.clear()
                self.backdrops[1].setVisible(False)
            elif previous is None or over is not previous.detail:
                self.detail.setImage(over.image, autoLevels=False)
                self.detail.setRect(QRectF(*over.rect()))
                self._place(self.backdrops[1], over)
            self._sync_detail()

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
                item.plane = plane  # type: ignore[attr-defined]
            item.setZValue(z)
            item.setOpacity(float(layer.opacity))
            item.setVisible(bool(layer.visible))

    @staticmethod
    def _place(backdrop: QGraphicsRectItem, tile: Tile) -> None:
        backdrop.setRect(QRectF(*tile.rect()))
        backdrop.setVisible(tile.image.dtype.kind == "f")

    def _sync_detail(self) -> None:
        if self.detail.image is None:  # nothing drawn there: setting its levels would only repaint
            return
        base = self.getImageItem()
        if base.levels is not None and not _same_levels(self.detail.levels, tuple(base.levels)):
            self.detail.setLevels(base.levels)
        if self.detail.lut is not base.lut:
            self.detail.setLookupTable(base.lut)

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
            self.region_changed(*self.visible())

    def _levels_dragged(self, *_: Any) -> None:
        self._sync_detail()
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
    if current is None:
        return False
    values = np.asarray(current, dtype=float).reshape(-1)
    return values.size == 2 and bool(np.allclose(values, wanted, rtol=0, atol=1e-12 * max(1.0, *map(abs, wanted))))


def _axes(img: np.ndarray) -> dict[str, int]:
    return {"y": 0, "x": 1, "c": 2} if img.ndim == 3 else {"y": 0, "x": 1}
