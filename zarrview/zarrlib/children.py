"""A group's children: from the consolidated index, from a listing, or page by page.

Where consolidated metadata describes a group, its children come from the index built once
over that metadata (parent path -> sorted names), never from scanning every key per group. A
local folder is also listed once, flat, for children added after consolidation (one
``scandir``; only names the metadata lacks are looked into). On a remote store the metadata
alone answers: listing a prefix of 100,000 children would cost a hundred requests.

Without consolidated metadata a listing decides. ``names`` keeps the old contract (every
sub-folder holding a node, sorted); ``pages`` yields sub-folder names a page at a time as the
store lists them, without looking into each: the caller loads a page's nodes in one batch
(``Group.load_members``), which leaves out folders that hold none.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from .metadata.consolidated import Consolidated
from .storage.base import Store

_MARKERS = ("zarr.json", ".zarray", ".zgroup")


class HierarchyView(Protocol):
    """What finding children reads of a hierarchy: its store, the format found there (v3, v2 or
    the 2022 draft; None before any) and its consolidated index. A protocol, so that this module
    stays below ``hierarchy``, whose ``Hierarchy`` is one and asks it for children."""

    @property
    def store(self) -> Store: ...

    @property
    def flavor(self) -> str | None: ...

    @property
    def consolidated(self) -> Consolidated | None: ...


def _prefix(path: str) -> str:
    return "" if path == "/" else path.strip("/") + "/"


def _described(h: HierarchyView, path: str) -> list[str] | None:
    """The children the consolidated metadata names for ``path``; None where it does not
    describe ``path`` (no metadata, or a group added after it was written)."""
    cons = h.consolidated
    if not cons:
        return None
    names = cons.children(path)
    return names if names or path in cons else None


def names(h: HierarchyView, path: str) -> list[str]:
    """The names of the children of ``path``, sorted."""
    if h.flavor == "draft":
        return _draft(h, path)
    known = _described(h, path)
    if known is None:
        return listed(h, path, probe_only=False) if h.store.can_list else []
    if not h.store.can_list or h.store.prefers_batches:
        return known
    have = set(known)
    _, dirs = h.store.list_dir(_prefix(path))
    extra = [d for d in dirs if d not in have and _holds_node(h, _prefix(path) + d + "/")]
    return sorted(known + extra) if extra else known


def pages(h: HierarchyView, path: str, page: int) -> Iterator[list[str]]:
    """The names of the children of ``path``, at most ``page`` at a time: from the consolidated
    index (sorted, all at once), else as the store lists sub-folders (each page sorted; on S3 the
    pages follow one another in order). Listed names are not checked to hold a node."""
    step = max(1, page)
    known = names(h, path) if h.flavor == "draft" or _described(h, path) is not None else None
    if known is not None:
        for i in range(0, len(known), step):
            yield known[i:i + step]
        return
    if not h.store.can_list:
        return
    for _, dirs in h.store.iter_dir(_prefix(path), step):
        if dirs:
            yield dirs


def listed(h: HierarchyView, path: str, probe_only: bool) -> list[str]:
    """Sub-folders of ``path`` that hold a node (``probe_only``: stop at the first one)."""
    prefix = _prefix(path)
    _, dirs = h.store.list_dir(prefix)
    found: list[str] = []
    for d in dirs:
        if _holds_node(h, prefix + d + "/"):
            found.append(d)
            if probe_only:
                break
    return sorted(found)


def _holds_node(h: HierarchyView, prefix: str) -> bool:
    sub_keys, sub_dirs = h.store.list_dir(prefix)
    if any(m in sub_keys for m in _MARKERS):
        return True
    return bool(sub_dirs) and h.flavor != "v3" and _nodes_below(h, prefix, sub_dirs)


def _nodes_below(h: HierarchyView, prefix: str, dirs: list[str], depth: int = 2) -> bool:
    for d in dirs[:50]:
        keys, sub = h.store.list_dir(prefix + d + "/")
        if any(m in keys for m in _MARKERS):
            return True
        if depth > 1 and sub and _nodes_below(h, prefix + d + "/", sub, depth - 1):
            return True
    return False


def _draft(h: HierarchyView, path: str) -> list[str]:
    base = "meta/root/" if path == "/" else f"meta/root{path}/"
    if not h.store.can_list:
        return []
    keys, dirs = h.store.list_dir(base)
    found = set(dirs)
    for k in keys:
        for suffix in (".array.json", ".group.json"):
            if k.endswith(suffix):
                found.add(k[: -len(suffix)])
    return sorted(found)
