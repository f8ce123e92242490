"""The rows of the hierarchy's tree, without the model: what each row holds and how it is found.

A hierarchy can have 100,000 nodes and a group 100,000 children, so a row knows its position
and its children by path from caches rebuilt only after its children change (``changed``),
never by searching a list; a group's children may be a listing still arriving in pages
(``pages``), or only some members (``partial``: shown by the filter or opened by path) until
someone expands it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from ..viewing.ome.doc import namespace
from ..zarrlib import Array, ErrorNode, Group, Node


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
        #: children holds some members only (the filter's matches, rows opened by path): the
        #: group is listed when someone expands it
        self.partial = False
        #: the pages of a listing not read yet (names of members), or None when none remain
        self.pages: Iterator[list[str]] | None = None
        self._ome: OmeMark | None | bool = False  # False: not looked at yet
        self._rows: dict[int, int] | None = None  # id(child) -> row, rebuilt after a change
        self._paths: dict[str, int] | None = None  # child node path -> row

    def changed(self) -> None:
        """Its children list changed: positions are looked up afresh."""
        self._rows = self._paths = None

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
            self._paths = {c.node.path: i for i, c in enumerate(self.children) if c.node is not None}
        return self._paths.get(path)

    def search_text(self) -> str:
        if self.node is None:
            return self.text
        return f"{self.node.name} {self.node.path}"


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


def error_of(node: Node) -> str | None:
    """The message a row shows for a node that cannot be opened or read (None when it can)."""
    return str(node.error) if isinstance(node, ErrorNode) else None


def name_of(item: TreeItem) -> str:
    return item.node.name if item.node is not None else item.text
