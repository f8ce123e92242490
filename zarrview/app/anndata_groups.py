"""What the window does with a selected AnnData element: the attributes already read say what
it is (no request on the GUI thread); opening it (a dataframe's columns, a sparse matrix's
arrays, an embedding's cells table) runs on a worker, and the answer, while the node is still
selected, becomes a signal the window connects to the data view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..scheduling import Context, Done, Driver, Job, Task, Tasks, WorkerPool
from ..viewing.anndata import encoding_of, open_frame, open_sparse
from ..viewing.anndata.element import COLUMN, EMBEDDING, FRAME, OBJECT, SPARSE, element_kind
from ..viewing.anndata.embedding import anndata_root
from ..viewing.anndata.frame import Frame, column_frame
from ..zarrlib import Array, Group, Node, ZarrError
from .bridge import post

ANNDATA_TEXT = ("{path} is an AnnData object ({version}).\n\nSelect obs or var to see a table, X or a layer "
                "to see the matrix, an embedding in obsm to see its cells; uns holds its other values.")


class AnnDataHandler(QObject):
    frame_found = Signal(object)  # Frame
    sparse_found = Signal(object)  # SparseMatrix
    embedding_found = Signal(object, object)  # Array, Frame | None
    message = Signal(str)

    def __init__(self, pool: WorkerPool, selected: Callable[[], Node | None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.selected = selected
        #: the element selected, opened on a worker: a newer selection's replaces it
        self.driver: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._opened, post=lambda fn: post(fn, self), name="AnnData")

    @property
    def reading(self) -> int:
        """Elements being opened (0 or 1), for the window's ``is_settled``."""
        return int(self.driver.busy())

    def show(self, node: Node) -> bool:
        """Whether ``node`` is an AnnData element this handler shows (then it is being read)."""
        kind = element_kind(node)
        if isinstance(node, Group) and kind == FRAME:
            self._open(node, lambda _ctx: open_frame(node), self.frame_found.emit, f"the columns of {node.path}")
        elif isinstance(node, Group) and kind == COLUMN:
            self._open(node, lambda _ctx: column_frame(node), self.frame_found.emit, f"the column {node.path}")
        elif isinstance(node, Group) and kind == SPARSE:  # reads indptr's last pointer
            self._open(node, lambda ctx: open_sparse(node, cancel=ctx.cancel, cache=ctx.cache, executor=ctx.executor),
                       self.sparse_found.emit, f"the sparse matrix {node.path}")
        elif isinstance(node, Array) and kind == EMBEDDING:
            self._open(node, lambda _ctx: cells_of(node), lambda frame: self.embedding_found.emit(node, frame),
                       f"the cells of {node.path}")
        elif kind == OBJECT and (enc := encoding_of(node)) is not None:
            self.message.emit(ANNDATA_TEXT.format(path=node.path, version=f"encoding {enc.text()}"))
        else:
            return False
        return True

    def _open(self, node: Node, work: Callable[[Context], Any], found: Callable[[Any], None], label: str) -> None:
        """Open ``node`` in a job: ``work`` reads through the job's context, so what it reads
        decodes on the pool's executor."""
        self.message.emit(f"Reading {label}…")
        self.driver.show(Task(Job(work, label), about=(node, found)))

    def _opened(self, done: Done[Any]) -> None:
        """The element opened, handed on while it is still selected."""
        node: Node = done.task.about[0]
        found: Callable[[Any], None] = done.task.about[1]
        answer = done.answer
        if answer.cancelled or self.selected() is not node:
            return
        if answer.error is not None:
            self.message.emit(f"Cannot show {node.path}: {answer.error}")
            return
        found(answer.value)


def cells_of(array: Array) -> Frame | None:
    """The cells table an embedding is coloured by: ``obs`` of its AnnData object; None where
    the embedding is not in one, or its table cannot be read (it is drawn in one colour)."""
    try:
        root = anndata_root(array)
        return None if root is None else open_frame(root["obs"])  # type: ignore[arg-type]
    except ZarrError:
        return None
