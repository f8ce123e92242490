"""How an array is stored: which chunks exist, how many bytes they take, how full its shards are.

Everything is counted from what the store holds, never from the keys of the grid: the objects
below the array come from one listing (a page at a time where the store pages: a folder, S3,
an Icechunk snapshot's manifests, a reference set's entries), and a sharded array's inner
chunks from its shard indexes, one request per stored shard (batched, as a read batches them),
never one per chunk. An array of 10**9 chunks of which a thousand are stored costs a thousand
listed names, and the audit's memory is bounded whatever the grid: the map of stored chunks
has at most ``MAP_CELLS`` cells, each counting the chunks of its block of the grid, and sizes
are counted in power-of-two classes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .cancel import CancelToken
from .codecs.sharding import EMPTY
from .errors import ZarrError
from .metadata.model import ArrayMetadata, KeyFn
from .plan import ChunkProjection
from .shard_index import ShardIndexes
from .stored_objects import NOT_CHUNKS

#: the most cells the map of stored chunks has, whatever the grid (a 3-D grid gets 64 a side)
MAP_CELLS = 1 << 18
#: shards whose indexes are asked for together (one batch of requests, as a read asks them)
SHARD_BATCH = 1024
#: stray keys (objects below the array that are no key of its grid) named, of all counted
STRAYS_NAMED = 20
#: size classes: class k counts objects of 2**(k-1) <= size < 2**k bytes, class 0 the empty ones
SIZE_CLASSES = 64

if TYPE_CHECKING:
    from .reader import ChunkReader

Progress = Callable[[int], None]


@dataclass
class ArrayAudit:
    """What one array holds in its store; counts of chunks are of read chunks (inner chunks of
    a sharded array), ``objects_stored`` of stored objects (shards where sharded)."""

    path: str
    shape: tuple[int, ...]
    #: read chunks along each dimension (inner chunks where sharded)
    grid_shape: tuple[int, ...]
    chunk_nbytes: int
    logical_bytes: int
    chunks_expected: int
    #: None where the store cannot list (a plain HTTP server)
    chunks_stored: int | None = None
    objects_stored: int | None = None
    #: bytes of the stored objects, shard indexes included
    stored_bytes: int | None = None
    #: bytes of the stored chunks alone (a sharded array's inner chunks, from its indexes)
    chunk_bytes: int | None = None
    shards_expected: int | None = None
    shards_stored: int | None = None
    inner_chunks_stored: int | None = None
    #: inner chunks each shard can hold (its fill is ``inner_chunks_stored`` over this, per shard)
    chunks_per_shard: int | None = None
    stray_objects: int = 0
    stray_keys: list[str] = field(default_factory=list)
    size_classes: list[int] = field(default_factory=lambda: [0] * SIZE_CLASSES)
    #: stored chunks per cell; each cell covers ``map_cell`` chunks a dimension (None: no map)
    stored_map: np.ndarray | None = None
    map_cell: tuple[int, ...] | None = None
    #: shards whose index could not be read or is corrupt, each named with what is wrong
    errors: list[str] = field(default_factory=list)

    @property
    def listed(self) -> bool:
        return self.chunks_stored is not None

    @property
    def ratio(self) -> float | None:
        """Decoded bytes of the stored chunks over their stored bytes (edge chunks are stored
        whole, so each counts a whole chunk); None where nothing is stored or known."""
        if not self.chunks_stored or not self.chunk_bytes:
            return None
        return self.chunks_stored * self.chunk_nbytes / self.chunk_bytes

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path, "shape": list(self.shape), "grid_shape": list(self.grid_shape),
            "chunks_expected": self.chunks_expected, "chunks_stored": self.chunks_stored,
            "objects_stored": self.objects_stored, "stored_bytes": self.stored_bytes,
            "chunk_bytes": self.chunk_bytes, "logical_bytes": self.logical_bytes,
            "compression_ratio": None if self.ratio is None else round(self.ratio, 4),
            "stray_objects": self.stray_objects, "stray_keys": self.stray_keys,
            "size_classes": {f"<{1 << k}" if k else "0": n for k, n in enumerate(self.size_classes) if n},
            "errors": self.errors,
        }
        if self.shards_expected is not None:
            out.update(shards_expected=self.shards_expected, shards_stored=self.shards_stored,
                       inner_chunks_stored=self.inner_chunks_stored, chunks_per_shard=self.chunks_per_shard)
        if self.stored_map is not None and self.map_cell is not None:
            out["stored_map"] = {"cell": list(self.map_cell), "counts": self.stored_map.tolist()}
        return out


def key_pattern(key: KeyFn, ndim: int) -> re.Pattern[str]:
    """The keys ``key`` makes, as a pattern whose groups are the grid coordinates: the key of
    coordinates no grid reaches, each such number a group (so any key encoding is parsed the
    way it is written, without knowing its spelling)."""
    marks = [str(10**18 + 7 * i + 1) for i in range(ndim)]
    text = key(tuple(int(m) for m in marks))
    parts = re.split("(" + "|".join(marks) + ")", text) if marks else [text]
    return re.compile("".join(r"(\d+)" if p in marks else re.escape(p) for p in parts) + r"\Z")


def map_cells(grid: tuple[int, ...]) -> tuple[int, ...] | None:
    """Chunks per map cell along each dimension, so the map has at most ``MAP_CELLS`` cells;
    None where a map is not drawn (no dimension, or more than three)."""
    if not 1 <= len(grid) <= 3:
        return None
    side = int(round(MAP_CELLS ** (1 / len(grid))))
    return tuple(max(1, -(-g // side)) for g in grid)


def _size_class(n: int) -> int:
    return min(SIZE_CLASSES - 1, int(n).bit_length())


def audit_array(store: Any, meta: ArrayMetadata, path: str, prefix: str, objects: Iterator[tuple[str, int | None]] | None,
                cancel: CancelToken | None = None, progress: Progress | None = None) -> ArrayAudit:
    """The audit of the array ``meta`` at ``path``, whose keys start with ``prefix``, from
    ``objects``: the listing of what is below it (key, size), or None where the store cannot
    list. ``progress`` is told the objects looked at so far."""
    shape = meta.shape
    sharded = meta.shard_layout is not None
    grid = meta.read_grid.grid_shape if meta.read_grid is not None else \
        tuple(-(-s // c) for s, c in zip(shape, meta.chunk_shape))
    keys = GridKeys(meta)
    stored_grid = keys.grid
    chunk_nbytes = math.prod(meta.chunk_shape) * meta.dtype.itemsize
    audit = ArrayAudit(path, shape, grid, chunk_nbytes, math.prod(shape) * meta.dtype.itemsize, math.prod(grid))
    if sharded:
        audit.shards_expected = math.prod(stored_grid)
        assert meta.shard_layout is not None
        audit.chunks_per_shard = math.prod(meta.shard_layout.chunks_per_shard)
    if objects is None:
        return audit
    cell = map_cells(grid)
    counts = np.zeros(tuple(-(-g // c) for g, c in zip(grid, cell)), dtype=np.int64) if cell is not None else None
    audit.map_cell, audit.stored_map = cell, counts
    audit.chunks_stored = audit.objects_stored = audit.stored_bytes = audit.chunk_bytes = 0
    indexes = ShardIndexes(store, meta, path) if sharded else None
    pending: list[tuple[tuple[int, ...], int]] = []
    seen = 0
    for key, size in objects:
        seen += 1
        if progress is not None and seen % 1024 == 0:
            progress(seen)
        coords = keys.coords(key)
        if coords is None:
            if key[len(prefix):].rsplit("/", 1)[-1] not in NOT_CHUNKS:
                audit.stray_objects += 1
                if len(audit.stray_keys) < STRAYS_NAMED:
                    audit.stray_keys.append(key)
            continue
        nbytes = size or 0
        audit.objects_stored += 1
        audit.stored_bytes += nbytes
        if indexes is None:
            audit.chunks_stored += 1
            audit.chunk_bytes += nbytes
            audit.size_classes[_size_class(nbytes)] += 1
            if counts is not None and cell is not None:
                counts[tuple(c // k for c, k in zip(coords, cell))] += 1
            continue
        pending.append((coords, nbytes))
        if len(pending) >= SHARD_BATCH:
            _inner(audit, indexes, pending, counts, cancel)
            pending = []
    if indexes is not None:
        _inner(audit, indexes, pending, counts, cancel)
        audit.shards_stored = audit.objects_stored
        audit.inner_chunks_stored = audit.chunks_stored
    if progress is not None:
        progress(seen)
    return audit


class GridKeys:
    """Which stored keys are keys of an array's grid of stored objects (chunks, or shards), and
    where: by the patterns of its key encoding and of the v2 fallback it may be read by."""

    def __init__(self, meta: ArrayMetadata) -> None:
        self.patterns = [key_pattern(k, len(meta.shape)) for k in (meta.stored_key, meta.alt_stored_key)
                         if k is not None]
        #: stored objects along each dimension
        self.grid = meta.grid.grid_shape if meta.grid is not None else \
            tuple(-(-s // c) for s, c in zip(meta.shape, meta.stored_shape))

    def coords(self, key: str) -> tuple[int, ...] | None:
        """The grid coordinates ``key`` names, where it is a key of the grid (inside it, spelled
        as a writer spells it: no leading zeros)."""
        for pattern in self.patterns:
            m = pattern.match(key)
            if m is not None:
                coords = tuple(int(g) for g in m.groups())
                if all(c < g for c, g in zip(coords, self.grid)) and \
                        all(str(c) == g for c, g in zip(coords, m.groups())):
                    return coords
        return None


def _inner(audit: ArrayAudit, indexes: ShardIndexes, shards: list[tuple[tuple[int, ...], int]],
           counts: np.ndarray | None, cancel: CancelToken | None) -> None:
    """Counts the inner chunks of ``shards`` (coordinates, stored bytes) from their indexes: an
    entry is a claim, so one that is half empty or claims more than an inner chunk can be stored
    as is named as an error and not counted, and one for a chunk past the array's edge (an edge
    shard's) is not counted either."""
    if not shards:
        return
    found = indexes.indexes([s for s, _ in shards], cancel)
    empty = np.uint64(EMPTY)
    bound = np.uint64(indexes.entry_bound)
    grid = np.array(audit.grid_shape, dtype=np.int64)
    cell = audit.map_cell
    for shard, _ in shards:
        index = found[shard]
        if index is None:
            continue
        if isinstance(index, ZarrError):
            audit.errors.append(str(index))
            continue
        offsets, lengths = index[:, 0], index[:, 1]
        absent = (offsets == empty) & (lengths == empty)
        bad = ~absent & ((offsets == empty) | (lengths == empty) | (lengths > bound)
                         | (offsets > np.uint64(2**53) - np.minimum(lengths, bound)))
        if bad.any():
            audit.errors.append(f"shard {indexes.meta.stored_key(shard)} of {audit.path}: {int(bad.sum())} index "
                                "entries are half empty or claim more than an inner chunk can be stored as")
        cps = indexes.layout_of(shard).chunks_per_shard
        coords = np.indices(cps).reshape(len(cps), -1).T + np.array(indexes.first_chunk(shard), dtype=np.int64)
        stored = ~absent & ~bad & (coords < grid).all(axis=1)
        sizes = lengths[stored].astype(np.int64)
        audit.chunks_stored = (audit.chunks_stored or 0) + int(stored.sum())
        audit.chunk_bytes = (audit.chunk_bytes or 0) + int(sizes.sum())
        classes = np.minimum(np.frexp(sizes.astype(np.float64))[1], SIZE_CLASSES - 1)  # bit lengths
        for k, n in zip(*np.unique(classes, return_counts=True)):
            audit.size_classes[int(k)] += int(n)
        if counts is not None and cell is not None:
            rows = coords[stored] // np.array(cell, dtype=np.int64)
            np.add.at(counts, tuple(rows.T), 1)


@dataclass(frozen=True)
class ChunkStored:
    """Where one read chunk is stored and how big it is there, found without reading it."""

    coords: tuple[int, ...]
    #: the object holding it: its own key, or its shard's
    key: str
    #: its stored bytes; None where nothing is stored (it reads as the fill value)
    nbytes: int | None
    #: why it cannot be read (a corrupt shard index entry), where it cannot
    error: str | None = None


def chunks_stored(reader: ChunkReader, coords: list[tuple[int, ...]], cancel: CancelToken | None = None
                  ) -> list[ChunkStored]:
    """Each read chunk at ``coords`` with its stored size: from its shard's index (cached, one
    request per shard not yet read), or from the store's size of its object (a stat, or a HEAD
    where remote); no chunk's data is read."""
    located = reader.locate([ChunkProjection(c, (), ()) for c in coords], cancel)
    out: dict[tuple[int, ...], ChunkStored] = {}
    for read in located:
        c = read.chunk.coords
        if read.error is not None:
            out[c] = ChunkStored(c, read.req.key if read.req is not None else reader.meta.stored_key(c), None,
                                 str(read.error))
        elif read.req is None:
            out[c] = ChunkStored(c, _object_key(reader.meta, c), None)
        elif read.req.start is not None and read.req.stop is not None:
            out[c] = ChunkStored(c, read.req.key, read.req.stop - read.req.start)
        else:
            if cancel is not None:
                cancel.raise_if_cancelled()
            out[c] = ChunkStored(c, read.req.key, reader.store.size(read.req.key))
    return [out[c] for c in coords]


def _object_key(meta: ArrayMetadata, coords: tuple[int, ...]) -> str:
    """The key of the object that holds the read chunk at ``coords`` (its shard's, where sharded;
    on a rectilinear grid of shards, which shard is the index's to say: "")."""
    layout = meta.shard_layout
    if layout is None:
        return meta.stored_key(coords)
    if meta.grid is not None:
        return ""
    return meta.stored_key(tuple(c // k for c, k in zip(coords, layout.chunks_per_shard)))
