"""Arrays as tables: strings, bytes and records, or any array on request, paged in by rows."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QWidget


class ArrayTable(QAbstractTableModel):
    """Rows of an array, paged in as the view scrolls (``fetchMore`` asks the data view for more)."""

    def __init__(self, total_rows: int, columns: int, fields: list[str], ask: Any, parent: QWidget) -> None:
        super().__init__(parent)  # owned by the view: Qt, not Python's garbage collector, deletes it
        self._rows: list[Any] = []
        self._total = total_rows
        self._columns = columns
        self._fields = fields
        self._ask = ask  # ask(start_row) requests the next page
        self._asked = 0

    def append(self, block: np.ndarray) -> None:
        rows = list(block.reshape(block.shape[0], -1)) if block.ndim >= 2 else list(block.reshape(-1))
        if not rows:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._rows.extend(rows)
        self.endInsertRows()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else (len(self._fields) or self._columns)

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        return not parent.isValid() and len(self._rows) < self._total and self._asked <= len(self._rows)

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:  # noqa: N802
        if self.canFetchMore(parent):
            self._asked = len(self._rows) + 1
            self._ask(len(self._rows))

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        row = self._rows[index.row()]
        if self._fields:
            v = row[self._fields[index.column()]]
        elif isinstance(row, np.ndarray):
            v = row[index.column()]
        else:
            v = row
        return v if isinstance(v, str) else repr(v.item() if isinstance(v, np.generic) else v)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal and self._fields:
            return self._fields[section]
        return str(section)
