"""The hierarchy as a Qt item model: plain ``TreeItem`` objects under a thin model (as silx).

Children are listed on expand, on a background thread; meanwhile a "Loading…" row shows.
A child that fails to load becomes an error row; the rest of the tree keeps working.

A group holding OME-Zarr metadata says what it is in the Type column ("image (4 levels)",
"plate 8×12, 2 wells", "labels (1)"), from its attributes alone: no request. An image's level
arrays, its members anyway, say which level they are ("uint16 · level 1").
"""

from __future__ import annotations

from typing import Any, NamedTuple

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from ..describe import dtype_text, shape_text
from ..viewing.ome.doc import namespace
from ..zarrlib import Array, ErrorNode, Group, Node, UnsupportedArray, ZarrError
from .bridge import run_in_thread
from .icons import node_icon

NodeRole = Qt.ItemDataRole.UserRole + 1
PathRole = Qt.ItemDataRole.UserRole + 2
Index = QModelIndex | QPersistentModelIndex


class TreeItem:
    def __init__(self, parent: TreeItem | None, node: Node | None = None, text: str = "",
                 error: str | None = None, placeholder: bool = False, hint: bool = False) -> None:
        self.parent = parent
        self.node = node
        self.text = text
        self.error = error
        self.placeholder = placeholder or hint
        self.hint = hint  # "this server cannot list": replaced by whatever the user opens by path
        self.children: list[TreeItem] | None = None  # None: not listed yet
        self.loading = False
        self._ome: OmeMark | None | bool = False  # False: not looked at yet

    @property
    def ome(self) -> OmeMark | None:
        """What OME-Zarr node this group is, from its attributes (cached), or None."""
        if self._ome is False:
            self._ome = ome_mark(self.node.attrs) if isinstance(self.node, Group) else None
        return self._ome  # type: ignore[return-value]

    def level(self) -> int | None:
        """The pyramid level this array is of its parent OME image, or None."""
        mark = self.parent.ome if self.parent is not None and isinstance(self.node, Array) else None
        return mark.levels.get(self.node.name) if mark is not None and self.node is not None else None

    @property
    def is_group(self) -> bool:
        return isinstance(self.node, Group)

    def row(self) -> int:
        return 0 if self.parent is None or self.parent.children is None else self.parent.children.index(self)

    def search_text(self) -> str:
        if self.node is None:
            return self.text
        return f"{self.node.name} {self.node.path}"


class HierarchyModel(QAbstractItemModel):
    HEADERS = ("Name", "Shape", "Type")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.root = TreeItem(None)
        self.root.children = []

    # -- stores -----------------------------------------------------------------------------
    def add_store(self, node: Node, label: str) -> QModelIndex:
        assert self.root.children is not None
        row = len(self.root.children)
        self.beginInsertRows(QModelIndex(), row, row)
        self.root.children.append(TreeItem(self.root, node, text=label, error=_error(node)))
        self.endInsertRows()
        return self.index(row, 0)

    def find_store(self, url: str) -> QModelIndex:
        """The top row of the store open at ``url``, or an invalid index."""
        for row, child in enumerate(self.root.children or []):
            if child.node is not None and child.node.url == url:
                return self.index(row, 0)
        return QModelIndex()

    def add_error(self, label: str, message: str) -> QModelIndex:
        assert self.root.children is not None
        row = len(self.root.children)
        self.beginInsertRows(QModelIndex(), row, row)
        self.root.children.append(TreeItem(self.root, None, text=label, error=message))
        self.endInsertRows()
        return self.index(row, 0)

    def remove_top(self, row: int) -> None:
        assert self.root.children is not None
        self.beginRemoveRows(QModelIndex(), row, row)
        item = self.root.children.pop(row)
        self.endRemoveRows()
        if item.node is not None and not any(c.node is not None and c.node.store is item.node.store for c in self.root.children):
            item.node.store.close()

    def insert_path(self, top_row: int, chain: list[Node]) -> QModelIndex:
        """Place nodes reached by path (child, grandchild, …) under the store in ``top_row``,
        reusing rows already listed; the index of the last one."""
        index = self.index(top_row, 0)
        for node in chain:
            item = self.item(index)
            if item.children is None:
                item.children = []
            found = next((i for i, c in enumerate(item.children) if c.node is not None and c.node.path == node.path), None)
            if found is None:
                hints = [i for i, c in enumerate(item.children) if c.hint]
                for i in reversed(hints):
                    self.beginRemoveRows(index, i, i)
                    item.children.pop(i)
                    self.endRemoveRows()
                found = len(item.children)
                self.beginInsertRows(index, found, found)
                item.children.append(TreeItem(item, node, error=_error(node)))
                self.endInsertRows()
            index = self.index(found, 0, index)
        return index

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
        if item.children is None or not (0 <= row < len(item.children)) or not (0 <= column < 3):
            return QModelIndex()
        return self.createIndex(row, column, item.children[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        parent = self.item(index).parent
        if parent is None or parent is self.root:
            return QModelIndex()
        return self.createIndex(parent.row(), 0, parent)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        if parent.isValid() and parent.column() != 0:
            return 0
        item = self.item(parent)
        return 0 if item.children is None else len(item.children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 3

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: N802, B008
        if parent.isValid() and parent.column() != 0:
            return False
        item = self.item(parent)
        if item.children is None:
            return item.is_group
        return bool(item.children)

    def canFetchMore(self, parent: Index) -> bool:  # noqa: N802
        item = self.item(parent)
        return parent.isValid() and item.is_group and item.children is None and not item.loading

    def fetchMore(self, parent: Index) -> None:  # noqa: N802
        item = self.item(parent)
        if not self.canFetchMore(parent):
            return
        item.loading = True
        self.beginInsertRows(parent, 0, 0)
        item.children = [TreeItem(item, None, text="Loading…", placeholder=True)]
        self.endInsertRows()
        persistent = QPersistentModelIndex(parent)
        group = item.node
        assert isinstance(group, Group)
        run_in_thread(group.members, lambda result, error: self._listed(persistent, item, result, error), self)

    def add_listing(self, index: QModelIndex, members: list[Node]) -> None:
        """Members of the group at ``index`` listed elsewhere (the filter's walk): placed as a
        listing of its own would place them, so a listing still running adds nothing twice."""
        self._listed(QPersistentModelIndex(index), self.item(index), members, None)

    def child_named(self, parent: QModelIndex, name: str) -> QModelIndex:
        """The row of the member ``name`` under ``parent``, or an invalid index."""
        for row, child in enumerate(self.item(parent).children or []):
            if child.node is not None and child.node.name == name:
                return self.index(row, 0, parent)
        return QModelIndex()

    def _listed(self, persistent: QPersistentModelIndex, item: TreeItem, members: Any, error: BaseException | None) -> None:
        """Put a listing under its group. Rows opened by path while it ran stay where they are
        (with their selection and expansion); listed members go around them in name order."""
        if not persistent.isValid():
            return  # the store was closed meanwhile
        parent = QModelIndex(persistent)
        children = item.children if item.children is not None else []
        for i in reversed([i for i, c in enumerate(children) if c.node is None]):  # "Loading…", hints
            self.beginRemoveRows(parent, i, i)
            children.pop(i)
            self.endRemoveRows()
        item.children = children
        item.loading = False
        if error is not None:
            message = str(error) if isinstance(error, ZarrError) else f"{type(error).__name__}: {error}"
            new = [TreeItem(item, None, text="(cannot list)", error=message)]
        else:
            present = {c.node.path for c in children if c.node is not None}
            new = [TreeItem(item, m, error=_error(m)) for m in members if m.path not in present]
            if not new and not children and isinstance(item.node, Group) and not item.node.can_list_members:
                new = [TreeItem(item, None, text="(the server cannot list: File ▸ Go to Path…)", hint=True)]
        self._insert_in_order(parent, item, new)

    def _insert_in_order(self, parent: QModelIndex, item: TreeItem, new: list[TreeItem]) -> None:
        """Insert name-sorted ``new`` rows among the existing ones, one run per gap, so a listing
        of many members costs a few insertions, not one per member."""
        children = item.children
        assert children is not None
        pos, i = 0, 0
        while i < len(new):
            while pos < len(children) and _name(children[pos]) <= _name(new[i]):
                pos += 1
            end = i
            while end < len(new) and (pos == len(children) or _name(new[end]) < _name(children[pos])):
                end += 1
            self.beginInsertRows(parent, pos, pos + end - i - 1)
            children[pos:pos] = new[i:end]
            self.endInsertRows()
            pos += end - i
            i = end

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 3:
            return self.HEADERS[section]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self.item(index).placeholder:
            return Qt.ItemFlag.ItemIsEnabled
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        item = self.item(index)
        node, col = item.node, index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                if item.text and (node is None or node.path == "/"):
                    return item.text
                return node.name if node is not None else item.text
            if isinstance(node, Array):
                if col == 1:
                    return shape_text(node.shape)
                level = item.level()
                return dtype_text(node) + ("" if level is None else f" · level {level}")
            if col == 1 and isinstance(node, UnsupportedArray) and node.shape is not None:
                return shape_text(node.shape)
            if col == 2 and node is not None:
                if item.error:
                    return "error"
                return item.ome.text if item.ome is not None else "group" + (" (implicit)" if node.implicit else "")
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if item.error or node is None:
                return item.error
            return node.path + (f"\nOME-NGFF {item.ome.version} {item.ome.kind}" if item.ome is not None else "")
        if role == Qt.ItemDataRole.DecorationRole and col == 0 and not item.placeholder:
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


class OmeMark(NamedTuple):
    kind: str                  # "image", "label image", "labels", "plate", "well", "bioformats2raw"
    version: str
    text: str                  # the Type column
    levels: dict[str, int]     # an image's level array paths -> level index


def ome_mark(attrs: Any) -> OmeMark | None:
    """What OME-Zarr node a group's attributes make it, in words for the Type column; None for a
    plain group. Reads nothing: a listed group's attributes are in hand already."""
    if not isinstance(attrs, dict):
        return None
    ns = namespace(attrs, "", [])
    if ns is None:
        return None
    keys, levels = ns.keys, {}

    def count(value: Any, key: str) -> str:
        return str(len(value[key])) if isinstance(value, dict) and isinstance(value.get(key), list) else "?"

    if "plate" in keys:
        plate = keys["plate"]
        kind, text = "plate", f"plate {count(plate, 'rows')}×{count(plate, 'columns')}, {count(plate, 'wells')} wells"
    elif "well" in keys:
        n = count(keys["well"], "images")
        kind, text = "well", f"well ({n} field{'' if n == '1' else 's'})"
    elif "multiscales" in keys or "image-label" in keys:
        ms = keys.get("multiscales")
        first = ms[0] if isinstance(ms, list) and ms and isinstance(ms[0], dict) else {}
        datasets = first.get("datasets") if isinstance(first.get("datasets"), list) else []
        levels = {d["path"]: i for i, d in enumerate(datasets)
                  if isinstance(d, dict) and isinstance(d.get("path"), str)}
        kind = "label image" if "image-label" in keys else "image"
        more = f", {len(ms)} multiscales" if isinstance(ms, list) and len(ms) > 1 else ""
        n = count(first, "datasets")
        text = f"{kind} ({n} level{'' if n == '1' else 's'}{more})"
    elif "bioformats2raw.layout" in keys:
        kind, text = "bioformats2raw", "bioformats2raw series"
    else:
        kind, text = "labels", f"labels ({count(keys, 'labels')})"
    return OmeMark(kind, ns.version, text, levels)


def _error(node: Node) -> str | None:
    """The message a row shows for a node that cannot be opened or read (None when it can)."""
    return str(node.error) if isinstance(node, ErrorNode) else None


def _name(item: TreeItem) -> str:
    return item.node.name if item.node is not None else item.text
