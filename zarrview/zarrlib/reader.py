"""Reading a selection: a pipeline of values, run on the decode pool.

plan (``plan``: one immutable projection per chunk the selection touches) → locate (byte
requests: a chunk's key, or through ``shard_index`` its range in a shard) → one store call
(``Store.get_ranges``: the store coalesces neighbouring ranges and reads them its way) →
decode (``decode``: each chunk's part placed in the output as its bytes arrive).

A local read is cut into blocks of chunks in store order (``decode_pool.run_blocks``); each
worker makes one ``get_ranges`` call for its block, into its own scratch buffer, so reading
and decoding overlap on every core. A network read makes one ``get_ranges`` call for all its
chunks, and workers decode each answer as it lands (``decode_pool.run_streaming``). Either runs
on as many workers as its chunks' decoding pays for (``decode_pool.read_workers``, sized by
``ChunkDecoder.work_nbytes``): on 16 cores, waking one per core made network planes of small
inner chunks 1.3x slower, the workers only queueing for the GIL.

The failure policy lives here: a chunk that cannot be fetched or decoded raises, or, given a
``failures`` list, is recorded there (named by key and position) and left at the fill value,
while every other chunk of the read goes on.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from . import io_log
from .cache import ChunkCache
from .cancel import CancelToken
from .decode import Buffers, ChunkDecoder, chunk_bound, chunk_name, put
from .decode_pool import Progress, Reporter, default_executor, read_workers, run_blocks, run_streaming, workers_of
from .errors import CodecError, IndexingError, StoreError, ZarrError
from .limits import human, limits
from .metadata.model import ArrayMetadata
from .plan import ChunkFailure, ChunkProjection, ChunkRead, Plan
from .plan import plan as plan_read
from .shard_index import ShardIndexes
from .sink import ChunkSink, Visit
from .storage.base import ByteRequest, Scratch, Store

__all__ = ["ChunkReader", "ChunkFailure", "Progress", "default_executor"]

Answer = bytes | memoryview | None | StoreError


class _Read:
    """One read's destination and policy, shared by the workers that decode into it; ``log``:
    where its requests and decoding are recorded (``io_log``), looked up once, on the caller's
    thread, since the threads that fetch and decode for it do not share its context."""

    __slots__ = ("out", "cache", "failures", "log")

    def __init__(self, out: np.ndarray | ChunkSink, cache: ChunkCache | None,
                 failures: list[ChunkFailure] | None) -> None:
        self.out = out
        self.cache = cache
        self.failures = failures
        self.log = io_log.current()


class ChunkReader:
    """Reads one array; holds that array's shard-index cache and each worker's buffers."""

    def __init__(self, store: Store, meta: ArrayMetadata, path: str) -> None:
        self.store = store
        self.meta = meta
        self.path = path
        self.cache_id: Hashable = (store.url, path, meta.codecs_description, meta.shape)
        self._shards = ShardIndexes(store, meta, path) if meta.shard_layout is not None else None
        self._decoder = ChunkDecoder(meta, path)
        #: the most bytes a chunk's stored object is asked for: what its codecs can store it as,
        #: where they bound it, so a server cannot send more for it (None: the store's own bound)
        self.chunk_bound = chunk_bound(meta)
        self._scratch = threading.local()
        #: v2 arrays may store chunks under nested keys although the metadata says nothing: the
        #: first chunk found decides which spelling this array uses (None: not known yet), so a
        #: missing chunk costs one extra request at most until then
        self._alt_keys: bool | None = None

    # -- planning ---------------------------------------------------------------------------
    def plan(self, selection: Any) -> Plan:
        return plan_read(self.meta, self.path, selection)

    def chunk_coords(self, selection: Any) -> list[tuple[int, ...]]:
        """Grid coordinates of the read chunks a selection touches (for schedulers and tests)."""
        return [chunk.coords for chunk in self.plan(selection).chunks]

    def chunk_boxes(self, selection: Any) -> list[tuple[tuple[int, ...], tuple[tuple[int, int], ...]]]:
        """Each read chunk a selection touches, with its [start, stop) per dimension in array
        coordinates: what a chunk-grid overlay draws (a rectilinear grid's chunks differ)."""
        return [(chunk.coords, self.meta.chunk_box(chunk.coords)) for chunk in self.plan(selection).chunks]

    def locate(self, chunks: list[ChunkProjection], cancel: CancelToken | None = None) -> list[ChunkRead]:
        """Each chunk with the byte request of its stored bytes, in store order."""
        if self._shards is not None:
            return self._shards.locate(chunks, cancel)
        key = self.meta.alt_stored_key if self._alt_keys and self.meta.alt_stored_key else self.meta.stored_key
        bound = self.chunk_bound
        return [ChunkRead(chunk, ByteRequest(key(chunk.coords), limit=bound)) for chunk in chunks]

    # -- reading ----------------------------------------------------------------------------
    def read(self, selection: Any, *, cancel: CancelToken | None = None, cache: ChunkCache | None = None,
             progress: Progress | None = None, executor: ThreadPoolExecutor | None = None,
             failures: list[ChunkFailure] | None = None, dtype: np.dtype[Any] | None = None,
             out: np.ndarray | None = None) -> np.ndarray:
        """The selection as an array (of ``dtype``, values cast from the stored type, where given).
        With a ``failures`` list, a chunk that cannot be fetched or decoded is recorded there and
        left at the fill value; without one, it raises. ``out`` (C-contiguous, of the result's shape
        and type) receives the values instead of a new array: a caller reading many selections of
        one shape reuses one buffer instead of faulting in fresh pages for each."""
        shape, final_shape, chunks = self.plan(selection)
        if dtype is not None and dtype.itemsize > self.meta.dtype.itemsize:  # the plan bounded the stored type
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes > limits().read_bytes:
                raise IndexingError(f"{self.path}: the selection is {human(nbytes)} as {dtype}, more than the "
                                    f"{human(limits().read_bytes)} one read may return; select a smaller region")
        target = np.dtype(self.meta.dtype if dtype is None else dtype)
        if out is not None and (out.shape != tuple(final_shape) or out.dtype != target
                                or not out.flags.c_contiguous or not out.flags.writeable):
            raise ValueError(f"{self.path}: out must be a writeable C-contiguous {tuple(final_shape)} {target} "
                             f"array, not {out.shape} {out.dtype}")
        buffer = np.empty(shape, dtype=target) if out is None else out.reshape(shape)
        self._run(chunks, _Read(buffer, cache, failures), cancel, progress, executor)
        return buffer.reshape(final_shape)

    def visit(self, selection: Any, visit: Visit, *, cancel: CancelToken | None = None,
              cache: ChunkCache | None = None, progress: Progress | None = None,
              executor: ThreadPoolExecutor | None = None, failures: list[ChunkFailure] | None = None,
              dtype: np.dtype[Any] | None = None) -> None:
        """Read ``selection`` as ``read`` does, but hand each chunk's part to ``visit(index, values)``
        on the worker that decoded it (``sink``) instead of filling an output: a reduction holds
        no more than the chunks being decoded. ``visit`` runs on several threads at once."""
        chunks = self.plan(selection).chunks
        sink = ChunkSink(self.meta.dtype if dtype is None else dtype, visit)
        self._run(chunks, _Read(sink, cache, failures), cancel, progress, executor)

    def _run(self, chunks: list[ChunkProjection], read: _Read, cancel: CancelToken | None,
             progress: Progress | None, executor: ThreadPoolExecutor | None) -> None:
        """Every chunk of a plan placed into ``read.out``: the cache's first, then the store's."""
        cache = read.cache
        reporter = Reporter(len(chunks), progress)
        todo = chunks
        if cache is not None:
            todo = []
            for chunk in chunks:
                hit = cache.get((self.cache_id, chunk.coords))
                if hit is not None:
                    put(read.out, chunk.out, hit, chunk.inner)
                else:
                    todo.append(chunk)
            reporter.add(len(chunks) - len(todo))
            if read.log is not None:
                read.log.hits(len(chunks) - len(todo))
        if todo:
            if cancel is not None:
                cancel.raise_if_cancelled()
            reads = self.locate(todo, cancel)
            pool = executor or default_executor()
            work = self._decoder.work_nbytes(reads[0].chunk.inner, cache is not None)
            if self.store.prefers_batches and len(reads) > 1:
                def place(answer: tuple[ChunkRead, Answer]) -> None:
                    self._place(answer[0], answer[1], read, self._buffers())
                    reporter.add(1)

                workers = read_workers(len(reads), workers_of(pool), len(reads), work)
                run_streaming(lambda ready: self._fetch_all(reads, cancel, ready, read.log), place, pool, workers)
            else:
                run_blocks(reads, lambda block: self._read_block(block, read, cancel, reporter), pool,
                           chunks=len(reads), chunk_bytes=work)

    def _read_block(self, block: Sequence[ChunkRead], read: _Read, cancel: CancelToken | None,
                    reporter: Reporter) -> None:
        """A worker's block: one store call into the worker's buffer, each chunk decoded as
        its bytes arrive (the buffer is reused by the next)."""
        wanted = [r for r in block if r.req is not None and r.error is None]
        try:
            bufs = self._buffers()
        except MemoryError:  # the next block on this thread tries again
            for r in block:
                self._failed(r, r.error or CodecError(f"{self._name(r)}: not enough memory to decode it"), read)
            reporter.add(len(block))
            return
        for r in block:
            if r.req is None or r.error is not None:
                self._place(r, None, read, bufs)
        if wanted:
            self.store.get_ranges([r.req for r in wanted],  # type: ignore[misc]
                                  _logged(wanted, lambda i, data: self._place(wanted[i], data, read, bufs), read.log),
                                  cancel, bufs.raw)
        reporter.add(len(block))

    def _fetch_all(self, reads: list[ChunkRead], cancel: CancelToken | None, ready: Any,
                   log: io_log.IoLog | None = None) -> None:
        """Every chunk's bytes in one store call, each handed to ``ready`` as it lands."""
        wanted = [r for r in reads if r.req is not None and r.error is None]
        for r in reads:
            if r.req is None or r.error is not None:
                ready((r, None))
        if cancel is not None:
            cancel.raise_if_cancelled()
        self.store.get_ranges([r.req for r in wanted],  # type: ignore[misc]
                              _logged(wanted, lambda i, data: ready((wanted[i], data)), log), cancel)

    # -- one chunk --------------------------------------------------------------------------
    def _place(self, r: ChunkRead, data: Answer, read: _Read, bufs: Buffers) -> None:
        """Decode one chunk's bytes into the output, or record why it cannot be."""
        req, chunk = r.req, r.chunk
        if r.error is not None or isinstance(data, StoreError):
            self._failed(r, r.error or data, read)  # type: ignore[arg-type]
            return
        if req is None:
            read.out[chunk.out] = self.meta.fill
            return
        try:
            if data is None and self.meta.alt_stored_key is not None:
                req, data = self._alt(req, chunk)
            elif data is not None and self.meta.alt_stored_key is not None and self._alt_keys is None:
                self._alt_keys = False  # found under the declared key: no need to try the other
            if data is None:
                read.out[chunk.out] = self.meta.fill
                return
            if req.start is not None and req.stop is not None and len(data) != req.stop - req.start:
                raise CodecError(f"{chunk_name(self.meta, self.path, req.key, chunk.coords)}: the shard index "
                                 f"points past the end of the shard (bytes {req.start}-{req.stop}, got {len(data)})")
            began = time.perf_counter() if read.log is not None else 0.0
            self._decoder.place(data, req.key, chunk.coords, chunk.inner, chunk.out, read.out, bufs, read.cache,
                                (self.cache_id, chunk.coords))
            if read.log is not None:
                read.log.decoded(time.perf_counter() - began)
        except (StoreError, CodecError) as e:
            self._failed(r, e, read)
        except MemoryError:  # within the bounds, but more than this machine has free
            self._failed(r, CodecError(f"{self._name(r)}: not enough memory to decode it"), read)

    def _alt(self, req: ByteRequest, chunk: ChunkProjection) -> tuple[ByteRequest, bytes | None]:
        """A chunk missing under its declared key, tried under the other v2 separator unless the
        array already proved to use the declared one (then it is simply missing)."""
        assert self.meta.alt_stored_key is not None
        alt = ByteRequest(self.meta.alt_stored_key(chunk.coords), req.start, req.stop, req.limit)
        if self._alt_keys is False or alt.key == req.key:
            return req, None
        data = self.store.get_range(alt)
        if data is not None:
            self._alt_keys = True
        return alt, data

    def _name(self, r: ChunkRead) -> str:
        key = r.req.key if r.req is not None else self.meta.stored_key(r.chunk.coords)
        return chunk_name(self.meta, self.path, key, r.chunk.coords)

    def _failed(self, r: ChunkRead, error: ZarrError, read: _Read) -> None:
        if read.failures is None:
            raise error
        chunk = r.chunk
        key = r.req.key if r.req is not None else self.meta.stored_key(chunk.coords)
        box = self.meta.chunk_box(chunk.coords)
        read.out[chunk.out] = self.meta.fill
        drop_tracebacks(error)
        read.failures.append(ChunkFailure(key, chunk.coords, box, str(error), error))  # list.append is atomic

    def _buffers(self) -> Buffers:
        """This thread's reusable read and decode buffers."""
        tls = self._scratch
        try:
            return tls.buffers
        except AttributeError:  # all or none: a failed allocation leaves none behind
            tls.buffers = Buffers(Scratch(), self._decoder)
            return tls.buffers


def drop_tracebacks(error: BaseException) -> None:
    """Forget the tracebacks of ``error`` and of what caused it: their frames hold the read that
    recorded it (its output, its buffers), a cycle that only a full collection frees, which a
    long-lived process postpones while failures pile up; callers act on the kind and message."""
    seen: set[int] = set()
    stack: list[BaseException] = [error]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = None
        stack.extend(x for x in (e.__cause__, e.__context__) if x is not None)


def _logged(wanted: list[ChunkRead], on_each: Callable[[int, Answer], None], log: io_log.IoLog | None
            ) -> Callable[[int, Answer], None]:
    """``on_each``, recording each answer's request into ``log`` first where there is one."""
    if log is None:
        return on_each
    began = time.perf_counter()

    def logged(i: int, data: Answer) -> None:
        req = wanted[i].req
        assert req is not None
        if isinstance(data, StoreError):
            outcome, n = str(data), 0
        else:
            outcome, n = ("missing", 0) if data is None else ("stored", len(data))
        log.request(req.key, req.start, req.stop, n, time.perf_counter() - began, outcome)
        on_each(i, data)

    return logged
