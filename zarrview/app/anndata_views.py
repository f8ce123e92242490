"""The data view's AnnData elements: a dataframe as one paged table, a sparse matrix as a block
image and a table of stored entries, an embedding as a scatter plot. What each element is comes
from ``viewing.anndata``; these widgets draw it and read through their drivers."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QWidget

from ..scheduling import WorkerPool
from ..viewing.anndata.frame import Frame, FramePage
from ..viewing.anndata.paging import PagedTable
from ..viewing.anndata.sparse import SparseMatrix
from ..zarrlib import Array
from .paged_table import PagedTableModel, PagedTableView
from .scatter_view import ScatterView
from .sparse_view import SparseView


class AnnDataViews:
    """The widgets, for the data view's stack; ``owner``: the DataView (status, loaded, stack)."""

    def __init__(self, pool: WorkerPool, owner: Any) -> None:
        self.owner = owner
        said, done = owner.status.emit, owner.loaded.emit
        self.table = PagedTableView(pool, "dataframe rows", said)
        self.sparse = SparseView(pool, said, done)
        self.scatter = ScatterView(pool, said, done)
        self.frame: Frame | None = None

    def widgets(self) -> list[QWidget]:
        return [self.table, self.sparse, self.scatter]

    def clear(self) -> None:
        self.frame = None
        self.table.discard()
        self.sparse.clear()
        self.scatter.clear()

    def show_frame(self, frame: Frame) -> None:
        """The dataframe as one table: the index, then the columns in ``column-order``."""
        self.frame = frame
        paged: PagedTable[FramePage] = PagedTable(frame.rows, frame.read_page, frame.path)
        self.table.show_table(PagedTableModel(paged, frame.headers, frame_text, self.table))
        self.owner.stack.setCurrentWidget(self.table)
        self.owner.status.emit(f"{frame.path}: {frame.rows:,} rows × {len(frame.columns)} columns")

    def show_sparse(self, matrix: SparseMatrix) -> None:
        self.sparse.show_matrix(matrix)
        self.owner.stack.setCurrentWidget(self.sparse)

    def show_embedding(self, array: Array, frame: Frame | None) -> None:
        self.scatter.show_embedding(array, frame)
        self.owner.stack.setCurrentWidget(self.scatter)

    def settled(self) -> bool:
        return self.table.settled() and self.sparse.settled() and self.scatter.settled()


def frame_text(page: FramePage, row: int, column: int) -> str:
    return page.text(row, column)
