"""Consolidated metadata held as text, each node's document decoded when that node is asked for.

A store of 100,000 nodes consolidates into one document of 50-90 MB. Decoding it whole took
2-3 s and 300 MB before anything could be shown; indexed (``json_spans``), it opens in a
fraction of that, a group's children come from an index built once (parent path -> sorted
names), and a node costs the decoding of its own few hundred bytes.

Both layouts are read: Zarr v3 inline (``consolidated_metadata.metadata`` in the root's
``zarr.json``, keyed by node path) and Zarr v2 ``.zmetadata`` (keyed ``path/.zarray``,
``.zgroup``, ``.zattrs``). Entries that are not objects are left out, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import orjson

from ..errors import MetadataError
from ..jsonutil import load_json_object
from .json_spans import NotIndexable, Structure, member, structure

_V2_LEAVES = (".zarray", ".zgroup", ".zattrs")
Decoded = dict[str, Any]


def node_path(key: str) -> str:
    return "/" + key.strip("/")


Spans = tuple[list[int], list[int]] | list[Decoded]


class _Index(NamedTuple):
    keys: list[str]
    #: where each entry's text starts and stops, or the entries decoded already
    spans: Spans
    #: v3: node path -> entry number; v2: node path -> {".zarray": entry number, ...}
    nodes: dict[str, Any]


class Consolidated:
    """The entries of one consolidated document: each held as a byte span of the document's
    text (or as an object already decoded), found by node path. The entries are located when
    first asked for (``source``): opening one array by its path reads the root's attributes,
    not the whereabouts of 100,000 documents."""

    def __init__(self, data: bytes, source: Callable[[], tuple[list[str], Spans]], v2: bool,
                 where: Callable[[str], str]) -> None:
        self._data = data
        self._source: Callable[[], tuple[list[str], Spans]] | None = source
        self.v2 = v2
        self._where = where
        self._built: _Index | None = None
        self._lock = threading.Lock()
        self._children: dict[str, list[str]] | None = None

    def _index(self) -> _Index:
        built = self._built
        if built is None:
            with self._lock:
                if self._built is None:
                    assert self._source is not None
                    keys, spans = self._source()
                    self._built, self._source = _Index(keys, spans, _nodes(keys, self.v2)), None
                built = self._built
        return built

    def __contains__(self, path: object) -> bool:
        return path in self._index().nodes

    def __len__(self) -> int:
        return len(self._index().nodes)

    def __bool__(self) -> bool:
        return bool(self._index().nodes)

    def paths(self) -> list[str]:
        """Every node path the document describes, sorted."""
        return sorted(self._index().nodes)

    def entry(self, path: str) -> Decoded | None:
        """v3: the node's document; v2: ``{".zarray"|".zgroup"|".zattrs": document}``; None when
        the document has no entry for ``path``. A malformed entry raises MetadataError."""
        found = self._index().nodes.get(path)
        if found is None:
            return None
        if self.v2:
            return {leaf: self._decode(i, path) for leaf, i in found.items()}
        return self._decode(found, path)

    def _decode(self, i: int, path: str) -> Decoded:
        text = self._text(i)
        if isinstance(text, dict):
            return text
        try:  # measured on one 763-byte entry: orjson 2.4 µs, json 5.5 µs (the whole 90 MB document: 1.3x)
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # NaN tokens, huge integers, bad UTF-8: json accepts or names the fault
        else:
            if isinstance(doc, dict):
                return doc
        return load_json_object(text, self._where(path))

    def _text(self, i: int) -> bytes | Decoded:
        spans = self._index().spans
        if isinstance(spans, list):
            return spans[i]
        starts, stops = spans
        return self._data[starts[i]:stops[i]]

    def children(self, path: str) -> list[str]:
        """The names of the children of ``path``, sorted, including groups that only appear in
        their descendants' paths."""
        if self._children is None:
            nodes = self._index().nodes
            with self._lock:
                if self._children is None:
                    self._children = _child_index(nodes)
        return self._children.get(path, [])

    def preview(self, count: int) -> dict[str, Any]:
        """The first ``count`` entries as the document writes them, keyed as there."""
        out: dict[str, Any] = {}
        for i, key in enumerate(self._index().keys[:count]):
            text = self._text(i)
            out[key] = text if isinstance(text, dict) else _lenient(text)
        return out

    @property
    def entry_count(self) -> int:
        return len(self._index().keys)


def _nodes(keys: list[str], v2: bool) -> dict[str, Any]:
    if not v2:
        return dict(zip(_node_paths(keys), range(len(keys))))
    nodes: dict[str, Any] = {}
    for i, key in enumerate(keys):
        head, _, leaf = key.rpartition("/")
        if leaf in _V2_LEAVES:
            nodes.setdefault(node_path(head), {})[leaf] = i
    return nodes


def _lenient(text: bytes) -> Any:
    try:
        return load_json_object(text, "")
    except MetadataError as e:
        return str(e)


def _child_index(nodes: dict[str, Any]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    seen = {"/"}
    for path in nodes:
        while path not in seen:
            seen.add(path)
            parent, _, name = path.rpartition("/")
            parent = parent or "/"
            if name:  # "a//b" names no child between the slashes
                children.setdefault(parent, []).append(name)
            path = parent
    for names in children.values():
        names.sort()
    return children


def index_v3_root(data: bytes, where: str, entry_where: Callable[[str], str]) -> tuple[Decoded, Consolidated | None]:
    """The root's ``zarr.json``: its document with ``consolidated_metadata.metadata`` left
    empty, and the entries of that metadata indexed (None when it has none)."""
    try:
        st = structure(data, where)
        cm = member(st, 0, "consolidated_metadata")
        md = member(st, cm, "metadata") if cm is not None else None
        if md is None:
            return load_json_object(data, where), None
        start, stop = int(st.pos[md]), int(st.pos[st.closer(md)]) + 1
        found = _spans(st, md)
    except NotIndexable:  # json names what is wrong, or decodes what the index could not
        doc = load_json_object(data, where)
        held = doc.get("consolidated_metadata")
        decoded = _decoded(held, False, entry_where)
        if decoded is not None and isinstance(held, dict):  # the same shape as an indexed root's
            doc = {**doc, "consolidated_metadata": {**held, "metadata": {}}}
        return doc, decoded
    outer = load_json_object(data[:start] + b"{}" + data[stop:], where)
    return outer, Consolidated(data, lambda: found, False, entry_where)


def index_v2(data: bytes, where: str, entry_where: Callable[[str], str]) -> Consolidated | None:
    """A ``.zmetadata`` document's entries (None when it holds no ``metadata`` object)."""
    try:
        st = structure(data, where)
        md = member(st, 0, "metadata")
        if md is None:
            load_json_object(data, where)  # a syntax error is named even so
            return None
        start, stop = int(st.pos[md]), int(st.pos[st.closer(md)]) + 1
        found = _spans(st, md)
    except NotIndexable:
        return _decoded(load_json_object(data, where), True, entry_where)
    load_json_object(data[:start] + b"{}" + data[stop:], where)
    return Consolidated(data, lambda: found, True, entry_where)


def _spans(st: Structure, i: int) -> tuple[list[str], Spans]:
    """The entries of the object at bracket ``i``, every byte between them checked (so the
    document is JSON up to the entries' own text, each checked when it is decoded)."""
    keys, starts, stops = st.members(i, only=True)
    return keys, (starts.tolist(), stops.tolist())  # Python ints index bytes 3x faster than numpy's


def _node_paths(keys: list[str]) -> list[str]:
    """``node_path`` of every key: joined and split at once (C speed) where no key has a slash
    to strip or holds a NUL (JSON may spell one, as ``\\u0000``)."""
    if not keys:
        return []
    joined = "/" + "\0/".join(keys)
    paths = joined.split("\0")
    if len(paths) == len(keys) and "/\0" not in joined and "\0//" not in joined \
            and not joined.startswith("//") and not joined.endswith("/"):
        return paths
    return [node_path(k) for k in keys]


def _decoded(holder: Any, v2: bool, where: Callable[[str], str]) -> Consolidated | None:
    metadata = holder.get("metadata") if isinstance(holder, dict) else None
    if not isinstance(metadata, dict):
        return None
    items = [(k, v) for k, v in metadata.items() if isinstance(v, dict)]
    return Consolidated(b"", lambda: ([k for k, _ in items], [v for _, v in items]), v2, where)
