"""Reads on a lane without Qt: the newest read wins, stale ones stop early, the pool's cache
serves revisits, and reading ahead warms it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import zarr

import zarrview.zarrlib as zl
from store_wrappers import CountingStore, is_chunk_key
from zarrview.scheduling import Answer, Lane, Prefetch, Warm, WorkerPool, read_job
from zarrview.zarrlib.storage import LocalStore


def slow_store(root: Path, delay: float) -> CountingStore:
    """A local store whose chunk reads each take ``delay`` seconds, counted."""
    return CountingStore(LocalStore(root), latency=delay, slow=is_chunk_key)


def test_newest_request_wins_and_stale_is_cancelled(tmp_path: Path) -> None:
    data = np.arange(20 * 64 * 64, dtype="u2").reshape(20, 64, 64)
    a = zarr.create_array(tmp_path / "a", shape=data.shape, chunks=(1, 8, 8), dtype="u2")
    a[...] = data
    store = slow_store(tmp_path / "a", delay=0.01)
    arr = zl.open(store)
    pool = WorkerPool()
    lane: Lane[np.ndarray] = Lane(pool)
    results: list[Answer[np.ndarray]] = []
    lock = threading.Lock()

    def on_done(r: Answer[np.ndarray]) -> None:
        with lock:
            results.append(r)

    for z in range(5):  # five quick slider steps: 64 chunks each at 10 ms would take 3 s
        lane.submit(read_job(arr, (z, slice(None), slice(None)), label=str(z)), on_done)
        time.sleep(0.02)
    assert pool.wait_until_idle(20)
    # every job is answered once; only the newest with data, the stale ones as cancelled
    assert sorted(r.label for r in results) == ["0", "1", "2", "3", "4"]
    [served] = [r for r in results if not r.cancelled]
    assert served.label == "4" and all(r.value is None for r in results if r.cancelled)
    np.testing.assert_array_equal(served.value, data[4])
    assert store.chunk_reads() < 2 * 64  # the stale planes stopped early
    pool.close()


def test_errors_are_results_not_crashes(tmp_path: Path) -> None:
    a = zarr.create_array(tmp_path / "b", shape=(4, 4), chunks=(2, 2), dtype="i4", compressors=[zarr.codecs.ZstdCodec()])
    a[...] = 1
    (tmp_path / "b" / "c" / "0" / "0").write_bytes(b"garbage")
    pool = WorkerPool()
    lane: Lane[np.ndarray] = Lane(pool)
    got: list[Answer[np.ndarray]] = []
    arr = zl.open(tmp_path / "b")
    lane.submit(read_job(arr, (slice(None), slice(None))), got.append)
    assert pool.wait_until_idle(10)
    # a corrupt chunk is a failure of that chunk: the rest of the plane still arrives
    assert got and got[0].error is None and got[0].value is not None
    expected = np.ones((4, 4), "i4")
    expected[:2, :2] = 0  # the fill value
    np.testing.assert_array_equal(got[0].value, expected)
    [failure] = got[0].failures
    assert failure.key == "c/0/0" and failure.box == ((0, 2), (0, 2))
    assert "c/0/0" in failure.message and "zstd" in failure.message
    # a read that cannot be served at all is an error answer
    lane.submit(read_job(arr, (slice(None), 9)), got.append)
    assert pool.wait_until_idle(10)
    assert got[1].value is None and isinstance(got[1].error, zl.IndexingError)
    pool.close()


def test_cache_makes_revisits_free(tmp_path: Path) -> None:
    data = np.arange(4 * 32 * 32, dtype="f4").reshape(4, 32, 32)
    a = zarr.create_array(tmp_path / "c", shape=data.shape, chunks=(1, 16, 16), dtype="f4")
    a[...] = data
    store = slow_store(tmp_path / "c", delay=0.0)
    arr = zl.open(store)
    pool = WorkerPool(cache_bytes=1 << 20)
    lane: Lane[np.ndarray] = Lane(pool)
    got: list[Answer[np.ndarray]] = []
    for z in (0, 1, 0):
        lane.submit(read_job(arr, (z, slice(None), slice(None))), got.append)
        assert pool.wait_until_idle(10)
    assert store.chunk_reads() == 8
    np.testing.assert_array_equal(got[-1].value, data[0])
    pool.close()


def test_prefetch_warms_the_cache_for_later_reads(tmp_path: Path) -> None:
    data = np.arange(5 * 32 * 32, dtype="u2").reshape(5, 32, 32)
    a = zarr.create_array(tmp_path / "p", shape=data.shape, chunks=(1, 16, 16), dtype="u2")
    a[...] = data
    store = slow_store(tmp_path / "p", delay=0.0)
    arr = zl.open(store)
    pool = WorkerPool()
    ahead = Prefetch(pool)
    ahead.warm([Warm(arr, (z, slice(None), slice(None))) for z in (1, 2)])
    assert pool.wait_until_idle(10)
    assert ahead.warmed == 2 and store.chunk_reads() == 8
    got: list[Answer[np.ndarray]] = []
    Lane(pool).submit(read_job(arr, (2, slice(None), slice(None))), got.append)
    assert pool.wait_until_idle(10)
    assert store.chunk_reads() == 8  # served from the prefetched chunks
    np.testing.assert_array_equal(got[0].value, data[2])
    pool.close()


def test_stopping_the_prefetch_ends_it_between_reads(tmp_path: Path) -> None:
    data = np.zeros((20, 32, 32), dtype="u2")
    a = zarr.create_array(tmp_path / "q", shape=data.shape, chunks=(1, 16, 16), dtype="u2")
    a[...] = data
    store = slow_store(tmp_path / "q", delay=0.01)
    arr = zl.open(store)
    pool = WorkerPool()
    ahead = Prefetch(pool)
    ahead.warm([Warm(arr, (z, slice(None), slice(None))) for z in range(20)])
    time.sleep(0.05)
    ahead.stop()  # something newer is asked for: reading ahead yields
    assert pool.wait_until_idle(10)
    assert ahead.warmed < 20 and store.chunk_reads() < 80
    pool.close()
