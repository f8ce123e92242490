"""How many jobs each lane was given and how many it answered: the pool's own bookkeeping of
the promise that every job is answered exactly once, readable without Qt.

A lane counts a job ``submitted`` when it takes it, ``answered`` when its one answer is handed
to ``post``, and ``delivered`` when that answer reaches its receiver. Once the pool is idle and
the posted answers have run, ``submitted == answered`` for every lane; ``delivered`` may be
lower only where the receiving thread dropped an answer (the app drops those of a deleted
widget). An answer that reached its receiver twice is kept in ``twice``: that is a bug.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class LaneCount:
    submitted: int = 0
    answered: int = 0
    delivered: int = 0

    @property
    def unanswered(self) -> int:
        return self.submitted - self.answered


class Tally:
    """Counts per lane name (several lanes may share a name: their counts add up)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, list[int]] = {}
        #: (lane name, job number) of every answer delivered a second time
        self.twice: list[tuple[str, int]] = []

    def _add(self, lane: str, which: int) -> None:
        with self._lock:
            self._counts.setdefault(lane, [0, 0, 0])[which] += 1

    def submitted(self, lane: str) -> None:
        self._add(lane, 0)

    def answered(self, lane: str) -> None:
        self._add(lane, 1)

    def delivered(self, lane: str, number: int, again: bool) -> None:
        if again:
            with self._lock:
                self.twice.append((lane, number))
            return
        self._add(lane, 2)

    def counts(self) -> dict[str, LaneCount]:
        """A snapshot of every lane's counts, by lane name."""
        with self._lock:
            return {name: LaneCount(*c) for name, c in self._counts.items()}

    def unanswered(self) -> dict[str, int]:
        """The lanes with jobs not yet answered, and how many."""
        return {name: c.unanswered for name, c in self.counts().items() if c.unanswered}
