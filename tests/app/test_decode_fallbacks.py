"""What the app tests' fallback check counts (``conftest.reads_decode_on_their_jobs_executor``):
a read in a job of a worker pool that does not pass its context's executor on, never the
test's own read on its own thread, nor a job's read that passes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Answer, Job, Lane, WorkerPool, call_job


def test_only_a_jobs_read_without_its_contexts_executor_is_counted(
        reads_decode_on_their_jobs_executor: list[Any], tmp_path: Path) -> None:
    fallbacks = reads_decode_on_their_jobs_executor
    zarr.open_array(tmp_path / "a.zarr", mode="w", shape=(8,), chunks=(2,), dtype="i4")[...] = np.arange(8)
    arr = zl.open(tmp_path / "a.zarr")
    assert isinstance(arr, zl.Array)
    np.testing.assert_array_equal(arr.read(), np.arange(8))  # the test's own read: not the app's
    assert fallbacks == []
    pool = WorkerPool(threads=1)
    answers: list[Answer[Any]] = []
    try:
        with_context: Lane[Any] = Lane(pool, name="with its context's executor")
        with_context.submit(Job(lambda ctx: arr.read(executor=ctx.executor), "read"), answers.append)
        assert pool.wait_until_idle(30)
        assert fallbacks == []
        without: Lane[Any] = Lane(pool, name="without it")
        without.submit(call_job(arr.read, label="read"), answers.append)
        assert pool.wait_until_idle(30)
    finally:
        pool.close()
    assert [a.error for a in answers] == [None, None]
    assert [f.thread for f in fallbacks] == [f"{pool.name}-0"]
    fallbacks.clear()  # made on purpose: not this test's failure
