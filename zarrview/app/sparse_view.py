"""A CSR or CSC sparse matrix (``X``, ``layers/*``): an image of the dense block in view, read
from the block's rows (or columns) alone, and a table of its stored entries (row, column,
value), paged. The block moves with its first row and column; it is never the whole matrix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QTabWidget, QVBoxLayout, QWidget

from ..scheduling import Answer, WorkerPool
from ..viewing.anndata.frame import cell_text
from ..viewing.anndata.jobs import block_job
from ..viewing.anndata.paging import PagedTable
from ..viewing.anndata.sparse import Entries, SparseMatrix
from .bridge import gui_lane
from .paged_table import PagedTableModel, PagedTableView

BLOCK = 256


class SparseView(QTabWidget):
    def __init__(self, pool: WorkerPool, said: Callable[[str], None], done: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lane = gui_lane(pool, self, "sparse block")
        self.said, self.done = said, done
        self.matrix: SparseMatrix | None = None
        self.reading = 0
        self.row0, self.col0 = QSpinBox(), QSpinBox()
        self.size = QSpinBox()
        self.size.setRange(8, 2048)
        self.size.setValue(BLOCK)
        controls = QHBoxLayout()
        for label, box in (("first row", self.row0), ("first column", self.col0), ("block", self.size)):
            controls.addWidget(QLabel(label))
            controls.addWidget(box)
            box.setKeyboardTracking(False)
            box.valueChanged.connect(lambda _v: self.read())
        controls.addStretch(1)
        self.about = QLabel()
        controls.addWidget(self.about)
        self.plot = pg.PlotWidget()
        self.plot.invertY(True)
        self.plot.setAspectLocked(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(pg.colormap.get("viridis"))
        self.plot.addItem(self.image)
        self.plot.setLabel("left", "row")
        self.plot.setLabel("bottom", "column")
        block = QWidget()
        layout = QVBoxLayout(block)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 1)
        self.entries = PagedTableView(pool, "stored entries", said)
        self.addTab(block, "Block")
        self.addTab(self.entries, "Stored entries")
        self.block: np.ndarray | None = None

    def show_matrix(self, matrix: SparseMatrix) -> None:
        self.matrix = matrix
        rows, cols = matrix.shape
        for box, n in ((self.row0, rows), (self.col0, cols)):
            box.blockSignals(True)
            box.setRange(0, max(0, n - 1))
            box.setValue(0)
            box.blockSignals(False)
        self.about.setText(f"{matrix.format.upper()} {rows:,} × {cols:,}, {matrix.nnz:,} stored entries")
        paged: PagedTable[Entries] = PagedTable(matrix.nnz, matrix.entries, f"the stored entries of {matrix.path}")
        self.entries.show_table(PagedTableModel(paged, ["row", "column", "value"], entry_text, self.entries))
        self.read()

    def clear(self) -> None:
        self.lane.discard()
        self.matrix = None
        self.block = None
        self.image.clear()

    def read(self) -> None:
        matrix = self.matrix
        if matrix is None:
            return
        r0, c0, n = self.row0.value(), self.col0.value(), self.size.value()
        rows, cols = (r0, min(matrix.shape[0], r0 + n)), (c0, min(matrix.shape[1], c0 + n))
        job = block_job(matrix, rows, cols)
        self.reading += 1
        self.said(f"Reading {job.label}…")
        self.lane.submit(job, lambda answer: self._apply(matrix, rows, cols, answer))

    def _apply(self, matrix: SparseMatrix, rows: tuple[int, int], cols: tuple[int, int], answer: Answer[Any]) -> None:
        self.reading -= 1
        if answer.stale or matrix is not self.matrix:
            return
        if answer.error is not None or answer.cancelled or answer.value is None:
            self.said(f"Cannot read {answer.label}: {answer.error or 'cancelled'}")
            self.done()
            return
        self.block = block = answer.value
        finite = block[np.isfinite(block)] if block.dtype.kind == "f" else block
        hi = float(finite.max()) if finite.size else 1.0
        self.image.setImage(block.astype(np.float32), levels=(0.0, hi if hi > 0 else 1.0))
        self.image.setRect(cols[0], rows[0], cols[1] - cols[0], rows[1] - rows[0])
        self.plot.getPlotItem().autoRange()
        stored = int(np.count_nonzero(block))
        self.said(f"Read {answer.label} in {answer.seconds * 1000:.0f} ms: {stored:,} non-zero values")
        self.done()

    def settled(self) -> bool:
        return self.reading == 0 and self.entries.settled()


def entry_text(page: Entries, row: int, column: int) -> str:
    i = row - page.start
    return str(int((page.rows, page.cols)[column][i])) if column < 2 else cell_text(page.values[i])
