"""The worker threads every lane shares, and the decoded-chunk cache their reads share.

One pool per app: however many views, panels and dialogs ask for work, at most ``threads``
jobs run at once, and the rest wait in order. The threads are daemons, so a job stuck on a
store that never answers cannot keep the program from exiting; closing the pool cancels every
lane's jobs and answers those not yet answered as cancelled.

A job goes to the thread that went idle last (a stack, not the queue of waiters a
``Condition`` keeps): a stream of slider steps runs on one warm thread, whose read buffers,
decompression context and CPU caches are still hot, where handing each job to the thread idle
longest made every read of a 64-chunk plane about 10 % slower.

The pool also owns the executor its jobs' reads decode on (``decode``, handed to every job in
its ``Context``): a read runs on its job's worker and as many decode threads as its chunks pay
for (``zarrlib.decode_pool``). With one owner, closing the pool ends the decoding with the jobs,
and a job's reads do not fall back on zarrlib's process-wide pool, which nothing in the app closes.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

from ..zarrlib import ChunkCache
from ..zarrlib.decode_pool import cpus
from .tally import Tally

if TYPE_CHECKING:
    from ..zarrlib.io_log import IoLog
    from .answer import Answer

log = logging.getLogger(__name__)

#: jobs at once: reads are mostly waiting on storage (their chunks decode on the pool's decode
#: executor, ``WorkerPool.decode``), and a slow listing or export must leave threads for the image
DEFAULT_THREADS = 6
DEFAULT_CACHE_BYTES = 1 << 30


class PoolClosed(RuntimeError):
    """Work was handed to a pool after it was closed."""


class Closable(Protocol):
    def cancel(self) -> None: ...

    def close(self) -> None: ...


def decode_executor(name: str) -> ThreadPoolExecutor:
    """A decode executor with a thread for every core the process may use (its threads start
    as reads first need them), named after the pool that owns it."""
    return ThreadPoolExecutor(max_workers=len(cpus()) or 2, thread_name_prefix=f"{name}-decode")


class WorkerPool:
    def __init__(self, threads: int = DEFAULT_THREADS, cache_bytes: int = DEFAULT_CACHE_BYTES,
                 name: str = "zarrview-worker", decode: ThreadPoolExecutor | None = None) -> None:
        """``decode``: the executor the jobs' reads decode on; None makes one sized to the usable
        cores (``decode_executor``), which ``close`` shuts down. One given is the giver's to shut down."""
        if threads < 1:
            raise ValueError(f"a pool needs at least one thread, not {threads}")
        self.threads = threads
        self.name = name
        self.cache = ChunkCache(cache_bytes)
        #: where every job's reads decode (``Context.executor``)
        self.decode = decode if decode is not None else decode_executor(name)
        self._owns_decode = decode is None
        #: jobs submitted, answered and delivered per lane (every job answered exactly once)
        self.tally = Tally()
        self._lock = threading.Lock()
        #: notified whenever a job ends (``wait_until_idle``)
        self._cond = threading.Condition(self._lock)
        self._queue: deque[Callable[[], None]] = deque()
        #: each waiting thread's own wake-up, the one that went idle last on top
        self._idle: list[threading.Condition] = []
        self._running = 0
        self._started: list[threading.Thread] = []
        self._closed = False
        self._lanes: weakref.WeakSet[Closable] = weakref.WeakSet()
        #: the most jobs seen running at once (for tests: never above ``threads``)
        self.most_running = 0
        #: where each job's I/O goes once it is answered: its log (``zarrlib.io_log``) and its
        #: answer, on the worker thread; None (the I/O dock closed): nothing is recorded
        self.io_sink: Callable[[IoLog, Answer[Any]], None] | None = None

    # -- lanes ----------------------------------------------------------------------------------
    def adopt(self, lane: Closable) -> None:
        """Remember ``lane`` so that ``cancel`` and ``close`` reach its jobs."""
        with self._lock:
            self._lanes.add(lane)

    def cancel(self) -> None:
        """Cancel the newest job of every lane (the Cancel button): each is answered as cancelled."""
        for lane in list(self._lanes):
            lane.cancel()

    # -- work -----------------------------------------------------------------------------------
    def run(self, fn: Callable[[], None]) -> None:
        """Queue ``fn`` for a worker thread; raises ``PoolClosed`` after ``close``."""
        with self._lock:
            if self._closed:
                raise PoolClosed(f"the pool {self.name} is closed")
            self._queue.append(fn)
            if self._idle:
                self._idle.pop().notify()
            elif len(self._started) < self.threads:
                wake = threading.Condition(self._lock)
                thread = threading.Thread(target=self._loop, args=(wake,), name=f"{self.name}-{len(self._started)}",
                                          daemon=True)
                self._started.append(thread)
                thread.start()

    def _loop(self, wake: threading.Condition) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._idle.append(wake)
                    wake.wait()  # ``run`` or ``close`` took it off the stack
                if not self._queue:
                    return
                fn = self._queue.popleft()
                self._running += 1
                self.most_running = max(self.most_running, self._running)
            try:
                fn()
            except BaseException:  # a lane answers its own errors: anything here is a bug, logged
                log.exception("a job of %s failed outside its lane", self.name)
            finally:
                with self._lock:
                    self._running -= 1
                    self._cond.notify_all()

    # -- state ----------------------------------------------------------------------------------
    def idle(self) -> bool:
        with self._lock:
            return not self._queue and self._running == 0

    def wait_until_idle(self, timeout: float = 30.0) -> bool:
        """For tests and ``--screenshot``: block until nothing is queued or running; the answers
        are posted by then (they may still wait on the receiving thread)."""
        end = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._running:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, timeout: float = 5.0) -> None:
        """Answer every lane's pending jobs as cancelled, drop queued work, and let the threads
        end (waiting at most ``timeout`` for running jobs to notice their cancel); then shut the
        decode executor down, if the pool made it, without waiting for a decode still running
        (a read stuck on a store must not hold up the close; its job is answered already)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for lane in list(self._lanes):
            lane.close()
        with self._lock:
            self._queue.clear()
            for wake in self._idle:
                wake.notify()
            self._idle.clear()
            self._cond.notify_all()
        end = time.monotonic() + timeout
        for thread in self._started:
            thread.join(max(0.0, end - time.monotonic()))
        if self._owns_decode:
            self.decode.shutdown(wait=False, cancel_futures=True)
