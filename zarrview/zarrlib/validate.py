"""Where a store breaks the Zarr specifications, every place at once, each named by key and rule.

Opening a node stops at its first problem, which is right for reading; a person checking a
store (or a CI pipeline checking what it wrote) wants all of them. So each field of each
metadata document is checked on its own, by the same parsers a read uses (what the validator
calls wrong is exactly what a read refuses), and then the document whole, for what only the
fields together say (a shard's inner chunks that do not divide it, a fill value of another
type). Beyond the documents: the hierarchy (an array inside an array, v2 and v3 documents at
one node, a v3 node whose parent has no document), consolidated metadata against the
documents it repeats, shard indexes (entries that overlap, point past the shard or are half
empty, for every stored shard up to ``SHARDS_CHECKED`` an array), and objects below an array
that are no key of its grid. Convention rules (OME-NGFF, GeoZarr, AnnData) are added by the
viewing layer, which interprets those conventions.

Each finding names the key, the rule, the section of the specification it comes from and a
severity: ``error`` where the specification says MUST (or a reader must refuse), ``warning``
for SHOULD, for what only some readers accept, and for extensions zarrview does not know.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .cancel import CancelToken
from .codecs import ChunkSpec, parse_codecs
from .codecs.sharding import EMPTY
from .dtypes import DataType, parse_v2_dtype, parse_v3_dtype
from .errors import MetadataError, UnsupportedFeatureError, ZarrError
from .fill import parse_v2_fill, parse_v3_fill
from .jsonutil import load_json_object
from .limits import limits
from .metadata import v2 as v2_meta
from .metadata import v3 as v3_meta
from .metadata.model import ArrayMetadata, parse_attributes, parse_dimension_names, parse_shape
from .shard_index import ShardIndexes
from .storage.base import Store

Severity = Literal["error", "warning"]

#: stored shards whose indexes are checked per array (each one request)
SHARDS_CHECKED = 10_000
#: findings of one kind kept per array (a million stray objects are one finding, counted)
PER_KIND = 20

V3 = "Zarr v3 core"
V2 = "Zarr v2"
SHARDING = "sharding_indexed codec"
#: the section of the specification each rule comes from
SECTIONS: dict[str, str] = {
    "json": f"{V3} §metadata (documents are JSON objects) / {V2} §spec_v2_storage",
    "json.nan": f"{V3} §array-metadata-fill-value (NaN and infinities are strings)",
    "v3.zarr_format": f"{V3} §array-metadata-zarr-format",
    "v3.node_type": f"{V3} §array-metadata-node-type",
    "v3.required": f"{V3} §array-metadata",
    "v3.unknown_field": f"{V3} §additional_fields (must_understand)",
    "v3.shape": f"{V3} §array-metadata-shape",
    "v3.data_type": f"{V3} §array-metadata-data-type",
    "v3.chunk_grid": f"{V3} §array-metadata-chunk-grid",
    "v3.chunk_key_encoding": f"{V3} §array-metadata-chunk-key-encoding",
    "v3.fill_value": f"{V3} §array-metadata-fill-value",
    "v3.codecs": f"{V3} §array-metadata-codecs",
    "v3.dimension_names": f"{V3} §array-metadata-dimension-names",
    "v3.attributes": f"{V3} §array-metadata-attributes",
    "v3.storage_transformers": f"{V3} §array-metadata-storage-transformers",
    "v3.array": f"{V3} §array-metadata",
    "v3.group": f"{V3} §group-metadata",
    "v2.zarr_format": f"{V2} §spec_v2_array_metadata",
    "v2.required": f"{V2} §spec_v2_array_metadata",
    "v2.shape": f"{V2} §spec_v2_array_metadata (shape)",
    "v2.chunks": f"{V2} §spec_v2_array_metadata (chunks)",
    "v2.dtype": f"{V2} §spec_v2_array_dtype",
    "v2.compressor": f"{V2} §spec_v2_array_metadata (compressor)",
    "v2.fill_value": f"{V2} §spec_v2_array_fill_value",
    "v2.order": f"{V2} §spec_v2_array_metadata (order)",
    "v2.filters": f"{V2} §spec_v2_array_filters",
    "v2.dimension_separator": f"{V2} §spec_v2_array_metadata (dimension_separator)",
    "v2.array": f"{V2} §spec_v2_array_metadata",
    "v2.group": f"{V2} §spec_v2_hierarchy_groups",
    "v2.attributes": f"{V2} §spec_v2_attrs",
    "hierarchy.array_parent": f"{V3} §hierarchy (arrays are leaves) / {V2} §spec_v2_hierarchy",
    "hierarchy.mixed": f"{V3} §hierarchy / {V2} §spec_v2_hierarchy (one format a node)",
    "hierarchy.implicit": f"{V3} §group-metadata (every group has a document)",
    "consolidated.differs": "consolidated metadata (zarr-python): entries repeat the documents",
    "consolidated.missing": "consolidated metadata (zarr-python): entries repeat the documents",
    "consolidated.extra": "consolidated metadata (zarr-python): entries repeat the documents",
    "shard.index": f"{SHARDING} §binary shard format",
    "shard.half_empty": f"{SHARDING} §binary shard format (empty inner chunks)",
    "shard.past_end": f"{SHARDING} §binary shard format (offsets within the shard)",
    "shard.overlap": f"{SHARDING} §binary shard format (inner chunks do not overlap)",
    "chunks.stray": f"{V3} §chunk-key-encoding / {V2} §spec_v2_array_chunks (chunk keys)",
    "ome-ngff": "OME-NGFF (the version the group declares)",
    "geozarr": "Zarr conventions: multiscales, geo-proj, spatial",
    "anndata": "AnnData on-disk format (dataframes, sparse matrices)",
}


@dataclass(frozen=True)
class Finding:
    severity: Severity
    key: str
    rule: str
    message: str

    @property
    def section(self) -> str:
        return SECTIONS.get(self.rule, "")

    def as_json(self) -> dict[str, str]:
        return {"severity": self.severity, "key": self.key, "rule": self.rule, "section": self.section,
                "message": self.message}

    def __str__(self) -> str:
        return f"{self.severity}: {self.key}: {self.message} [{self.rule}; {self.section}]"


class Findings:
    """Findings as they are made, at most ``PER_KIND`` of one rule about one node (the rest counted)."""

    def __init__(self) -> None:
        self.items: list[Finding] = []
        self._counts: dict[tuple[str, str], int] = {}

    def add(self, severity: Severity, key: str, rule: str, message: str, node: str | None = None) -> None:
        slot = (rule, node if node is not None else key)
        n = self._counts[slot] = self._counts.get(slot, 0) + 1
        if n <= PER_KIND:
            self.items.append(Finding(severity, key, rule, message))

    def more(self) -> Iterator[Finding]:
        """One finding per kind that was cut, saying how many there were in all."""
        for (rule, node), n in self._counts.items():
            if n > PER_KIND:
                first = next(f for f in self.items if f.rule == rule)
                yield Finding(first.severity, node, rule, f"{n:,} findings of this kind in all; the first {PER_KIND} are listed")


def _check(findings: Findings, key: str, rule: str, fn: Callable[[], Any]) -> Any:
    """``fn()``, or None with a finding where it raises: an error for a MetadataError, a
    warning for what zarrview does not know (an extension)."""
    try:
        return fn()
    except UnsupportedFeatureError as e:
        findings.add("warning", key, rule, str(e))
    except MetadataError as e:
        findings.add("error", key, rule, str(e))
    except (ZarrError, ValueError, TypeError, KeyError) as e:
        findings.add("error", key, rule, str(e) or type(e).__name__)
    return None


def _document(store: Store, key: str, findings: Findings, strict_json: bool) -> dict[str, Any] | None:
    data = store.get_bounded(key, limits().metadata_bytes)
    if data is None:
        return None
    doc = _check(findings, key, "json", lambda: load_json_object(data, key))
    if doc is not None and strict_json:
        try:
            json.loads(bytes(data), parse_constant=_refuse_constant)
        except ValueError as e:
            findings.add("error", key, "json.nan", f"{e}: write NaN and the infinities as the strings \"NaN\", "
                                                   "\"Infinity\" and \"-Infinity\"")
    return doc


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the bare token {name} is not JSON")


# -- v3 -------------------------------------------------------------------------------------------

_V3_ARRAY_FIELDS = {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
                    "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names"}
_V3_GROUP_FIELDS = {"zarr_format", "node_type", "attributes", "consolidated_metadata"}
_V3_REQUIRED = ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs")


def check_v3(doc: dict[str, Any], key: str, findings: Findings, prefix: str = "") -> ArrayMetadata | None:
    """The findings of a ``zarr.json``; its array metadata (its keys below ``prefix``) where it is
    a readable array."""
    if doc.get("zarr_format") != 3:
        findings.add("error", key, "v3.zarr_format", f"zarr_format must be 3, found {doc.get('zarr_format')!r}")
    kind = doc.get("node_type")
    if kind not in ("array", "group"):
        findings.add("error", key, "v3.node_type", f"node_type must be 'array' or 'group', found {kind!r}")
        return None
    known = _V3_ARRAY_FIELDS if kind == "array" else _V3_GROUP_FIELDS
    for field, value in doc.items():
        if field not in known and not (isinstance(value, dict) and value.get("must_understand") is False):
            findings.add("error", key, "v3.unknown_field",
                         f"unknown field {field!r} (readers must refuse it unless it says must_understand: false)")
    _check(findings, key, "v3.attributes", lambda: parse_attributes(doc.get("attributes"), key))
    if kind == "group":
        return None
    missing = [f for f in _V3_REQUIRED if f not in doc]
    for field in missing:
        findings.add("error", key, "v3.required", f"the required field {field!r} is missing")
    shape = _check(findings, key, "v3.shape", lambda: parse_shape(doc["shape"], "shape", key)) \
        if "shape" in doc else None
    dt: DataType | None = _check(findings, key, "v3.data_type", lambda: parse_v3_dtype(doc["data_type"], key)) \
        if "data_type" in doc else None
    if "chunk_grid" in doc and shape is not None:
        _check(findings, key, "v3.chunk_grid", lambda: _v3_grid(doc, shape, key))
    if "chunk_key_encoding" in doc:
        _check(findings, key, "v3.chunk_key_encoding", lambda: v3_meta.chunk_key(doc["chunk_key_encoding"], "", key))
    fill = None
    if "fill_value" in doc and dt is not None:
        fill = _check(findings, key, "v3.fill_value", lambda: parse_v3_fill(dt, doc["fill_value"], key))
    if shape is not None:
        _check(findings, key, "v3.dimension_names",
               lambda: parse_dimension_names(doc.get("dimension_names"), len(shape), key))
    _check(findings, key, "v3.storage_transformers", lambda: _v3_transformers(doc, key))
    if "codecs" in doc and dt is not None and shape is not None and fill is not None:
        chunk_shape = _v3_chunk_shape(doc, len(shape))
        if chunk_shape is not None:
            _check(findings, key, "v3.codecs",
                   lambda: parse_codecs(doc["codecs"], key, ChunkSpec(chunk_shape, dt, fill)))
    if missing or any(f.key == key and f.severity == "error" for f in findings.items):
        return None
    before = len(findings.items)
    meta = _check(findings, key, "v3.array", lambda: v3_meta.parse_array(doc, prefix, key))
    # a field already named says the same again as a whole-document finding: keep the named one
    if len(findings.items) > before and any(f.key == key and f.rule != "v3.array" for f in findings.items[:before]):
        findings.items.pop()
    return meta if isinstance(meta, ArrayMetadata) else None


def _v3_grid(doc: dict[str, Any], shape: tuple[int, ...], key: str) -> None:
    name, config = v3_meta.name_config(doc["chunk_grid"], "chunk_grid", key)
    if name == "regular":
        chunks = parse_shape(config.get("chunk_shape"), "chunk_shape", key, positive=True)
        if len(chunks) != len(shape):
            raise MetadataError(f"chunk_shape {list(chunks)} has {len(chunks)} dimensions, shape {list(shape)} "
                                f"has {len(shape)}")
    elif name == "rectilinear":
        from .grid import parse_rectilinear

        parse_rectilinear(config, shape, key)
    else:
        raise UnsupportedFeatureError(f"chunk grid {name!r} is not a grid zarrview knows")


def _v3_chunk_shape(doc: dict[str, Any], ndim: int) -> tuple[int, ...] | None:
    grid = doc.get("chunk_grid")
    config = grid.get("configuration") if isinstance(grid, dict) else None
    chunks = config.get("chunk_shape") if isinstance(config, dict) else None
    if isinstance(chunks, list) and len(chunks) == ndim and all(isinstance(c, int) and c > 0 for c in chunks):
        return tuple(chunks)
    return None


def _v3_transformers(doc: dict[str, Any], key: str) -> None:
    from .metadata.model import parse_transformers

    for t in parse_transformers(doc.get("storage_transformers"), key):
        if not (isinstance(t, dict) and t.get("must_understand") is False):
            name = t.get("name") if isinstance(t, dict) else t
            raise MetadataError(f"storage transformer {name!r}: readers must refuse an array with one they do "
                                "not know, and none is specified")


# -- v2 -------------------------------------------------------------------------------------------

_V2_REQUIRED = ("shape", "chunks", "dtype", "compressor", "fill_value", "order")


def check_v2(doc: dict[str, Any], attrs: dict[str, Any], key: str, findings: Findings,
             prefix: str = "") -> ArrayMetadata | None:
    """The findings of a ``.zarray``; its array metadata (its keys below ``prefix``) where it is
    a readable array."""
    if doc.get("zarr_format") != 2:
        findings.add("error", key, "v2.zarr_format", f"zarr_format must be 2, found {doc.get('zarr_format')!r}")
    missing = [f for f in _V2_REQUIRED if f not in doc]
    for field in missing:
        findings.add("error", key, "v2.required", f"the required field {field!r} is missing")
    shape = _check(findings, key, "v2.shape", lambda: parse_shape(doc["shape"], "shape", key)) if "shape" in doc else None
    chunks = _check(findings, key, "v2.chunks", lambda: parse_shape(doc["chunks"], "chunks", key, positive=True)) \
        if "chunks" in doc else None
    if shape is not None and chunks is not None and len(shape) != len(chunks):
        findings.add("error", key, "v2.chunks", f"chunks {list(chunks)} has {len(chunks)} dimensions, "
                                                f"shape {list(shape)} has {len(shape)}")
    dt = _check(findings, key, "v2.dtype", lambda: parse_v2_dtype(doc["dtype"], key)) if "dtype" in doc else None
    if "order" in doc and doc["order"] not in ("C", "F"):
        findings.add("error", key, "v2.order", f"order must be 'C' or 'F', found {doc['order']!r}")
    if "compressor" in doc and doc["compressor"] is not None:
        _check(findings, key, "v2.compressor", lambda: v2_meta.codec(doc["compressor"], key))
    filters = doc.get("filters")
    if filters is not None and not isinstance(filters, list):
        findings.add("error", key, "v2.filters", f"filters must be a list or null, found {filters!r}")
    elif filters:
        for spec in filters:
            def made(spec: Any = spec) -> Any:
                return v2_meta.codec(spec, key)

            _check(findings, key, "v2.filters", made)
    if "fill_value" in doc and dt is not None and dt.dtype.kind != "O":
        _check(findings, key, "v2.fill_value", lambda: parse_v2_fill(dt, doc["fill_value"], key))
    sep = doc.get("dimension_separator")
    if sep not in (None, ".", "/"):
        findings.add("error", key, "v2.dimension_separator", f"dimension_separator must be '.' or '/', found {sep!r}")
    if missing or any(f.key == key and f.severity == "error" for f in findings.items):
        return None
    before = len(findings.items)
    meta = _check(findings, key, "v2.array", lambda: v2_meta.parse_array(doc, attrs, prefix, key))
    if len(findings.items) > before and any(f.key == key and f.rule != "v2.array" for f in findings.items[:before]):
        findings.items.pop()
    return meta if isinstance(meta, ArrayMetadata) else None


# -- the store ------------------------------------------------------------------------------------

DOCUMENTS = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")


@dataclass
class _Node:
    path: str
    docs: set[str]


def validate_store(store: Store, prefix: str = "", cancel: CancelToken | None = None,
                   progress: Callable[[int], None] | None = None) -> list[Finding]:
    """Every finding in the hierarchy below ``prefix`` (``""`` or ending in ``/``): from one
    listing of the store (and one of each array's objects), its documents, its consolidated
    metadata and its shard indexes; what it holds is the documents, never the objects."""
    findings = Findings()
    if not store.can_list:
        raise UnsupportedFeatureError(f"{store.url} cannot be listed (a plain HTTP server): validating needs a "
                                      "listing of what is stored")
    nodes: dict[str, _Node] = {}  # only the documents are kept: a store of 10**8 chunks holds few
    seen = 0
    for key, _ in store.walk_sizes(prefix, cancel):
        seen += 1
        if progress is not None and seen % 4096 == 0:
            progress(seen)
        folder, _, name = key.rpartition("/")
        if name in DOCUMENTS:
            nodes.setdefault(folder, _Node(folder, set())).docs.add(name)
    arrays: dict[str, ArrayMetadata] = {}
    for path in sorted(nodes):
        node = nodes[path]
        meta = _check_node(store, node, findings)
        if meta is not None:
            arrays[path] = meta
    _check_hierarchy(nodes, arrays, findings)
    _check_consolidated(store, nodes, findings)
    for path, meta in arrays.items():  # each array's objects listed again, looked at one by one
        below = ((k, s) for k, s in store.walk_sizes(_key(path, ""), cancel) if k.rpartition("/")[2] not in DOCUMENTS)
        _check_objects(store, path, meta, below, findings, cancel)
    return findings.items + list(findings.more())


def _key(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _check_node(store: Store, node: _Node, findings: Findings) -> ArrayMetadata | None:
    path, docs = node.path, node.docs
    meta = None
    if "zarr.json" in docs:
        key = _key(path, "zarr.json")
        doc = _document(store, key, findings, strict_json=True)
        if doc is not None:
            meta = check_v3(doc, key, findings, _key(path, ""))
    if ".zarray" in docs or ".zgroup" in docs:
        if "zarr.json" in docs:
            findings.add("warning", _key(path, "zarr.json"), "hierarchy.mixed",
                         "this node has v2 documents too (.zarray/.zgroup); readers disagree on which is meant")
        if ".zarray" in docs and ".zgroup" in docs:
            findings.add("error", _key(path, ".zarray"), "v2.array", "a node cannot be both an array and a group")
        attrs: dict[str, Any] = {}
        if ".zattrs" in docs:
            found = _document(store, _key(path, ".zattrs"), findings, strict_json=False)
            attrs = found if found is not None else {}
        if ".zarray" in docs:
            key = _key(path, ".zarray")
            doc = _document(store, key, findings, strict_json=False)
            if doc is not None:
                v2 = check_v2(doc, attrs, key, findings, _key(path, ""))
                meta = meta if meta is not None else v2
        if ".zgroup" in docs:
            key = _key(path, ".zgroup")
            doc = _document(store, key, findings, strict_json=False)
            if doc is not None and doc.get("zarr_format") != 2:
                findings.add("error", key, "v2.group", f"zarr_format must be 2, found {doc.get('zarr_format')!r}")
    elif ".zattrs" in docs and "zarr.json" not in docs:
        findings.add("warning", _key(path, ".zattrs"), "v2.attributes", "attributes of a node that has no .zarray or .zgroup")
    return meta


def _check_hierarchy(nodes: dict[str, _Node], arrays: dict[str, ArrayMetadata], findings: Findings) -> None:
    for path, node in nodes.items():
        parent = path.rpartition("/")[0] if "/" in path else ("" if path else None)
        while parent is not None:
            if parent in arrays:
                doc = "zarr.json" if "zarr.json" in node.docs else sorted(node.docs)[0]
                findings.add("error", _key(path, doc), "hierarchy.array_parent",
                             f"a node inside the array {'/' + parent if parent else '/'}: arrays hold chunks, not nodes")
                break
            parent = parent.rpartition("/")[0] if "/" in parent else ("" if parent else None)
        if "zarr.json" in node.docs and path:
            up = path.rpartition("/")[0]
            above = nodes.get(up)
            if above is None or "zarr.json" not in above.docs:
                findings.add("warning", _key(path, "zarr.json"), "hierarchy.implicit",
                             f"its parent {'/' + up if up else '/'} has no zarr.json: v3 has no implicit groups, "
                             "so readers that list the hierarchy from the root do not find this node")


def _check_consolidated(store: Store, nodes: dict[str, _Node], findings: Findings) -> None:
    """Consolidated metadata (``.zmetadata``, or a v3 root's ``consolidated_metadata``) against
    the documents it repeats: entries that differ, name no document, or leave one out."""
    for path, node in nodes.items():
        if ".zmetadata" in node.docs:
            key = _key(path, ".zmetadata")
            doc = _document(store, key, findings, strict_json=False)
            entries = doc.get("metadata") if isinstance(doc, dict) else None
            if not isinstance(entries, dict):
                if doc is not None:
                    findings.add("error", key, "consolidated.differs", "it holds no 'metadata' object")
                continue
            wanted = {_key(p[len(path) + 1:] if path else p, d) for p, n in nodes.items()
                      if p == path or p.startswith(path + "/" if path else "") for d in n.docs
                      if d in (".zarray", ".zgroup", ".zattrs")}
            _compare(store, key, path, {k: v for k, v in entries.items()}, wanted, findings)
        if "zarr.json" in node.docs:
            key = _key(path, "zarr.json")
            doc = _document(store, key, Findings(), strict_json=False)
            cons = doc.get("consolidated_metadata") if isinstance(doc, dict) else None
            if not isinstance(cons, dict) or not isinstance(cons.get("metadata"), dict):
                continue
            entries = {_key(p, "zarr.json"): v for p, v in cons["metadata"].items()}
            wanted = {_key((p[len(path) + 1:] if path else p), "zarr.json") for p, n in nodes.items()
                      if p != path and (p.startswith(path + "/") if path else True) and "zarr.json" in n.docs}
            _compare(store, key, path, entries, wanted, findings)


def _compare(store: Store, key: str, path: str, entries: dict[str, Any], wanted: set[str], findings: Findings) -> None:
    for name, value in entries.items():
        real = _document(store, _key(path, name), Findings(), strict_json=False)
        if real is None:
            findings.add("error", key, "consolidated.extra", f"the entry {name!r} names no document in the store",
                         node=key)
        elif _without_nested(real) != _without_nested(value):
            findings.add("error", key, "consolidated.differs",
                         f"the entry {name!r} differs from the document {_key(path, name)}", node=key)
    for name in sorted(wanted - set(entries)):
        findings.add("warning", key, "consolidated.missing",
                     f"the document {_key(path, name)} has no entry: readers of the consolidated metadata miss it",
                     node=key)


def _without_nested(doc: Any) -> Any:
    """A document without the consolidated metadata it may hold (an entry's own is left out)."""
    if isinstance(doc, dict):
        return {k: v for k, v in doc.items() if k != "consolidated_metadata"}
    return doc


def _check_objects(store: Store, path: str, meta: ArrayMetadata, objects: Iterator[tuple[str, int | None]],
                   findings: Findings, cancel: CancelToken | None) -> None:
    """Objects below the array that are no key of its grid, and its shard indexes."""
    from .audit import GridKeys

    keys = GridKeys(meta)
    node = _key(path, "zarr.json" if meta.zarr_format == 3 else ".zarray")
    shards: list[tuple[tuple[int, ...], int | None]] = []
    for key, size in objects:
        coords = keys.coords(key)
        if coords is None:
            findings.add("warning", key, "chunks.stray", f"an object below the array {'/' + path} that is no key of "
                                                         "its chunk grid (readers never read it)", node=node)
        elif meta.shard_layout is not None and len(shards) < SHARDS_CHECKED:
            shards.append((coords, size))
    if shards:
        _check_shards(store, path, meta, shards, findings, cancel)


def _check_shards(store: Store, path: str, meta: ArrayMetadata, shards: list[tuple[tuple[int, ...], int | None]],
                  findings: Findings, cancel: CancelToken | None) -> None:
    indexes = ShardIndexes(store, meta, path)
    node = _key(path, "zarr.json")
    empty = np.uint64(EMPTY)
    for start in range(0, len(shards), 1024):
        batch = shards[start:start + 1024]
        found = indexes.indexes([s for s, _ in batch], cancel)
        for shard, size in batch:
            index = found[shard]
            key = meta.stored_key(shard)
            if index is None:
                continue
            if isinstance(index, ZarrError):
                findings.add("error", key, "shard.index", str(index), node=node)
                continue
            offsets, lengths = index[:, 0], index[:, 1]
            none = (offsets == empty) & (lengths == empty)
            half = (offsets == empty) ^ (lengths == empty)
            for pos in np.flatnonzero(half)[:3].tolist():
                findings.add("error", key, "shard.half_empty",
                             f"index entry {pos} is half empty (offset {int(offsets[pos])}, {int(lengths[pos])} "
                             "bytes)", node=node)
            used = ~none & ~half
            ends = offsets[used].astype(np.float64) + lengths[used].astype(np.float64)
            if size is not None:
                past = np.flatnonzero(used)[ends > size]
                for pos in past[:3].tolist():
                    findings.add("error", key, "shard.past_end",
                                 f"index entry {pos} ends at byte {int(offsets[pos]) + int(lengths[pos])}, past the "
                                 f"shard's {size} bytes", node=node)
            order = np.argsort(offsets[used], kind="stable")
            o, n = offsets[used][order].astype(np.float64), lengths[used][order].astype(np.float64)
            clash = np.flatnonzero(o[1:] < o[:-1] + n[:-1])
            if len(clash):
                first = np.flatnonzero(used)[order][clash[0] + 1]
                findings.add("error", key, "shard.overlap",
                             f"{len(clash)} index entries overlap the one before them (the first: entry {int(first)})",
                             node=node)


def count(findings: list[Finding], severity: Severity) -> int:
    return sum(1 for f in findings if f.severity == severity)

