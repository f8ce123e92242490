"""Finding inner chunks in shards: each shard's index fetched once, cached, and never trusted.

An index entry is a claim by the store: an offset and a length that a reader would use to
size a buffer and a request. Entries are checked before use: lengths above the bound on one
stored object, ends past 2**53 (no object is larger; a byte-swapped or corrupt index gives
such values), and half-empty markers make that inner chunk a failure of its own, named by
shard and position, while every other chunk of the read goes on.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict

import numpy as np

from .cancel import CancelToken
from .decode import chunk_bound
from .codecs.sharding import EMPTY, ShardLayout
from .errors import CodecError, StoreError, ZarrError
from .limits import human, limits
from .metadata.model import ArrayMetadata
from .plan import ChunkProjection, ChunkRead
from .storage.base import ByteRequest, Store, fetch_all

_MAX_OBJECT = 2**53  # no stored object is larger; bigger index entries are corrupt
_EMPTY = int(EMPTY)

Index = np.ndarray  # (inner chunks, 2) uint64: offset, nbytes; C order


class ShardIndexes:
    """The shard indexes of one array, as (n, 2) uint64 arrays, in an LRU of ``ENTRIES`` shards."""

    ENTRIES = 4096

    def __init__(self, store: Store, meta: ArrayMetadata, path: str) -> None:
        assert meta.shard_layout is not None
        self.store = store
        self.meta = meta
        self.layout = meta.shard_layout
        self.path = path
        self._cache: OrderedDict[tuple[int, ...], Index | None] = OrderedDict()
        #: the most bytes an index entry may claim: what the inner chunk's codecs can store it
        #: as where they bound it, else one stored object (a corrupt entry costs no more)
        inner = chunk_bound(meta)
        self.entry_bound = min(limits().object_bytes, _MAX_OBJECT) if inner is None else int(inner)
        self._lock = threading.Lock()
        cps = self.layout.chunks_per_shard
        self._cps = np.array(cps, dtype=np.int64)
        #: the rectilinear grid of the shards, whose sizes (and index sizes) vary; None: regular
        self._grid = meta.grid
        strides = [1] * len(cps)
        for d in range(len(cps) - 2, -1, -1):
            strides[d] = strides[d + 1] * cps[d + 1]
        self._strides = np.array(strides, dtype=np.int64)

    def locate(self, chunks: list[ChunkProjection], cancel: CancelToken | None = None) -> list[ChunkRead]:
        """Each chunk with the byte range of its inner chunk, None where the shard or the chunk
        is empty, or the error that keeps it from being read; in store order (shards by key,
        then by offset), so a worker's share of a read lies together in its shards.

        This runs on the calling thread before any worker starts, so it is array operations
        over all the read's inner chunks at once (per chunk in Python it took 3 µs a chunk);
        only entries that are not plainly valid take the per-chunk path that names them."""
        n, ndim = len(chunks), len(self.layout.chunks_per_shard)
        if n == 0:
            return []
        coords = np.fromiter(itertools.chain.from_iterable(c.coords for c in chunks), np.int64, n * ndim)
        coords = coords.reshape(n, ndim)
        if self._grid is None:
            pos = (coords % self._cps) @ self._strides
            of = coords // self._cps
        else:  # shards of varying size: each row's shard, its place there and that shard's layout
            of, local, cps = self._grid.inner_positions(coords, self.meta.read_shape)
            pos = np.zeros(n, dtype=np.int64)
            step = np.ones(n, dtype=np.int64)
            for d in range(ndim - 1, -1, -1):
                pos += local[:, d] * step
                step *= cps[:, d]
        by_shard = np.lexsort(of.T[::-1])  # chunks grouped by shard
        of = of[by_shard]
        first = np.ones(n, dtype=bool)
        first[1:] = (of[1:] != of[:-1]).any(axis=1)
        bounds = [*np.flatnonzero(first).tolist(), n]
        shards = [tuple(s) for s in of[first].tolist()]
        indexes = self.indexes(shards, cancel)
        keys = [self.meta.stored_key(shard) for shard in shards]
        rank = np.empty(len(shards), dtype=np.int64)
        rank[sorted(range(len(shards)), key=keys.__getitem__)] = np.arange(len(shards))
        entries = np.zeros((n, 2), dtype=np.uint64)
        indexed = np.zeros(n, dtype=bool)  # in a shard whose index was read
        shard_of = np.empty(n, dtype=np.int64)
        reads: list[ChunkRead] = []
        for k, shard in enumerate(shards):
            rows = by_shard[bounds[k]:bounds[k + 1]]
            shard_of[rows] = k
            index = indexes[shard]
            if index is None:
                reads.extend(ChunkRead(chunks[i], None) for i in rows.tolist())
            elif isinstance(index, ZarrError):
                reads.extend(ChunkRead(chunks[i], ByteRequest(keys[k]), index) for i in rows.tolist())
            else:
                entries[rows] = index[pos[rows]]
                indexed[rows] = True
        offsets, sizes = entries[:, 0], entries[:, 1]
        limit = np.uint64(self.entry_bound)
        # plainly valid: size within the bound and offset + size <= 2**53, with nothing overflowing
        good = indexed & (sizes <= limit) & (offsets <= np.uint64(_MAX_OBJECT) - np.minimum(sizes, limit))
        for i in np.flatnonzero(indexed & ~good).tolist():
            reads.append(self._entry(chunks[i], keys[shard_of[i]], int(pos[i]), int(offsets[i]), int(sizes[i])))
        ok = np.flatnonzero(good)
        if len(ok) == 0:
            return reads
        starts = offsets[ok].astype(np.int64)
        ranks = rank[shard_of[ok]]
        order = np.lexsort((starts, ranks))
        ok, starts, ranks = ok[order], starts[order], ranks[order]
        stops = starts + sizes[ok].astype(np.int64)
        key_of = [keys[k] for k in np.argsort(rank).tolist()]  # by rank
        reads.extend(ChunkRead(chunks[i], ByteRequest(key_of[r], a, b))
                     for i, r, a, b in zip(ok.tolist(), ranks.tolist(), starts.tolist(), stops.tolist()))
        return reads

    def _entry(self, chunk: ChunkProjection, key: str, pos: int, offset: int, nbytes: int) -> ChunkRead:
        if offset == _EMPTY and nbytes == _EMPTY:
            return ChunkRead(chunk, None)
        where = f"shard {key} of {self.path}: index entry {pos} (inner chunk {list(chunk.coords)})"
        if offset == _EMPTY or nbytes == _EMPTY:
            error = CodecError(f"{where} is half empty (offset {offset}, {nbytes} bytes): the index is corrupt")
        elif offset + nbytes > _MAX_OBJECT:
            error = CodecError(f"{where} points past the end of the shard (offset {offset}, {nbytes} bytes); "
                               "the index is corrupt or in the wrong byte order")
        elif nbytes > limits().object_bytes:
            error = CodecError(f"{where} claims {human(nbytes)}, more than the {human(limits().object_bytes)} "
                               "allowed for one stored object")
        elif nbytes > self.entry_bound:
            error = CodecError(f"{where} claims {human(nbytes)}, more than the {human(self.entry_bound)} its codecs "
                               "can store an inner chunk as: the index is corrupt")
        else:
            return ChunkRead(chunk, ByteRequest(key, offset, offset + nbytes))
        return ChunkRead(chunk, ByteRequest(key), error)

    def indexes(self, shards: list[tuple[int, ...]], cancel: CancelToken | None = None
                ) -> dict[tuple[int, ...], Index | None | ZarrError]:
        """Per shard, its index, None if the shard is absent, or the error that kept it from
        being read (such shards are not cached, so a later read tries again)."""
        found: dict[tuple[int, ...], Index | None | ZarrError] = {}
        missing: list[tuple[int, ...]] = []
        with self._lock:
            for s in shards:
                if s in self._cache:
                    self._cache.move_to_end(s)
                    found[s] = self._cache[s]
                else:
                    missing.append(s)
        if not missing:
            return found
        layouts = [self.layout_of(s) for s in missing]
        reqs = [ByteRequest(self.meta.stored_key(s), 0, lay.index_nbytes) if lay.index_location == "start"
                else ByteRequest(self.meta.stored_key(s), -lay.index_nbytes) for s, lay in zip(missing, layouts)]
        results = fetch_all(self.store, reqs, cancel)
        for s, req, data, lay in zip(missing, reqs, results, layouts):
            found[s] = self._parse(req, data, lay)
        with self._lock:
            for s in missing:
                if not isinstance(found[s], ZarrError):
                    self._cache[s] = found[s]  # type: ignore[assignment]
            while len(self._cache) > self.ENTRIES:
                self._cache.popitem(last=False)
        return found

    def first_chunk(self, shard: tuple[int, ...]) -> tuple[int, ...]:
        """The grid coordinates of the first inner chunk of the shard at ``shard``."""
        if self._grid is None:
            return tuple(int(s * c) for s, c in zip(shard, self.layout.chunks_per_shard))
        return tuple(start // c for (start, _), c in zip(self._grid.box(shard), self.meta.read_shape))

    def layout_of(self, shard: tuple[int, ...]) -> ShardLayout:
        """The layout of the shard at ``shard``: the array's, or on a rectilinear grid the one
        for that shard's number of inner chunks."""
        if self._grid is None:
            return self.layout
        shape = self._grid.chunk_shape(shard)
        return self.layout.resized(tuple(s // c for s, c in zip(shape, self.meta.read_shape)))

    def _parse(self, req: ByteRequest, data: bytes | None | StoreError, layout: ShardLayout) -> Index | None | ZarrError:
        n = layout.index_nbytes
        if data is None or isinstance(data, StoreError):
            return data
        if len(data) < n:
            return CodecError(f"shard {req.key} of {self.path}: {len(data)} bytes cannot hold its {n}-byte index")
        try:
            return layout.decode_index(data)
        except CodecError as e:
            return type(e)(f"index of shard {req.key} of {self.path}: {e}")
        except (ZarrError, ValueError, TypeError) as e:
            return CodecError(f"index of shard {req.key} of {self.path}: {e}")
