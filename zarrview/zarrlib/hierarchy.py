"""Finding nodes in a store: format detection, metadata documents, consolidation.

One ``Hierarchy`` per opened store remembers the format it found (v3, v2, or the 2022 v3
draft) so each later node costs as few requests as possible: one for a v3 node. Consolidated
metadata is indexed, not decoded (``metadata.consolidated``): a node's entry is decoded when
the node is asked for, and the nodes made from it are kept in a small cache. Children are
found in ``children``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, Literal

from .errors import (
    MetadataError,
    NodeNotFoundError,
    StoreNotFoundError,
    UnsupportedCodecError,
    UnsupportedDataTypeError,
    UnsupportedFeatureError,
    ZarrError,
    short,
)
from .storage.base import ByteRequest, fetch_each
from .storage.keys import check_key, key_problem
from .jsonutil import load_json_object
from .metadata import prefinal
from .metadata import v2 as v2meta
from .metadata import v3 as v3meta
from .limits import limits
from .metadata.consolidated import Consolidated, index_v2, index_v3_root
from .metadata.model import ArrayMetadata, parse_attributes
from .metadata.templates import parse_v3_array
from .storage.base import Store
from .storage.references import zmetadata_names_references
from . import children

Flavor = Literal["v3", "v2", "draft"]


@dataclass
class NodeDoc:
    """A node's metadata as found: ``array`` is parsed for arrays, None for groups and for an
    array that names a codec or data type zarrlib lacks (then ``unsupported`` says which)."""

    path: str
    kind: Literal["group", "array"]
    zarr_format: int
    document: dict[str, Any]
    attributes: dict[str, Any]
    array: ArrayMetadata | None = None
    implicit: bool = False
    flavor: Flavor = "v3"
    unsupported: UnsupportedFeatureError | None = None
    #: the whole document, decoded when asked for, where ``document`` leaves out the entries
    #: of its consolidated metadata (a root's ``zarr.json`` of 100,000 entries)
    whole: Callable[[], dict[str, Any]] | None = field(default=None, repr=False)

    def full_document(self) -> dict[str, Any]:
        if self.whole is not None:
            self.document, self.whole = self.whole(), None
        return self.document


def array_doc(path: str, zarr_format: int, document: dict[str, Any], attrs: dict[str, Any],
              parse: Callable[[], ArrayMetadata], flavor: Flavor = "v3") -> NodeDoc:
    """An array's node; one whose codec or data type cannot be read keeps its document and the
    error, so it is listed and described like the others and fails only when read."""
    try:
        meta = parse()
    except (UnsupportedCodecError, UnsupportedDataTypeError) as e:
        return NodeDoc(path, "array", zarr_format, document, attrs, None, flavor=flavor, unsupported=e)
    return NodeDoc(path, "array", zarr_format, document, attrs, meta, flavor=flavor)


def prefix_of(path: str) -> str:
    return "" if path == "/" else path.strip("/") + "/"


def join(path: str, name: str) -> str:
    return "/" + name if path == "/" else f"{path}/{name}"


#: nodes made from consolidated entries, kept for their next use (each holds ~3 KB)
_CACHED_NODES = 4096


class Hierarchy:
    def __init__(self, store: Store) -> None:
        self.store = store
        #: arrays of the ML and sub-byte types (bfloat16, float8, int4, ...) read as float32 and
        #: say so in ``Array.dtype``: a viewer's choice (no display path knows those types); their
        #: stored type stays ``Array.stored_dtype``
        self.widen_ml_types = False
        self.flavor: Flavor | None = None
        self.consolidated: Consolidated | None = None
        self._root: NodeDoc | None = None  # read once: it may hold the consolidated metadata
        self._made: OrderedDict[str, NodeDoc] = OrderedDict()  # from consolidated entries
        self._made_lock = threading.Lock()
        #: metadata documents fetched ahead in one batch (``prefetch``), each used once
        self._ahead: dict[str, bytes | None] = {}
        self._ahead_lock = threading.Lock()

    # -- documents --------------------------------------------------------------------------
    def prefetch(self, paths: Sequence[str], zarr_format: int) -> None:
        """Fetch the metadata documents of the nodes at ``paths`` in one batch (one round trip on
        a remote store) so that opening them one by one afterwards asks nothing more; on a local
        store, or for documents not there, opening simply reads them as usual."""
        if self.store.prefers_batches:  # what the consolidated metadata holds is not asked again
            paths = [p for p in paths if not self.consolidated or p not in self.consolidated]
        if not self.store.prefers_batches or not paths:
            return
        names = ("zarr.json",) if zarr_format == 3 else (".zarray", ".zattrs", ".zgroup")
        keys = [k for k in (prefix_of(p) + n for p in paths for n in names) if key_problem(k) is None]
        bound = limits().metadata_bytes
        try:
            answers = fetch_each(self.store, [ByteRequest(k, limit=bound) for k in keys])
        except ZarrError:
            return  # each node is then read, and fails, on its own, with its own message
        with self._ahead_lock:
            self._ahead.update(zip(keys, answers))

    def _fetched(self, key: str) -> bytes | None | EllipsisType:
        with self._ahead_lock:
            return self._ahead.pop(key, ...)

    def _raw(self, key: str) -> bytes | None:
        data = self._fetched(key)
        if data is ...:
            data = self.store.get_bounded(key, limits().metadata_bytes)
        return None if data is None else bytes(data)

    def _json(self, key: str, data: bytes | None | EllipsisType = ...) -> dict[str, Any] | None:
        if data is ...:
            data = self._raw(key)
        if data is None:
            return None
        assert isinstance(data, (bytes, bytearray, memoryview))
        return load_json_object(data, self._name(key))

    def _name(self, key: str) -> str:
        """A document's name in messages: its URL on a remote store, else its key."""
        return self.store.key_url(key) if "://" in self.store.url else key

    def _where(self, key: str) -> str:
        return f"{'/' + key if not key.startswith('/') else key}"

    def load(self, path: str) -> NodeDoc:
        """The node at ``path``; raises NodeNotFoundError when there is none.

        The store's own format is tried first; v2 and v3 nodes may also be mixed in one tree.
        """
        if path == "/" and self._root is not None:
            return self._root
        _check_path(path, self.store.url)
        if self.flavor == "draft" or self.flavor is None:
            doc = self._try_draft(path) if self.flavor == "draft" else None
            if doc is not None:
                return doc
        order = (self._try_v2, self._try_v3) if self.flavor == "v2" else (self._try_v3, self._try_v2)
        if self.flavor != "draft":
            for attempt in order:
                doc = attempt(path)
                if doc is not None:
                    return doc
            if self.flavor is None:
                doc = self._try_draft(path)
                if doc is not None:
                    return doc
        cons = self._consolidated_entry(path)
        if cons is not None:
            return cons
        implicit = self._implicit_group(path)
        if implicit is not None:
            return implicit
        if path == "/":
            if "://" in self.store.url and not self.store.url.startswith("file:"):
                raise StoreNotFoundError(f"no Zarr metadata at {self.store.key_url('zarr.json')} "
                                         "(404; no .zgroup or .zarray either)")
            raise StoreNotFoundError(f"no Zarr metadata at {self.store.url} (no zarr.json, .zgroup or .zarray)")
        raise NodeNotFoundError(f"no Zarr node at {path} in {self.store.url}")

    def load_member(self, path: str) -> NodeDoc:
        """A node below an opened group. On remote stores the consolidated copy is used when
        there is one (as zarr-python and xarray do: a request per node would make listing, or
        opening an image's levels, cost round trips one after another); on local stores, and
        for a location opened by its path, the node's own document is read."""
        _check_path(path, self.store.url)
        if self.store.prefers_batches:
            cons = self._consolidated_entry(path)
            if cons is not None:
                return cons
        return self.load(path)

    def load_listed(self, path: str) -> NodeDoc:
        """A node found by listing its group: from the consolidated metadata where it has the
        node, on every store (one document answers for a thousand children; zarr-python and
        xarray read it so), else, or where that entry is broken, from the node's own document."""
        _check_path(path, self.store.url)
        try:
            cons = self._consolidated_entry(path, keep=False)  # the caller holds what it lists
        except ZarrError:
            cons = None  # the node's own document may be sound: it decides
        return cons if cons is not None else self.load(path)

    def _try_v3(self, path: str) -> NodeDoc | None:
        key = prefix_of(path) + "zarr.json"
        if path != "/":
            return self._v3_node(path, key, self._json(key))
        raw = self._raw(key)
        if raw is None:
            return None
        doc, cons = index_v3_root(raw, self._name(key), self._cons_where)
        if prefinal.is_prefinal_root(doc):
            self.flavor = "draft"
            return self._try_draft(path)
        node = self._v3_node(path, key, doc)
        assert node is not None
        if node.kind == "group":
            if cons is not None:
                self.consolidated = cons
                node.whole = lambda: load_json_object(raw, self._name(key))
            self._root = node
        return node

    def _v3_node(self, path: str, key: str, doc: dict[str, Any] | None) -> NodeDoc | None:
        if doc is None:
            return None
        where = self._where(key)
        kind = v3meta.node_type(doc, where)
        self.flavor = self.flavor or "v3"
        attrs = parse_attributes(doc.get("attributes"), where)
        if kind == "array":
            return array_doc(path, 3, doc, attrs, lambda: parse_v3_array(doc, prefix_of(path), where))
        return NodeDoc(path, "group", 3, doc, attrs)

    def _try_v2(self, path: str) -> NodeDoc | None:
        prefix = prefix_of(path)
        zattrs_raw: bytes | None | EllipsisType = ...
        ahead = (self._fetched(prefix + ".zarray"), self._fetched(prefix + ".zattrs"))
        if ahead[0] is not ...:
            zarray = self._json(prefix + ".zarray", ahead[0])
            zattrs_raw = ahead[1]
        elif self.store.prefers_batches:  # .zarray and .zattrs in one round trip
            bound = limits().metadata_bytes
            zarray_raw, zattrs_raw = fetch_each(self.store, [ByteRequest(prefix + ".zarray", limit=bound),
                                                          ByteRequest(prefix + ".zattrs", limit=bound)])
            zarray = self._json(prefix + ".zarray", zarray_raw)
        else:
            zarray = self._json(prefix + ".zarray")
        zgroup = None if zarray is not None else self._json(prefix + ".zgroup")
        if zarray is None and zgroup is None:
            if path == "/" and self.flavor is None:
                self._load_v2_consolidated()
            return None
        self.flavor = self.flavor or "v2"
        attrs = self._json(prefix + ".zattrs", zattrs_raw) or {}  # a JSON object by construction
        if path == "/" and zgroup is not None:
            self._load_v2_consolidated()
        if zarray is not None:
            where = self._where(prefix + ".zarray")
            return array_doc(path, 2, zarray, attrs, lambda: v2meta.parse_array(zarray, attrs, prefix, where), "v2")
        assert zgroup is not None
        if zgroup.get("zarr_format") != 2:
            raise MetadataError(f"{self._where(prefix + '.zgroup')}: zarr_format must be 2, found {short(zgroup.get('zarr_format'))}")
        node = NodeDoc(path, "group", 2, zgroup, attrs, flavor="v2")
        if path == "/":
            self._root = node
        return node

    def _try_draft(self, path: str) -> NodeDoc | None:
        if self.flavor is None:
            root = self._json("zarr.json")
            if root is None or not prefinal.is_prefinal_root(root):
                return None
            self.flavor = "draft"
        base = "meta/root" if path == "/" else "meta/root" + path
        document = self._json(base + ".array.json")
        if document is not None:
            where = self._where(base + ".array.json")
            attrs = parse_attributes(document.get("attributes"), where)
            return array_doc(path, 3, document, attrs, lambda: prefinal.parse_array(document, path, where), "draft")
        group_doc = self._json(base + ".group.json")
        if group_doc is not None:
            attrs = parse_attributes(group_doc.get("attributes"), self._where(base + ".group.json"))
            return NodeDoc(path, "group", 3, group_doc, attrs, flavor="draft")
        if self.store.can_list:
            keys, dirs = self.store.list_dir(base + "/")
            if keys or dirs:
                return NodeDoc(path, "group", 3, {}, {}, implicit=True, flavor="draft")
        if path == "/":
            return NodeDoc(path, "group", 3, {}, {}, implicit=True, flavor="draft")
        return None

    # -- consolidated metadata ----------------------------------------------------------------
    def _cons_where(self, path: str) -> str:
        return f"the consolidated metadata of {self.store.url} for {path}"

    def _load_v2_consolidated(self) -> None:
        if self.consolidated is not None:
            return
        raw = self._raw(".zmetadata")
        if raw is None:
            return
        if zmetadata_names_references(raw[:4096], raw[-4096:]):  # every chunk would read as the fill value
            raise UnsupportedFeatureError(f"{self._name('.zmetadata')} belongs to a Parquet reference set, not a Zarr "
                                          f"store: open it as reference::{self.store.url}")
        self.consolidated = index_v2(raw, self._name(".zmetadata"), self._cons_where)
        if self.consolidated is not None and self.flavor is None:
            self.flavor = "v2"

    def _consolidated_entry(self, path: str, keep: bool = True) -> NodeDoc | None:
        """The node as the consolidated metadata describes it (None where it does not); a
        broken entry raises MetadataError naming the consolidated metadata and the node.
        ``keep``: remember it for the next call (not worth it for every node of a listing)."""
        if not self.consolidated or path not in self.consolidated:
            return None
        with self._made_lock:
            made = self._made.get(path)
            if made is not None:
                self._made.move_to_end(path)
                return made
        made = self._from_entry(path)
        if not keep:
            return made
        with self._made_lock:
            self._made[path] = made
            if len(self._made) > _CACHED_NODES:
                self._made.popitem(last=False)
        return made

    def _from_entry(self, path: str) -> NodeDoc:
        assert self.consolidated is not None
        entry = self.consolidated.entry(path)
        assert entry is not None
        where = self._cons_where(path)
        if not self.consolidated.v2:
            kind = v3meta.node_type(entry, where)
            attrs = parse_attributes(entry.get("attributes"), where)
            if kind == "array":
                return array_doc(path, 3, entry, attrs, lambda: parse_v3_array(entry, prefix_of(path), where))
            return NodeDoc(path, kind, 3, entry, attrs)
        attrs = parse_attributes(entry.get(".zattrs"), where)
        if ".zarray" in entry:
            zarray = entry[".zarray"]
            return array_doc(path, 2, zarray, attrs, lambda: v2meta.parse_array(zarray, attrs, prefix_of(path), where), "v2")
        return NodeDoc(path, "group", 2, entry.get(".zgroup", {}), attrs, flavor="v2")

    def _implicit_group(self, path: str) -> NodeDoc | None:
        """A folder without metadata whose sub-folders hold nodes (v2 implicit groups, folders of stores)."""
        if self.flavor == "v3" and path != "/" or not self.store.can_list:
            return None
        if children.listed(self, path, probe_only=True):
            fmt = 3 if self.flavor in ("v3", "draft") else 2
            attrs = (self._json(prefix_of(path) + ".zattrs") or {}) if fmt == 2 else {}
            return NodeDoc(path, "group", fmt, {}, attrs, implicit=True, flavor=self.flavor or "v2")
        return None

    # -- children -----------------------------------------------------------------------------
    @property
    def can_list_members(self) -> bool:
        return self.store.can_list or bool(self.consolidated)

    def child_names(self, path: str) -> list[str]:
        """The children's names, sorted (``children.names``)."""
        return children.names(self, path)

    def iter_child_names(self, path: str, page: int) -> Iterator[list[str]]:
        """The children's names in pages (``children.pages``)."""
        return children.pages(self, path, page)

    def stored_keys_prefix(self, node: NodeDoc) -> str:
        if node.flavor == "draft":
            return "data/root" + ("" if node.path == "/" else node.path) + "/"
        return prefix_of(node.path)


def _check_path(path: str, url: str) -> None:
    """A node path from data (consolidated metadata, a listing, OME paths) names keys below
    it: one that could lead outside the store is refused before any of them is asked for."""
    if path != "/" and key_problem(path[1:]) is not None:
        check_key(path[1:], url)
