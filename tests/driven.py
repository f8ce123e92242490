"""Lanes and drivers without Qt: answers queued as the GUI thread would get them, and run here
until the pool has nothing left (as napari's ``force_sync``)."""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

from zarrview.scheduling import Driver, WorkerPool


class Inbox:
    """Answers queued as the GUI thread would get them; ``drain`` runs them here."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def post(self, fn: Callable[[], None]) -> None:
        self.queue.put(fn)

    def drain(self, pool: WorkerPool, timeout: float = 10.0) -> None:
        """Run what arrives until the pool is idle and nothing is left to run."""
        while True:
            assert pool.wait_until_idle(timeout)
            ran = False
            while not self.queue.empty():
                self.queue.get_nowait()()
                ran = True
            if not ran and pool.idle():
                return


class Driven:
    """A driver of ``model`` on a pool of its own; what it hands to draw is kept in ``drawn``."""

    def __init__(self, model: Any, name: str = "view", threads: int = 2) -> None:
        self.pool = WorkerPool(threads=threads)
        self.inbox = Inbox()
        self.drawn: list[Any] = []
        self.driver: Driver[Any, Any, Any] = Driver(model, self.pool, self.drawn.append, post=self.inbox.post,
                                                    name=name)

    def drain(self) -> None:
        self.inbox.drain(self.pool)

    def close(self) -> None:
        self.pool.close()
