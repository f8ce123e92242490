"""An embedding (``obsm/X_umap``) as a scatter plot, coloured by a column of the cells' table:
one colour a category with a legend, or a colour map over numbers. The points are read by the
view's model (``viewing.anndata.reads.PointsModel``, on a driver; ``viewing.anndata.embedding``
reads them): the two coordinates shown and the colour column."""

from __future__ import annotations

from collections.abc import Callable
import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..scheduling import Driver, WorkerPool
from ..viewing.anndata.embedding import Points, colour_columns
from ..viewing.anndata.frame import Frame
from ..viewing.anndata.reads import PointsAsk, PointsModel, Said, ViewRead
from ..zarrlib import Array
from .bridge import post

POINT_SIZE = 4


class ScatterView(QWidget):
    """Pick the coordinates and the colour column; the plot draws what ``read_points`` gives."""

    def __init__(self, pool: WorkerPool, said: Callable[[str], None], done: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.said, self.done = said, done
        self.model = PointsModel()
        self.driver: Driver[PointsAsk, ViewRead[Points], Said[Points]] = Driver(
            self.model, pool, self._drawn, post=lambda fn: post(fn, self), name="scatter")
        self.array: Array | None = None
        self.frame: Frame | None = None
        self.points: Points | None = None
        self.x_box, self.y_box, self.colour_box = QComboBox(), QComboBox(), QComboBox()
        controls = QHBoxLayout()
        for label, box in (("x", self.x_box), ("y", self.y_box), ("colour", self.colour_box)):
            controls.addWidget(QLabel(label))
            controls.addWidget(box)
            box.activated.connect(lambda _i: self.read())
        controls.addStretch(1)
        self.range_label = QLabel()
        controls.addWidget(self.range_label)
        self.plot = pg.PlotWidget()
        self.plot.setAspectLocked(False)
        self.legend = self.plot.addLegend(offset=(-10, 10))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 1)

    def show_embedding(self, array: Array, frame: Frame | None, colour: str | None = None) -> None:
        """``array``'s points, coloured by ``colour`` (else the first categorical of ``frame``)."""
        self.array, self.frame = array, frame
        for box in (self.x_box, self.y_box):
            box.clear()
            box.addItems([f"{array.name}[:, {d}]" for d in range(array.shape[1])])
        self.x_box.setCurrentIndex(0)
        self.y_box.setCurrentIndex(1)
        self.colour_box.clear()
        self.colour_box.addItem("(none)", None)
        names = colour_columns(frame) if frame is not None else []
        for name in names:
            self.colour_box.addItem(name, name)
        if colour is None and frame is not None:  # the first categorical, else one colour
            colour = next((n for n in names if frame.column(n).is_categorical), None)
        if colour in names:
            self.colour_box.setCurrentIndex(self.colour_box.findData(colour))
        self.read()

    def clear(self) -> None:
        self.driver.clear()
        self.model.clear()
        self.array = self.frame = None
        self.points = None
        self.plot.getPlotItem().clear()
        self.legend.clear()

    def read(self) -> None:
        if self.array is None:
            return
        dims = (max(0, self.x_box.currentIndex()), max(0, self.y_box.currentIndex()))
        name = self.colour_box.currentData()
        column = self.frame.column(name) if self.frame is not None and name else None
        self.driver.show(PointsAsk(self.array, dims, column))

    def _drawn(self, drawn: Said[Points]) -> None:
        if drawn.value is not None:
            self.draw(drawn.value)
        self.said(drawn.said)
        if drawn.answered:
            self.done()

    def settled(self) -> bool:
        """Whether no points are being read."""
        return not self.driver.busy()

    def draw(self, points: Points) -> None:
        self.points = points
        item = self.plot.getPlotItem()
        item.clear()
        self.legend.clear()
        groups = dict(points.groups())
        # a categorical's sets in the order of its categories (its legend), every one named
        for label, rgb in points.legend:
            idx = groups.pop(rgb, np.zeros(0, np.int64))
            item.addItem(pg.ScatterPlotItem(points.x[idx], points.y[idx], pen=None, brush=pg.mkBrush(*rgb, 200),
                                            size=POINT_SIZE, name=label))
        for rgb, idx in groups.items():  # a numeric colouring's steps
            item.addItem(pg.ScatterPlotItem(points.x[idx], points.y[idx], size=POINT_SIZE, pen=None,
                                            brush=pg.mkBrush(*rgb, 200)))
        lo_hi = points.value_range
        name = self.colour_box.currentData()
        self.range_label.setText(f"{name}: {lo_hi[0]:.4g} … {lo_hi[1]:.4g} (viridis)" if lo_hi and name else "")
        item.setTitle(points.title)
        item.setLabel("bottom", self.x_box.currentText())
        item.setLabel("left", self.y_box.currentText())
        item.autoRange()
