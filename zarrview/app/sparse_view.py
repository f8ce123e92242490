"""A CSR or CSC sparse matrix (``X``, ``layers/*``): an image of the dense block in view, read
from the block's rows (or columns) alone, and a table of its stored entries (row, column,
value), paged. Panning and zooming read the block the view then shows (at most
``MAX_VIEW_SIDE`` rows and columns from its top left); the first row and column boxes move the
view. It is never the whole matrix. The block is read by its view model
(``viewing.anndata.reads.BlockModel``) on a driver: only the newest block is drawn."""

from __future__ import annotations

from collections.abc import Callable
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QTabWidget, QVBoxLayout, QWidget

from ..scheduling import Driver, WorkerPool
from ..viewing.anndata.frame import cell_text
from ..viewing.anndata.paging import PagedTable
from ..viewing.anndata.reads import Block, BlockAsk, BlockModel, Said, ViewRead
from ..viewing.anndata.sparse import Entries, SparseMatrix, block_in_view
from .bridge import post
from .paged_table import PagedTableModel, PagedTableView

BLOCK = 256
#: milliseconds the view must rest before the block it shows is read
SETTLE_MS = 60


class SparseView(QTabWidget):
    def __init__(self, pool: WorkerPool, said: Callable[[str], None], done: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.said, self.done = said, done
        self.model = BlockModel()
        self.driver: Driver[BlockAsk, ViewRead[np.ndarray], Said[Block]] = Driver(
            self.model, pool, self._drawn, post=lambda fn: post(fn, self), name="sparse block")
        self.matrix: SparseMatrix | None = None
        self.row0, self.col0 = QSpinBox(), QSpinBox()
        controls = QHBoxLayout()
        for label, box in (("first row", self.row0), ("first column", self.col0)):
            controls.addWidget(QLabel(label))
            controls.addWidget(box)
            box.setKeyboardTracking(False)
            box.valueChanged.connect(lambda _v: self.go_to(self.row0.value(), self.col0.value()))
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
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.read)
        self.plot.sigRangeChanged.connect(lambda *_: self._timer.start())
        block = QWidget()
        layout = QVBoxLayout(block)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 1)
        self.entries = PagedTableView(pool, "stored entries", said)
        self.addTab(block, "Block")
        self.addTab(self.entries, "Stored entries")
        self.block: np.ndarray | None = None
        #: the (rows, columns) of the block drawn
        self.span: tuple[tuple[int, int], tuple[int, int]] | None = None

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
        self._forget()  # another matrix's block is not drawn
        self.go_to(0, 0)
        self._timer.start()  # a view already there moves nowhere, and says nothing

    def go_to(self, row: int, col: int) -> None:
        """Show the ``BLOCK`` × ``BLOCK`` cells from ``[row, col]`` (the view reads what it shows)."""
        self.plot.setRange(xRange=(col, col + BLOCK), yRange=(row, row + BLOCK), padding=0)

    def clear(self) -> None:
        self._forget()
        self.matrix = None
        self.block = self.span = None
        self._timer.stop()
        self.image.clear()

    def _forget(self) -> None:
        """The block being read is not wanted, and no block counts as drawn."""
        self.driver.clear()
        self.model.clear()

    def read(self) -> None:
        """Read the block the view shows (the model reads nothing for the one drawn or being read)."""
        matrix = self.matrix
        if matrix is None:
            return
        (x0, x1), (y0, y1) = self.plot.getViewBox().viewRange()
        rows, cols = block_in_view((x0, x1), (y0, y1), matrix.shape)
        self.driver.show(BlockAsk(matrix, rows, cols))

    def _drawn(self, drawn: Said[Block]) -> None:
        block = drawn.value
        if block is not None:
            self._draw(block.values, block.rows, block.cols)
        self.said(drawn.said)
        if drawn.answered:
            self.done()

    def _draw(self, block: np.ndarray, rows: tuple[int, int], cols: tuple[int, int]) -> None:
        self.block, self.span = block, (rows, cols)
        finite = block[np.isfinite(block)] if block.dtype.kind == "f" else block
        hi = float(finite.max()) if finite.size else 1.0
        self.image.setImage(block.astype(np.float32), levels=(0.0, hi if hi > 0 else 1.0))
        self.image.setRect(cols[0], rows[0], cols[1] - cols[0], rows[1] - rows[0])

    def settled(self) -> bool:
        return not self.driver.busy() and not self._timer.isActive() and self.entries.settled()


def entry_text(page: Entries, row: int, column: int) -> str:
    i = row - page.start
    return str(int((page.rows, page.cols)[column][i])) if column < 2 else cell_text(page.values[i])
