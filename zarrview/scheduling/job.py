"""A job: a callable built on the GUI thread with everything it needs, run on a worker.

A job never reads view or widget state: whatever it needs (array, selection, plan, decoder) is
bound when it is built, so the worker sees a snapshot of the view at the moment it asked, as in
napari's layer slicer. What the worker offers a job is its ``Context``: the cancel token of
its lane, the shared chunk cache, the pool's decode executor, a progress callback and ``emit``
for partial results, both delivered only while the job is still the newest of its lane. A job
is ``work(ctx)``: whatever it calls that reads takes what it needs from that one value, so its
reads decode on the threads of the pool that runs the job, not on a pool zarrlib would make.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from ..zarrlib import Array, CancelToken, ChunkCache, ChunkFailure

T = TypeVar("T")

Progress = Callable[[int, int], None]


@dataclass
class Context:
    """What a running job may use; made by the lane for each run."""

    cancel: CancelToken
    cache: ChunkCache
    progress: Progress | None = None
    #: a partial result (a block of a line), delivered to the submitter's ``on_partial``
    emit: Callable[[Any], None] = lambda _part: None
    #: chunks that could not be read, appended by ``Array.read``; they come back with the answer
    failures: list[ChunkFailure] = field(default_factory=list)
    #: where every read of the job decodes (``Array.read(..., executor=)``): the pool's own
    #: decode threads, so the pool that bounds the jobs also bounds their decoding; None (a
    #: context made by hand, in a test) leaves it to zarrlib's default
    executor: ThreadPoolExecutor | None = None


@dataclass(frozen=True)
class Job(Generic[T]):
    work: Callable[[Context], T]
    #: what the status bar calls it ("plane 5 of /img")
    label: str = ""


def read_job(array: Array, selection: tuple[Any, ...], *, label: str = "",
             decode: Callable[[np.ndarray], np.ndarray] | None = None) -> Job[np.ndarray]:
    """A plain read of ``selection``, with ``decode`` (CF masking and unpacking) applied on the worker."""
    def work(ctx: Context) -> np.ndarray:
        data = array.read(selection, cancel=ctx.cancel, cache=ctx.cache, progress=ctx.progress,
                          executor=ctx.executor, failures=ctx.failures)
        return data if decode is None else decode(data)

    return Job(work, label)


def call_job(fn: Callable[[], T], *, label: str = "") -> Job[T]:
    """A job of a plain call that takes no context (opening a store, listing a page, parsing
    metadata): it cannot stop early, but a newer job on its lane still makes its answer stale.
    It is for calls that read no array data: without the context's executor a read would decode
    on zarrlib's process-wide pool, not on the threads of the pool that runs the job."""
    return Job(lambda _ctx: fn(), label)
