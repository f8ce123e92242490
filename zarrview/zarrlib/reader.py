"""Reading a selection: plan the chunks it touches, fetch and decode them on a pool.

Only chunks intersecting the selection are touched. Sharded arrays are read at the inner
chunk level: each shard's index is fetched once (one ranged read, then cached), then only
the needed inner chunks. Stores that prefer batches (network) get every range in one
``get_many`` with byte-adjacent ranges merged; local stores fetch inside each decode task so
I/O and decoding overlap on all cores.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from queue import SimpleQueue
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cache import ChunkCache
from .cancel import CancelToken
from .codecs.direct import direct_decoder
from .codecs.sharding import EMPTY
from .errors import CodecError, IndexingError, ReadCancelled, StoreError, ZarrError
from .indexing import dim_chunks, full_shape, normalize, out_shape
from .metadata.model import ArrayMetadata
from .storage.base import ByteRequest, Scratch, Store

Progress = Callable[[int, int], None]

_pool: ThreadPoolExecutor | None = None
_MAX_OBJECT = 2**53  # no stored object is larger; bigger index entries are corrupt
_MAX_DIRECT = 1 << 30  # chunks larger than this are not worth a per-thread scratch buffer
_pool_lock = threading.Lock()


def _cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 2))


def _pin_worker(cpus: list[int], counter: itertools.count[int]) -> None:
    """Pin each decode worker to its own core.

    Measured on Linux: after a pause (a user moving a slider again), the scheduler wakes the
    workers on the core that woke them and the read runs on one core for its whole duration
    (a 2048x2048 plane took 12 ms instead of 6.5 ms). Pinned workers start on their own cores.
    """
    try:
        os.sched_setaffinity(0, {cpus[next(counter) % len(cpus)]})
    except (AttributeError, OSError):
        pass


def default_executor() -> ThreadPoolExecutor:
    """One shared decode pool sized to the machine; numcodecs releases the GIL while decoding."""
    global _pool
    with _pool_lock:
        if _pool is None:
            cpus = _cpus()
            _pool = ThreadPoolExecutor(max_workers=len(cpus) or 2, thread_name_prefix="zarrlib-decode",
                                       initializer=_pin_worker, initargs=(cpus, itertools.count()))
        return _pool


@dataclass(slots=True)
class _Item:
    coords: tuple[int, ...]
    inner: tuple[slice, ...]
    out: tuple[slice, ...]
    req: ByteRequest | None = None  # None: known to be missing (empty in its shard)
    data: Any = None
    error: ZarrError | None = None  # fetching failed (kept when the caller collects failures)
    alt: bool = False  # missing under its key: try the v2 nested-key spelling


@dataclass(frozen=True)
class ChunkFailure:
    """A chunk that could not be read; its part of the result holds the fill value instead."""

    key: str
    coords: tuple[int, ...]  # read-chunk grid coordinates
    box: tuple[tuple[int, int], ...]  # [start, stop) per dimension, in array coordinates
    message: str


class ChunkReader:
    """Reads one array; holds that array's shard-index cache."""

    INDEX_CACHE_ENTRIES = 4096

    def __init__(self, store: Store, meta: ArrayMetadata, path: str) -> None:
        self.store = store
        self.meta = meta
        self.path = path
        self.cache_id: Hashable = (store.url, path, meta.codecs_description, meta.shape)
        self._indexes: OrderedDict[tuple[int, ...], list[list[int]] | None] = OrderedDict()
        self._lock = threading.Lock()
        self._alt_keys: bool | None = None  # v2 undeclared nested keys: decided on first hit
        direct = direct_decoder(meta.read_pipeline, meta.read_spec())
        self._direct = direct if direct is not None and direct.nbytes <= _MAX_DIRECT else None
        self._scratch = threading.local()

    # -- planning ---------------------------------------------------------------------------
    def plan(self, selection: Any) -> tuple[tuple[int, ...], tuple[int, ...], list[_Item]]:
        try:
            sel = normalize(selection, self.meta.shape)
        except IndexingError as e:
            raise IndexingError(f"{self.path}: {e}") from None
        per_dim = [dim_chunks(d, c) for d, c in zip(sel, self.meta.read_shape)]
        items = [
            _Item(tuple(dc.chunk for dc in combo), tuple(dc.inner for dc in combo), tuple(dc.out for dc in combo))
            for combo in itertools.product(*per_dim)
        ]
        return full_shape(sel), out_shape(sel), items

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
        fail_lock = threading.Lock()

        def failed(item: _Item, error: ZarrError) -> None:
            if failures is None:
                raise error
            key = item.req.key if item.req is not None else self.meta.stored_key(item.coords)
            box = tuple((c * n, min((c + 1) * n, s)) for c, n, s in zip(item.coords, self.meta.read_shape, self.meta.shape))
            out[item.out] = self.meta.fill
            with fail_lock:
                failures.append(ChunkFailure(key, item.coords, box, str(error)))

        out = np.empty(shape, dtype=self.meta.dtype)
        total = len(items)
        done = [0]
        done_lock = threading.Lock()

        def tick() -> None:
            if progress is not None:
                with done_lock:  # reported under the lock, so reports arrive in order
                    done[0] += 1
                    progress(done[0], total)

        todo: list[_Item] = []
        for item in items:
            hit = cache.get((self.cache_id, item.coords)) if cache is not None else None
            if hit is not None:
                out[item.out] = hit[item.inner]
                tick()
            else:
                todo.append(item)
        if todo:
            self._check(cancel)
            if self.meta.shard_layout is not None:
                self._locate_in_shards(todo, cancel)
            else:
                for item in todo:
                    item.req = ByteRequest(self.meta.stored_key(item.coords))
            streaming = self.store.prefers_batches and len(todo) > 1
            # byte-adjacent inner chunks of a shard: one read per run, inside the worker
            units = [] if streaming else sorted(self._units(todo), key=_unit_order)
            work: SimpleQueue[list[_Item] | None] = SimpleQueue()
            aborted = threading.Event()

            def process(unit: list[_Item]) -> None:
                self._check(cancel)
                if not streaming and len(unit) > 1:
                    try:
                        self._fetch_unit(unit)
                    except (StoreError, CodecError) as e:
                        for item in unit:
                            item.error = e
                for item in unit:
                    if item.error is None and item.alt:
                        self._fetch_alt(item)
                    if item.error is not None:
                        failed(item, item.error)
                    else:
                        try:
                            self._read_item(item, out, cache)
                        except (StoreError, CodecError) as e:
                            failed(item, e)
                    tick()

            def task() -> None:
                # workers pull units one at a time as they become available (network answers
                # are decoded as they land, not after the whole batch), so fetching overlaps
                # decoding and the cores finish together however unevenly the units cost
                while True:
                    unit = work.get()
                    if unit is None:
                        return
                    if aborted.is_set():
                        continue  # the read has failed: drain without working
                    try:
                        process(unit)
                    except BaseException:
                        aborted.set()
                        raise

            pool = executor or default_executor()
            workers = min(len(todo) if streaming else len(units), getattr(pool, "_max_workers", 2))
            if not streaming and workers <= 1:
                for unit in units:
                    process(unit)
            else:
                futures = [pool.submit(task) for _ in range(workers)]
                try:
                    if streaming:
                        self._fetch_batch(todo, cancel, work.put)
                    else:
                        for unit in units:
                            work.put(unit)
                finally:
                    for _ in futures:
                        work.put(None)
                    self._wait(futures)
        return out.reshape(final_shape)

    @staticmethod
    def _check(cancel: CancelToken | None) -> None:
        if cancel is not None:
            cancel.raise_if_cancelled()

    def _units(self, items: list[_Item]) -> list[list[_Item]]:
        ranged = [it for it in items if it.req is not None and it.req.start is not None]
        if len(ranged) < 2:
            return [[it] for it in items]
        units = [[it] for it in items if not (it.req is not None and it.req.start is not None)]
        for _, members in merge_ranges([it.req for it in ranged]):  # type: ignore[misc]
            units.append([ranged[i] for i in members])
        return units

    def _fetch_unit(self, unit: list[_Item]) -> None:
        reqs = [it.req for it in unit]
        key = reqs[0].key  # type: ignore[union-attr]
        start = min(r.start for r in reqs)  # type: ignore[union-attr,type-var]
        stop = max(r.stop for r in reqs)  # type: ignore[union-attr,type-var]
        raw, _ = self._buffers()
        data = self.store.read_into(ByteRequest(key, start, stop), raw)
        for it in unit:
            assert it.req is not None and it.req.start is not None and it.req.stop is not None
            if data is None:
                it.req = None
                continue
            lo, hi = it.req.start - start, it.req.stop - start
            if hi > len(data):
                raise CodecError(f"{self._chunk_name(key, it.coords)}: the shard index points past the end "
                                 f"of the shard (bytes {it.req.start}-{it.req.stop})")
            it.data = memoryview(data)[lo:hi]

    @staticmethod
    def _wait(futures: list[Future[None]]) -> None:
        wait(futures)
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            real = [e for e in errors if not isinstance(e, ReadCancelled)]
            raise (real or errors)[0]  # type: ignore[misc]

    def _buffers(self) -> tuple[Scratch, np.ndarray]:
        tls = self._scratch
        if not hasattr(tls, "raw"):
            tls.raw = Scratch()
            tls.decoded = np.empty(self._direct.nbytes if self._direct else 0, np.uint8)
        return tls.raw, tls.decoded

    def _read_item(self, item: _Item, out: np.ndarray, cache: ChunkCache | None) -> None:
        data = item.data
        raw_buf, decoded = self._buffers()
        if item.req is not None and data is None:
            data = self._fetch_one(item, raw_buf if self._direct is not None else None)
        if data is None:
            out[item.out] = self.meta.fill
            return
        key = item.req.key if item.req else "?"
        if self._direct is not None:
            target = decoded if cache is None else np.empty(self._direct.nbytes, np.uint8)
            try:
                chunk = self._direct.decode(data, target)
            except CodecError as e:
                raise type(e)(f"{self._chunk_name(key, item.coords)}: {e}") from e
            if chunk is not None:
                if cache is not None:
                    cache.put((self.cache_id, item.coords), chunk if chunk.base is target else chunk.copy())
                out[item.out] = chunk[item.inner]
                return
        chunk = self.decode_chunk(data, key, item.coords)
        if cache is not None:
            cache.put((self.cache_id, item.coords), chunk)
        out[item.out] = chunk[item.inner]

    def decode_chunk(self, data: Any, key: str, coords: tuple[int, ...]) -> np.ndarray:
        spec = self.meta.read_spec()
        where = self._chunk_name(key, coords)
        try:
            arr = self.meta.read_pipeline.decode(data, spec)
        except CodecError as e:
            raise type(e)(f"{where}: {e}") from e
        except ZarrError as e:
            raise CodecError(f"{where}: {e}") from e
        except Exception as e:  # a codec library failing in an unforeseen way is still a bad chunk
            raise CodecError(f"{where}: {type(e).__name__}: {e}") from e
        if arr.shape != spec.shape:
            raise CodecError(f"{where}: decoded shape {arr.shape}, expected {spec.shape}")
        return arr

    def _chunk_name(self, key: str, coords: tuple[int, ...]) -> str:
        if self.meta.shard_layout is None:
            return f"chunk {key} of {self.path}"
        return f"inner chunk {list(coords)} in shard {key} of {self.path}"

    # -- fetching ---------------------------------------------------------------------------
    def _fetch_one(self, item: _Item, scratch: Scratch | None = None) -> Any:
        req = item.req
        assert req is not None
        data = self.store.get_range(req) if scratch is None else self.store.read_into(req, scratch)
        if data is None and self.meta.alt_stored_key is not None:
            self._fetch_alt(item)
            data = item.data
        elif data is not None and self.meta.alt_stored_key is not None:
            self._alt_keys = False
        if data is not None and req.start is not None and req.stop is not None and len(data) != req.stop - req.start:
            raise CodecError(f"{self._chunk_name(req.key, item.coords)}: the shard index points past the end "
                             f"of the shard (bytes {req.start}-{req.stop}, got {len(data)})")
        return data

    def _fetch_batch(self, items: list[_Item], cancel: CancelToken | None,
                     ready: Callable[[list[_Item]], None]) -> None:
        """Fetch every item's range in one batch (byte-adjacent ranges of a key merged); each
        group of items is handed to ``ready`` as soon as its answer lands."""
        wanted = [it for it in items if it.req is not None and it.error is None]
        known = [it for it in items if not (it.req is not None and it.error is None)]
        if known:
            ready(known)  # errors and chunks known to be empty need no request
        if self._alt_keys:
            for it in wanted:
                assert it.req is not None and self.meta.alt_stored_key is not None
                it.req = ByteRequest(self.meta.alt_stored_key(it.coords), it.req.start, it.req.stop)
        groups = merge_ranges([it.req for it in wanted])  # type: ignore[misc]
        self._check(cancel)

        def landed(i: int, data: bytes | None | StoreError) -> None:
            group, members = groups[i]
            unit = [wanted[idx] for idx in members]
            for it in unit:
                self._assign(it, group, data)
            ready(unit)

        self.store.get_many_settled([g for g, _ in groups], cancel, on_each=landed)

    def _assign(self, it: _Item, group: ByteRequest, data: bytes | None | StoreError) -> None:
        req = it.req
        assert req is not None
        if isinstance(data, StoreError):
            it.error = data
        elif data is None:
            alt = self.meta.alt_stored_key
            if alt is not None and self._alt_keys is not False and req.key != alt(it.coords):
                it.alt = True  # v2 keys may be nested although the metadata says nothing: try that
            else:
                it.req = None
        elif req.start is None or group.start is None:
            it.data = data
            if self.meta.alt_stored_key is not None and self._alt_keys is None:
                self._alt_keys = False  # found under the declared key: no need to try the other
        else:
            lo, hi = req.start - group.start, req.stop - group.start  # type: ignore[operator]
            if hi > len(data):
                it.error = CodecError(f"{self._chunk_name(req.key, it.coords)}: the shard index points past "
                                      f"the end of the shard (bytes {req.start}-{req.stop})")
            else:
                it.data = memoryview(data)[lo:hi]

    def _fetch_alt(self, it: _Item) -> None:
        """A chunk missing under its declared key, tried under the other v2 separator unless the
        array already proved to use the declared one (then it is simply missing)."""
        assert self.meta.alt_stored_key is not None and it.req is not None
        it.alt = False
        if self._alt_keys is False:
            it.req = None
            return
        alt = ByteRequest(self.meta.alt_stored_key(it.coords), it.req.start, it.req.stop)
        data = self.store.get_range(alt)
        if data is None:
            it.req = None
        else:
            self._alt_keys = True
            it.req, it.data = alt, data

    def _locate_in_shards(self, items: list[_Item], cancel: CancelToken | None = None) -> None:
        layout = self.meta.shard_layout
        assert layout is not None
        cps = layout.chunks_per_shard
        by_shard: dict[tuple[int, ...], list[_Item]] = {}
        for item in items:
            by_shard.setdefault(tuple(c // n for c, n in zip(item.coords, cps)), []).append(item)
        indexes = self._shard_indexes(list(by_shard), cancel)
        strides = [1] * len(cps)
        for d in range(len(cps) - 2, -1, -1):
            strides[d] = strides[d + 1] * cps[d + 1]
        empty = int(EMPTY)
        for shard, members in by_shard.items():
            index = indexes[shard]
            key = self.meta.stored_key(shard)
            for item in members:
                if isinstance(index, ZarrError):
                    item.req = ByteRequest(key)
                    item.error = index
                    continue
                if index is None:
                    item.req = None
                    continue
                pos = sum((c % n) * s for c, n, s in zip(item.coords, cps, strides))
                offset, nbytes = index[pos]
                if offset == empty and nbytes == empty:
                    item.req = None
                elif offset + nbytes > _MAX_OBJECT:
                    raise CodecError(f"shard {key} of {self.path}: index entry {pos} points past the end of "
                                     f"the shard (offset {int(offset)}, {int(nbytes)} bytes)")
                else:
                    item.req = ByteRequest(key, offset, offset + nbytes)

    def _shard_indexes(self, shards: list[tuple[int, ...]], cancel: CancelToken | None = None
                       ) -> dict[tuple[int, ...], list[list[int]] | None | ZarrError]:
        """Per shard, its index as Python ints ([offset, nbytes] per inner chunk), None if absent,
        or the error that kept it from being read (such shards are not cached)."""
        layout = self.meta.shard_layout
        assert layout is not None
        found: dict[tuple[int, ...], list[list[int]] | None | ZarrError] = {}
        missing: list[tuple[int, ...]] = []
        with self._lock:
            for s in shards:
                if s in self._indexes:
                    self._indexes.move_to_end(s)
                    found[s] = self._indexes[s]
                else:
                    missing.append(s)
        if not missing:
            return found
        n = layout.index_nbytes
        reqs = [ByteRequest(self.meta.stored_key(s), 0, n) if layout.index_location == "start"
                else ByteRequest(self.meta.stored_key(s), -n) for s in missing]
        results = self.store.get_many_settled(reqs, cancel)
        for s, req, data in zip(missing, reqs, results):
            found[s] = self._parse_index(req, data)
        with self._lock:
            for s in missing:
                if not isinstance(found[s], ZarrError):
                    self._indexes[s] = found[s]  # type: ignore[assignment]
            while len(self._indexes) > self.INDEX_CACHE_ENTRIES:
                self._indexes.popitem(last=False)
        return found

    def _parse_index(self, req: ByteRequest, data: bytes | None | StoreError) -> list[list[int]] | None | ZarrError:
        layout = self.meta.shard_layout
        assert layout is not None
        n = layout.index_nbytes
        if data is None or isinstance(data, StoreError):
            return data
        if len(data) < n:
            return CodecError(f"shard {req.key} of {self.path}: {len(data)} bytes cannot hold its {n}-byte index")
        try:
            return layout.decode_index(data).tolist()  # type: ignore[no-any-return]
        except CodecError as e:
            return type(e)(f"index of shard {req.key} of {self.path}: {e}")


def _unit_order(unit: list[_Item]) -> tuple[str, int]:
    """Store order, so that reads of one file follow each other."""
    req = unit[0].req
    return (req.key, req.start or 0) if req is not None else ("", 0)


def merge_ranges(reqs: list[ByteRequest]) -> list[tuple[ByteRequest, list[int]]]:
    """Group requests into fetches: byte-adjacent or overlapping ranges of one key become one."""
    order = sorted(range(len(reqs)), key=lambda i: (reqs[i].key, reqs[i].start if reqs[i].start is not None else -1))
    groups: list[tuple[ByteRequest, list[int]]] = []
    for i in order:
        r = reqs[i]
        if groups:
            g, members = groups[-1]
            if (g.key == r.key and g.start is not None and r.start is not None and r.start >= 0
                    and g.stop is not None and r.stop is not None and r.start <= g.stop):
                groups[-1] = (ByteRequest(g.key, g.start, max(g.stop, r.stop)), members + [i])
                continue
        groups.append((r, [i]))
    return groups
