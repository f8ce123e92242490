"""File ▸ Validate Store: the findings of ``viewing.validation`` for the store shown, as a table.

The store is listed and its documents, consolidated metadata and shard indexes read on a
worker (a large remote store takes a while): the dialog says how far it got, Cancel stops it,
and closing the dialog cancels it. Each row is a finding: severity, key, rule and what is
wrong; its tooltip names the section of the specification.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..scheduling import Context, Done, Driver, Job, Task, Tasks, WorkerPool
from ..viewing.validation import validate
from ..zarrlib import Node, ReadCancelled
from ..zarrlib.validate import Finding, count
from .bridge import post

COLUMNS = ("Severity", "Key", "Rule", "Finding")


class ValidationDialog(QDialog):
    def __init__(self, pool: WorkerPool, root: Node, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Validate {root.url}")
        self.resize(1000, 520)
        self.summary = QLabel(f"Listing {root.url}…")
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        for col in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.rejected.connect(self._cancel_or_close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        layout.addWidget(self.buttons)
        #: the findings shown (None until the check is done)
        self.findings: list[Finding] | None = None
        self._root = root
        self._driver: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._done, post=lambda fn: post(fn, self), name="validation")
        self.finished.connect(lambda _: self._driver.discard())

        def seen(n: int) -> None:
            post(lambda: self._progress(n), self)

        def work(ctx: Context) -> Any:
            try:
                prefix = root.path.strip("/") + "/" if root.path.strip("/") else ""
                return validate(root.store, root, prefix, ctx.cancel, seen)
            except ReadCancelled:
                return None

        self._driver.show(Task(Job(work, f"validation of {root.url}"), about=root))

    def _progress(self, seen: int) -> None:
        if self.findings is None and self._driver.busy():
            self.summary.setText(f"Listing {self._root.url}: {seen:,} objects so far…")

    def _cancel_or_close(self) -> None:
        if self.findings is None and self._driver.busy():
            self._driver.cancel()
            self.summary.setText("Cancelled.")
            self.buttons.setStandardButtons(QDialogButtonBox.StandardButton.Close)
        else:
            self.reject()

    def _done(self, done: Done[Any]) -> None:
        answer = done.answer
        self.buttons.setStandardButtons(QDialogButtonBox.StandardButton.Close)
        if answer.cancelled or answer.value is None and answer.error is None:
            return
        if answer.error is not None:
            self.summary.setText(f"{self._root.url} cannot be validated: {answer.error}")
            return
        findings = answer.value
        if not isinstance(findings, list):
            return
        self.findings = findings
        errors, warnings = count(findings, "error"), count(findings, "warning")
        self.summary.setText(f"{self._root.url}: {errors} error{'s' if errors != 1 else ''}, "
                             f"{warnings} warning{'s' if warnings != 1 else ''}"
                             + ("" if findings else ": nothing breaks the specifications"))
        self.table.setRowCount(len(findings))
        for row, f in enumerate(findings):
            for col, text in enumerate((f.severity, f.key, f.rule, f.message)):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{f.message}\n{f.section}" if col == 3 else f.section)
                self.table.setItem(row, col, item)
