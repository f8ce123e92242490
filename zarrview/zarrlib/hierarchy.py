"""Finding nodes in a store: format detection, metadata documents, children, consolidation.

One ``Hierarchy`` per opened store remembers the format it found (v3, v2, or the 2022 v3
draft) so each later node costs as few requests as possible: one for a v3 node.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
from .storage.base import ByteRequest
from .jsonutil import load_json_object
from .metadata import prefinal
from .metadata import v2 as v2meta
from .metadata import v3 as v3meta
from .limits import limits
from .metadata.model import ArrayMetadata, parse_attributes
from .storage.base import Store

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
    children_hint: list[str] | None = field(default=None)
    unsupported: UnsupportedFeatureError | None = None


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


class Hierarchy:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.flavor: Flavor | None = None
        self._consolidated: dict[str, Any] | None = None  # path -> v3 doc or v2 (zarray|zgroup, zattrs)
        #: metadata documents fetched ahead in one batch (``prefetch``), each used once
        self._ahead: dict[str, bytes | None] = {}
        self._ahead_lock = threading.Lock()

    # -- documents --------------------------------------------------------------------------
    def prefetch(self, paths: Sequence[str], zarr_format: int) -> None:
        """Fetch the metadata documents of the nodes at ``paths`` in one batch (one round trip on
        a remote store) so that opening them one by one afterwards asks nothing more; on a local
        store, or for documents not there, opening simply reads them as usual."""
        if self.store.prefers_batches:  # what the consolidated metadata holds is not asked again
            paths = [p for p in paths if self._consolidated_entry(p) is None]
        if not self.store.prefers_batches or not paths:
            return
        names = ("zarr.json",) if zarr_format == 3 else (".zarray", ".zattrs", ".zgroup")
        keys = [prefix_of(p) + n for p in paths for n in names]
        bound = limits().metadata_bytes
        try:
            answers = self.store.get_many([ByteRequest(k, limit=bound) for k in keys])
        except ZarrError:
            return  # each node is then read, and fails, on its own, with its own message
        with self._ahead_lock:
            self._ahead.update(zip(keys, answers))

    def _fetched(self, key: str) -> bytes | None | object:
        with self._ahead_lock:
            return self._ahead.pop(key, ...)

    def _json(self, key: str, data: bytes | None | object = ...) -> dict[str, Any] | None:
        if data is ...:
            data = self._fetched(key)
        if data is ...:
            data = self.store.get_bounded(key, limits().metadata_bytes)
        if data is None:
            return None
        assert isinstance(data, (bytes, bytearray, memoryview))
        return load_json_object(data, self.store.key_url(key) if "://" in self.store.url else key)

    def _where(self, key: str) -> str:
        return f"{'/' + key if not key.startswith('/') else key}"

    def load(self, path: str) -> NodeDoc:
        """The node at ``path``; raises NodeNotFoundError when there is none.

        The store's own format is tried first; v2 and v3 nodes may also be mixed in one tree.
        """
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
        if self.store.prefers_batches:
            cons = self._consolidated_entry(path)
            if cons is not None:
                return cons
        return self.load(path)

    def _try_v3(self, path: str) -> NodeDoc | None:
        key = prefix_of(path) + "zarr.json"
        doc = self._json(key)
        if doc is None:
            return None
        if path == "/" and prefinal.is_prefinal_root(doc):
            self.flavor = "draft"
            return self._try_draft(path)
        where = self._where(key)
        kind = v3meta.node_type(doc, where)
        self.flavor = self.flavor or "v3"
        attrs = parse_attributes(doc.get("attributes"), where)
        if kind == "array":
            return array_doc(path, 3, doc, attrs, lambda: v3meta.parse_array(doc, prefix_of(path), where))
        if path == "/":
            self._load_v3_consolidated(doc, where)
        return NodeDoc(path, "group", 3, doc, attrs)

    def _try_v2(self, path: str) -> NodeDoc | None:
        prefix = prefix_of(path)
        zattrs_raw: bytes | None | object = ...
        ahead = (self._fetched(prefix + ".zarray"), self._fetched(prefix + ".zattrs"))
        if ahead[0] is not ...:
            zarray = self._json(prefix + ".zarray", ahead[0])
            zattrs_raw = ahead[1]
        elif self.store.prefers_batches:  # .zarray and .zattrs in one round trip
            bound = limits().metadata_bytes
            zarray_raw, zattrs_raw = self.store.get_many([ByteRequest(prefix + ".zarray", limit=bound),
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
        return NodeDoc(path, "group", 2, zgroup, attrs, flavor="v2")

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
    def _load_v3_consolidated(self, doc: dict[str, Any], where: str) -> None:
        cm = doc.get("consolidated_metadata")
        if not isinstance(cm, dict) or not isinstance(cm.get("metadata"), dict):
            return
        self._consolidated = {join("/", k.strip("/")): v for k, v in cm["metadata"].items() if isinstance(v, dict)}

    def _load_v2_consolidated(self) -> None:
        if self._consolidated is not None:
            return
        doc = self._json(".zmetadata")
        if doc is None or not isinstance(doc.get("metadata"), dict):
            return
        nodes: dict[str, Any] = {}
        for key, value in doc["metadata"].items():
            head, _, leaf = key.rpartition("/")
            path = join("/", head) if head else "/"
            if leaf in (".zarray", ".zgroup", ".zattrs") and isinstance(value, dict):
                nodes.setdefault(path, {})[leaf] = value
        self._consolidated = nodes
        if self.flavor is None:
            self.flavor = "v2"

    def _consolidated_entry(self, path: str) -> NodeDoc | None:
        if not self._consolidated or path not in self._consolidated:
            return None
        entry = self._consolidated[path]
        where = f"the consolidated metadata of {self.store.url} for {path}"
        if self.flavor == "v3":
            kind = v3meta.node_type(entry, where)
            attrs = parse_attributes(entry.get("attributes"), where)
            if kind == "array":
                return array_doc(path, 3, entry, attrs, lambda: v3meta.parse_array(entry, prefix_of(path), where))
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
        if self._child_names(path, probe_only=True):
            fmt = 3 if self.flavor in ("v3", "draft") else 2
            attrs = (self._json(prefix_of(path) + ".zattrs") or {}) if fmt == 2 else {}
            return NodeDoc(path, "group", fmt, {}, attrs, implicit=True, flavor=self.flavor or "v2")
        return None

    # -- children -----------------------------------------------------------------------------
    @property
    def can_list_members(self) -> bool:
        return self.store.can_list or bool(self._consolidated)

    def child_names(self, path: str) -> list[str]:
        """Listed children, plus those only the consolidated metadata knows of."""
        listed = self._child_names(path, probe_only=False)
        if self.store.can_list and self._consolidated:
            return sorted(set(listed) | set(self._consolidated_children(path)))
        return listed

    def _child_names(self, path: str, probe_only: bool) -> list[str]:
        if self.flavor == "draft":
            return self._draft_children(path)
        if not self.store.can_list:
            return self._consolidated_children(path)
        prefix = prefix_of(path)
        _, dirs = self.store.list_dir(prefix)
        names: list[str] = []
        markers = ("zarr.json", ".zarray", ".zgroup")
        for d in dirs:
            sub_keys, sub_dirs = self.store.list_dir(prefix + d + "/")
            if any(m in sub_keys for m in markers):
                names.append(d)
            elif sub_dirs and self.flavor != "v3" and self._has_nodes_below(prefix + d + "/", sub_dirs):
                names.append(d)
            if probe_only and names:
                break
        return sorted(names)

    def _has_nodes_below(self, prefix: str, dirs: list[str], depth: int = 2) -> bool:
        markers = ("zarr.json", ".zarray", ".zgroup")
        for d in dirs[:50]:
            keys, sub = self.store.list_dir(prefix + d + "/")
            if any(m in keys for m in markers):
                return True
            if depth > 1 and sub and self._has_nodes_below(prefix + d + "/", sub, depth - 1):
                return True
        return False

    def _consolidated_children(self, path: str) -> list[str]:
        if not self._consolidated:
            return []
        names = set()
        base = "" if path == "/" else path
        for p in self._consolidated:
            if p != path and p.startswith(base + "/"):
                names.add(p[len(base) + 1:].split("/", 1)[0])
        return sorted(names)

    def _draft_children(self, path: str) -> list[str]:
        base = "meta/root/" if path == "/" else f"meta/root{path}/"
        if not self.store.can_list:
            return []
        keys, dirs = self.store.list_dir(base)
        names = set(dirs)
        for k in keys:
            for suffix in (".array.json", ".group.json"):
                if k.endswith(suffix):
                    names.add(k[: -len(suffix)])
        return sorted(names)

    def stored_keys_prefix(self, node: NodeDoc) -> str:
        if node.flavor == "draft":
            return "data/root" + ("" if node.path == "/" else node.path) + "/"
        return prefix_of(node.path)

