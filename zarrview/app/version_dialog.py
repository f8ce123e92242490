"""Repository ▸ Version: pick a branch, tag or commit of an Icechunk repository to open.

The dialog opens at once with a Loading row; the refs and history are read by a job on the
window's pool and fill the table when they arrive, so a slow server never freezes the window.
The chosen version opens beside the one open now, so two versions can be compared; "Compare
with Open" lists what changed from the open version to the selected one (groups and arrays
new, deleted and updated, chunks written: ``zarrview changes``), read from the commits'
transaction logs on a worker, without reading a chunk.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..scheduling import Done, Driver, Task, Tasks, WorkerPool
from ..scheduling import call_job
from ..viewing.versions import VersionTable, changes_text, location_at, versions_job
from ..zarrlib.icechunk import IcechunkStore, diff_versions
from .bridge import post

#: the table's columns
KIND_COLUMN, NAME_COLUMN, TIME_COLUMN, MESSAGE_COLUMN = range(4)
HEADERS = ("Kind", "Version", "Time", "Message")


class VersionDialog(QDialog):
    def __init__(self, store: IcechunkStore, pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open a Version")
        self.resize(760, 420)
        self.store = store
        self.table: VersionTable | None = None
        self.note = QLabel(f"{store.base.url} — open now: {store.version}")
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.view = QTreeWidget()
        self.view.setHeaderLabels(list(HEADERS))
        self.view.setRootIsDecorated(False)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.header().setSectionResizeMode(MESSAGE_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.view.itemDoubleClicked.connect(lambda *_: self.accept())
        self.view.addTopLevelItem(QTreeWidgetItem(["", "Loading…", "", ""]))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(False)
        self.compare = QPushButton("Compare with Open")
        self.compare.setToolTip("What changed from the version open now to the one selected: groups and arrays new, "
                                "deleted and updated, chunks written (from the transaction logs; no chunk is read)")
        self.compare.setEnabled(False)
        self.compare.clicked.connect(self.compare_chosen)
        self.buttons.addButton(self.compare, QDialogButtonBox.ButtonRole.ActionRole)
        #: what changed between the open version and the one compared with, once read
        self.changes = QPlainTextEdit()
        self.changes.setReadOnly(True)
        self.changes.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.changes.hide()
        lay = QVBoxLayout(self)
        lay.addWidget(self.note)
        lay.addWidget(self.view, 2)
        lay.addWidget(self.changes, 1)
        lay.addWidget(self.buttons)
        self.diffs: Driver[Task[str], Task[str], Done[str]] = Driver(
            Tasks(), pool, self._compared, post=lambda fn: post(fn, self), name="version changes")
        self.driver: Driver[Task[VersionTable], Task[VersionTable], Done[VersionTable]] = Driver(
            Tasks(), pool, self._filled, post=lambda fn: post(fn, self), name="versions")
        self.driver.show(Task(versions_job(store)))

    def _filled(self, done: Done[VersionTable]) -> None:
        answer = done.answer
        self.view.clear()
        if answer.cancelled:
            return
        if answer.error is not None or answer.value is None:
            self.view.addTopLevelItem(QTreeWidgetItem(["", "Cannot read the versions", "", str(answer.error)]))
            return
        self.table = answer.value
        for i, row in enumerate(self.table.rows):
            item = QTreeWidgetItem([row.kind, row.name, row.time, row.message])
            if row.kind == "commit":
                item.setFont(NAME_COLUMN, QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            item.setToolTip(NAME_COLUMN, f"{row.version}\nsnapshot {row.snapshot}")
            if row.metadata:
                item.setToolTip(MESSAGE_COLUMN, f"{row.message}\n\n{row.metadata}")
            if i == self.table.current:
                for col in range(len(HEADERS)):
                    font = item.font(col)
                    font.setBold(True)
                    item.setFont(col, font)
            self.view.addTopLevelItem(item)
        for col in (KIND_COLUMN, NAME_COLUMN, TIME_COLUMN):
            self.view.resizeColumnToContents(col)
        current = self.view.topLevelItem(max(0, self.table.current))
        if current is not None:
            self.view.setCurrentItem(current)
            self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(True)
            self.compare.setEnabled(True)

    def chosen(self) -> str | None:
        """The version spelling of the selected row (``branch.main``, ``tag.v1``, a snapshot id)."""
        if self.table is None:
            return None
        current = self.view.currentItem()
        row = self.view.indexOfTopLevelItem(current) if current is not None else -1
        return self.table.rows[row].version if 0 <= row < len(self.table.rows) else None

    def compare_chosen(self) -> None:
        """List what changed from the version open now to the one selected (on a worker)."""
        chosen = self.chosen()
        if chosen is None:
            return
        store = self.store
        a, b = location_at(store, str(store.version)), location_at(store, chosen)
        self.changes.show()
        self.changes.setPlainText(f"Reading what changed from {store.version} to {chosen}…")

        def work() -> str:
            return changes_text(diff_versions(a, b, authorize=store.policy), str(store.version), chosen)

        self.diffs.show(Task(call_job(work, label=f"changes from {store.version} to {chosen}")))

    def _compared(self, done: Done[str]) -> None:
        answer = done.answer
        if answer.cancelled:
            return
        self.changes.setPlainText(answer.value if answer.error is None and answer.value is not None
                                  else f"Cannot compare: {answer.error}")
