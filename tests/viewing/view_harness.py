"""Driving a ViewController without Qt: answers are queued as the GUI thread would get them,
and ``settle`` runs them until the pool has nothing left, like napari's ``force_sync``."""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

import zarrview.zarrlib as zl
from zarrview.scheduling import Driver, WorkerPool
from zarrview.viewing import Scene, ViewController
from zarrview.viewing.image.controller import PlaneRequest
from zarrview.viewing.image.state import ViewState
from zarrview.viewing.ome.model import Level


class Harness:
    def __init__(self, budget: int = 256, prefetch: bool = False) -> None:
        self.pool = WorkerPool()
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.scenes: list[Scene] = []
        self.progress: list[tuple[int, int]] = []
        self.deferred: list[Callable[[], None]] = []
        self.ctl = ViewController(budget=budget)
        self.driver: Driver[ViewState, PlaneRequest, Scene] = Driver(
            self.ctl, self.pool, self.scenes.append, post=self.inbox.put, name="image",
            on_progress=lambda d, t: self.progress.append((d, t)),
            defer=self.deferred.append if prefetch else None)

    def set_state(self, state: ViewState) -> None:
        """Show ``state`` as the data view does, without waiting for what it reads."""
        self.driver.show(state)

    def show(self, state: ViewState) -> Scene:
        self.set_state(state)
        return self.settle()

    def auto_contrast(self) -> None:
        scene = self.ctl.auto_contrast()
        if scene is not None:
            self.scenes.append(scene)

    def settle(self, timeout: float = 30.0) -> Scene:
        while True:
            assert self.pool.wait_until_idle(timeout), "the pool did not finish"
            ran = False
            while True:
                try:
                    job = self.inbox.get_nowait()
                except queue.Empty:
                    break
                job()
                ran = True
            if not ran and self.pool.idle():
                return self.ctl.scene

    def close(self) -> None:
        self.pool.close()


def halving_levels(store: Any, count: int) -> tuple[Level, ...]:
    """Levels "0", "1", ... of a store, each half the size of the one before along the last two
    dimensions, described as ome-zarr-py does (the centre of pixel ``i`` is ``scale * i +
    translation``)."""
    out = []
    for k in range(count):
        f = 2.0**k
        arr = zl.open(store)[str(k)]  # type: ignore[index]
        out.append(Level(k, str(k), arr, (1.0, f, f), (0.0, (f - 1) / 2, (f - 1) / 2), arr.shape))
    return tuple(out)
