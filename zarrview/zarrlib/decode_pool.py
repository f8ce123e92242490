"""Running a read's work on the shared decode pool with as few thread hand-offs as possible.

numcodecs and libzstd release the GIL while they decode, so threads scale, but every
time a thread waits for another (a queue, a lock, a result) it sleeps and must be woken,
and on a many-core machine that wake-up can cost more than decoding a small chunk
(issue 15: about 9 voluntary context switches per chunk on 16 cores, reads slower there
than on 8).

So a local read is cut into contiguous blocks (store order, so one file's reads follow
each other), a few per worker, and each worker claims the next block with ``next()`` on a
shared counter (atomic under the GIL, never blocking); progress is reported once per block.
A worker waits for no other worker between blocks. Remote
reads stream instead: units arrive as responses land, through a queue, since their order
is the network's.
"""

from __future__ import annotations

import itertools
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
#: microseconds of Python holding the GIL; past about 8 workers they queue for it, and every
#: further worker adds wake-ups, not throughput. Measured on 16 cores (bench/README.md): 8
#: workers read sharded XY planes and XZ sections 29-34 % faster than 16, chunked ones 6-10 %,
#: and no read is slower on 16 cores than on 8. (Making the system calls holding the GIL,
#: through libc, cut the switches per chunk from 6 to 1 but made XZ reads slower: not kept.)
MAX_READ_WORKERS = 8

#: blocks per worker: enough to even out chunks that cost more than others (a shard's dense
#: corner, a file not yet in the page cache), few enough that claiming one costs nothing
BLOCKS_PER_WORKER = 4

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

    Its workers are not pinned to cores (zarrlib did that before issue 15): measured on 16
    cores, pinned workers read 10-15 % slower than free ones (bench/README.md), and a
    library must not move threads of a process it does not own.
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


def run_blocks(units: Sequence[T], work: Callable[[Sequence[T]], None], pool: ThreadPoolExecutor) -> None:
    """``work`` over contiguous blocks of ``units`` on ``pool``; the first error is raised once
    every worker has stopped (workers stop claiming blocks as soon as one fails)."""
    workers = min(len(units), workers_of(pool), MAX_READ_WORKERS)
    if workers <= 1:
        if units:
            work(units)
        return
    size = -(-len(units) // (workers * BLOCKS_PER_WORKER))
    blocks = [units[i:i + size] for i in range(0, len(units), size)]
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

    finish([pool.submit(task) for _ in range(min(workers, len(blocks)))])


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


def finish(futures: list[Future[None]]) -> None:
    """Wait for every task; raise the first real error (a cancellation only if nothing else)."""
    wait(futures)
    errors = [e for e in (f.exception() for f in futures) if e is not None]
    if errors:
        real = [e for e in errors if not isinstance(e, ReadCancelled)]
        raise (real or errors)[0]
