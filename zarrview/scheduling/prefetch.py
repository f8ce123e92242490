"""Reading ahead: planes the user is likely to look at next, warmed into the pool's cache.

After a plane is painted the image view offers its neighbours (or a ring of chunks around the
visible region); they are read on a lane of their own, one after another, and dropped from the
cache's point of view as soon as anything newer is asked (``stop``), so reading ahead never
delays what is on screen.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from ..zarrlib import Array, ZarrError
from .answer import Answer
from .job import Context, Job
from .lane import Lane
from .pool import WorkerPool

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Warm:
    """A selection of an array to read into the cache."""

    array: Array
    selection: tuple[Any, ...]
    label: str = ""


class Prefetch:
    def __init__(self, pool: WorkerPool) -> None:
        self._lane: Lane[None] = Lane(pool, name="prefetch")
        self._lock = threading.Lock()
        #: selections read into the cache (for tests and benchmarks)
        self.warmed = 0

    def warm(self, reads: list[Warm]) -> None:
        """Read ``reads`` into the cache in order, replacing whatever was being warmed."""
        if reads:
            self._lane.submit(Job(lambda ctx: self._read(reads, ctx), "prefetch"), _ignore)
        else:
            self._lane.discard()

    def stop(self) -> None:
        self._lane.discard()

    def _read(self, reads: list[Warm], ctx: Context) -> None:
        for warm in reads:
            ctx.cancel.raise_if_cancelled()
            try:
                warm.array.read(warm.selection, cancel=ctx.cancel, cache=ctx.cache, executor=ctx.executor)
            except ZarrError as e:  # the same error shows when that plane is asked for
                log.debug("prefetch of %s failed: %s", warm.label, e)
                continue
            with self._lock:
                self.warmed += 1


def _ignore(answer: Answer[None]) -> None:
    """A prefetch has nothing to show; a bug in it is logged with its traceback."""
    if answer.error is not None:
        log.error("prefetch failed", exc_info=answer.error)
