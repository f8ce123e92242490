"""A table of any number of rows read a page at a time (``viewing.anndata.paging.PagedTable``):
the model says every row exists, shows "…" for rows whose page is not held, and asks its view
to read the pages of the rows on screen once scrolling pauses. Reads run on the view's lane;
a newer read replaces the one in flight."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableView, QWidget

from ..scheduling import Answer, WorkerPool
from ..viewing.anndata.paging import PageRequest, PagedTable
from .bridge import gui_lane
from .table_model import FAILED_BRUSH, UNREADABLE

PENDING = "…"
#: milliseconds the rows on screen must stay before their pages are read
SETTLE_MS = 30

#: ``cell(page, row, column)``: the text of a cell of a held page
Cell = Callable[[Any, int, int], str]


class PagedTableModel(QAbstractTableModel):
    """Every row of ``paged``; ``cell`` turns a held page into text, ``headers`` name the columns."""

    needed = Signal()  # a row was asked for whose page is not held

    def __init__(self, paged: PagedTable[Any], headers: list[str], cell: Cell, parent: QWidget,
                 missing: str = "NA") -> None:
        super().__init__(parent)
        self.paged = paged
        self.headers = headers
        self._cell = cell
        self.missing = missing
        self._grey = QColor(128, 128, 128)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else self.paged.total

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.headers)

    def text(self, row: int, column: int) -> str | None:
        """A cell's text; None while its page is not held."""
        page = self.paged.get(row)
        return None if page is None else self._cell(page, row, column)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        error = self.paged.error(index.row())
        if error is not None:  # hatched and named, as the array table shows chunks it could not read
            return {Qt.ItemDataRole.DisplayRole: UNREADABLE, Qt.ItemDataRole.ToolTipRole: error,
                    Qt.ItemDataRole.BackgroundRole: FAILED_BRUSH}.get(Qt.ItemDataRole(role))
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole):
            return None
        text = self.text(index.row(), index.column())
        if text is None:
            self.needed.emit()
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._grey if text in (None, self.missing) else None
        return PENDING if text is None else text

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.headers[section] if section < len(self.headers) else None
        return f"{section:,}"

    def shown(self, spans: list[tuple[int, int]]) -> None:
        for a, b in spans:
            if b > a:
                self.dataChanged.emit(self.index(a, 0), self.index(b - 1, self.columnCount() - 1))


class PagedTableView(QTableView):
    """A ``QTableView`` that reads the pages of the rows it shows; ``said(text)`` reports reads."""

    def __init__(self, pool: WorkerPool, name: str, said: Callable[[str], None] = lambda _t: None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lane = gui_lane(pool, self, name)
        self.said = said
        self.reading = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.fetch)
        self.verticalScrollBar().valueChanged.connect(lambda _v: self._timer.start())

    def show_table(self, model: PagedTableModel) -> None:
        old = self.model()
        self.lane.discard()
        self.setModel(model)
        model.needed.connect(self._timer.start)
        if old is not None:
            old.deleteLater()
        self._timer.start()

    def visible_rows(self) -> tuple[int, int]:
        first = self.rowAt(0)
        last = self.rowAt(self.viewport().height() - 1)
        first = max(0, first)
        return first, (last if last >= 0 else first + 100)

    def fetch(self) -> None:
        model = self.model()
        if not isinstance(model, PagedTableModel):
            return
        first, last = self.visible_rows()
        request = model.paged.request(first, last)
        if request is None:
            return
        self.reading += 1
        self.said(f"Reading {request.job.label}…")
        self.lane.submit(request.job, lambda answer: self._apply(model, request, answer))

    def _apply(self, model: PagedTableModel, request: PageRequest[Any], answer: Answer[Any]) -> None:
        self.reading -= 1
        spans = model.paged.apply(request, answer)
        if model is not self.model():
            return
        if answer.error is not None:
            self.said(f"Cannot read {request.job.label}: {answer.error}")
        elif spans:
            failed = f"; {len(answer.failures)} chunks could not be read" if answer.failures else ""
            self.said(f"Read {request.job.label} in {answer.seconds * 1000:.0f} ms{failed}")
        model.shown(spans)
        if not answer.stale and not answer.cancelled and answer.error is None:
            self._timer.start()  # rows scrolled into view meanwhile

    def settled(self) -> bool:
        return self.reading == 0 and not self._timer.isActive()
