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
from zarrview.zarrlib.decode import ChunkDecoder
from zarrview.zarrlib.storage import open_store


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


class CountingPool(ThreadPoolExecutor):
    """A pool that counts the tasks a read hands it: one per worker the read wakes."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def test_a_batched_read_of_small_chunks_wakes_as_few_workers_as_a_local_one(tmp_path: Path) -> None:
    """A network read decodes its answers on workers too; 64 chunks of 128 bytes are not worth
    waking 16 threads for (each would only queue for the GIL), so one worker decodes them all."""
    data = np.arange(64 * 8 * 8, dtype="<u2").reshape(64, 8, 8)
    z = zarr.create_array(tmp_path / "b.zarr", shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype)
    z[...] = data
    store = open_store(str(tmp_path / "b.zarr"))
    store.prefers_batches = True  # answers arrive as from a network store: one batch, streamed
    arr = zl.open(store)
    with CountingPool(16) as pool:
        got = arr.reader.read((slice(None), 3, slice(None)), executor=pool)
    assert pool.submitted == 1
    np.testing.assert_array_equal(got, zarr.open_array(tmp_path / "b.zarr", mode="r")[:, 3, :])


def test_a_part_read_costs_what_is_decoded_of_the_chunk(tmp_path: Path) -> None:
    """Workers are sized by the bytes a chunk costs to decode: a blosc row is one block (about an
    eighth of the chunk's cost), a zstd row near a chunk's top the frame up to that row."""
    from numcodecs import Blosc

    shape = (4, 512, 512)
    row = 512 * 2
    whole = 512 * 512 * 2
    zarr.create_array(tmp_path / "bl.zarr", shape=shape, chunks=(1, 512, 512), dtype="<u2", zarr_format=2,
                      compressors=Blosc(cname="zstd", clevel=1))
    zarr.create_array(tmp_path / "zs.zarr", shape=shape, chunks=(1, 512, 512), dtype="<u2")
    blosc, zstd = (ChunkDecoder(zl.open(tmp_path / name).reader.meta, "/") for name in ("bl.zarr", "zs.zarr"))
    rows = (slice(0, 1), slice(10, 11), slice(0, 512))
    assert blosc.work_nbytes(rows, cached=False) == whole // 8
    assert zstd.work_nbytes(rows, cached=False) == 11 * row
    for decoder in (blosc, zstd):
        assert decoder.work_nbytes(rows, cached=True) == whole  # a chunk kept for later is decoded whole
        assert decoder.work_nbytes((slice(0, 1), slice(0, 512), slice(0, 512)), cached=False) == whole
    assert zstd.work_nbytes((slice(0, 1), slice(500, 501), slice(0, 512)), cached=False) == whole  # no block saved
