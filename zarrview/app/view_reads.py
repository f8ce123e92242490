"""The reads of one view on its own lane: what each says in the status bar (reading, read in so
many ms, cannot read and why), a count of reads under way for ``is_settled``, and the answer's
value handed to the view only while it is the newest."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject

from ..scheduling import Answer, Job, WorkerPool
from .bridge import gui_lane

T = TypeVar("T")


class ViewReads:
    def __init__(self, pool: WorkerPool, owner: QObject, name: str, said: Callable[[str], None],
                 done: Callable[[], None]) -> None:
        self.lane = gui_lane(pool, owner, name)
        self.said, self.done = said, done
        self.reading = 0

    def submit(self, job: Job[T], show: Callable[[T, Answer[T]], str | None],
               still: Callable[[], bool] = lambda: True) -> None:
        """Run ``job``; ``show(value, answer)`` draws its value (while ``still()``) and may
        return what the status bar says instead of "Read … in N ms"."""
        self.reading += 1
        self.said(f"Reading {job.label}…")

        def answered(answer: Answer[Any]) -> None:
            self.reading -= 1
            if answer.stale or not still():
                return
            if answer.error is not None or answer.cancelled or answer.value is None:
                self.said(f"Cannot read {job.label}: {answer.error or 'cancelled'}")
            else:
                said = show(answer.value, answer)
                failed = f"; {len(answer.failures)} chunks could not be read" if answer.failures else ""
                self.said((said or f"Read {job.label} in {answer.seconds * 1000:.0f} ms") + failed)
            self.done()

        self.lane.submit(job, answered)

    def discard(self) -> None:
        self.lane.discard()
