"""The reader's promises: it touches only the chunks a selection needs, caches decoded
chunks within a byte budget, reads shard indexes once, and stops when cancelled."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore


DATA = np.arange(60 * 70, dtype="i4").reshape(60, 70)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("reader")
    a = zarr.create_array(root / "chunked", shape=DATA.shape, chunks=(10, 10), dtype="i4", zarr_format=3)
    a[...] = DATA
    b = zarr.create_array(root / "sharded", shape=DATA.shape, chunks=(10, 10), shards=(20, 30), dtype="i4")
    b[...] = DATA
    c = zarr.create_array(root / "v2", shape=DATA.shape, chunks=(10, 10), dtype="i4", zarr_format=2)
    c[...] = DATA
    return {"chunked": root / "chunked", "sharded": root / "sharded", "v2": root / "v2"}


def _expected_chunks(rows: slice, cols: slice) -> set[tuple[int, int]]:
    """Chunk indices holding selected elements, computed from numpy index arrays."""
    r = np.arange(60)[rows] // 10
    c = np.arange(70)[cols] // 10
    return set(itertools.product(np.unique(r).tolist(), np.unique(c).tolist()))


SELECTIONS = [
    (slice(0, 10), slice(0, 10)),
    (slice(5, 25), slice(33, 41)),
    (slice(None, None, 25), slice(3, 68, 30)),
    (slice(59, 60), slice(None)),
]


@pytest.mark.parametrize("sel", SELECTIONS, ids=str)
def test_touches_only_needed_chunks(stores: dict[str, Path], sel: tuple[slice, slice]) -> None:
    store = CountingStore(LocalStore(stores["chunked"]))
    arr = zl.open(store)
    np.testing.assert_array_equal(arr[sel], DATA[sel])
    touched = {tuple(int(x) for x in k.split("/")[1:]) for k in store.chunk_keys()}
    assert touched == _expected_chunks(*sel)
    assert len(store.chunk_keys()) == len(touched)  # each chunk read once


@pytest.mark.parametrize("sel", SELECTIONS, ids=str)
def test_sharded_reads_index_once_and_only_needed_inner_chunks(stores: dict[str, Path], sel: tuple[slice, slice]) -> None:
    store = CountingStore(LocalStore(stores["sharded"]))
    arr = zl.open(store)
    assert arr.chunks == (10, 10) and arr.shards == (20, 30)
    np.testing.assert_array_equal(arr[sel], DATA[sel])
    need = _expected_chunks(*sel)
    shards = {(r // 2, c // 3) for r, c in need}
    index_reads = [r for r in store.requests if r.start is not None and r.start < 0]
    chunk_reads = [r for r in store.requests if r.start is not None and r.start >= 0]
    assert sorted({r.key for r in index_reads}) == sorted(f"c/{a}/{b}" for a, b in shards)
    assert len(index_reads) == len(shards)
    # byte-adjacent inner chunks may come in one read, but exactly the needed bytes are read
    assert sum(r.stop - r.start for r in chunk_reads) == sum(_inner_nbytes(stores["sharded"], rc) for rc in need)
    assert len(chunk_reads) <= len(need)
    store.reset()
    arr[sel]
    assert not [r for r in store.requests if r.start is not None and r.start < 0]  # indexes cached


def _inner_nbytes(root: Path, chunk: tuple[int, int]) -> int:
    """Stored size of an inner chunk, from the shard's index (uint64 pairs + crc32c, at the end)."""
    r, c = chunk
    shard = (root / "c" / str(r // 2) / str(c // 3)).read_bytes()
    index = np.frombuffer(shard[-(16 * 6 + 4):-4], "<u8").reshape(2, 3, 2)
    return int(index[r % 2, c % 3, 1])


@pytest.mark.parametrize("name", ["chunked", "sharded", "v2"])
def test_cache_serves_repeat_reads_without_store_access(stores: dict[str, Path], name: str) -> None:
    store = CountingStore(LocalStore(stores[name]))
    arr = zl.open(store)
    cache = zl.ChunkCache(max_bytes=1 << 20)
    first = arr.read((slice(0, 30), slice(0, 30)), cache=cache)
    n = len(store.chunk_keys())
    assert n > 0 and len(cache) > 0
    second = arr.read((slice(0, 30), slice(0, 30)), cache=cache)
    assert len(store.chunk_keys()) == n
    np.testing.assert_array_equal(first, DATA[:30, :30])
    np.testing.assert_array_equal(second, DATA[:30, :30])


def test_cache_respects_byte_budget(stores: dict[str, Path]) -> None:
    arr = zl.open(stores["chunked"])
    chunk_bytes = 10 * 10 * 4
    cache = zl.ChunkCache(max_bytes=5 * chunk_bytes)
    np.testing.assert_array_equal(arr.read(..., cache=cache), DATA)
    assert len(cache) == 5 and cache.nbytes <= cache.max_bytes
    cache.max_bytes = 2 * chunk_bytes
    assert len(cache) == 2


def test_cancel_stops_between_chunks(stores: dict[str, Path]) -> None:
    store = CountingStore(LocalStore(stores["chunked"]))
    arr = zl.open(store)
    token = zl.CancelToken()
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        token.cancel()

    with pytest.raises(zl.ReadCancelled):
        arr.read(..., cancel=token, progress=progress)
    assert 1 <= len(store.chunk_keys()) < 42


@pytest.mark.parametrize("name", ["chunked", "sharded", "v2"])
@pytest.mark.parametrize("workers", [1, 2, 5])
def test_progress_counts_every_chunk_in_order(stores: dict[str, Path], name: str, workers: int) -> None:
    """Progress comes in batches (one report per block a worker decodes), always rising, and
    ends at the number of chunks the selection touches, counted here from numpy indices."""
    from concurrent.futures import ThreadPoolExecutor

    arr = zl.open(stores[name])
    sel = (slice(5, 55), slice(3, 68))
    total = len(_expected_chunks(*sel))
    seen: list[tuple[int, int]] = []
    with ThreadPoolExecutor(workers) as pool:
        got = arr.read(sel, progress=lambda d, t: seen.append((d, t)), executor=pool)
    np.testing.assert_array_equal(got, DATA[sel])
    assert seen and seen[-1] == (total, total)
    assert all(t == total for _, t in seen)
    assert [d for d, _ in seen] == sorted({d for d, _ in seen}), seen  # strictly rising


def test_progress_counts_cached_chunks(stores: dict[str, Path]) -> None:
    arr = zl.open(stores["chunked"])
    cache = zl.ChunkCache()
    arr.read((slice(0, 20), slice(0, 20)), cache=cache)  # 4 chunks cached
    seen: list[tuple[int, int]] = []
    arr.read((slice(0, 30), slice(0, 20)), cache=cache, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (4, 6) and seen[-1] == (6, 6)


def test_pre_cancelled_read_touches_nothing(stores: dict[str, Path]) -> None:
    store = CountingStore(LocalStore(stores["chunked"]))
    arr = zl.open(store)
    token = zl.CancelToken()
    token.cancel()
    with pytest.raises(zl.ReadCancelled):
        arr.read(..., cancel=token)
    assert store.chunk_keys() == []


@pytest.mark.parametrize("inner", ["bytes", "bytes+crc32c", "bytes+gzip"])
def test_cached_chunks_do_not_alias_the_read_buffer(tmp_path: Path, inner: str) -> None:
    """Found by the fuzzer: adjacent inner chunks are read in one run into a reused buffer, and
    codecs that return views of their input (bytes, crc32c) cached views of it, which the next
    run overwrote: the second read through the cache had 48 of 80 values wrong."""
    from zarr.codecs import BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec

    codecs = {"bytes": [BytesCodec()], "bytes+crc32c": [BytesCodec(), Crc32cCodec()],
              "bytes+gzip": [BytesCodec(), GzipCodec()]}[inner]
    a = zarr.create_array(tmp_path / "x.zarr", shape=(8, 10), chunks=(4, 6), dtype="u2", compressors=None,
                          serializer=ShardingCodec(chunk_shape=(2, 3), codecs=codecs))
    values = np.arange(80, dtype="u2").reshape(8, 10)
    a[...] = values
    arr = zl.open(tmp_path / "x.zarr")
    cache = zl.ChunkCache()
    for _ in range(3):
        np.testing.assert_array_equal(arr.read(..., cache=cache), values)
    assert cache.hits > 0


@pytest.mark.parametrize("kind", ["chunked", "sharded", "v2"])
def test_a_read_fills_the_array_it_is_given(stores: dict[str, Path], kind: str) -> None:
    arr = zl.open(stores[kind])
    assert isinstance(arr, zl.Array)
    out = np.full((25, 33), -7, dtype="i4")
    for rows in (slice(3, 28), slice(30, 55)):  # the same memory, read twice: every element is rewritten
        got = arr.read((rows, slice(11, 44)), out=out)
        assert np.shares_memory(got, out)
        np.testing.assert_array_equal(out, zarr.open_array(stores[kind], mode="r")[rows, 11:44])
    row = np.empty((33,), dtype="i4")
    np.testing.assert_array_equal(arr.read((5, slice(11, 44)), out=row), DATA[5, 11:44])  # an integer index drops its axis
    for bad in (np.empty((25, 32), "i4"), np.empty((25, 33), "i8"), np.empty((33, 25), "i4").T):
        with pytest.raises(ValueError, match="out must be a writeable C-contiguous"):
            arr.read((slice(3, 28), slice(11, 44)), out=bad)
