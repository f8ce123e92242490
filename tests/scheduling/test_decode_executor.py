"""The worker pool owns the executor its jobs' reads decode on: every job's ``Context`` carries
it, a plain read and a computed job (a projection) decode on its threads, and closing the pool
shuts down the executor it made (one it was given stays the giver's)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from zarr.codecs import ZstdCodec

import zarrview.zarrlib as zl
from store_wrappers import GATE_SECONDS, CountingStore
from zarrview.scheduling import Answer, Context, Job, Lane, WorkerPool, read_job
from zarrview.viewing.image.state import initial_state
from zarrview.viewing.projection.view import request
from zarrview.zarrlib import CancelToken
from zarrview.zarrlib.decode_pool import cpus, workers_of
from zarrview.zarrlib.storage import LocalStore
from zarrview.zarrlib.storage.base import ByteRequest, OnEach, Scratch

#: decode threads of the executor the tests give the pool: more than a 2-core machine has, so a
#: read of enough chunks hands blocks to it wherever the tests run
WORKERS = 4


class RecordingExecutor(ThreadPoolExecutor):
    """A decode executor that records how many tasks reads hand it and the threads that run them."""

    def __init__(self, workers: int, name: str) -> None:
        super().__init__(workers, thread_name_prefix=f"{name}-decode")
        self.submitted = 0
        self.ran: list[str] = []
        self.lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self.lock:
            self.submitted += 1

        def run() -> Any:
            with self.lock:
                self.ran.append(threading.current_thread().name)
            return fn(*args, **kwargs)

        return super().submit(run)


class HandOff(CountingStore):
    """A local store that names the thread of every chunk request, and holds any thread but a
    decode thread at its request until a decode thread has asked for chunks too: however busy
    the machine, a read that hands blocks to its executor has some of them read there (the
    thread that reads a block decodes it)."""

    def __init__(self, root: Path) -> None:
        super().__init__(LocalStore(root))
        self.decoder_asked = threading.Event()
        self.threads: list[str] = []
        self.lock = threading.Lock()

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        name = threading.current_thread().name
        with self.lock:
            self.threads.append(name)
        if "-decode" in name:
            self.decoder_asked.set()
        else:
            self.decoder_asked.wait(GATE_SECONDS)
        super().get_ranges(reqs, on_each, cancel, scratch)


@pytest.fixture
def executor() -> Iterator[RecordingExecutor]:
    ex = RecordingExecutor(WORKERS, "viewer")
    yield ex
    ex.shutdown(wait=True)


def written(path: Path, data: np.ndarray, chunks: tuple[int, ...], **names: Any) -> Path:
    """``data`` written by zarr-python, zstd-compressed, in ``chunks``."""
    z = zarr.create_array(path, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          compressors=[ZstdCodec()], **names)
    z[...] = data
    return path


def test_every_job_gets_the_pools_decode_executor(executor: RecordingExecutor) -> None:
    pool = WorkerPool(threads=2, name="viewer", decode=executor)
    got: list[Answer[ThreadPoolExecutor | None]] = []
    lane: Lane[ThreadPoolExecutor | None] = Lane(pool)
    lane.submit(Job(lambda ctx: ctx.executor, "which executor"), got.append)
    assert pool.wait_until_idle(30)
    assert len(got) == 1 and got[0].value is executor is pool.decode
    pool.close()


def test_a_read_job_decodes_on_the_pools_threads(tmp_path: Path, executor: RecordingExecutor) -> None:
    # 64 chunks of 32 KiB: worth three threads, the job's worker and two of the executor's
    data = np.arange(512 * 512, dtype="f8").reshape(512, 512) * 0.5
    store = HandOff(written(tmp_path / "a.zarr", data, (64, 64)))
    arr = zl.open(store)
    assert isinstance(arr, zl.Array)
    pool = WorkerPool(threads=2, name="viewer", decode=executor)
    got: list[Answer[np.ndarray]] = []
    lane: Lane[np.ndarray] = Lane(pool)
    try:
        lane.submit(read_job(arr, (slice(None), slice(None)), label="plane"), got.append)
        assert pool.wait_until_idle(60)
    finally:
        pool.close()
    assert len(got) == 1 and got[0].error is None and not got[0].failures
    np.testing.assert_array_equal(got[0].value, np.asarray(zarr.open_array(tmp_path / "a.zarr", mode="r")[...]))
    assert executor.submitted >= 1 and executor.ran
    assert all(name.startswith("viewer-decode") for name in executor.ran)
    # every chunk was read (and decoded) by the job's worker or the pool's decode threads, some by the latter
    assert store.threads and all(name.startswith("viewer-") for name in store.threads)
    assert any(name.startswith("viewer-decode") for name in store.threads)


def test_a_projection_decodes_on_the_pools_threads(tmp_path: Path, executor: RecordingExecutor) -> None:
    rng = np.random.default_rng(3)
    data = rng.normal(size=(3, 512, 512))  # each slab one visit of 64 chunks of 32 KiB
    store = HandOff(written(tmp_path / "p.zarr", data, (1, 64, 64), dimension_names=("z", "y", "x")))
    arr = zl.open(store)
    assert isinstance(arr, zl.Array)
    pool = WorkerPool(threads=2, name="viewer", decode=executor)
    req = request(initial_state(arr), "z", "max")
    got: list[Answer[Any]] = []
    lane: Lane[Any] = Lane(pool)
    try:
        lane.submit(req.job, got.append)
        assert pool.wait_until_idle(60)
    finally:
        pool.close()
    assert len(got) == 1 and got[0].error is None
    np.testing.assert_array_equal(got[0].value, np.asarray(zarr.open_array(tmp_path / "p.zarr", mode="r")[...]).max(axis=0))
    assert executor.submitted >= 3  # every slab's visit handed blocks to the executor
    assert executor.ran and all(name.startswith("viewer-decode") for name in executor.ran)
    assert any(name.startswith("viewer-decode") for name in store.threads)


def test_the_pool_makes_its_executor_for_the_usable_cores_and_closing_shuts_it_down() -> None:
    pool = WorkerPool(threads=1, name="own")
    assert workers_of(pool.decode) == (len(cpus()) or 2)
    assert pool.decode.submit(lambda: threading.current_thread().name).result(30).startswith("own-decode")
    pool.close()
    with pytest.raises(RuntimeError):
        pool.decode.submit(lambda: None)


def test_closing_the_pool_leaves_a_given_executor_to_its_giver(executor: RecordingExecutor) -> None:
    pool = WorkerPool(threads=1, name="viewer", decode=executor)
    pool.close()
    assert executor.submit(lambda: 7).result(30) == 7  # still the test's, until the fixture shuts it down


def test_a_context_made_by_hand_leaves_decoding_to_zarrlib(tmp_path: Path) -> None:
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    arr = zl.open(written(tmp_path / "h.zarr", data, (16, 16)))
    assert isinstance(arr, zl.Array)
    ctx = Context(CancelToken(), zl.ChunkCache(1 << 20))
    assert ctx.executor is None
    np.testing.assert_array_equal(read_job(arr, (slice(None), slice(None))).work(ctx), data)
