"""One-off reads as a view model: opening a store, listing a page, reading a document.

Not every read belongs to a view with a state: a window opens a store, a panel counts a node's
stored objects, a dialog lists versions. ``Tasks`` makes each such read a state of its own, so
the same driver that runs every view runs them too (``Driver(Tasks(), pool, took)``): a newer
task of the same key replaces the one in flight, stale answers are dropped before they reach
the receiver, and every job is still answered exactly once. The receiver gets a ``Done``: the
task and its newest answer (value, error or cancelled).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .answer import Answer
from .driver import ReadOnce
from .job import Job

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Task(ReadOnce, Generic[T]):
    """A one-off read: its job, and what the receiver needs to place its answer (``about``)."""

    job: Job[T]
    about: Any = None


    @property
    def label(self) -> str:
        return self.job.label


@dataclass(frozen=True)
class Done(Generic[T]):
    """A task's newest answer, as its receiver gets it."""

    task: Task[T]
    answer: Answer[T]


class Tasks:
    """Each task given is read once (given again while it runs, it is left to finish); nothing
    is drawn while it runs."""

    def __init__(self) -> None:
        self._answered: weakref.WeakSet[Task[Any]] = weakref.WeakSet()

    def request(self, task: Task[Any]) -> Task[Any] | None:
        return None if task in self._answered else task

    def waiting(self, request: Task[Any] | None) -> Done[Any] | None:
        return None

    def apply(self, request: Task[Any], answer: Answer[Any]) -> Done[Any]:
        self._answered.add(request)
        return Done(request, answer)
