"""A SpatialData store on screen: its root summed up where its data would be, and over an image
its points and shapes (``viewing.spatialdata.scene``), read on a worker and drawn as pyqtgraph
items in the image's pixel space, with a panel that shows or hides each and says how many of
its points or shapes are drawn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QGraphicsPathItem, QGridLayout, QGroupBox, QLabel

from ..scheduling import Done, Driver, Task, Tasks, WorkerPool, call_job
from ..viewing.labels.layers import palette
from ..viewing.spatialdata.scene import Mates, Overlay, overlay_job, overlays
from ..viewing.spatialdata.store import read_store, root_attrs, summary
from ..zarrlib import Group, Node
from .bridge import post

if TYPE_CHECKING:
    from .data_view import DataView

#: above the image and its label layers, below nothing
OVERLAY_Z = 30.0


@dataclass(frozen=True)
class _Store:
    """A SpatialData root's elements, read to sum it up."""

    group: Group


@dataclass(frozen=True)
class _Overlays:
    """An image's points and shapes, read to draw over it, and the notes on its labels."""

    image: Group
    notes: tuple[str, ...]


class SpatialPresenter(QObject):
    """Shows what the window's ``OmeGroupHandler`` and selection hand it: ``show_store(group)``
    for a selected group (a SpatialData root gets its summary), ``show_spatial(image, found)``
    once a SpatialData image's labels are read (its points and shapes are read then)."""

    def __init__(self, pool: WorkerPool, data: DataView, selected: Callable[[], Node | None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.data = data
        self.selected = selected
        #: a store's summary or an image's points and shapes: one read, the newest
        self.driver: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._read, post=lambda fn: post(fn, self), name="SpatialData")
        self.items: list[Any] = []
        self.panel: QGroupBox | None = None
        self.shown: tuple[Overlay, ...] = ()
        data.stale.connect(self.clear)

    def show_store(self, group: Group) -> None:
        if root_attrs(group.attrs) is None:
            return
        self.driver.show(Task(call_job(lambda: read_store(group), label=f"SpatialData store {group.path}"),
                              about=_Store(group)))

    def show_spatial(self, image: Group, found: tuple[Mates, tuple[str, ...]]) -> None:
        mates, notes = found
        if not self._showing(image):
            return
        job = overlay_job(mates)
        if job is None:
            self._draw((), notes)
            return
        self.driver.show(Task(job, about=_Overlays(image, notes)))

    def _read(self, done: Done[Any]) -> None:
        """A store summed up while it is selected; an image's points and shapes drawn while it
        is the image shown."""
        about, answer = done.task.about, done.answer
        if answer.cancelled:
            return
        if isinstance(about, _Store) and self.selected() is about.group:
            group = about.group
            text = summary(answer.value) if answer.value is not None else f"{group.path}: {answer.error}"
            self.data.show_message(text)
        elif isinstance(about, _Overlays) and self._showing(about.image):
            self._draw(overlays(answer), about.notes)

    def _showing(self, image: Group) -> bool:
        return self.data.ome is not None and self.data.ome.group is image

    # -- drawing ------------------------------------------------------------------------------
    def clear(self) -> None:
        """Another view replaced the image: its items go (the panel goes with the controls)."""
        view = self.data.image.view
        for item in self.items:
            view.removeItem(item)
        self.items, self.panel, self.shown = [], None, ()

    def _draw(self, found: tuple[Overlay, ...], notes: tuple[str, ...]) -> None:
        self.clear()
        self.shown = found
        colours = palette(np.arange(1, len(found) + 1, dtype=np.int64), seed=7)
        pairs = []
        for k, overlay in enumerate(found):
            item = make_item(overlay, (int(colours[k][0]), int(colours[k][1]), int(colours[k][2])))
            if item is not None:
                item.setZValue(OVERLAY_Z + k / 100)
                self.data.image.view.addItem(item)
                self.items.append(item)
            pairs.append((overlay, item))
        self._panel(pairs, notes)

    def _panel(self, pairs: list[tuple[Overlay, Any]], notes: tuple[str, ...]) -> None:
        state = self.data.state
        if state is None or (not pairs and not notes):
            return
        box = QGroupBox("Points and shapes")
        grid = QGridLayout(box)
        grid.setContentsMargins(6, 2, 6, 2)
        for row, (overlay, item) in enumerate(pairs):
            check = QCheckBox(overlay.note)
            check.setChecked(item is not None)
            check.setEnabled(item is not None)
            check.setToolTip(f"{overlay.kind} of {overlay.name}, in the coordinate system {overlay.system!r}")
            if item is not None:
                check.toggled.connect(item.setVisible)
            grid.addWidget(check, row, 0)  # one a line: the column beside the image is tall, not wide
        for row, note in enumerate(notes, len(pairs)):
            note_label = QLabel(note)
            note_label.setWordWrap(True)
            grid.addWidget(note_label, row, 0)
        self.data.side.add(box)
        self.panel = box


def make_item(overlay: Overlay, rgb: tuple[int, int, int]) -> Any:
    """The pyqtgraph item drawing ``overlay`` (None where there is nothing to draw). Built from
    whole arrays (a path of all rings at once, a scatter per feature value), so 200,000 points or
    a million vertices take a fraction of a second on the GUI thread."""
    if overlay.kind == "polygons" and overlay.rings:
        xy = np.vstack(overlay.rings)
        connect = np.ones(len(xy), dtype=bool)
        connect[np.cumsum([len(r) for r in overlay.rings]) - 1] = False  # each ring its own subpath
        item = QGraphicsPathItem(pg.arrayToQPath(xy[:, 0], xy[:, 1], connect=connect))
        item.setPen(pg.mkPen(QColor(*rgb), width=2, cosmetic=True))
        item.setBrush(pg.mkBrush(QColor(*rgb, 60)))
        return item
    if not len(overlay.xy):
        return None
    x, y = overlay.xy[:, 0], overlay.xy[:, 1]
    if overlay.kind == "circles" and overlay.radius is not None:
        return pg.ScatterPlotItem(x=x, y=y, size=2 * overlay.radius, pxMode=False, symbol="o",
                                  pen=pg.mkPen(QColor(*rgb), width=2), brush=pg.mkBrush(QColor(*rgb, 50)))
    if overlay.codes is None or not overlay.categories:
        return pg.ScatterPlotItem(x=x, y=y, size=6, pen=pg.mkPen("k", width=0.5), brush=pg.mkBrush(QColor(*rgb)))
    group = pg.ItemGroup()
    colours = palette(np.arange(1, len(overlay.categories) + 2, dtype=np.int64), seed=3)
    for code in np.unique(overlay.codes).tolist():  # -1: past the coloured categories, the last colour
        mine = overlay.codes == code
        colour = QColor(*(int(v) for v in colours[code][:3]))
        scatter = pg.ScatterPlotItem(x=x[mine], y=y[mine], size=6, pen=pg.mkPen("k", width=0.5), brush=pg.mkBrush(colour))
        scatter.setParentItem(group)
    return group
