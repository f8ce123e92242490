"""Decoding a worker's zstd chunks several at a time: one GIL release for a batch, not per chunk.

On many cores a read's workers queue for the GIL. Each chunk decoded through its own libzstd
call lets go of the GIL and must take it back (a sleep and a wake-up when others hold it), and
costs the Python around the call, all of it serial (issue 15). So a worker reads its block's
chunks front to back into one buffer (``Stack``): a run of a shard's inner chunks, or chunk
files read one after another, then lie back to back there, as zstd frames one after another.
Such frames are decoded by one ``ZSTD_decompressDCtx`` call into consecutive places of a
per-thread batch buffer, then copied out. A batch is at most ``BATCH_BYTES`` decoded, small
enough to stay in a core's cache until it is copied out (an XZ section uses one row of each
chunk). A frame that fails any check, or a chunk read anywhere else, takes the per-chunk path,
which names a bad chunk exactly as before.

The buffers belong to the thread, not to an array, so they cost the same however many arrays
are open: about three batches per decode thread.

Reads that fill a chunk cache (the app's) are not batched: a cached chunk must own its memory,
and copying each one out of the batch buffer would cost a copy and a GIL release per chunk,
where decoding it alone into its own array costs one release and no copy.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .cancel import CancelToken
from .codecs.direct import DirectDecoder
from .codecs.libzstd import FramesInto, frames_decoder
from .decode import SMALL_COPY, Buffers, ChunkDecoder, put
from .decode_pool import Reporter
from .errors import CodecError, StoreError
from .file_groups import group_end, read_group
from .plan import ChunkFailure, ReadItem
from .range_groups import ranges_end, read_runs
from .storage.base import Scratch

if TYPE_CHECKING:
    from .reader import ChunkReader

#: the most decoded bytes one call decodes (a chunk larger than half of it is decoded alone)
BATCH_BYTES = 1 << 20
#: the most chunks one call decodes: past this, one release fewer per call saves nothing that
#: counts, and each chunk of the batch buffer costs a view made once per array and thread
MAX_PER_BATCH = 64
#: read bytes a thread's stack holds before a batch must be decoded (compressed chunks are
#: usually smaller than decoded ones; a read that does not fit goes to a buffer of its own)
STACK_BATCHES = 2


class Stack(Scratch):
    """A read buffer filled front to back, so that consecutive reads lie back to back in it.

    ``at`` is where the last view began, -1 when it did not fit and was given a buffer of its
    own. The buffer is replaced (never resized: views of it may be alive) only when empty."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self.pos = 0
        self.at = -1

    def view(self, n: int) -> memoryview:
        if self.pos + n > len(self._buf):
            if self.pos:
                self.at = -1
                return memoryview(bytearray(n))
            self._buf = bytearray(max(n, self.capacity))
        self.at = self.pos
        return memoryview(self._buf)[self.pos:self.pos + n]

    def room(self) -> int:
        return max(len(self._buf), self.capacity if not self.pos else 0) - self.pos

    @property
    def buffer(self) -> bytearray:
        return self._buf


class _Thread(threading.local):
    """A thread's stack and batch buffer, shared by every array it reads."""

    stack: Stack | None = None
    batch: np.ndarray | None = None


_mine = _Thread()


def _thread_buffers(batch_bytes: int) -> tuple[Stack, np.ndarray]:
    stack, batch = _mine.stack, _mine.batch
    if batch is None or batch.nbytes < batch_bytes:
        batch = _mine.batch = np.empty(batch_bytes, np.uint8)
    if stack is None or stack.capacity < STACK_BATCHES * batch_bytes:
        stack = _mine.stack = Stack(STACK_BATCHES * batch_bytes)
    return stack, batch


@dataclass
class Batch:
    """One array's view of its thread's buffers: the chunks of the batch buffer, made once."""

    stack: Stack
    flat: np.ndarray
    chunks: list[np.ndarray]
    bufs: Buffers  # for the per-chunk path: reads in the stack, decodes into the first chunk
    #: (item, offset in the stack, length) of chunks read, waiting to be decoded
    pending: list[tuple[Any, int, int]] = field(default_factory=list)


class Batcher:
    """Batches one array's chunks; None from ``of`` where its chunks are not zstd frames."""

    def __init__(self, direct: DirectDecoder, frames: FramesInto, per_batch: int) -> None:
        self.direct = direct
        self.frames = frames
        self.per_batch = per_batch
        self._local = threading.local()

    @classmethod
    def of(cls, decoder: ChunkDecoder) -> Batcher | None:
        direct, frames = decoder.direct, frames_decoder()
        if (os.environ.get("ZARRVIEW_NO_BATCH") or direct is None or not direct.zstd_frame or frames is None
                or decoder.too_large):
            return None
        per_batch = min(MAX_PER_BATCH, BATCH_BYTES // direct.nbytes) if direct.nbytes else 0
        return cls(direct, frames, per_batch) if per_batch >= 2 else None

    def batch(self) -> Batch | None:
        """This thread's batch, made again if another array made the thread's buffers larger;
        None where they cannot be allocated now (the block is then read a chunk at a time)."""
        nbytes = self.direct.nbytes
        try:
            stack, flat = _thread_buffers(self.per_batch * nbytes)
        except MemoryError:
            return None
        mine: Batch | None = getattr(self._local, "batch", None)
        if mine is None or mine.stack is not stack or mine.flat.base is not flat:
            whole = flat[: self.per_batch * nbytes]
            chunks = [self.direct.view(whole[i * nbytes:(i + 1) * nbytes]) for i in range(self.per_batch)]
            mine = self._local.batch = Batch(stack, whole, chunks, Buffers.over(stack, whole[:nbytes], chunks[0]))
        return mine

    def decode(self, b: Batch, run: list[tuple[Any, int, int]]) -> bool:
        """Decode back-to-back frames into the batch's first ``len(run)`` chunks."""
        return self.frames(b.stack.buffer, [(at, n) for _, at, n in run], self.direct.nbytes, b.flat)


def back_to_back(pending: list[tuple[Any, int, int]], most: int) -> list[list[tuple[Any, int, int]]]:
    """``pending`` cut where a chunk's bytes do not start where the one before ended, and into
    pieces of at most ``most``."""
    runs: list[list[tuple[Any, int, int]]] = []
    end = -1
    for entry in pending:
        _, at, n = entry
        if at != end or len(runs[-1]) >= most:
            runs.append([])
        runs[-1].append(entry)
        end = at + n
    return runs


def batched(reader: ChunkReader, batcher: Batcher, b: Batch, block: Sequence[list[ReadItem]], out: np.ndarray,
            cancel: CancelToken | None, failures: list[ChunkFailure] | None, reporter: Reporter) -> None:
    """``reader._process`` for a block of a local read whose chunks are zstd frames: each unit
    read into the thread's stack, back-to-back frames decoded a batch at a time (``flush``),
    anything else one by one; progress reported once, for the whole block."""
    stack, pending, most = b.stack, b.pending, batcher.per_batch
    nbytes = batcher.direct.nbytes
    units = list(block)
    done, i, alone = 0, 0, 0  # units before ``alone`` were left by a group: read them alone
    try:
        while i < len(units):
            if cancel is not None:
                cancel.raise_if_cancelled()
            unit = units[i]
            i += 1
            rest: Sequence[ReadItem]
            if reader._ranges and i > alone and (end := ranges_end(units, i - 1, stack.capacity)) > i:
                if pending:
                    done += flush(reader, batcher, b, out, failures)
                stack.pos = 0  # nothing pending lies in it (a file group's unread regions may)
                placed, left, stack.pos = read_runs(reader, units[i - 1:end], stack)
                pending.extend(placed)
                units[i - 1:end] = left
                i -= 1
                alone = i + len(left)
                rest = ()
            elif len(unit) > 1:  # a run of a shard's inner chunks, in store order
                start = unit[0].req.start  # type: ignore[union-attr]
                stop = max(it.req.stop for it in unit)  # type: ignore[union-attr,type-var]
                if pending and (len(pending) + len(unit) > most or stack.pos + stop - start > stack.capacity):
                    done += flush(reader, batcher, b, out, failures)
                rest = _read_run(reader, unit, start, stop, stack, pending)  # type: ignore[arg-type]
            elif reader._files and (end := group_end(units, i - 1, reader._files)) >= i:
                if pending:
                    done += flush(reader, batcher, b, out, failures)
                stack.pos = 0  # nothing pending lies in it
                rest = _read_files(reader, [u[0] for u in units[i - 1:end]], stack, pending)
                i = end
            else:
                if pending and stack.pos + nbytes > stack.capacity:
                    done += flush(reader, batcher, b, out, failures)
                rest = () if _read_one(reader, unit[0], stack, pending) else unit
            for item in rest:
                reader._one(item, out, None, b.bufs, failures)
                done += 1
            if len(pending) >= most:
                done += flush(reader, batcher, b, out, failures)
        done += flush(reader, batcher, b, out, failures)
    finally:
        pending.clear()
        stack.pos = 0
        reporter.add(done)


def flush(reader: ChunkReader, batcher: Batcher, b: Batch, out: np.ndarray,
          failures: list[ChunkFailure] | None) -> int:
    """Decode and place every pending chunk; returns how many there were."""
    pending = b.pending
    n = len(pending)
    try:
        for run in back_to_back(pending, batcher.per_batch):
            if len(run) > 1 and batcher.decode(b, run):
                for (item, _, _), chunk in zip(run, b.chunks):
                    put(out, item.out, chunk, item.inner)
            else:  # one chunk, or frames that are not what they should be: each on its own
                for item, _, _ in run:
                    reader._one(item, out, None, b.bufs, failures)
    finally:
        pending.clear()
        b.stack.pos = 0
    return n


def _read_files(reader: ChunkReader, items: list[ReadItem], stack: Stack,
                pending: list[tuple[ReadItem, int, int]]) -> Sequence[ReadItem]:
    """A group of chunk files read into the (empty) stack with one call, the files read whole
    made pending; returns the others. Where the store cannot, the group is read file by file."""
    size = reader._region
    got = None
    if not reader.store.reads_files():
        reader._files = 0  # this store reads one file at a time: do not ask again
    else:
        try:
            got = read_group(reader, items, stack.grown(len(items) * size), size)
        except MemoryError:  # read one by one, each named if it cannot be
            pass
    if got is None:
        rest = []
        for item in items:
            if not _read_one(reader, item, stack, pending):
                rest.append(item)
        return rest
    rest = []
    view = memoryview(stack.buffer)
    end = 0  # small files are moved to lie back to back, so that their frames decode in one call
    for k, (item, n) in enumerate(zip(items, got)):
        if not n:
            rest.append(item)
            continue
        at = k * size
        if at != end and n <= SMALL_COPY:
            view[end:end + n] = view[at:at + n]
            at = end
        item.data = view[at:at + n]
        pending.append((item, at, n))
        end = at + n
    stack.pos = len(items) * size
    return rest


def _read_run(reader: ChunkReader, unit: list[ReadItem], start: int, stop: int, stack: Stack,
              pending: list[tuple[ReadItem, int, int]]) -> Sequence[ReadItem]:
    """A run of a shard's inner chunks read into the stack, its chunks made pending; returns
    those that were not (their errors, a vanished shard, a run too large for the stack)."""
    stack.at = -1
    try:
        reader._fetcher.fetch_run(unit, stack)
    except (StoreError, CodecError) as e:
        for item in unit:
            item.error = e
        return unit
    at = stack.at
    if at < 0:
        return unit
    stack.pos = at + stop - start
    rest = []
    for item in unit:
        data = item.data
        if item.error is None and data is not None:
            pending.append((item, at + item.req.start - start, len(data)))  # type: ignore[union-attr,operator]
        else:
            rest.append(item)
    return rest


def _read_one(reader: ChunkReader, item: ReadItem, stack: Stack, pending: list[tuple[ReadItem, int, int]]) -> bool:
    """One chunk's bytes read into the stack and made pending; False: it is left to the
    per-chunk path (an error, a chunk not stored, bytes read elsewhere, a v2 key of the other
    spelling to try)."""
    if item.error is not None or item.alt or item.req is None or item.data is not None:
        return False
    stack.at = -1
    try:
        data = reader._fetcher.fetch_one(item, stack)
    except (StoreError, CodecError) as e:
        item.error = e
        return False
    except MemoryError:  # the per-chunk path tries once more, and names the chunk if it fails
        return False
    if data is None:
        item.req = None  # not stored: the fill value
        return False
    item.data = data
    if stack.at < 0 or not isinstance(data, memoryview) or data.obj is not stack.buffer:
        return False
    pending.append((item, stack.at, len(data)))
    stack.pos = stack.at + len(data)
    return True
