"""A CSR or CSC sparse matrix (``X``, ``layers/*``): an image of the dense block in view, read
from the block's rows (or columns) alone, and a table of its stored entries (row, column,
value), paged. The block moves with its first row and column; it is never the whole matrix."""

from __future__ import annotations

from collections.abc import Callable
import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QTabWidget, QVBoxLayout, QWidget

from ..scheduling import WorkerPool
from ..viewing.anndata.frame import cell_text
from ..viewing.anndata.jobs import block_job
from ..viewing.anndata.paging import PagedTable
from ..viewing.anndata.sparse import Entries, SparseMatrix
from .view_reads import ViewReads
from .paged_table import PagedTableModel, PagedTableView

BLOCK = 256


class SparseView(QTabWidget):
    def __init__(self, pool: WorkerPool, said: Callable[[str], None], done: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reads = ViewReads(pool, self, "sparse block", said, done)
        self.matrix: SparseMatrix | None = None
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
        self.reads.discard()
        self.matrix = None
        self.block = None
        self.image.clear()

    def read(self) -> None:
        matrix = self.matrix
        if matrix is None:
            return
        r0, c0, n = self.row0.value(), self.col0.value(), self.size.value()
        rows, cols = (r0, min(matrix.shape[0], r0 + n)), (c0, min(matrix.shape[1], c0 + n))
        self.reads.submit(block_job(matrix, rows, cols), lambda block, answer: self._draw(block, rows, cols),
                          lambda: matrix is self.matrix)

    def _draw(self, block: np.ndarray, rows: tuple[int, int], cols: tuple[int, int]) -> str | None:
        self.block = block
        finite = block[np.isfinite(block)] if block.dtype.kind == "f" else block
        hi = float(finite.max()) if finite.size else 1.0
        self.image.setImage(block.astype(np.float32), levels=(0.0, hi if hi > 0 else 1.0))
        self.image.setRect(cols[0], rows[0], cols[1] - cols[0], rows[1] - rows[0])
        self.plot.getPlotItem().autoRange()
        return None

    def settled(self) -> bool:
        return self.reads.reading == 0 and self.entries.settled()


def entry_text(page: Entries, row: int, column: int) -> str:
    i = row - page.start
    return str(int((page.rows, page.cols)[column][i])) if column < 2 else cell_text(page.values[i])
