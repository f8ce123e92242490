"""Running a read's work on the shared decode pool with as few thread hand-offs as possible.

numcodecs and libzstd release the GIL while they decode, so threads scale, but every
time a thread waits for another (a queue, a lock, a result) it sleeps and must be woken,
and on a many-core machine that wake-up can cost more than decoding a small chunk
(about 9 voluntary context switches per chunk on 16 cores made reads slower there than on 8).

So a local read is cut into contiguous blocks (store order, so one file's reads follow
each other) that shrink as the read goes on (guided scheduling: each a share of what is left,
down to one unit), and each worker claims the next block with ``next()`` on a shared counter
(atomic under the GIL, never blocking); progress is reported once per block. Large first
blocks keep claims few; small last ones let every worker finish within about one unit of
the others (fixed blocks of a 512-chunk read on 2 workers left one core idle for up to 7 ms).
A worker waits for no other worker between blocks. The calling thread is one of the workers,
and a read wakes only as many as its chunks pay for (``read_workers``). Remote
reads stream instead: units arrive as responses land, through a queue, since their order
is the network's; they too wake only the workers ``read_workers`` gives them.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from queue import SimpleQueue
from typing import TypeVar

from .errors import ReadCancelled

T = TypeVar("T")
Progress = Callable[[int, int], None]

#: the most workers one local read runs on, whatever the pool's size. Each chunk costs some
#: microseconds of Python holding the GIL; past a point workers only queue for it, and every
#: further worker adds wake-ups, not throughput. Where that point lies depends on the chunk
#: (``read_workers``); this is the ceiling, the most that was measured to pay (16 cores).
MAX_READ_WORKERS = 16

#: the chunk size at which ``WORKERS_AT_REF`` workers read fastest, and that number: measured on
#: 16 cores (docs/performance.md) about 6 workers for 128 KiB chunks and 12 for 512 KiB ones, so the
#: useful count grows with the square root of the chunk's decoded size
REF_CHUNK_BYTES = 128 << 10
WORKERS_AT_REF = 6

#: decoded bytes a worker should have at least: waking a thread on an idle core costs tens of
#: microseconds on a VM, about as much as decoding 256 KiB, so a read of a few chunks runs on
#: fewer threads than the machine has (a 512x512 viewport of 128 KiB chunks on 4 or 5, not 8)
MIN_BYTES_PER_WORKER = 256 << 10

#: a block is at most this share of the units left, divided among the workers: the first
#: blocks take half of each worker's even share, and blocks shrink to one unit at the end
GUIDED_SHARE = 2

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def cpus() -> list[int]:
    """The cores this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 2))


def default_executor() -> ThreadPoolExecutor:
    """One shared decode pool sized to the cores this process may use.

    Its workers are not pinned to cores: measured on 16 cores, pinned workers read 10-15 %
    slower than free ones, and a library must not move threads of a process it does not own.
    """
    global _pool
    with _pool_lock:
        if _pool is None:
            n = len(cpus()) or 2
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="zarrlib-decode")
        return _pool


def workers_of(pool: ThreadPoolExecutor) -> int:
    return int(getattr(pool, "_max_workers", 2))


class Reporter:
    """Progress of one read: counts added by any thread, reported in order under one lock."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = total
        self.progress = progress
        self.done = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        if self.progress is not None and n:
            with self._lock:  # reported under the lock, so reports arrive in order
                self.done += n
                self.progress(self.done, self.total)


def read_workers(units: int, pool_workers: int, chunks: int = 0, chunk_bytes: int = 0) -> int:
    """How many threads (the caller included) a read of ``units`` units, ``chunks``
    chunks of ``chunk_bytes`` decoded bytes in all, should run on: no more than the chunk size
    pays for (``WORKERS_AT_REF``), nor than there is work for (``MIN_BYTES_PER_WORKER``)."""
    cap = MAX_READ_WORKERS
    if chunk_bytes > 0:
        cap = min(cap, max(2, round(WORKERS_AT_REF * math.sqrt(chunk_bytes / REF_CHUNK_BYTES))),
                  -(-max(chunks, units) * chunk_bytes // MIN_BYTES_PER_WORKER))
    workers = max(1, min(units, pool_workers, cap))
    rounds = -(-units // workers) if units else 1  # units per worker: as few threads as give that
    return max(1, -(-units // rounds)) if units else 1


def guided_blocks(units: Sequence[T], workers: int) -> list[Sequence[T]]:
    """``units`` cut into contiguous blocks, each ``1 / (GUIDED_SHARE * workers)`` of what is
    left (at least one unit): 512 units on 2 workers make 23 blocks, of 128 units down to 1."""
    blocks: list[Sequence[T]] = []
    i, n = 0, len(units)
    while i < n:
        size = max(1, (n - i) // (GUIDED_SHARE * workers))
        blocks.append(units[i:i + size])
        i += size
    return blocks


def run_blocks(units: Sequence[T], work: Callable[[Sequence[T]], None], pool: ThreadPoolExecutor,
               chunks: int = 0, chunk_bytes: int = 0) -> None:
    """``work`` over contiguous blocks of ``units``, on the calling thread and as many of
    ``pool``'s as ``read_workers`` says; the first error is raised once every worker has
    stopped (workers stop claiming blocks as soon as one fails).

    The caller works too: it is awake already, so a read of a few chunks wakes one thread
    fewer, and once it has found no block left to claim it withdraws the tasks no pool thread
    has started (a pool busy with other reads is not waited for, and never deadlocks a read
    made from one of its own threads)."""
    workers = read_workers(len(units), workers_of(pool), chunks, chunk_bytes)
    if not units:
        return
    blocks = guided_blocks(units, workers)
    if workers <= 1:  # in blocks all the same: progress is reported, and cancelling seen, per block
        for block in blocks:
            work(block)
        return
    claim = itertools.count()
    failed = threading.Event()

    def task() -> None:
        try:
            while not failed.is_set():
                i = next(claim)
                if i >= len(blocks):
                    return
                work(blocks[i])
        except BaseException:
            failed.set()
            raise

    futures = [pool.submit(task) for _ in range(min(workers, len(blocks)) - 1)]
    mine: BaseException | None = None
    try:
        task()
    except BaseException as e:  # raised below, once every worker has stopped
        mine = e
    for f in futures:
        f.cancel()  # not started yet: nothing is left for it to claim
    finish(futures, mine)


def run_streaming(feed: Callable[[Callable[[T], None]], None], work: Callable[[T], None],
                  pool: ThreadPoolExecutor, workers: int) -> None:
    """``work`` on each unit ``feed`` hands over, as it hands them over (network answers are
    decoded as they land, not after the whole batch); after an error the rest are drained."""
    queue: SimpleQueue[T | None] = SimpleQueue()
    failed = threading.Event()

    def task() -> None:
        while True:
            unit = queue.get()
            if unit is None:
                return
            if failed.is_set():
                continue  # the read has failed: drain without working
            try:
                work(unit)
            except BaseException:
                failed.set()
                raise

    futures = [pool.submit(task) for _ in range(max(1, min(workers, workers_of(pool))))]
    try:
        feed(queue.put)
    finally:
        for _ in futures:
            queue.put(None)
        finish(futures)


def finish(futures: list[Future[None]], mine: BaseException | None = None) -> None:
    """Wait for every task; raise the first real error (a cancellation only if nothing else),
    the calling thread's own (``mine``) first."""
    wait(futures)
    errors = [e for e in [mine, *(f.exception() for f in futures if not f.cancelled())] if e is not None]
    if errors:
        real = [e for e in errors if not isinstance(e, ReadCancelled)]
        raise (real or errors)[0]
