"""A table of any number of rows read a page at a time (``viewing.anndata.paging.PagedTable``):
the model says every row exists, shows "…" for rows whose page is not held, and asks its view
to read the pages of the rows on screen once scrolling pauses. The view's driver runs the pages'
view model (``viewing.anndata.paging.PagesModel``): a newer read replaces the one in flight."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableView, QWidget

from ..scheduling import Driver, WorkerPool
from ..viewing.anndata.paging import PagedTable, PagesModel, PagesRead, PagesShown, RowsInView
from .bridge import post
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
        self.pages = PagesModel()
        self.driver: Driver[RowsInView, PagesRead, PagesShown] = Driver(
            self.pages, pool, self._shown, post=lambda fn: post(fn, self), name=name)
        self.said = said
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.fetch)
        self.verticalScrollBar().valueChanged.connect(lambda _v: self._timer.start())

    def show_table(self, model: PagedTableModel) -> None:
        old = self.model()
        self.discard()
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

    def discard(self) -> None:
        """The pages being read are not wanted (another table is shown, or none)."""
        self.driver.discard()
        self.pages.clear()

    def fetch(self) -> None:
        model = self.model()
        if not isinstance(model, PagedTableModel):
            return
        first, last = self.visible_rows()
        self.driver.show(RowsInView(model.paged, first, last))

    def _shown(self, shown: PagesShown) -> None:
        model = self.model()
        if not isinstance(model, PagedTableModel) or shown.table is not model.paged:
            return
        if shown.said is not None:
            self.said(shown.said)
        model.shown(list(shown.spans))
        if shown.again:
            self._timer.start()  # rows scrolled into view meanwhile

    def settled(self) -> bool:
        return not self.driver.busy() and not self._timer.isActive()
