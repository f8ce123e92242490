"""Reading a selection: plan the chunks it touches, locate, fetch and decode them on a pool.

Only chunks intersecting the selection are touched. The steps each have their module:
``plan`` (which chunks, refused early when too large), ``shard_index`` (where a sharded
array's inner chunks lie: each shard's index fetched once, then cached), ``fetch`` (their
bytes), ``decode`` (into the output), ``batch`` (zstd frames lying back to back decoded
several per call) and ``decode_pool`` (which thread does what). This module strings them
together and keeps each worker's reusable buffers.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from . import fetch
from .batch import Batcher, batched
from .cache import ChunkCache
from .cancel import CancelToken
from .decode import Buffers, ChunkDecoder, put
from .decode_pool import Progress, Reporter, default_executor, run_blocks, run_streaming
from .errors import CodecError, StoreError, ZarrError
from .file_groups import GROUP_BYTES, group_end, read_in_place, region
from .limits import limits
from .metadata.model import ArrayMetadata
from .plan import ChunkFailure, ReadItem
from .plan import plan as plan_read
from .range_groups import ranges_end, read_runs
from .shard_index import ShardIndexes
from .storage.base import ByteRequest, Scratch, Store

__all__ = ["ChunkReader", "ChunkFailure", "Progress", "default_executor"]


class ChunkReader:
    """Reads one array; holds that array's shard-index cache."""

    def __init__(self, store: Store, meta: ArrayMetadata, path: str) -> None:
        self.store = store
        self.meta = meta
        self.path = path
        self.cache_id: Hashable = (store.url, path, meta.codecs_description, meta.shape)
        self._shards = ShardIndexes(store, meta, path) if meta.shard_layout is not None else None
        self._fetcher = fetch.Fetcher(store, meta, path)
        self._decoder = ChunkDecoder(meta, path)
        self._batcher = Batcher.of(self._decoder)
        #: chunk files read a group at a time into a worker's buffer (``file_groups``); 0 once
        #: the store has said it reads one object at a time
        self._region = region(self._decoder.chunk_nbytes, limits().object_bytes)
        self._files = GROUP_BYTES // self._region
        #: whether runs of shard chunks are read a group at a time (``range_groups``)
        self._ranges = meta.shard_layout is not None
        self._scratch = threading.local()

    # -- planning ---------------------------------------------------------------------------
    def plan(self, selection: Any) -> tuple[tuple[int, ...], tuple[int, ...], list[ReadItem]]:
        return plan_read(self.meta, self.path, selection)

    def chunk_coords(self, selection: Any) -> list[tuple[int, ...]]:
        """Grid coordinates of the read chunks a selection touches (for schedulers and tests)."""
        return [item.coords for item in self.plan(selection)[2]]

    # -- reading ----------------------------------------------------------------------------
    def read(self, selection: Any, *, cancel: CancelToken | None = None, cache: ChunkCache | None = None,
             progress: Progress | None = None, executor: ThreadPoolExecutor | None = None,
             failures: list[ChunkFailure] | None = None) -> np.ndarray:
        """The selection as an array. With a ``failures`` list, a chunk that cannot be fetched or
        decoded is recorded there and left at the fill value; without one, it raises."""
        shape, final_shape, items = self.plan(selection)
        out = np.empty(shape, dtype=self.meta.dtype)
        reporter = Reporter(len(items), progress)
        todo: list[ReadItem] = items
        if cache is not None:
            todo = []
            for item in items:
                hit = cache.get((self.cache_id, item.coords))
                if hit is not None:
                    put(out, item.out, hit, item.inner)
                else:
                    todo.append(item)
            reporter.add(len(items) - len(todo))
        if todo:
            self._check(cancel)
            if self._shards is not None:
                units = self._shards.locate(todo, cancel)  # grouped into runs, in store order
            else:
                stored_key = self.meta.stored_key
                for item in todo:
                    item.req = ByteRequest(stored_key(item.coords))
                units = [[item] for item in todo]
            pool = executor or default_executor()
            if self.store.prefers_batches and len(todo) > 1:
                def unit(u: list[ReadItem]) -> None:
                    self._process((u,), out, cache, cancel, failures, reporter, streaming=True)

                run_streaming(lambda ready: self._fetcher.fetch_batch(todo, cancel, ready), unit, pool, len(todo))
            else:
                run_blocks(units, lambda block: self._process(block, out, cache, cancel, failures, reporter,
                                                              streaming=False),
                           pool, chunks=len(todo), chunk_bytes=self._decoder.chunk_nbytes)
        return out.reshape(final_shape)

    @staticmethod
    def _check(cancel: CancelToken | None) -> None:
        if cancel is not None:
            cancel.raise_if_cancelled()

    def _process(self, block: Sequence[list[ReadItem]], out: np.ndarray, cache: ChunkCache | None,
                 cancel: CancelToken | None, failures: list[ChunkFailure] | None, reporter: Reporter,
                 streaming: bool) -> None:
        """Fetch (unless streamed) and decode a block of units on the calling thread; progress
        is reported once, for the whole block."""
        batcher = self._batcher if not streaming and cache is None else None
        batch = batcher.batch() if batcher is not None else None
        if batch is not None:
            batched(self, batcher, batch, block, out, cancel, failures, reporter)  # type: ignore[arg-type]
            return
        bufs: Buffers | None = None  # taken once per block, not per chunk
        units = list(block)
        done, i, alone = 0, 0, 0  # units before ``alone`` were left by a group: read them alone
        try:
            while i < len(units):
                unit = units[i]
                i += 1
                self._check(cancel)
                if (not streaming and self._ranges and i > alone
                        and (end := ranges_end(units, i - 1, GROUP_BYTES)) > i):
                    bufs = bufs or self._buffers()
                    placed, left, _ = read_runs(self, units[i - 1:end], bufs.raw)
                    unit = [item for item, _, _ in placed]
                    units[i - 1:end] = left  # read after these are decoded: they reuse the buffer
                    i -= 1
                    alone = i + len(left)
                elif not streaming and len(unit) > 1:
                    bufs = bufs or self._buffers()
                    try:
                        self._fetcher.fetch_run(unit, bufs.raw)
                    except (StoreError, CodecError) as e:
                        for item in unit:
                            item.error = e
                elif not streaming and self._files and (end := group_end(units, i - 1, self._files)) >= i:
                    unit = [u[0] for u in units[i - 1:end]]
                    i = end
                    if not self.store.reads_files():
                        self._files = 0  # this store reads one object at a time: do not ask again
                    else:
                        try:
                            bufs = bufs or self._buffers()
                            read_in_place(self, unit, bufs.raw, self._region)
                        except MemoryError:  # the per-chunk path tries again, and names the chunk if it fails
                            pass
                for item in unit:
                    self._one(item, out, cache, bufs, failures)
                    done += 1
        finally:
            reporter.add(done)

    def _one(self, item: ReadItem, out: np.ndarray, cache: ChunkCache | None, bufs: Buffers | None,
             failures: list[ChunkFailure] | None) -> None:
        """One chunk on its own: fetched (unless it was), decoded and placed, or its failure
        (``bufs``: the buffers to use, None for this thread's own)."""
        if item.error is None and item.alt:
            self._fetcher.fetch_alt(item)
        if item.error is not None:
            self._failed(item, item.error, out, failures)
            return
        try:
            self._read_item(item, out, cache, bufs or self._buffers())
        except (StoreError, CodecError) as e:
            self._failed(item, e, out, failures)
        except MemoryError:  # within the bounds, but more than this machine has free
            key = item.req.key if item.req is not None else "?"
            self._failed(item, CodecError(f"{self._fetcher.name(key, item.coords)}: not enough "
                                          "memory to decode it"), out, failures)

    def _failed(self, item: ReadItem, error: ZarrError, out: np.ndarray, failures: list[ChunkFailure] | None) -> None:
        if failures is None:
            raise error
        key = item.req.key if item.req is not None else self.meta.stored_key(item.coords)
        box = tuple((c * n, min((c + 1) * n, s)) for c, n, s in zip(item.coords, self.meta.read_shape, self.meta.shape))
        out[item.out] = self.meta.fill
        failures.append(ChunkFailure(key, item.coords, box, str(error)))  # list.append is atomic

    def _buffers(self) -> Buffers:
        """This thread's reusable read and decode buffers."""
        tls = self._scratch
        try:
            return tls.buffers  # type: ignore[no-any-return]
        except AttributeError:  # all or none: a failed allocation leaves none behind
            tls.buffers = Buffers(Scratch(), self._decoder)
            return tls.buffers  # type: ignore[no-any-return]

    def _read_item(self, item: ReadItem, out: np.ndarray, cache: ChunkCache | None, bufs: Buffers) -> None:
        data = item.data
        if item.req is not None and data is None:
            ranged = item.req.start is not None  # a shard's chunk: through the kept descriptor
            data = self._fetcher.fetch_one(item, bufs.raw if self._decoder.direct is not None or ranged else None)
        if data is None:
            out[item.out] = self.meta.fill
            return
        key = item.req.key if item.req else "?"
        self._decoder.place(data, key, item.coords, item.inner, item.out, out, bufs, cache,
                            (self.cache_id, item.coords))

    def decode_chunk(self, data: Any, key: str, coords: tuple[int, ...]) -> np.ndarray:
        return self._decoder.decode(data, key, coords)
