"""Arrays as tables: strings, bytes and records, or any array on request, paged in by rows.

Cells of chunks that could not be read say so, hatched in red with the chunk's key and error
in their tooltip, as the image view hatches them: the fill value the reader put there (an
empty string, a zero) would otherwise pass for data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QWidget

from ..viewing.image.readout import format_value
from ..zarrlib import ChunkFailure

UNREADABLE = "(unreadable)"
FAILED_BRUSH = QBrush(QColor(255, 59, 48, 110), Qt.BrushStyle.BDiagPattern)
#: the header text of a row or a column
Label = Callable[[int], str]


class ArrayTable(QAbstractTableModel):
    """Rows of an array, paged in as the view scrolls (``fetchMore`` asks the data view for more)."""

    def __init__(self, total_rows: int, columns: int, fields: list[str], ask: Any, parent: QWidget, *,
                 dims: tuple[int, int] = (0, 1), labels: tuple[Label, Label] | None = None,
                 text: Callable[[Any], str | None] | None = None) -> None:
        """``dims``: the array dimensions shown as rows and as columns (where failed chunks are);
        ``labels``: the header text of a row and of a column (coordinate values), else indices;
        ``text``: a cell's text where it has its own (a packed value to its packing's decimals)."""
        super().__init__(parent)  # owned by the view: Qt, not Python's garbage collector, deletes it
        self._dims = dims
        self._labels = labels
        self._text = text
        self._rows: list[Any] = []
        self._total = total_rows
        self._columns = columns
        self._fields = fields
        self._ask = ask  # ask(start_row) requests the next page
        self._asked = 0
        #: (rows r0:r1, columns c0:c1, "key: error") of each chunk that could not be read
        self._failed: list[tuple[int, int, int, int, str]] = []

    def append(self, block: np.ndarray, failures: tuple[ChunkFailure, ...] = ()) -> None:
        """The next rows; ``failures``: the chunks of ``block`` that could not be read (their
        boxes are in array coordinates: rows along ``dims[0]``, columns along ``dims[1]``)."""
        rows_dim, columns_dim = self._dims
        for f in failures:
            r0, r1 = f.box[rows_dim] if len(f.box) > rows_dim else (0, 1)
            c0, c1 = f.box[columns_dim] if len(f.box) > columns_dim and not self._fields else (0, self.columnCount())
            self._failed.append((r0, r1, c0, c1, f"{f.key}: {f.message}"))
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

    def failure(self, index: QModelIndex | QPersistentModelIndex) -> str | None:
        """``key: error`` of the chunk that could not be read at ``index``, if it is one."""
        r, c = index.row(), index.column()
        return next((text for r0, r1, c0, c1, text in self._failed if r0 <= r < r1 and c0 <= c < c1), None)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.BackgroundRole):
            failed = self.failure(index) if self._failed else None
            return failed if role == Qt.ItemDataRole.ToolTipRole or failed is None else FAILED_BRUSH
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if self._failed and self.failure(index) is not None:
            return UNREADABLE
        row = self._rows[index.row()]
        if self._fields:
            v = row[self._fields[index.column()]]
        elif isinstance(row, np.ndarray):
            v = row[index.column()]
        else:
            v = row
        if isinstance(v, str):
            return v
        own = None if self._text is None else self._text(v)
        return format_value(v) if own is None else own

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal and self._fields:
            return self._fields[section]
        if self._labels is not None:
            return self._labels[0 if orientation == Qt.Orientation.Vertical else 1](section)
        return str(section)
