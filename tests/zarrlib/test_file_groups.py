"""Chunk files read a group at a time through io_uring (storage/uring.py, file_groups.py; issue 15).

The values are zarr-python's; the system calls are counted: with io_uring a group of files costs
one ``io_uring_enter`` and no ``os`` call, without it each file costs ``os.open``, ``os.preadv``
and ``os.close`` (the same test turned off proves the count can fail). Files that are not what a
chunk should be get the same failures as on the file-by-file path, named the same way.
"""

from __future__ import annotations

import gc
import json
import os
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
from _read_oracle import assert_reads_like_zarr
from zarr.codecs import GzipCodec, ZstdCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib import file_groups
from zarrview.zarrlib.decode_pool import guided_blocks, read_workers, workers_of
from zarrview.zarrlib.storage import uring
from zarrview.zarrlib.storage.local import LocalStore

pytestmark = [pytest.mark.skipif(uring.for_thread() is None, reason="io_uring is not usable here"),
              pytest.mark.timeout(60)]

RNG = np.random.default_rng(1515)
DATA = (RNG.integers(0, 50, (5, 40, 36)) * RNG.integers(1, 4, (5, 40, 36))).astype("<u2")
SELECTIONS: list[Any] = [
    (slice(None), slice(None), slice(None)),
    (slice(None), 17, slice(None)),
    (2, slice(3, 37), slice(5, 31)),
]


def _stored() -> np.ndarray:
    """``DATA`` with four chunks of zeros (never written: the fill value)."""
    data = DATA.copy()
    data[1, :16, :16] = 0
    return data


def _write(path: Path, kind: str) -> Path:
    """An array "a" of ``DATA`` in chunks of (1, 8, 8), one file each; chunks of zeros are not
    written (the fill value)."""
    data = _stored()
    if kind == "v3_zstd":
        a = zarr.create_array(path, shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype, zarr_format=3,
                              compressors=[ZstdCodec(level=1)], fill_value=0)
    elif kind == "v3_gzip":
        a = zarr.create_array(path, shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype, zarr_format=3,
                              compressors=[GzipCodec(level=1)], fill_value=0)
    elif kind == "v2_blosc":
        a = zarr.create_array(path, shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype, zarr_format=2,
                              compressors=numcodecs.Blosc("zstd", 1, numcodecs.Blosc.SHUFFLE), fill_value=0)
    else:  # v2, nested keys ("/" separator declared)
        a = zarr.create_array(path, shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype, zarr_format=2,
                              compressors=numcodecs.Zstd(level=1), fill_value=0, chunk_key_encoding={
                                  "name": "v2", "separator": "/"})
    a[...] = data
    return path


@pytest.fixture(params=["v3_zstd", "v3_gzip", "v2_blosc", "v2_nested"])
def arr(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return _write(tmp_path / "a.zarr", request.param)


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("cached", [False, True], ids=["plain", "cached"])
@pytest.mark.parametrize("sel", SELECTIONS)
def test_values_equal_zarr_python(arr: Path, sel: Any, workers: int, cached: bool) -> None:
    assert_reads_like_zarr(arr, sel, workers, cached)


@pytest.mark.parametrize("uring_on", [True, False], ids=["uring", "os"])
def test_a_group_costs_one_call_and_no_os_call(arr: Path, os_calls: Counter[str], enters: list[int],
                                               monkeypatch: pytest.MonkeyPatch, uring_on: bool) -> None:
    """An XZ section of 5 x 5 chunk files, one of them never written, read by one worker."""
    monkeypatch.setenv("ZARRVIEW_NO_URING", "" if uring_on else "1")
    a = zl.open(arr)
    a[0, 0, 0]  # metadata read here
    gc.collect()
    os_calls.clear()
    enters.clear()
    pool = ThreadPoolExecutor(1)
    got = a.read((slice(None), 5, slice(None)), executor=pool)
    assert np.array_equal(got, zarr.open_array(arr, mode="r")[:, 5, :])
    files = 5 * 5 - 2  # two chunks of zeros never written
    if uring_on:  # one call per block of the read (a worker's run of chunks), each file three requests
        blocks = guided_blocks(range(25), read_workers(25, workers_of(pool), 25, 128))
        assert sum(os_calls.values()) == 0, os_calls
        assert enters == [3 * len(b) for b in blocks], enters
    else:
        assert os_calls["open"] == files + 2 and os_calls["preadv"] + os_calls["pread"] == os_calls["close"] == files, os_calls
        assert enters == []


def _expected_calls(units: int, pool: ThreadPoolExecutor, chunk_bytes: int) -> list[int]:
    """Requests per call: each block of the read in groups of at most ``GROUP_BYTES`` of regions
    and ``MAX_FILES`` files, three requests a file."""
    cap = min(uring.MAX_FILES, file_groups.GROUP_BYTES // file_groups.region(chunk_bytes, 1 << 40))
    calls = []
    for block in guided_blocks(range(units), read_workers(units, workers_of(pool), units, chunk_bytes)):
        n = len(block)
        calls += [3 * min(cap, n - k) for k in range(0, n, cap)]
    return calls


@pytest.mark.parametrize("workers", [1, 4])
def test_groups_are_bounded_by_the_buffer_and_the_ring(tmp_path: Path, enters: list[int], workers: int) -> None:
    """Chunks of 16 KiB decoded: groups of up to ``MAX_FILES`` files; of 2 MiB: one file a call."""
    small = zarr.create_array(tmp_path / "s", shape=(600, 8192), chunks=(1, 8192), dtype="<u2", zarr_format=3,
                              compressors=[ZstdCodec(level=1)])
    small[...] = np.arange(600 * 8192, dtype="<u2").reshape(600, 8192)
    big = zarr.create_array(tmp_path / "b", shape=(5, 1024, 1024), chunks=(1, 1024, 1024), dtype="<u2",
                            zarr_format=3, compressors=[ZstdCodec(level=1)])
    big[...] = 7
    pool = ThreadPoolExecutor(workers)
    a = zl.open(tmp_path / "s")
    a[0, 0]
    enters.clear()
    assert np.array_equal(a.read((slice(None), 5), executor=pool), np.asarray(small[:, 5]))
    assert sorted(enters) == sorted(_expected_calls(600, pool, 16384)) and max(enters) == 3 * uring.MAX_FILES
    b = zl.open(tmp_path / "b")
    b[0, 0, 0]
    enters.clear()
    assert np.array_equal(b.read((slice(None), 3), executor=pool), np.asarray(big[:, 3]))
    assert enters == [3] * 5


def _both_ways(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[np.ndarray, list[tuple[str, str]]]]:
    """The whole array read through io_uring and through ``os``: values and failures."""
    seen = []
    for off in ("", "1"):
        monkeypatch.setenv("ZARRVIEW_NO_URING", off)
        failures: list[Any] = []
        out = zl.open(root).read(..., failures=failures, executor=ThreadPoolExecutor(2))
        seen.append((out, sorted((f.key, f.message) for f in failures)))
    return seen


@pytest.mark.parametrize("bad", ["fifo", "dev_zero", "directory", "empty", "too_large", "dangling", "garbage"])
def test_bad_files_fail_as_on_the_os_path(arr: Path, monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    meta = zl.open(arr).meta
    key = meta.stored_key((3, 2, 1))
    path = arr / key
    path.unlink()
    if bad == "fifo":
        os.mkfifo(path)
    elif bad == "dev_zero":
        os.symlink("/dev/zero", path)
    elif bad == "directory":
        path.mkdir()
    elif bad == "empty":
        path.write_bytes(b"")
    elif bad == "too_large":  # larger than any chunk of 128 bytes may be stored: never trusted
        path.write_bytes(os.urandom(file_groups.region(128, 1 << 30) + 10))
    elif bad == "dangling":
        os.symlink("nowhere", path)
    else:
        path.write_bytes(os.urandom(90))
    (grouped, fails_grouped), (one_by_one, fails_one) = _both_ways(arr, monkeypatch)
    assert fails_grouped == fails_one
    assert np.array_equal(grouped, one_by_one)
    failed = {k for k, _ in fails_grouped}
    if bad in ("directory", "dangling"):  # no chunk there: the fill value
        assert failed == set()
        assert not grouped[3, 16:24, 8:16].any()
    else:
        assert failed == {key}, fails_grouped
        rest = np.ones(DATA.shape, bool)
        rest[3, 16:24, 8:16] = False
        assert np.array_equal(grouped[rest], _stored()[rest])


def test_undeclared_nested_keys_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """v2 chunks stored as ``0/1/2`` while the metadata declares no separator: zarr 2.x wrote such stores
    (NestedDirectoryStore). A group finds nothing under the declared spelling, and the
    per-chunk path finds the other one, once; later groups use it."""
    root = _write(tmp_path / "n.zarr", "v2_nested")
    zarray = root / ".zarray"
    meta = json.loads(zarray.read_text())
    del meta["dimension_separator"]  # as zarr 2.x wrote it: "." assumed
    zarray.write_text(json.dumps(meta))
    want = zarr.open_array(_write(tmp_path / "t.zarr", "v2_nested"), mode="r")[...]
    monkeypatch.setenv("ZARRVIEW_NO_URING", "")
    a = zl.open(root)
    for _ in range(2):
        assert np.array_equal(a.read(..., executor=ThreadPoolExecutor(2)), want)


def test_without_io_uring_files_are_read_one_by_one(arr: Path, monkeypatch: pytest.MonkeyPatch,
                                                    os_calls: Counter[str]) -> None:
    """Where io_uring is refused (seccomp, ``kernel.io_uring_disabled``) nothing changes but speed."""
    monkeypatch.setitem(uring._state, "usable", False)
    assert uring.for_thread() is None
    got = zl.open(arr).read((slice(None), 9, slice(None)), executor=ThreadPoolExecutor(1))
    assert np.array_equal(got, zarr.open_array(arr, mode="r")[:, 9, :])
    assert os_calls["open"] >= 24


def test_out_of_memory_for_a_group_reads_one_by_one(arr: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zarrview.zarrlib.storage import base

    def refuse(self: Any, n: int) -> Any:
        raise MemoryError

    from zarrview.zarrlib.batch import Stack

    real_view = Stack.view
    monkeypatch.setattr(base.Scratch, "grown", refuse)  # the per-chunk path's groups
    monkeypatch.setattr(Stack, "view", lambda self, n: refuse(self, n) if n > self.capacity  # the batched path's
                        else real_view(self, n))
    got = zl.open(arr).read(..., executor=ThreadPoolExecutor(2))
    assert np.array_equal(got, zarr.open_array(arr, mode="r")[...])


# ---- the ring itself ---------------------------------------------------------------------------

def test_read_whole_reports_each_file(tmp_path: Path) -> None:
    ring = uring.for_thread()
    assert ring is not None
    region = 1000
    files = {"a": os.urandom(999), "b": os.urandom(1), "big": os.urandom(1000), "empty": b""}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    names = ["a", "missing", "b", "big", "empty", "dir", "fifo", "a/x"]
    buf = bytearray(region * len(names))
    got = ring.read_whole([os.fsencode(tmp_path / n) for n in names], np.frombuffer(buf, np.uint8).ctypes.data,
                          region)
    L, M = uring.LEFT, uring.MISSING
    assert got == [999, M, 1, L, L, L, L, M]
    assert bytes(buf[:999]) == files["a"] and bytes(buf[2 * region:2 * region + 1]) == files["b"]


def test_the_rings_wrap_around(tmp_path: Path) -> None:
    """Hundreds of calls of every size: the places in both rings wrap many times."""
    ring = uring.Uring()
    try:
        blobs = [os.urandom(int(n)) for n in RNG.integers(1, 500, 70)]
        for i, b in enumerate(blobs):
            (tmp_path / str(i)).write_bytes(b)
        for _ in range(300):
            pick = RNG.choice(len(blobs), int(RNG.integers(1, uring.MAX_FILES + 1)))
            buf = bytearray(512 * len(pick))
            got = ring.read_whole([os.fsencode(tmp_path / str(i)) for i in pick],
                                  np.frombuffer(buf, np.uint8).ctypes.data, 512)
            assert got == [len(blobs[i]) for i in pick]
            assert all(bytes(buf[k * 512:k * 512 + len(blobs[i])]) == blobs[i] for k, i in enumerate(pick))
    finally:
        ring.close()


def test_a_thread_ring_goes_with_its_thread() -> None:
    made: list[int] = []

    def use() -> None:
        ring = uring.for_thread()
        assert ring is not None
        made.append(ring.fd)

    t = threading.Thread(target=use)
    t.start()
    t.join()
    gc.collect()
    fd = made[0]
    assert not os.path.exists(f"/proc/self/fd/{fd}") or "io_uring" not in os.readlink(f"/proc/self/fd/{fd}")


def test_a_store_outside_linux_or_held_reads_one_by_one(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    assert store.reads_files()
    from zarrview.zarrlib.storage.held_io import HeldIO, _calls
    if _calls is not None:
        store._held = HeldIO()
        assert not store.reads_files() and store.read_files(["x"], bytearray(10), 10) is None
