"""A read uses at most ``MAX_READ_WORKERS`` threads of a larger pool, fewer where its chunks are
few or small, and still reads right.

On many cores more workers than a read has work for only queue for the GIL or wake up for
nothing (docs/performance.md), so the counts are behaviour worth keeping: they are
checked here by which threads did the work, and results against zarr-python's own data.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib import decode_pool
from zarrview.zarrlib.decode_pool import MAX_READ_WORKERS, read_workers, run_blocks


def test_a_read_runs_on_at_most_the_cap_of_a_larger_pool() -> None:
    seen: set[int] = set()
    gate = threading.Barrier(MAX_READ_WORKERS, timeout=10)  # every capped worker gets going at once
    lock = threading.Lock()

    def work(block: object) -> None:
        with lock:
            first = threading.get_ident() not in seen
            seen.add(threading.get_ident())
        if first:
            gate.wait()

    with ThreadPoolExecutor(MAX_READ_WORKERS * 2) as pool:
        run_blocks(list(range(MAX_READ_WORKERS * 40)), work, pool)
    assert len(seen) == MAX_READ_WORKERS


def test_a_smaller_pool_is_used_whole() -> None:
    seen: set[int] = set()
    with ThreadPoolExecutor(2) as pool:
        run_blocks(list(range(200)), lambda block: seen.add(threading.get_ident()), pool)
    assert 1 <= len(seen) <= 2


def test_capped_reads_return_zarr_pythons_data(tmp_path: Path, monkeypatch) -> None:
    data = np.arange(24 * 40 * 40, dtype="<u2").reshape(24, 40, 40)
    z = zarr.create_array(tmp_path / "a.zarr", shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype)
    z[...] = data
    monkeypatch.setattr(decode_pool, "MAX_READ_WORKERS", 3)
    with ThreadPoolExecutor(12) as pool:
        got = zl.open(tmp_path / "a.zarr").reader.read((slice(None), 17, slice(None)), executor=pool)
    np.testing.assert_array_equal(got, zarr.open_array(tmp_path / "a.zarr", mode="r")[:, 17, :])


def test_workers_grow_with_the_chunk_size_and_shrink_with_the_work() -> None:
    kib = 1 << 10
    many = 10_000
    assert read_workers(many, 64, many, 128 * kib) == 6
    assert read_workers(many, 64, many, 512 * kib) == 12
    assert read_workers(many, 64, many, 64 << 20) == MAX_READ_WORKERS
    assert read_workers(many, 64, many, 1 * kib) == 2  # tiny chunks: GIL-bound, but two overlap I/O
    assert read_workers(9, 64, 9, 128 * kib) == 5  # a viewport of 9 chunks: 256 KiB each at least
    assert read_workers(4, 64, 4, 512 * kib) == 4
    assert read_workers(16, 64, 16, 512 * kib) == 8  # two chunks each: 12 would take two rounds too
    assert read_workers(3, 64, 3, 4 * kib) == 1  # 12 KiB in all: not worth waking anyone
    assert read_workers(many, 3, many, 512 * kib) == 3  # never more than the pool
    assert read_workers(many, 64, many) == MAX_READ_WORKERS  # unknown sizes: only the ceiling


def test_the_caller_works_and_withdraws_what_no_worker_started() -> None:
    """A read made from the pool's only thread finishes (its tasks would wait behind itself)."""
    with ThreadPoolExecutor(1) as pool:
        def nested() -> set[int]:
            seen: set[int] = set()
            run_blocks(list(range(50)), lambda block: seen.add(threading.get_ident()), pool)
            return seen

        assert pool.submit(nested).result(timeout=10) == {pool.submit(threading.get_ident).result()}


def test_a_read_from_inside_a_busy_pool_returns_zarr_pythons_data(tmp_path: Path) -> None:
    data = np.arange(16 * 64 * 64, dtype="<u2").reshape(16, 64, 64)
    z = zarr.create_array(tmp_path / "s.zarr", shape=data.shape, chunks=(1, 8, 8), shards=(4, 32, 32),
                          dtype=data.dtype)
    z[...] = data
    reader = zl.open(tmp_path / "s.zarr").reader
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(reader.read, (slice(None), i, slice(None)), executor=pool) for i in (5, 40)]
        got = [f.result(timeout=20) for f in futures]
    want = zarr.open_array(tmp_path / "s.zarr", mode="r")
    np.testing.assert_array_equal(got[0], want[:, 5, :])
    np.testing.assert_array_equal(got[1], want[:, 40, :])
