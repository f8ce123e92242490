"""The rows of the hierarchy's tree, without the model: what each row holds and how it is found.

A hierarchy can have 100,000 nodes and a group 100,000 children, so a row knows its position
and its children by path from caches rebuilt only after its children change (``changed``),
never by searching a list; a group's children may be a listing still arriving in pages
(``pages``), or only some members (``partial``: shown by the filter or opened by path) until
someone expands it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import Qt

from ...describe import meta_dtype_text, shape_text
from ...viewing.ome.text import OmeMark, ome_mark
from ...viewing.spatialdata.store import mark as spatial_mark
from ...viewing.tree.storage import StorageFigures
from ...zarrlib import Array, ErrorNode, Group, Node, ZarrError
from ...zarrlib.nodes import Outline
from ..icons import node_icon
from .columns import NAME_COLUMN, SHAPE_COLUMN

Role = Qt.ItemDataRole


class TreeItem:
    def __init__(self, parent: TreeItem | None, node: Node | None = None, text: str = "",
                 error: str | None = None, placeholder: bool = False, hint: bool = False,
                 outline: Outline | None = None) -> None:
        self.parent = parent
        self._node = node
        #: an array known from its listing's outline (``Group.member_outlines``: shape and a
        #: parsed array like it) until something asks for its node
        self.outline = outline if node is None else None
        self.text = text
        self.error = error
        self.placeholder = placeholder or hint
        self.hint = hint  # "this server cannot list": replaced by whatever the user opens by path
        self.children: list[TreeItem] | None = None  # None: not listed yet
        self.loading = False
        #: children holds some members only (the filter's matches, rows opened by path): the
        #: group is listed when someone expands it
        self.partial = False
        #: the pages of a listing not read yet (names of members), or None when none remain
        self.pages: Iterator[list[str]] | None = None
        self._ome: OmeMark | None | bool = False  # False: not looked at yet
        self._spatial: str | None | bool = False
        self._rows: dict[int, int] | None = None  # id(child) -> row, rebuilt after a change
        self._paths: dict[str, int] | None = None  # child node path -> row
        #: a store's top row: what tells it from other stores (URL and options, ``store_identity``)
        self.identity: str | None = None
        #: a store's top row: the location and storage options it was opened with
        self.opened: tuple[str, dict[str, Any]] | None = None
        #: what the row's node holds in its store (the Stored and Ratio columns), once read
        self.storage: StorageFigures | None = None

    @property
    def node(self) -> Node | None:
        """The row's node; an outlined array's is made on first use (from consolidated metadata:
        no request)."""
        if self._node is None and self.outline is not None:
            group = self.parent.node if self.parent is not None else None
            try:
                made = group.load_members([self.outline.name]) if isinstance(group, Group) else []
            except ZarrError:
                made = []
            self._node = made[0] if made else None
            self.outline = None
        return self._node

    @node.setter
    def node(self, node: Node | None) -> None:
        self._node, self.outline = node, None

    @property
    def name(self) -> str:
        if self._node is not None:
            return self._node.name
        return self.outline.name if self.outline is not None else self.text

    @property
    def path(self) -> str | None:
        if self._node is not None:
            return self._node.path
        if self.outline is not None and self.parent is not None and self.parent._node is not None:
            return self.parent._node.path.rstrip("/") + "/" + self.outline.name
        return None

    def changed(self) -> None:
        """Its children list changed: positions are looked up afresh."""
        self._rows = self._paths = None

    @property
    def ome(self) -> OmeMark | None:
        """What OME-Zarr node this group is, from its attributes (cached), or None."""
        if self._ome is False:
            self._ome = ome_mark(self.node.attrs) if isinstance(self.node, Group) else None
        return self._ome  # type: ignore[return-value]

    @property
    def spatial(self) -> str | None:
        """What SpatialData group this is (root, element folder, points...), from its attributes
        and its parent's (cached), or None."""
        if self._spatial is False:
            parent = self.parent.node if self.parent is not None else None
            self._spatial = spatial_mark(self.node.attrs, parent.attrs if isinstance(parent, Group) else None,
                                         self.name) if isinstance(self.node, Group) else None
        return self._spatial  # type: ignore[return-value]

    def level(self) -> int | None:
        """The pyramid level this array is of its parent OME image, or None."""
        is_array = self.outline is not None if self._node is None else isinstance(self._node, Array)
        mark = self.parent.ome if self.parent is not None and is_array else None
        return mark.levels.get(self.name) if mark is not None else None

    @property
    def is_group(self) -> bool:
        return isinstance(self._node, Group)

    def row(self) -> int:
        parent = self.parent
        if parent is None or parent.children is None:
            return 0
        if parent._rows is None:
            parent._rows = {id(c): i for i, c in enumerate(parent.children)}
        return parent._rows.get(id(self), 0)

    def child_row(self, path: str) -> int | None:
        """The row of the child whose node is at ``path``, or None."""
        if self.children is None:
            return None
        if self._paths is None:
            self._paths = {p: i for i, p in enumerate(c.path for c in self.children) if p is not None}
        return self._paths.get(path)

    def listing(self) -> bool:
        """Whether this item or one below it is still being listed."""
        return self.loading or any(c.listing() for c in self.children or [])

    def search_text(self) -> str:
        path = self.path
        return self.text if path is None else f"{self.name} {path}"


def error_of(node: Node) -> str | None:
    """The message a row shows for a node that cannot be opened or read (None when it can)."""
    return str(node.error) if isinstance(node, ErrorNode) else None


def name_of(item: TreeItem) -> str:
    return item.name


def outline_data(item: TreeItem, outline: Outline, col: int, role: int, node_role: int, path_role: int) -> Any:
    """What the model says of an outlined row (``HierarchyModel.data``), without making its node."""
    like = outline.like
    if role == Role.DisplayRole:
        if col == NAME_COLUMN:
            return outline.name
        if col == SHAPE_COLUMN:
            return shape_text(outline.shape)
        level = item.level()
        return (meta_dtype_text(like) if like is not None else "") + ("" if level is None else f" · level {level}")
    if role == Role.ToolTipRole:
        return item.path
    if role == Role.DecorationRole and col == NAME_COLUMN:
        return node_icon("sharded" if like is not None and like.shard_layout is not None else "array")
    if role == node_role:
        return item.node
    if role == path_role:
        return item.search_text()
    return None
