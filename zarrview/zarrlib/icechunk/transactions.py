"""Transaction logs: what one commit changed, by node id (``transactions/SNAPSHOT_ID``).

Each commit writes, beside its snapshot, the ids of the groups and arrays it created, deleted
or whose zarr.json it rewrote, the chunk indexes whose references it set or removed, and (spec
2) the nodes it moved. Nothing here reads a manifest or a chunk: a log is the commit's own
summary, which is what a diff between versions is made of. The layout is the same in both
spec versions; spec 2 adds ``moved_nodes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..storage.base import Store
from . import ids
from .binary import FbTable, FileType, IcechunkFormatError, read_file

#: an array's chunk grid index, as a manifest and a transaction log spell it
ChunkIndex = tuple[int, ...]


class TransactionLogNotFoundError(IcechunkFormatError):
    """A commit's transaction log is missing from the repository."""


@dataclass(frozen=True)
class Move:
    """A node moved (or renamed) from ``source`` to ``target`` by a commit."""

    source: str
    target: str
    node_id: bytes
    is_array: bool


@dataclass(frozen=True)
class TransactionLog:
    """One commit's changes; node ids are the 8 raw bytes a snapshot names its nodes by."""

    snapshot_id: str
    new_groups: frozenset[bytes] = frozenset()
    new_arrays: frozenset[bytes] = frozenset()
    deleted_groups: frozenset[bytes] = frozenset()
    deleted_arrays: frozenset[bytes] = frozenset()
    updated_groups: frozenset[bytes] = frozenset()
    updated_arrays: frozenset[bytes] = frozenset()
    #: node id -> the chunk indexes whose reference was added, overwritten or removed
    updated_chunks: dict[bytes, tuple[ChunkIndex, ...]] = field(default_factory=dict)
    moves: tuple[Move, ...] = ()


def transaction_key(snapshot_id: str) -> str:
    return f"transactions/{snapshot_id}"


def read_transaction_log(store: Store, snapshot_id: str) -> TransactionLog:
    """The transaction log of ``snapshot_id``; ``TransactionLogNotFoundError`` where the
    repository has none, ``IcechunkFormatError`` naming the file where it is corrupt."""
    key = transaction_key(snapshot_id)
    where = store.key_url(key)
    found = read_file(store, key, FileType.TRANSACTION_LOG)
    if found is None:
        raise TransactionLogNotFoundError(f"{where}: the transaction log of snapshot {snapshot_id} does not exist")
    return parse_transaction_log(found[1], snapshot_id, where)


def parse_transaction_log(buf: bytes, snapshot_id: str, where: str) -> TransactionLog:
    """A transaction log's flatbuffer; it must name the snapshot it is stored for, so a log
    copied or renamed into another commit's place is refused instead of misreported."""
    root = FbTable.root(buf, where)
    raw_id = root.inline(0, 12)
    root.require(raw_id, "TransactionLog.id")
    assert raw_id is not None
    if ids.encode(raw_id) != snapshot_id:
        raise IcechunkFormatError(f"{where}: the transaction log is that of snapshot {ids.encode(raw_id)}, "
                                  f"not of {snapshot_id}")

    def node_ids(slot: int) -> frozenset[bytes]:
        return frozenset(root.structs(slot, 8))

    chunks: dict[bytes, tuple[ChunkIndex, ...]] = {}
    per_array = root.tables(7)
    for i in range(len(per_array)):
        t = per_array[i]
        node_id = t.inline(0, 8)
        t.require(node_id, "ArrayUpdatedChunks.node_id")
        assert node_id is not None
        indexes = t.tables(1)
        found = [_coords(indexes[j]) for j in range(len(indexes))]
        chunks[node_id] = tuple(found) if node_id not in chunks else chunks[node_id] + tuple(found)
    moves: list[Move] = []
    vec = root.tables(8)
    for i in range(len(vec)):
        m = vec[i]
        source, target, node_id = m.string(0), m.string(1), m.inline(2, 8)
        m.require(source, "MoveOperation.from")
        m.require(target, "MoveOperation.to")
        m.require(node_id, "MoveOperation.node_id")
        assert source is not None and target is not None and node_id is not None
        kind = m.scalar(3, "B")
        if kind not in (0, 1):
            raise IcechunkFormatError(f"{where}: the move of {source} names node type {kind}")
        for path in (source, target):
            if not path.startswith("/"):
                raise IcechunkFormatError(f"{where}: the move of {source} to {target} names a relative path")
        moves.append(Move(source, target, node_id, kind == 1))
    return TransactionLog(snapshot_id, node_ids(1), node_ids(2), node_ids(3), node_ids(4),
                          updated_groups=node_ids(6), updated_arrays=node_ids(5),
                          updated_chunks=chunks, moves=tuple(moves))


def _coords(t: FbTable) -> ChunkIndex:
    if not t.has(0):
        t.require(None, "ChunkIndices.coords")
    return tuple(int.from_bytes(c, "little") for c in t.structs(0, 4))
