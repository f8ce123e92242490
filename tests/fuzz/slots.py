"""Cases handed to a few threads, each of which keeps its own worker process for many cases.

Both fuzz campaigns (stores, HTTP answers) run this way: a bounded queue, so generating
overlaps running without drawing every case first; one thread a slot, each taking cases until
the queue says there are no more; and a progress line now and then, from whichever slot
finishes a case when it is time.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class Ticker:
    """Calls ``say(seconds since start)`` at most once every ``every`` seconds, from any thread."""

    def __init__(self, every: float, say: Callable[[float], None]) -> None:
        self.every = every
        self.say = say
        self.start = time.monotonic()
        self._last = self.start
        self._lock = threading.Lock()

    def __call__(self) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last <= self.every:
                return
            self._last = now
        self.say(now - self.start)


class Slots(Generic[T]):
    """``jobs`` threads, each running ``slot(i, take)``: ``take()`` is the next case, or None
    once every case was taken."""

    def __init__(self, jobs: int, slot: Callable[[int, Callable[[], T | None]], None]) -> None:
        self.jobs = jobs
        self.slot = slot

    def run(self, cases: Iterable[T]) -> None:
        todo: queue.Queue[T | None] = queue.Queue(maxsize=self.jobs * 4)
        threads = [threading.Thread(target=self.slot, args=(i, todo.get), daemon=True) for i in range(self.jobs)]
        for t in threads:
            t.start()
        try:
            for case in cases:
                todo.put(case)
        finally:
            for _ in threads:
                todo.put(None)
            for t in threads:
                t.join()
