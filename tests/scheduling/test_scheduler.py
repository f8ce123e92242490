"""The scheduling layer without Qt: newest request wins, stale ones are cancelled."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import zarr

import zarrview.zarrlib as zl
from store_wrappers import CountingStore, is_chunk_key
from zarrview.scheduling import ReadRequest, ReadResult, ReadScheduler
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
    sched = ReadScheduler()
    results: list[ReadResult] = []
    done = threading.Event()

    def on_done(r: ReadResult) -> None:
        results.append(r)
        done.set()

    for z in range(5):  # five quick slider steps: 64 chunks each at 10 ms would take 3 s
        sched.submit(ReadRequest(arr, (z, slice(None), slice(None)), z + 1), on_done)
        time.sleep(0.02)
    assert sched.wait_idle(20)
    # every request is answered once; only the newest with data, the stale ones as cancelled
    assert sorted(r.request.selection[0] for r in results) == [0, 1, 2, 3, 4]
    [served] = [r for r in results if not r.cancelled]
    assert served.request.selection[0] == 4 and all(r.data is None for r in results if r.cancelled)
    np.testing.assert_array_equal(served.data, data[4])
    assert store.chunk_reads() < 2 * 64  # the stale planes stopped early
    sched.close()


def test_errors_are_results_not_crashes(tmp_path: Path) -> None:
    a = zarr.create_array(tmp_path / "b", shape=(4, 4), chunks=(2, 2), dtype="i4", compressors=[zarr.codecs.ZstdCodec()])
    a[...] = 1
    (tmp_path / "b" / "c" / "0" / "0").write_bytes(b"garbage")
    sched = ReadScheduler()
    got: list[ReadResult] = []
    arr = zl.open(tmp_path / "b")
    sched.submit(ReadRequest(arr, (slice(None), slice(None)), 1), got.append)
    assert sched.wait_idle(10)
    # a corrupt chunk is a failure of that chunk: the rest of the plane still arrives
    assert got and got[0].error is None and got[0].data is not None
    expected = np.ones((4, 4), "i4")
    expected[:2, :2] = 0  # the fill value
    np.testing.assert_array_equal(got[0].data, expected)
    [failure] = got[0].failures
    assert failure.key == "c/0/0" and failure.box == ((0, 2), (0, 2))
    assert "c/0/0" in failure.message and "zstd" in failure.message
    # a request that cannot be served at all is an error result
    sched.submit(ReadRequest(arr, (slice(None), 9), 2), got.append)
    assert sched.wait_idle(10)
    assert got[1].data is None and isinstance(got[1].error, zl.IndexingError)
    sched.close()


def test_cache_makes_revisits_free(tmp_path: Path) -> None:
    data = np.arange(4 * 32 * 32, dtype="f4").reshape(4, 32, 32)
    a = zarr.create_array(tmp_path / "c", shape=data.shape, chunks=(1, 16, 16), dtype="f4")
    a[...] = data
    store = slow_store(tmp_path / "c", delay=0.0)
    arr = zl.open(store)
    sched = ReadScheduler(cache_bytes=1 << 20)
    got: list[ReadResult] = []
    for z in (0, 1, 0):
        sched.submit(ReadRequest(arr, (z, slice(None), slice(None)), z + 1), got.append)
        assert sched.wait_idle(10)
    assert store.chunk_reads() == 8
    np.testing.assert_array_equal(got[-1].data, data[0])
    sched.close()


def test_prefetch_warms_the_cache_and_yields_to_real_requests(tmp_path: Path) -> None:
    data = np.arange(5 * 32 * 32, dtype="u2").reshape(5, 32, 32)
    a = zarr.create_array(tmp_path / "p", shape=data.shape, chunks=(1, 16, 16), dtype="u2")
    a[...] = data
    store = slow_store(tmp_path / "p", delay=0.0)
    arr = zl.open(store)
    sched = ReadScheduler()
    sched.prefetch([ReadRequest(arr, (z, slice(None), slice(None)), 0) for z in (1, 2)])
    deadline = time.monotonic() + 10
    while sched.prefetched < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sched.prefetched == 2 and store.chunk_reads() == 8
    got: list[ReadResult] = []
    sched.submit(ReadRequest(arr, (2, slice(None), slice(None)), 1), got.append)
    assert sched.wait_idle(10)
    assert store.chunk_reads() == 8  # served from the prefetched chunks
    np.testing.assert_array_equal(got[0].data, data[2])
    sched.close()
