"""An OME-Zarr plate on screen: the mosaic of well thumbnails that ``viewing.plate.mosaic.PlateModel``
builds, row letters and column numbers along the axes, missing wells hatched with their reason
under the cursor; a click on a well asks (``open_path``) for its first field to be opened.

Only rendering and input here: the reading, the batches and the contrast are the model's.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from ..scheduling import Driver, WorkerPool
from ..viewing.ome import OmePlate
from ..viewing.plate.mosaic import PlateModel, PlateMosaic, PlateShown, WellsRequest, render
from ..zarrlib import Group
from .bridge import post


class PlateView(QWidget):
    #: the path (from the store's root) of what a click on a well opens: its first field
    open_path = Signal(str)

    def __init__(self, pool: WorkerPool, owner: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.owner = owner  # the DataView: status, progress, loaded
        self.model = PlateModel()
        self.driver: Driver[PlateShown, WellsRequest, PlateMosaic] = Driver(
            self.model, pool, self._draw, post=lambda fn: post(fn, self), name="plate", on_progress=owner.progress.emit)
        self.group: Group | None = None
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = pg.PlotWidget()
        item = self.plot.getPlotItem()
        item.invertY(True)
        item.setAspectLocked(True)
        item.showAxis("top")
        item.hideAxis("bottom")
        item.hideButtons()
        item.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        item.addItem(self.image)
        self.status = QLabel()
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.status)
        self.plot.scene().sigMouseMoved.connect(self._moved)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self._fit = False
        self.opens_in: Any = None  # the window whose tree a click on a well selects in

    @property
    def mosaic(self) -> PlateMosaic:
        return self.model.mosaic

    def show_plate(self, plate: OmePlate, group: Group) -> None:
        self.group = group
        name = f" “{plate.name}”" if plate.name else ""
        self.header.setText(f"Plate{name} {plate.path}: {len(plate.rows)} rows × {len(plate.columns)} columns, "
                            f"{len(plate.wells)} wells, each drawn from the lowest resolution of its first field. "
                            f"Click a well to open its fields.")
        self._fit = True
        self.driver.show(PlateShown(plate, group))
        self._ticks(plate)

    def clear(self) -> None:
        self.driver.clear()
        self.model.clear()
        self.group = None
        self.image.clear()

    def _ticks(self, plate: OmePlate) -> None:
        m = self.mosaic
        half = m.pitch / 2
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([[(r * m.pitch + half, name) for r, name in enumerate(plate.rows)]])
        item.getAxis("top").setTicks([[(c * m.pitch + half, name) for c, name in enumerate(plate.columns)]])

    def _draw(self, mosaic: PlateMosaic) -> None:
        if mosaic.plate is None:
            return
        self.image.setImage(render(mosaic), autoLevels=False)
        self.status.setText(mosaic.status)
        self.owner.status.emit(mosaic.status)
        if self._fit:
            self._fit = False
            self.plot.getPlotItem().getViewBox().autoRange(padding=0.02)
        if not mosaic.busy:
            self.owner.loaded.emit()

    # -- input ------------------------------------------------------------------------------
    def _cell(self, pos: QPointF) -> tuple[float, float] | None:
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            return None
        p = vb.mapSceneToView(pos)
        return p.y(), p.x()

    def _moved(self, pos: QPointF) -> None:
        at = self._cell(pos)
        text = self.mosaic.readout(*at) if at is not None else ""
        if text:
            self.owner.status.emit(text)
        self.plot.setToolTip(text)

    def _clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        at = self._cell(event.scenePos())
        self.open_at(*at) if at is not None else None

    def open_at(self, y: float, x: float) -> None:
        """Open what is at mosaic pixel (y, x): its well's first field (or the well, where that
        cannot be read)."""
        cell = self.mosaic.cell_at(y, x)
        path = self.mosaic.open_path(*cell) if cell is not None else None
        if path is None or self.group is None:
            return
        full = f"{self.group.path.rstrip('/')}/{path}"
        self.owner.status.emit(f"Opening {full}…")
        QToolTip.hideText()
        self.open_path.emit(full)


def show_plate(window: Any, plate: OmePlate, group: Group) -> None:
    """The window's branch for a selected plate group: the grid in the data view, and a click on
    a well selecting its first field in the tree (connected once per view)."""
    view = window.data.set_plate(plate, group)
    if view.opens_in is not window:
        view.opens_in = window
        view.open_path.connect(lambda path: open_in_tree(window, path))


def open_in_tree(window: Any, path: str) -> None:
    """Select the node at ``path`` (from the store's root) of the store whose node is selected:
    the tree expands down to it as each level is listed, or, where the store cannot list, the
    node is opened by its path (``PathNavigator.go_to``)."""
    top = window.proxy.mapToSource(window.tree.currentIndex())
    while top.isValid() and top.parent().isValid():
        top = top.parent()
    if not top.isValid():
        return
    root = window.model.node(top)
    if isinstance(root, Group) and root.can_list_members:
        window.paths.select(top.row(), path)
    else:
        window.paths.go_to(top, path)
