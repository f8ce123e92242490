"""The tree's filter field: it finds nodes in groups nobody has expanded yet.

Typing starts a walk of every open store on the shared pool (``viewing.tree.walk``, its
``WalkModel`` run by a driver) that fills a
flat index of every node (``viewing.tree.index``); each keystroke searches the index (milliseconds
for 100,000 nodes) and puts the first ``MAX_SHOWN`` matches, with their ancestors, into the tree
(``HierarchyModel.reveal``: groups hold only those rows until someone expands them), so the tree
never holds more rows than a person can look at. While the walk goes on, what it adds is searched
as it arrives; matches not yet in the tree are carried into the next job that makes nodes of
them, so a newer job replacing an older one loses none. The selected row is always kept (the filter never moves the selection, so the
data view is not reloaded), and clearing the field restores the expansion from before filtering.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QTreeView, QWidget

from ...scheduling import Done, Driver, Task, Tasks, WorkerPool, call_job
from ...viewing.tree.index import NodeIndex
from ...viewing.tree.walk import MAX_NODES, WalkAsk, Walked, Walking, WalkModel, WalkOutcome, WalkRequest
from ...zarrlib import Group, Node
from ..bridge import post
from .columns import NAME_COLUMN
from .model import HierarchyModel, Index, PathRole

#: matches put into the tree for one text; typing more narrows them
MAX_SHOWN = 200


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
                 pool: WorkerPool, parent: QObject | None = None) -> None:
        super().__init__(parent)

        def on_gui(fn: Callable[[], None]) -> None:
            post(fn, self)

        #: the index built from consolidated metadata, as stores open
        self.indexing: Driver[Task[Any], Task[Any], Done[Any]] = Driver(Tasks(), pool, self._indexed, post=on_gui, name="filter index")
        #: the walk filling the index where there is none
        self.walks: Driver[WalkAsk, WalkRequest, Walking | Walked] = Driver(
            WalkModel(), pool, self._walk_news, post=on_gui, name="filter walk")
        #: matches made nodes
        self.making: Driver[Task[Any], Task[Any], Done[Any]] = Driver(Tasks(), pool, self._place, post=on_gui, name="filter matches")
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
        self._walking = False
        self.outcome: WalkOutcome | None = None
        self.index = NodeIndex()
        self._anchors: list[QPersistentModelIndex] = []
        self._roots: list[Group] = []  # the stores the index covers
        self._searched = 0  # entries of the index searched for the current text
        self._shown = 0  # matches put into the tree for it
        self.matches = 0  # how many entries match it
        self._unplaced: list[int] = []  # matches of the current text not yet put into the tree
        field.textChanged.connect(self._text_changed)
        model.rowsInserted.connect(lambda parent, *_: None if parent.isValid() else post(self._prepare, self))
        proxy.rowsInserted.connect(self._rows_shown)
        view.selectionModel().currentChanged.connect(self._pin)

    @property
    def active(self) -> bool:
        return self._saved is not None

    @property
    def pending(self) -> bool:
        """Matches being made nodes (a newer job carries those of the one it replaced)."""
        return self.making.busy()

    @property
    def searching(self) -> bool:
        """A walk still filling the index, or matches still being made nodes."""
        return self._walking or self.pending

    # -- the field ------------------------------------------------------------------------------
    def _text_changed(self, text: str) -> None:
        if text and not self.active:
            self._saved = [QPersistentModelIndex(i) for i in self._expanded(QModelIndex())]
            self._pin(self.view.currentIndex())
            self.model.hold_fetch = True
            if self._stale():
                self._start_walk()
        self._searched = self._shown = self.matches = 0
        self._unplaced = []
        if text:
            self._reveal(text)
        self.proxy.setFilterFixedString(text)
        if text:
            self._expand_below(QModelIndex())
            self._say()
        elif self.active:
            self._restore()

    def _prepare(self) -> None:
        """A store was opened: where consolidated metadata names every node, the index is built
        now on a worker (0.1 s for 100,000 paths), so the first keystroke only searches."""
        if self.active or self.searching:
            return
        tops, roots = self._open_roots()
        self.indexing.show(Task(call_job(lambda: NodeIndex.from_consolidated(roots), label="filter index"),
                                about=(roots, tops)))

    def _indexed(self, done: Done[NodeIndex | None]) -> None:
        roots, tops = done.task.about
        index = done.answer.value
        if index is None or self.active or self.searching or self._stale(roots):  # other stores now
            return  # (None: a walk lists them when someone filters; stale: a newer store opened)
        self._adopt(index, roots, tops)
        self.outcome = WalkOutcome(nodes=len(index))

    def _open_roots(self) -> tuple[list[QModelIndex], list[Group]]:
        """The top rows of the open stores that are groups, and their groups."""
        rows = [self.model.index(r, NAME_COLUMN) for r in range(self.model.rowCount())]
        groups = [(top, node) for top in rows if isinstance(node := self.model.node(top), Group)]
        return [top for top, _ in groups], [node for _, node in groups]

    def _adopt(self, index: NodeIndex, roots: list[Group], tops: list[QModelIndex]) -> None:
        self.index, self._roots = index, roots
        self._unplaced = []
        self._anchors = [QPersistentModelIndex(t) for t in tops]

    def _stale(self, roots: list[Group] | None = None) -> bool:
        """Whether the index covers other stores than those open now."""
        return self._open_roots()[1] != (self._roots if roots is None else roots)

    def _reveal(self, text: str) -> None:
        """Search what the index gained since the last search for ``text`` and put the matches
        (up to ``MAX_SHOWN`` in all) into the tree: their nodes are made on a worker, with those
        of an earlier search not placed yet (the newer job replaces that one)."""
        hits, count = self.index.search(text, MAX_SHOWN - self._shown, self._searched)
        self._searched = len(self.index)
        self.matches += count
        self._shown += len(hits)
        if not hits:
            return
        index = self.index
        wanted = self._unplaced = self._unplaced + hits
        self.making.show(Task(call_job(lambda: index.chains(wanted), label=f"matches of {text!r}"), about=(text, index)))

    def _place(self, done: Done[dict[int, list[list[Node]]]]) -> None:
        """Matches made nodes go into the tree, unless another text (or other stores) came; a
        job replaced by a newer one never gets here: the newer carries its matches."""
        text, index = done.task.about
        chains = done.answer.value
        if index is not self.index or text != self.field.text() or not self.active or not chains:
            return
        self._unplaced = []
        for which, found in chains.items():
            if which < len(self._anchors) and self._anchors[which].isValid():
                self.model.reveal_many(self._anchors[which], found)
        self._expand_below(QModelIndex())

    def _say(self) -> None:
        if not self.field.text():
            return
        words = []
        if self._walking:
            words.append(f"Searching… {len(self.index):,} nodes")
        if self.matches > self._shown:
            words.append(f"{self._shown:,} of {self.matches:,} matches shown: type more to narrow")
        elif self.outcome is not None and not self.searching:
            note = self.outcome.note(MAX_NODES)
            if note:
                words.append(note)
        self.label.setText("; ".join(words))
        self.bar.setVisible(bool(words))

    def _pin(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        self.proxy.pinned = QPersistentModelIndex(self.proxy.mapToSource(current))

    def _restore(self) -> None:
        """Back to the expansion from before filtering, with the same row selected."""
        self.cancel()
        saved, self._saved = self._saved or [], None
        self.model.hold_fetch = False
        self.view.collapseAll()
        for index in sorted((p for p in saved if p.isValid()), key=_depth):
            self.view.expand(self.proxy.mapFromSource(index))
        self.bar.hide()
        if self.view.currentIndex().isValid():
            self.view.scrollTo(self.view.currentIndex())

    def _expanded(self, parent: QModelIndex) -> list[QModelIndex]:
        out: list[QModelIndex] = []
        for row in range(self.model.rowCount(parent)):
            index = self.model.index(row, NAME_COLUMN, parent)
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
            self._expand_below(self.proxy.index(row, NAME_COLUMN, parent))

    def _expand_below(self, parent: QModelIndex) -> None:
        """Expand every shown row that has shown children (only ancestors of matches have them)."""
        stack = [parent]
        while stack:
            index = stack.pop()
            count = self.proxy.rowCount(index)
            if count and index.isValid() and not self.view.isExpanded(index):
                self.view.expand(index)
            stack.extend(self.proxy.index(r, NAME_COLUMN, index) for r in range(count))

    # -- the walk -------------------------------------------------------------------------------
    def _start_walk(self) -> None:
        self.walks.discard()  # a walk of other stores is of no use now
        self._walking = False
        self.cancel_button.hide()
        tops, roots = self._open_roots()
        if not tops:
            self._adopt(NodeIndex(), roots, tops)
            return
        known = NodeIndex.from_consolidated(roots)
        if known is not None:  # consolidated metadata names every node: no walk
            self._adopt(known, roots, tops)
            self.outcome = WalkOutcome(nodes=len(known))
            return
        index = NodeIndex(roots)
        self._adopt(index, roots, tops)
        self._walking = True
        self.outcome = None
        self.cancel_button.show()
        self.bar.show()
        self.walks.show(WalkAsk(roots, index))

    def _walk_news(self, news: Walking | Walked) -> None:
        """The newest walk's news (a walk replaced by a newer one says nothing: that one owns
        the index)."""
        if isinstance(news, Walking):
            self._progress()
        else:
            self._walked(news)

    def _progress(self) -> None:
        """More of the index: its matches go into the tree as they come."""
        if self.active and self.field.text():
            self._reveal(self.field.text())
            self._say()

    def _walked(self, walked: Walked) -> None:
        self._walking = False
        outcome, error = walked.outcome, walked.error
        self.outcome = outcome
        self.cancel_button.hide()
        if outcome is None or outcome.cancelled:
            self._roots = []  # walked afresh the next time someone filters
            if outcome is None and self.active:
                self.label.setText(f"Search failed: {error}")
                return
        if self.active and self.field.text():
            self._reveal(self.field.text())
            self._expand_below(QModelIndex())
            self._say()
        else:
            self.bar.hide()

    def cancel(self) -> None:
        """Stop the walk (Esc in the field, or the Cancel button); what it found stays."""
        self.walks.cancel()


def _depth(index: Index) -> int:
    depth = 0
    while index.isValid():
        index, depth = index.parent(), depth + 1
    return depth
