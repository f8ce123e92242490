"""What a lane hands back for a job: its value, its error, or that it was cancelled.

One type for every kind of job (a plane, a table page, a tree listing), typed by the value
the job returns, so a receiver reads ``answer.value`` with the type its job promised instead
of unpacking a dictionary. A ``stale`` answer belongs to a job that a newer one on its lane
replaced: it carries no value, and a receiver only does its bookkeeping with it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..zarrlib import ChunkFailure

T = TypeVar("T")


@dataclass(frozen=True)
class Answer(Generic[T]):
    #: the number the lane gave the job when it was submitted
    number: int
    label: str = ""
    value: T | None = None
    error: BaseException | None = None
    #: the job was cancelled (by the user, by a newer job, or by closing) before it finished
    cancelled: bool = False
    #: a newer job on the lane replaced this one: nothing of it is to be shown
    stale: bool = False
    seconds: float = 0.0
    #: chunks that could not be read; the value holds the fill value there
    failures: tuple[ChunkFailure, ...] = ()
    #: the key the job was submitted under (jobs of different keys on one lane run side by side)
    key: Hashable = None

    @property
    def ok(self) -> bool:
        """A value to show: neither cancelled, stale nor failed."""
        return not self.cancelled and not self.stale and self.error is None
