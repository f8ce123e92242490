"""A read uses at most ``MAX_READ_WORKERS`` threads of a larger pool, and still reads right.

On many cores more workers than that only queue for the GIL (issue 15, bench/README.md), so
the cap is behaviour worth keeping: it is checked here by which threads did the work, and the
result against zarr-python's own data.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib import decode_pool
from zarrview.zarrlib.decode_pool import MAX_READ_WORKERS, run_blocks


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
