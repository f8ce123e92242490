"""The tree's filter field: it finds nodes in groups nobody has expanded yet.

Typing starts a walk of every open store on a worker thread (``viewing.tree_walk``); each listing
it reads goes into the model through the model's own listing path, so lazily listed rows and
rows opened by path stay as they are, and matches appear with their ancestors expanded while
the walk goes on. The selected row is always kept (the filter never moves the selection, so the
data view is not reloaded), and clearing the field restores the expansion from before filtering.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QTreeView, QWidget

from ..viewing.tree_walk import MAX_NODES, WalkOutcome, walk
from ..zarrlib import CancelToken, Group, Node
from .bridge import post, run_in_thread
from .tree_model import HierarchyModel, Index, PathRole

#: seconds between progress updates from the walking thread
PROGRESS_EVERY_S = 0.1


class FilterProxy(QSortFilterProxyModel):
    """Case-insensitive recursive filter by name or path that always keeps the ``pinned`` row
    (the selection), so filtering never takes the selected node away."""

    def __init__(self, model: HierarchyModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSourceModel(model)
        self.setFilterRole(PathRole)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.pinned = QPersistentModelIndex()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802
        pinned = self.pinned
        if pinned.isValid() and pinned.row() == source_row and pinned.parent() == source_parent:
            return True
        return super().filterAcceptsRow(source_row, source_parent)


class TreeFilter(QObject):
    def __init__(self, model: HierarchyModel, proxy: FilterProxy, view: QTreeView, field: QLineEdit,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model, self.proxy, self.view, self.field = model, proxy, view, field
        self.bar = QWidget()
        self.label = QLabel()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop searching (Esc)")
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout(self.bar)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.cancel_button)
        self.bar.hide()
        QShortcut(QKeySequence(Qt.Key.Key_Escape), field, self.cancel, context=Qt.ShortcutContext.WidgetShortcut)
        self._saved: list[QPersistentModelIndex] | None = None  # expanded rows before filtering
        self._token: CancelToken | None = None
        self.outcome: WalkOutcome | None = None
        field.textChanged.connect(self._text_changed)
        proxy.rowsInserted.connect(self._rows_shown)
        view.selectionModel().currentChanged.connect(self._pin)

    @property
    def active(self) -> bool:
        return self._saved is not None

    @property
    def searching(self) -> bool:
        return self._token is not None

    # -- the field ------------------------------------------------------------------------------
    def _text_changed(self, text: str) -> None:
        if text and not self.active:
            self._saved = [QPersistentModelIndex(i) for i in self._expanded(QModelIndex())]
            self._pin(self.view.currentIndex())
            self._start_walk()
        self.proxy.setFilterFixedString(text)
        if text:
            self._expand_below(QModelIndex())
        elif self.active:
            self._restore()

    def _pin(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        self.proxy.pinned = QPersistentModelIndex(self.proxy.mapToSource(current))

    def _restore(self) -> None:
        """Back to the expansion from before filtering, with the same row selected."""
        self.cancel()
        saved, self._saved = self._saved or [], None
        self.view.collapseAll()
        for index in sorted((QModelIndex(p) for p in saved if p.isValid()), key=_depth):
            self.view.expand(self.proxy.mapFromSource(index))
        self.bar.hide()
        if self.view.currentIndex().isValid():
            self.view.scrollTo(self.view.currentIndex())

    def _expanded(self, parent: QModelIndex) -> list[QModelIndex]:
        out: list[QModelIndex] = []
        for row in range(self.model.rowCount(parent)):
            index = self.model.index(row, 0, parent)
            if self.model.item(index).children and self.view.isExpanded(self.proxy.mapFromSource(index)):
                out.append(index)
                out += self._expanded(index)
        return out

    # -- showing matches ------------------------------------------------------------------------
    def _rows_shown(self, parent: QModelIndex, first: int, last: int) -> None:
        """Rows the filter lets through: open their ancestors, and whatever matches below them."""
        if not self.active or not self.field.text():
            return
        ancestor = parent
        while ancestor.isValid():
            if not self.view.isExpanded(ancestor):
                self.view.expand(ancestor)
            ancestor = ancestor.parent()
        for row in range(first, last + 1):
            self._expand_below(self.proxy.index(row, 0, parent))

    def _expand_below(self, parent: QModelIndex) -> None:
        """Expand every shown row that has shown children (only ancestors of matches have them)."""
        stack = [parent]
        while stack:
            index = stack.pop()
            count = self.proxy.rowCount(index)
            if count and index.isValid() and not self.view.isExpanded(index):
                self.view.expand(index)
            stack.extend(self.proxy.index(r, 0, index) for r in range(count))

    # -- the walk -------------------------------------------------------------------------------
    def _start_walk(self) -> None:
        tops = [self.model.index(r, 0) for r in range(self.model.rowCount())]
        tops = [t for t in tops if isinstance(self.model.node(t), Group)]
        if not tops:
            return
        anchors = [QPersistentModelIndex(t) for t in tops]
        roots = [self.model.node(t) for t in tops]
        token = self._token = CancelToken()
        self.outcome = None
        self.label.setText("Searching…")
        self.cancel_button.show()
        self.bar.show()
        last = [0.0]

        def listed(which: int, group: Group, members: list[Node]) -> None:
            post(lambda: self._listed(token, anchors[which], group.path, members), self)

        def progress(nodes: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                post(lambda: self._progress(token, nodes), self)

        def work() -> WalkOutcome:
            threading.current_thread().name = "zarrview-filter-walk"
            return walk(roots, listed, token, progress)  # type: ignore[arg-type]

        run_in_thread(work, lambda outcome, error: self._walked(token, outcome, error), self)

    def _listed(self, token: CancelToken, anchor: QPersistentModelIndex, path: str, members: list[Node]) -> None:
        if token is not self._token or not anchor.isValid():
            return  # a walk given up, or a store closed meanwhile
        index = QModelIndex(anchor)
        for name in [p for p in path.split("/") if p]:
            index = self.model.child_named(index, name)
            if not index.isValid():
                return
        self.model.add_listing(index, members)

    def _progress(self, token: CancelToken, nodes: int) -> None:
        if token is self._token:
            self.label.setText(f"Searching… {nodes:,} nodes")

    def _walked(self, token: CancelToken, outcome: WalkOutcome | None, error: BaseException | None) -> None:
        if token is not self._token:
            return
        self._token = None
        self.outcome = outcome
        self.cancel_button.hide()
        note = outcome.note(MAX_NODES) if outcome is not None else f"Search failed: {error}"
        if note and self.active:
            self.label.setText(note)
        else:
            self.bar.hide()

    def cancel(self) -> None:
        """Stop the walk (Esc in the field, or the Cancel button); what it found stays."""
        if self._token is not None:
            self._token.cancel()


def _depth(index: QModelIndex) -> int:
    depth = 0
    while index.isValid():
        index, depth = index.parent(), depth + 1
    return depth
