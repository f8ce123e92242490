"""The AnnData views' reads as jobs for a lane: built on the GUI thread from what is in view,
run on a worker with the lane's cancel token, the shared chunk cache, the pool's decode executor
and its failure list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ...scheduling import Context, Job
from .embedding import Points, read_points
from .frame import Column, Frame, FramePage
from .sparse import Entries, SparseMatrix

T = TypeVar("T")


def reading(fn: Callable[..., T], label: str) -> Job[T]:
    """A job calling ``fn(**read)`` with ``Array.read``'s keywords from the job's context."""
    def work(ctx: Context) -> T:
        return fn(cancel=ctx.cancel, cache=ctx.cache, executor=ctx.executor, failures=ctx.failures)

    return Job(work, label)


def page_job(frame: Frame, start: int, stop: int) -> Job[FramePage]:
    return reading(lambda **read: frame.read_page(start, stop, **read), f"rows {start:,}–{stop:,} of {frame.path}")


def block_job(matrix: SparseMatrix, rows: tuple[int, int], cols: tuple[int, int]) -> Job[Any]:
    return reading(lambda **read: matrix.block(rows, cols, **read),
                   f"{matrix.path}[{rows[0]:,}:{rows[1]:,}, {cols[0]:,}:{cols[1]:,}]")


def entries_job(matrix: SparseMatrix, start: int, stop: int) -> Job[Entries]:
    return reading(lambda **read: matrix.entries(start, stop, **read),
                   f"stored entries {start:,}–{stop:,} of {matrix.path}")


def points_job(array: Any, dims: tuple[int, int], colour: Column | None, max_points: int) -> Job[Points]:
    return reading(lambda **read: read_points(array, dims, colour, max_points, **read),
                   f"points of {array.path}")
