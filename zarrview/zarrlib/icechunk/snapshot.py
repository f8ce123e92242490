"""A snapshot: every node of one version, with its zarr.json and the manifests of its chunks.

The snapshot file is read whole when a version is opened (it is the version's hierarchy);
chunk references stay in the manifests until a read needs them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import StoreError
from ..storage.base import Store
from . import ids
from .binary import FbTable, FileType, IcechunkFormatError, read_file
from .commit_metadata import read_items
from .repo_info import SnapshotInfo, micros


EMPTY_GROUP = b'{"zarr_format": 3, "node_type": "group", "attributes": {}}'


@dataclass(frozen=True)
class ManifestRef:
    """A manifest holding the chunks of one array in ``extents`` (per dimension, [from, to))."""

    manifest_id: str
    extents: tuple[tuple[int, int], ...]

    def covers(self, index: tuple[int, ...]) -> bool:
        return len(index) == len(self.extents) and all(a <= i < b for i, (a, b) in zip(index, self.extents))


@dataclass
class Node:
    path: str
    node_id: bytes
    is_array: bool
    #: the node's zarr.json, as the writer stored it
    user_data: bytes
    manifests: tuple[ManifestRef, ...] = ()
    #: the array's chunk key encoding: (prefix "c" or "", separator)
    encoding: tuple[str, str] = ("c", "/")
    ndim: int = 0


@dataclass
class Snapshot:
    id: str
    spec: int
    parent_id: str | None
    time_us: int
    message: str
    nodes: dict[str, Node] = field(default_factory=dict)
    #: the commit's metadata (``session.commit(metadata=...)``), decoded within a budget
    metadata: dict[str, Any] = field(default_factory=dict)

    def info_time(self) -> datetime:
        return micros(self.time_us)

    def info(self) -> SnapshotInfo:
        """The commit's summary, as spec 2 keeps it in the repo file (spec 1 keeps it here)."""
        return SnapshotInfo(self.id, self.info_time(), self.message, self.parent_id, self.metadata)


def snapshot_key(snapshot_id: str) -> str:
    return f"snapshots/{snapshot_id}"


def read_snapshot(store: Store, snapshot_id: str) -> Snapshot:
    key = snapshot_key(snapshot_id)
    where = store.key_url(key)
    found = read_file(store, key, FileType.SNAPSHOT)
    if found is None:
        raise StoreError(f"{where}: snapshot {snapshot_id} does not exist in the repository")
    spec, buf = found
    root = FbTable.root(buf, where)
    raw_parent = root.inline(1, 12)
    snap = Snapshot(snapshot_id, spec, ids.encode(raw_parent) if raw_parent else None,
                    root.scalar(3, "Q"), root.string(4) or "", metadata=read_items(root.tables(5), spec))
    vec = root.tables(2)
    for i in range(len(vec)):
        node = _node(vec[i], where)
        snap.nodes[node.path] = node
    if "/" not in snap.nodes:  # a spec 1 repository's first snapshot holds no node at all
        snap.nodes["/"] = Node("/", bytes(8), False, EMPTY_GROUP)
    return snap


def _node(t: FbTable, where: str) -> Node:
    path = t.string(1)
    node_id = t.inline(0, 8)
    user_data = t.raw(2)
    t.require(path, "NodeSnapshot.path")
    t.require(node_id, "NodeSnapshot.id")
    t.require(user_data, "NodeSnapshot.user_data")
    assert path is not None and node_id is not None and user_data is not None
    if not path.startswith("/") or (path != "/" and (path.endswith("/") or "//" in path)) \
            or any(p in (".", "..") for p in path.split("/")):
        raise IcechunkFormatError(f"{where}: node path {path!r} is not a canonical absolute path")
    kind = t.scalar(3, "B")
    if kind == 2:
        return Node(path, node_id, False, user_data)
    if kind != 1:
        raise IcechunkFormatError(f"{where}: node {path} is neither an array nor a group (type {kind})")
    data = t.table(4)
    t.require(data, f"the array data of {path}")
    assert data is not None
    refs: list[ManifestRef] = []
    mvec = data.tables(2)
    for i in range(len(mvec)):
        m = mvec[i]
        raw = m.inline(0, 12)
        m.require(raw, "ManifestRef.object_id")
        assert raw is not None
        extents = tuple((int.from_bytes(e[:4], "little"), int.from_bytes(e[4:], "little")) for e in m.structs(1, 8))
        refs.append(ManifestRef(ids.encode(raw), extents))
    encoding, ndim = _encoding(user_data, f"{where} ({path}/zarr.json)")
    return Node(path, node_id, True, user_data, tuple(refs), encoding, ndim)


def _encoding(user_data: bytes, where: str) -> tuple[tuple[str, str], int]:
    """The array's chunk key encoding and rank from its zarr.json (chunk keys map onto
    manifest indexes through it). A document zarrlib cannot parse here is left for the
    hierarchy to report when the array is opened."""
    try:
        doc = json.loads(user_data)
        ndim = len(doc.get("shape", ()))
        cke = doc.get("chunk_key_encoding") or {"name": "default"}
        sep = (cke.get("configuration") or {}).get("separator", "/" if cke.get("name") == "default" else ".")
        prefix = "c" if cke.get("name", "default") == "default" else ""
        return (prefix, sep if sep in ("/", ".") else "/"), ndim
    except (ValueError, AttributeError, TypeError):
        return ("c", "/"), 0
