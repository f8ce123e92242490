"""View ▸ I/O: what each view costs as it happens, in a dock.

While the dock is shown, the worker pool records the I/O of every job (``WorkerPool.io_sink``;
closed, nothing is recorded): the views table has a row per job (requests, those tried again,
bytes, cache hits, chunks decoded, decode time, when the first and last chunk were in place,
throughput), the requests table the requests of the view selected (or of the newest) with
their tries, and the status bar (at its right, while the dock is shown) the newest view in one
line. Clear empties both; Export CSV… writes every request kept (those of the newest
``REQUESTS_OF`` views).
"""

from __future__ import annotations

import csv
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..scheduling import Answer, WorkerPool
from ..viewing.io_costs import REQUEST_COLUMNS, VIEW_COLUMNS, ViewCost, request_row
from ..zarrlib.io_log import IoLog
from .bridge import post

#: views kept in the dock (the oldest go first), and those of them whose requests are kept (each
#: up to ``io_log.REQUESTS_KEPT``): older views keep their totals only, so the dock stays small
VIEWS_KEPT = 500
REQUESTS_OF = 20


class IoDock(QDockWidget):
    #: the newest view in one line (the window shows it in the status bar)
    summary = Signal(str)

    def __init__(self, pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__("I/O", parent)
        self.setObjectName("io_dock")
        self.pool = pool
        self.views: deque[ViewCost] = deque(maxlen=VIEWS_KEPT)
        self.view_table = _table(VIEW_COLUMNS)
        self.view_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view_table.itemSelectionChanged.connect(self._show_requests)
        self.request_table = _table(REQUEST_COLUMNS)
        clear, export = QPushButton("Clear"), QPushButton("Export CSV…")
        clear.clicked.connect(self.clear)
        export.clicked.connect(self._export)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(clear)
        buttons.addWidget(export)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.view_table, 1)
        layout.addWidget(self.request_table, 2)
        layout.addLayout(buttons)
        self.setWidget(body)
        self.visibilityChanged.connect(self._recording)
        #: where Export CSV… writes without asking (tests)
        self.ask_path: Callable[[], str] = lambda: QFileDialog.getSaveFileName(
            self, "Export the requests", "requests.csv", "CSV (*.csv)")[0]

    def _recording(self, shown: bool) -> None:
        """Jobs record their I/O only while the dock is shown."""
        self.pool.io_sink = self._received if shown else None

    def _received(self, log: IoLog, answer: Answer[Any]) -> None:
        """A job's I/O, on its worker thread: shown on the GUI thread."""
        cost = ViewCost(log, answer.seconds, answer.cancelled)
        post(lambda: self.add(cost), self)

    def add(self, cost: ViewCost) -> None:
        self.views.append(cost)
        if len(self.views) > REQUESTS_OF:
            self.views[-REQUESTS_OF - 1].log.requests.clear()
        if self.view_table.rowCount() >= VIEWS_KEPT:
            self.view_table.removeRow(0)
        row = self.view_table.rowCount()
        self.view_table.insertRow(row)
        for col, text in enumerate(cost.row()):
            self.view_table.setItem(row, col, _item(text, col > 0))
        if not self.view_table.selectedItems():
            self._fill_requests(cost)
        self.summary.emit(cost.line())

    def clear(self) -> None:
        self.views.clear()
        self.view_table.setRowCount(0)
        self.request_table.setRowCount(0)

    def _show_requests(self) -> None:
        rows = {i.row() for i in self.view_table.selectedItems()}
        if rows:
            offset = len(self.views) - self.view_table.rowCount()
            self._fill_requests(self.views[offset + min(rows)])

    def _fill_requests(self, cost: ViewCost) -> None:
        records = list(cost.log.requests)
        self.request_table.setRowCount(len(records))
        for row, record in enumerate(records):
            for col, text in enumerate(request_row(record, cost.log)):
                self.request_table.setItem(row, col, _item(text, col in (2, 3, 4)))

    def _export(self) -> None:
        path = self.ask_path()
        if path:
            self.export_csv(path)

    def export_csv(self, path: str) -> None:
        with open(path, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(("View", *REQUEST_COLUMNS))
            for cost in self.views:
                for record in cost.log.requests:
                    out.writerow((cost.log.label, *request_row(record, cost.log)))


def _table(columns: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _item(text: str, number: bool) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    if number:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item
