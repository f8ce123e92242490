"""The reads of the sparse matrix's block and of the embedding's scatter, as view models a
driver runs (``scheduling.Driver``): the block the view shows, the points of the coordinates
and colour picked.

Each says what the status bar says while it reads and once it has read ("Reading …", "Read …
in N ms", "Cannot read …: why") and hands the view the value of the newest answer: the driver
drops stale ones, so a view never draws a block or points it has scrolled or switched away
from. An ask already read, or being read, reads nothing again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from ...scheduling import Answer, Job
from .embedding import MAX_POINTS, Points
from .frame import Column
from .jobs import block_job, points_job
from .sparse import SparseMatrix

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class ViewRead(Generic[T]):
    """A view's read: its job, the ask it reads for, and what it reads (``what``: asks of the
    same are one read)."""

    job: Job[T]
    ask: Any
    what: Hashable

    @property
    def read(self) -> Hashable:
        return self.what


@dataclass(frozen=True, eq=False)
class Said(Generic[T]):
    """What a view shows of its read: the status bar's text and, once it is answered
    (``answered``: the view has what it asked for, or knows why not), the value to draw."""

    said: str
    value: T | None = None
    answered: bool = False


def said_of(label: str, answer: Answer[Any], read: str | None = None) -> str:
    """The status of an answer: ``read`` (else "Read ``label`` in N ms") and how many chunks
    could not be read, or why nothing could be."""
    if answer.error is not None or answer.cancelled or answer.value is None:
        return f"Cannot read {label}: {answer.error or 'cancelled'}"
    failed = f"; {len(answer.failures)} chunks could not be read" if answer.failures else ""
    return (read or f"Read {label} in {answer.seconds * 1000:.0f} ms") + failed


class _Reads(Generic[T]):
    """The newest ask, read once: asked again while it is read or drawn, it reads nothing; an
    ask that failed or was cancelled is read again when asked again."""

    def __init__(self) -> None:
        self._asked: Hashable = None
        self._pending: ViewRead[T] | None = None
        self._announced: ViewRead[T] | None = None

    def clear(self) -> None:
        """Nothing is shown or read (the driver dropped what was in flight)."""
        self._asked = self._pending = self._announced = None

    def _request(self, ask: Any, what: Hashable, job: Callable[[], Job[T]]) -> ViewRead[T] | None:
        if what == self._asked:
            return self._pending
        self._asked = what
        self._pending = ViewRead(job(), ask, what)
        return self._pending

    def waiting(self, request: ViewRead[T] | None) -> Said[Any] | None:
        """"Reading …" once per read; what is drawn stays until it is answered."""
        if request is None or request is self._announced:
            return None
        self._announced = request
        return Said(f"Reading {request.job.label}…")

    def _answered(self, request: ViewRead[T], answer: Answer[T]) -> None:
        if request is self._pending:
            self._pending = None
        if not answer.ok or answer.value is None:
            self._asked = None


@dataclass(frozen=True, eq=False)
class BlockAsk:
    """The cells ``rows`` × ``cols`` of ``matrix`` (end exclusive) that its view shows."""

    matrix: SparseMatrix
    rows: tuple[int, int]
    cols: tuple[int, int]


@dataclass(frozen=True, eq=False)
class Block:
    """A dense block of a sparse matrix, and where it goes."""

    values: np.ndarray
    rows: tuple[int, int]
    cols: tuple[int, int]


class BlockModel(_Reads[np.ndarray]):
    """The block a sparse matrix's view shows: read unless it is the one drawn or being read
    (an empty block reads nothing and leaves the read under way)."""

    def request(self, ask: BlockAsk) -> ViewRead[np.ndarray] | None:
        if ask.rows[1] <= ask.rows[0] or ask.cols[1] <= ask.cols[0]:
            return self._pending
        return self._request(ask, (ask.matrix, ask.rows, ask.cols), lambda: block_job(ask.matrix, ask.rows, ask.cols))

    def apply(self, request: ViewRead[np.ndarray], answer: Answer[np.ndarray]) -> Said[Block]:
        self._answered(request, answer)
        ask: BlockAsk = request.ask
        block = None if not answer.ok or answer.value is None else Block(answer.value, ask.rows, ask.cols)
        return Said(said_of(request.job.label, answer), block, answered=True)


@dataclass(frozen=True, eq=False)
class PointsAsk:
    """The points of ``array``'s columns ``dims``, coloured by ``colour`` (None: one colour)."""

    array: Any
    dims: tuple[int, int]
    colour: Column | None = None
    max_points: int = MAX_POINTS


class PointsModel(_Reads[Points]):
    """An embedding's points: each ask (another array, another pair of coordinates or colour)
    is read anew."""

    def request(self, ask: PointsAsk) -> ViewRead[Points] | None:
        return self._request(ask, ask, lambda: points_job(ask.array, ask.dims, ask.colour, ask.max_points))

    def apply(self, request: ViewRead[Points], answer: Answer[Points]) -> Said[Points]:
        self._answered(request, answer)
        points = answer.value if answer.ok else None
        read = None
        if points is not None:
            step = f", every {points.step}th of {points.total:,} cells" if points.step > 1 else ""
            path = request.ask.array.path
            read = f"Read {points.x.size:,} points of {path} in {answer.seconds * 1000:.0f} ms{step}"
        return Said(said_of(request.job.label, answer, read), points, answered=True)
