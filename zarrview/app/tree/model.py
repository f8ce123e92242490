"""The hierarchy as a Qt item model: plain ``TreeItem`` rows (``tree_items``) under a thin model
(as silx).

Children are listed on expand, on the shared worker pool (``viewing.tree.pages``, run by a driver
keyed by group), in pages (``PAGE`` members a time: a
group of 100,000 children shows its first rows at once, the next page when the view scrolls to
the end, through Qt's ``canFetchMore``/``fetchMore``); meanwhile a "Loading…" row shows. A child
that fails to load becomes an error row; the rest of the tree keeps working. The filter puts only
its matches (and their ancestors) in (``reveal``: partial listings, completed when someone
expands the group once the filter is cleared; ``hold_fetch`` keeps the view from listing while
it filters).

A group holding OME-Zarr metadata says what it is in the Type column ("image (4 levels)",
"plate 8×12, 2 wells", "labels (1)"), from its attributes alone: no request. An image's level
arrays, its members anyway, say which level they are ("uint16 · level 1").
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from ...describe import dtype_text, shape_text
from ...scheduling import Driver, WorkerPool
from ...viewing.anndata.encoding import encoding_of
from ...viewing.conventions.text import type_text as convention_type
from ...viewing.ome.text import OmeMark, ome_mark, type_text
from ...viewing.tree.pages import FIRST_REMOTE, PAGE, Page, PageAsk, PageRequest, PagesModel
from ...viewing.tree.storage import (StorageAsk, StorageModel, StorageRequest, Stored, figures_tooltip, ratio_text,
                                     sizes_of, stored_text)
from ...zarrlib import Array, Group, Node, UnsupportedArray, ZarrError
from ...zarrlib.nodes import Outline
from ..bridge import post
from ..icons import node_icon
from .columns import COLUMN_COUNT, HEADERS, NAME_COLUMN, RATIO_COLUMN, SHAPE_COLUMN, STORED_COLUMN, TYPE_COLUMN
from .items import TreeItem, error_of, name_of, outline_data

__all__ = ["HierarchyModel", "TreeItem", "OmeMark", "ome_mark", "NodeRole", "PathRole", "PAGE", "FIRST_REMOTE"]

NodeRole = Qt.ItemDataRole.UserRole + 1
PathRole = Qt.ItemDataRole.UserRole + 2
Index = QModelIndex | QPersistentModelIndex
# made once: Qt asks for every row's flags many times, and each enum "|" costs microseconds
_ENABLED = Qt.ItemFlag.ItemIsEnabled
_SELECTABLE = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
#: rows whose stored figures are read at once (each an audit: a listing, shard indexes); the
#: others wait their turn, so a screenful of rows leaves workers for the image
STORAGE_AT_ONCE = 2


class HierarchyModel(QAbstractItemModel):
    def __init__(self, pool: WorkerPool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: listings, one key per group: groups list side by side, a group one page at a time
        self.listings: Driver[PageAsk, PageRequest, Page] = Driver(
            PagesModel(), pool, self._page, post=lambda fn: post(fn, self), name="tree pages")
        self.root = TreeItem(None)
        self.root.children = []
        #: while the filter shows its matches, expanding a row does not list its group
        self.hold_fetch = False
        #: the view's user scrolled to the end of rows (``tree_paging``): a further page may be read
        self.paging_asked = False
        #: rows made so far (tests check that a large group is not turned into rows at once)
        self.items_made = 0
        #: the Stored and Ratio columns are shown: rows read their figures as they are drawn
        self.storage_shown = False
        self.sizes: Driver[StorageAsk, StorageRequest, Stored] = Driver(
            StorageModel(), pool, self._stored, post=lambda fn: post(fn, self), name="tree storage")
        #: rows whose figures were asked for and have not come (in flight or waiting their turn)
        self._sizing: dict[int, TreeItem] = {}
        self._size_queue: deque[TreeItem] = deque()

    def _outlined(self, parent: TreeItem, outline: Outline) -> TreeItem:
        self.items_made += 1
        return TreeItem(parent, None, outline=outline)

    def _item(self, parent: TreeItem, node: Node | None = None, **kw: Any) -> TreeItem:
        self.items_made += 1
        return TreeItem(parent, node, error=error_of(node) if node is not None else kw.pop("error", None), **kw)

    # -- stores -----------------------------------------------------------------------------
    def add_store(self, node: Node, label: str, identity: str | None = None,
                  opened: tuple[str, dict[str, Any]] | None = None) -> QModelIndex:
        """A store's top row; ``identity`` (``store_identity``: URL and options) tells it from
        other stores at the same URL, and defaults to the store's URL; ``opened`` is the location
        and options it was opened with (what a saved view of it holds)."""
        item = self._item(self.root, node, text=label)
        item.identity = identity
        item.opened = opened
        return self._add_top(item)

    def add_error(self, label: str, message: str) -> QModelIndex:
        return self._add_top(self._item(self.root, None, text=label, error=message))

    def _add_top(self, item: TreeItem) -> QModelIndex:
        assert self.root.children is not None
        row = len(self.root.children)
        self.beginInsertRows(QModelIndex(), row, row)
        self.root.children.append(item)
        self.root.changed()
        self.endInsertRows()
        return self.index(row, NAME_COLUMN)

    def find_store(self, identity: str) -> QModelIndex:
        """The top row of the store open with ``identity`` (its URL where none was given), or an
        invalid index."""
        for row, child in enumerate(self.root.children or []):
            if child.node is not None and (child.identity or child.node.url) == identity:
                return self.index(row, NAME_COLUMN)
        return QModelIndex()

    def remove_top(self, row: int) -> None:
        assert self.root.children is not None
        self.beginRemoveRows(QModelIndex(), row, row)
        item = self.root.children.pop(row)
        self.root.changed()
        self.endRemoveRows()
        if item.node is not None and not any(c.node is not None and c.node.store is item.node.store for c in self.root.children):
            item.node.store.close()

    def insert_path(self, top_row: int, chain: list[Node]) -> QModelIndex:
        """Place nodes reached by path (child, grandchild, …) under the store in ``top_row``,
        reusing rows already listed; the index of the last one."""
        return self.reveal(self.index(top_row, NAME_COLUMN), chain)

    def reveal(self, top: QModelIndex, chain: list[Node]) -> QModelIndex:
        """The rows of ``chain`` (a node below the store at ``top``, preceded by its ancestors
        below it), inserted where missing among the rows there, in name order; a group not
        listed yet holds only these (``partial``) until it is expanded. The last row's index."""
        index = top
        for node in chain:
            item = self.item(index)
            if item.children is None:
                item.children, item.partial = [], True
            row = item.child_row(node.path)
            if row is None:
                hints = [i for i, c in enumerate(item.children) if c.hint]
                for i in reversed(hints):
                    self.beginRemoveRows(index, i, i)
                    item.children.pop(i)
                    item.changed()
                    self.endRemoveRows()
                row = bisect.bisect_right(item.children, node.name, key=name_of)
                self.beginInsertRows(index, row, row)
                item.children.insert(row, self._item(item, node))
                item.changed()
                self.endInsertRows()
            index = self.index(row, NAME_COLUMN, index)
        return index

    def reveal_many(self, top: Index, chains: list[list[Node]]) -> None:
        """``reveal`` for many nodes below the store at ``top`` at once: the missing rows of each
        depth inserted per group in runs, not one by one (the filter's matches)."""
        depth = 0
        while True:
            wanted: dict[int, tuple[TreeItem, dict[str, Node]]] = {}
            for chain in chains:
                if depth < len(chain):
                    parent = self.item(top) if depth == 0 else self._found(top, chain[:depth])
                    if parent is not None and parent.child_row(chain[depth].path) is None:
                        wanted.setdefault(id(parent), (parent, {}))[1][chain[depth].path] = chain[depth]
            if not any(depth < len(c) for c in chains):
                return
            for parent, nodes in wanted.values():
                if parent.children is None:
                    parent.children, parent.partial = [], True
                index = self._index_of(parent)
                self._insert_in_order(index, parent, [self._item(parent, n) for n in nodes.values()])
            depth += 1

    def _found(self, top: Index, chain: list[Node]) -> TreeItem | None:
        item = self.item(top)
        for node in chain:
            row = item.child_row(node.path)
            if row is None or item.children is None:
                return None
            item = item.children[row]
        return item

    def _index_of(self, item: TreeItem) -> QModelIndex:
        return QModelIndex() if item is self.root or item.parent is None else self.createIndex(item.row(), NAME_COLUMN, item)

    # -- stored figures ---------------------------------------------------------------------
    def set_storage_shown(self, shown: bool) -> None:
        """Show the Stored and Ratio columns (rows read their figures as they are drawn), or
        stop: figures not in yet are no longer read; those read stay for the next time."""
        self.storage_shown = shown
        if not shown:
            self.sizes.discard()
            self._sizing.clear()
            self._size_queue.clear()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, STORED_COLUMN, RATIO_COLUMN)

    def sizing(self) -> bool:
        """Whether some row's figures are still being read (tests wait on it)."""
        return bool(self._sizing)

    def _storage_data(self, item: TreeItem, col: int, role: int) -> Any:
        if not self.storage_shown or item.placeholder:
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _RIGHT
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        node = item.node  # an outlined array's node is made here (no request)
        if node is None or not sizes_of(node):
            return None
        if item.storage is None and id(item) not in self._sizing:
            self._size(item)
        if role == Qt.ItemDataRole.ToolTipRole:
            return figures_tooltip(item.storage, item.is_group)
        if col == STORED_COLUMN:
            return stored_text(item.storage)
        return "" if item.is_group else ratio_text(item.storage)

    def _size(self, item: TreeItem) -> None:
        self._sizing[id(item)] = item
        self._size_queue.append(item)
        self._next_sizes()

    def _next_sizes(self) -> None:
        while self._size_queue and len(self._sizing) - len(self._size_queue) < STORAGE_AT_ONCE:
            item = self._size_queue.popleft()
            node = item.node
            if node is None:
                self._sizing.pop(id(item), None)
                continue
            self.sizes.ask(self.sizes.model.request(StorageAsk(node, item)), key=id(item))

    def _stored(self, stored: Stored) -> None:
        item = stored.ask.about
        if self._sizing.pop(id(item), None) is None:
            return  # the columns were hidden meanwhile
        item.storage = stored.figures
        self._next_sizes()
        if not self._attached(item):
            return  # its store was closed meanwhile
        index = self._index_of(item)
        self.dataChanged.emit(index.siblingAtColumn(STORED_COLUMN), index.siblingAtColumn(RATIO_COLUMN))

    def _attached(self, item: TreeItem) -> bool:
        """Whether ``item`` is still a row of the tree (not below a store closed since)."""
        while item.parent is not None:
            siblings = item.parent.children
            row = item.row()
            if siblings is None or row >= len(siblings) or siblings[row] is not item:
                return False
            item = item.parent
        return item is self.root

    # -- lookup -----------------------------------------------------------------------------
    def item(self, index: Index) -> TreeItem:
        if not index.isValid():
            return self.root
        ptr = index.internalPointer()
        assert isinstance(ptr, TreeItem)
        return ptr

    def node(self, index: Index) -> Node | None:
        return self.item(index).node

    # -- QAbstractItemModel -----------------------------------------------------------------
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        item = self.item(parent)
        if item.children is None or not (0 <= row < len(item.children)) or not (0 <= column < COLUMN_COUNT):
            return QModelIndex()
        return self.createIndex(row, column, item.children[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        parent = self.item(index).parent
        if parent is None or parent is self.root:
            return QModelIndex()
        return self.createIndex(parent.row(), NAME_COLUMN, parent)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        if parent.isValid() and parent.column() != NAME_COLUMN:
            return 0
        item = self.item(parent)
        return 0 if item.children is None else len(item.children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return COLUMN_COUNT

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: N802, B008
        if parent.isValid() and parent.column() != NAME_COLUMN:
            return False
        item = self.item(parent)
        if item.children is None or item.partial:
            return item.is_group or bool(item.children)
        return bool(item.children)

    def canFetchMore(self, parent: Index) -> bool:  # noqa: N802
        item = self.item(parent)
        if not parent.isValid() or not item.is_group or item.loading:
            return False
        if item.children is None:
            return True
        return not self.hold_fetch and (item.partial or (item.pages is not None and self.paging_asked))

    def fetchMore(self, parent: Index) -> None:  # noqa: N802
        """The first page of a group's members (a partial group listed afresh, its rows kept),
        or the next page of a listing."""
        if not self.canFetchMore(parent):
            return
        item = self.item(parent)
        group = item.node
        assert isinstance(group, Group)
        item.loading = True
        children = item.children if item.children is not None else []
        item.children = children
        self.beginInsertRows(parent, len(children), len(children))
        children.append(TreeItem(item, None, text="Loading…", placeholder=True))
        item.changed()
        self.endInsertRows()
        if item.pages is None:
            item.partial = False
        ask = PageAsk(group, item.pages, (QPersistentModelIndex(parent), item))
        # asked, not shown: no group's state is kept once its page is in
        self.listings.ask(self.listings.model.request(ask), key=id(item))

    def _page(self, page: Page) -> None:
        persistent, item = page.ask.about
        item.pages = page.pages
        self._listed(persistent, item, page.members, page.error, page.first)

    def child_named(self, parent: QModelIndex, name: str) -> QModelIndex:
        """The row of the member ``name`` under ``parent``, or an invalid index."""
        item = self.item(parent)
        if item.node is None:
            return QModelIndex()
        path = item.node.path.rstrip("/") + "/" + name
        row = item.child_row(path)
        return QModelIndex() if row is None else self.index(row, NAME_COLUMN, parent)

    def _listed(self, persistent: QPersistentModelIndex, item: TreeItem, members: Any, error: BaseException | None,
                first: bool = True) -> None:
        """Put a page of a listing under its group. Rows opened by path or shown by the filter
        while it ran stay where they are (with their selection and expansion); listed members go
        around them in name order."""
        item.loading = False
        if not persistent.isValid():
            return  # the store was closed meanwhile
        parent = persistent  # rows change below it only: it stays where it is
        children = item.children if item.children is not None else []
        item.children = children
        for i in reversed([i for i, c in enumerate(children) if c.node is None]):  # "Loading…", hints
            self.beginRemoveRows(parent, i, i)
            children.pop(i)
            item.changed()
            self.endRemoveRows()
        if error is not None:
            item.pages = None
            message = str(error) if isinstance(error, ZarrError) else f"{type(error).__name__}: {error}"
            new = [self._item(item, None, text="(cannot list)", error=message)]
        else:
            base = item.node.path.rstrip("/") + "/" if item.node is not None else "/"
            new = [self._item(item, m) if not isinstance(m, Outline) else
                   self._item(item, m.node) if m.node is not None else self._outlined(item, m)
                   for m in members if item.child_row(base + m.name) is None]
            if (first and not new and not children and item.pages is None and isinstance(item.node, Group)
                    and not item.node.can_list_members):
                new = [self._item(item, None, text="(the server cannot list: File ▸ Go to Path…)", hint=True)]
        self._insert_in_order(parent, item, new)

    def _insert_in_order(self, parent: Index, item: TreeItem, new: list[TreeItem]) -> None:
        """Insert name-sorted ``new`` rows among the existing ones, one run per gap, so a listing
        of many members costs a few insertions, not one per member."""
        children = item.children
        assert children is not None
        new.sort(key=name_of)
        pos, i = 0, 0
        while i < len(new):
            while pos < len(children) and name_of(children[pos]) <= name_of(new[i]):
                pos += 1
            end = i
            while end < len(new) and (pos == len(children) or name_of(new[end]) < name_of(children[pos])):
                end += 1
            self.beginInsertRows(parent, pos, pos + end - i - 1)
            children[pos:pos] = new[i:end]
            item.changed()
            self.endInsertRows()
            pos += end - i
            i = end

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < COLUMN_COUNT:
            return HEADERS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section >= STORED_COLUMN:
            return _RIGHT  # over the figures, as they are aligned
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return _ENABLED if index.internalPointer().placeholder else _SELECTABLE

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item = self.item(index)
        if index.column() >= STORED_COLUMN:
            return self._storage_data(item, index.column(), role)
        if item.outline is not None:  # an array not made a node yet: what its outline says
            return outline_data(item, item.outline, index.column(), role, NodeRole, PathRole)
        node, col = item.node, index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == NAME_COLUMN:
                if item.text and (node is None or node.path == "/"):
                    return item.text
                return node.name if node is not None else item.text
            if isinstance(node, Array):
                if col == SHAPE_COLUMN:
                    return shape_text(node.shape)
                level = item.level()
                return dtype_text(node) + ("" if level is None else f" · level {level}")
            if col == SHAPE_COLUMN and isinstance(node, UnsupportedArray) and node.shape is not None:
                return shape_text(node.shape)
            if col == TYPE_COLUMN and node is not None:
                if item.error:
                    return "error"
                if item.ome is not None:
                    return type_text(item.ome)
                if item.spatial is not None:  # a SpatialData root, element folder or element
                    return item.spatial
                enc = encoding_of(node)  # from the attributes already read
                if enc is not None:
                    return f"AnnData {enc.type}"
                return convention_type(node.attrs) or "group" + (" (implicit)" if node.implicit else "")
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if item.hint:
                return item.text
            if item.error or node is None:
                return item.error
            return node.path + (f"\nOME-NGFF {item.ome.version} {item.ome.kind}" if item.ome is not None else "")
        if role == Qt.ItemDataRole.DecorationRole and col == NAME_COLUMN and not item.placeholder:
            if item.error:
                return node_icon("error")
            if item.is_group:
                return node_icon("group")
            return node_icon("sharded" if isinstance(node, Array) and node.shards else "array")
        if role == Qt.ItemDataRole.ForegroundRole:
            if item.error:
                return QBrush(QColor(200, 40, 40))
            if item.placeholder:
                return QBrush(QColor(130, 130, 130))
        if role == NodeRole:
            return node
        if role == PathRole:
            return item.search_text()
        return None
