"""Runs of shard chunks read a group at a time through io_uring (range_groups.py,
storage/local_ranges.py; issue 15).

zarr-python writes a shard's inner chunks in Morton order, so the chunks of one plane are not
byte-adjacent and each is a run of its own. The values are zarr-python's; the system calls are
counted: with io_uring a block's runs cost one ``io_uring_enter`` and no ``os.preadv``, without
it each run costs an ``os.preadv`` (the same test turned off proves the count can fail). Shards
that are not what their index says get the same failures as on the run-by-run path.
"""

from __future__ import annotations

import gc
import itertools
import os
import shutil
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from _read_oracle import assert_reads_like_zarr
from zarr.codecs import BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, ZstdCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib.cache import ChunkCache
from zarrview.zarrlib.decode_pool import guided_blocks
from zarrview.zarrlib.storage import uring
from zarrview.zarrlib.storage.base import ByteRequest
from zarrview.zarrlib.storage.local import LocalStore

pytestmark = [pytest.mark.skipif(uring.for_thread() is None, reason="io_uring is not usable here"),
              pytest.mark.timeout(60)]

RNG = np.random.default_rng(1516)
SHAPE = (4, 64, 64)
SELECTIONS: list[Any] = [
    (slice(None), slice(None), slice(None)),
    (1, slice(None), slice(None)),
    (slice(None), 37, slice(None)),
    (2, slice(5, 61), slice(3, 50)),
]


def _stored() -> np.ndarray:
    """The values, with four chunks of zeros (empty in their shard's index: the fill value)."""
    data = (RNG.integers(0, 50, SHAPE) * RNG.integers(1, 4, SHAPE)).astype("<u2")
    data[1, :16, :16] = 0
    return data


DATA = _stored()


def _write(path: Path, codec: str, crc: bool = True) -> Path:
    """``DATA`` in shards of (2, 32, 32) holding chunks of (1, 8, 8), ``codec`` after bytes; ``crc``: the index checked
    by crc32c, as zarr-python writes it by default (False: bare, so a test can edit it)."""
    inner = [BytesCodec(), {"zstd": ZstdCodec(level=1), "gzip": GzipCodec(level=1), "crc32c": Crc32cCodec()}[codec]]
    if crc:
        a = zarr.create_array(path, shape=SHAPE, shards=(2, 32, 32), chunks=(1, 8, 8), dtype="<u2",
                              zarr_format=3, serializer=inner[0], compressors=inner[1:], fill_value=0)
    else:
        a = zarr.create_array(path, shape=SHAPE, chunks=(2, 32, 32), dtype="<u2", zarr_format=3, fill_value=0,
                              serializer=ShardingCodec(chunk_shape=(1, 8, 8), codecs=inner,
                                                       index_codecs=[BytesCodec()]), compressors=None)
    a[...] = DATA
    return path


@pytest.fixture(params=["zstd", "gzip", "crc32c"])  # crc32c: decoded chunks are views of the bytes read
def arr(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return _write(tmp_path / "a.zarr", request.param)


@pytest.mark.parametrize(("sel", "workers", "cached"), itertools.product(SELECTIONS, [1, 3], [False, True]))
def test_values_equal_zarr_python(arr: Path, sel: Any, workers: int, cached: bool) -> None:
    assert_reads_like_zarr(arr, sel, workers, cached)


@pytest.mark.parametrize("cached", [False, True], ids=["plain", "cached"])
@pytest.mark.parametrize("uring_on", [True, False], ids=["uring", "os"])
def test_a_block_of_runs_costs_one_call_and_no_preadv(arr: Path, os_calls: Counter[str], enters: list[int],
                                                      monkeypatch: pytest.MonkeyPatch, uring_on: bool,
                                                      cached: bool) -> None:
    """An XY plane of 8 x 8 chunks read by one worker once the shard indexes are known: its 64
    chunks lie apart in their shards (Morton order), 64 runs."""
    monkeypatch.setenv("ZARRVIEW_NO_URING", "" if uring_on else "1")
    a = zl.open(arr)
    sel = (2, slice(None), slice(None))
    a[sel]  # the indexes are read, and kept, here
    gc.collect()
    os_calls.clear()
    enters.clear()
    got = a.read(sel, executor=ThreadPoolExecutor(1), cache=ChunkCache(1 << 20) if cached else None)
    assert np.array_equal(got, DATA[sel])
    runs = 64
    blocks = guided_blocks(range(runs), 1)
    if uring_on:  # one call for each block of more than one run, a request each; a single run: preadv
        assert enters == [len(b) for b in blocks if len(b) > 1], enters
        assert os_calls["preadv"] == sum(len(b) == 1 for b in blocks), os_calls
    else:
        assert enters == [] and os_calls["preadv"] == runs, os_calls
    assert os_calls["open"] == os_calls["pread"] == 0, os_calls


def _both_ways(root: Path, monkeypatch: pytest.MonkeyPatch, spoil: Any = None) -> list[tuple[np.ndarray, list[Any]]]:
    """The whole array read through io_uring and run by run, each from its own copy of ``root``:
    values and failures (``spoil(copy, array)`` runs after the copy's shard indexes have been read)."""
    seen = []
    for off in ("", "1"):
        monkeypatch.setenv("ZARRVIEW_NO_URING", off)
        copy = root.with_name(f"{root.name}.{off or 0}")
        shutil.copytree(root, copy)
        failures: list[Any] = []
        a = zl.open(copy)
        if spoil is not None:
            a[...]
            spoil(copy, a)
        out = a.read(..., failures=failures, executor=ThreadPoolExecutor(2))
        seen.append((out, sorted((f.key, f.coords, f.message.replace(str(copy), "ROOT")) for f in failures)))
    return seen


SHARD = ("c", "0", "1", "0")  # z 0-1, y 32-63, x 0-31


def _truncate(copy: Path, a: Any) -> None:
    """The shard cut in half after its index was read: the chunks past the cut are short."""
    shard = copy.joinpath(*SHARD)
    os.truncate(shard, shard.stat().st_size // 2)


def _replace(copy: Path, a: Any) -> None:
    """A new file renamed over the shard: the kept descriptor still reads the old one."""
    shard = copy.joinpath(*SHARD)
    (copy / "new").write_bytes(os.urandom(shard.stat().st_size))
    os.replace(copy / "new", shard)


def _vanish(copy: Path, a: Any) -> None:
    """The shard removed and the store's kept descriptors closed: none of its chunks is stored."""
    copy.joinpath(*SHARD).unlink()
    a.store.close()


@pytest.mark.parametrize("codec", ["zstd", "gzip"])
@pytest.mark.parametrize("bad", ["past_end", "garbage", "truncated_later", "replaced_later", "vanished_later"])
def test_bad_shards_fail_as_on_the_os_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str,
                                           codec: str) -> None:
    root = _write(tmp_path / "a.zarr", codec, crc=False)
    shard = root.joinpath(*SHARD)
    raw = bytearray(shard.read_bytes())
    index = np.frombuffer(raw, "<u8", count=32 * 2, offset=len(raw) - 32 * 16).reshape(2, 4, 4, 2).copy()
    if bad == "past_end":  # chunk (0, 1, 2) of the shard said to end beyond the file
        index[0, 1, 2, 1] = len(raw)
        raw[-32 * 16:] = index.tobytes()
        shard.write_bytes(bytes(raw))
    elif bad == "garbage":
        o, n = index[0, 1, 2]
        raw[o:o + n] = os.urandom(int(n))
        shard.write_bytes(bytes(raw))
    spoil = {"truncated_later": _truncate, "replaced_later": _replace, "vanished_later": _vanish}.get(bad)
    (ranged, fails_ranged), (one_by_one, fails_one) = _both_ways(root, monkeypatch, spoil)
    assert fails_ranged == fails_one
    assert np.array_equal(ranged, one_by_one)
    rest = np.ones(SHAPE, bool)
    rest[0:2, 32:64, 0:32] = False
    assert np.array_equal(ranged[rest], DATA[rest])  # the other shards are untouched
    if bad == "replaced_later":
        assert fails_ranged == [] and np.array_equal(ranged, DATA)
    elif bad == "vanished_later":  # the fill value
        assert fails_ranged == [] and not ranged[0:2, 32:64, 0:32].any()
    else:
        assert fails_ranged and {k for k, _, _ in fails_ranged} == {"/".join(SHARD)}, fails_ranged
    if bad in ("past_end", "garbage"):  # that chunk alone
        assert [c for _, c, _ in fails_ranged] == [(0, 5, 2)], fails_ranged
        assert any(w in fails_ranged[0][2] for w in ("past the end", "zstd", "gzip", "decod")), fails_ranged


def test_without_io_uring_runs_are_read_one_by_one(arr: Path, monkeypatch: pytest.MonkeyPatch,
                                                   os_calls: Counter[str]) -> None:
    """Where io_uring is refused the reader stops asking, and nothing changes but speed."""
    monkeypatch.setitem(uring._state, "usable", False)
    assert uring.for_thread() is None and LocalStore(arr).read_ranges([ByteRequest("x", 0, 1)], bytearray(1)) is None
    a = zl.open(arr)
    got = a.read((1, slice(None), slice(None)), executor=ThreadPoolExecutor(1))
    assert np.array_equal(got, DATA[1])
    assert os_calls["preadv"] >= 60 and a._reader._ranges is False


def test_out_of_memory_for_a_group_reads_one_by_one(arr: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zarrview.zarrlib.batch import Stack
    from zarrview.zarrlib.storage import base

    def refuse(self: Any, n: int) -> Any:
        raise MemoryError

    monkeypatch.setattr(base.Scratch, "grown", refuse)
    monkeypatch.setattr(Stack, "grown", refuse)
    for cache in (None, ChunkCache(1 << 20)):
        got = zl.open(arr).read(..., executor=ThreadPoolExecutor(2), cache=cache)
        assert np.array_equal(got, DATA)


def test_store_read_ranges_reads_back_to_back_and_leaves_the_rest(tmp_path: Path) -> None:
    blob = os.urandom(5000)
    (tmp_path / "f").write_bytes(blob)
    (tmp_path / "d").mkdir()
    store = LocalStore(tmp_path)
    reqs = [ByteRequest("f", 10, 110), ByteRequest("missing", 0, 5), ByteRequest("f", 4990, 5010),
            ByteRequest("d", 0, 3), ByteRequest("f", 0, 7), ByteRequest("../f", 0, 4), ByteRequest("f", 4000, 5000)]
    into = bytearray(100 + 5 + 20 + 3 + 7 + 4 + 1000)
    assert store.read_ranges(reqs, into) == [True, False, False, False, True, False, True]
    assert into[:100] == blob[10:110] and into[128:135] == blob[:7] and into[139:] == blob[4000:]
    assert store.read_ranges(reqs, bytearray(10)) is None  # no room: nothing read
    store.close()


# ---- the ring itself ---------------------------------------------------------------------------

def test_read_ranges_reports_each_range(tmp_path: Path) -> None:
    ring = uring.for_thread()
    assert ring is not None
    blob = os.urandom(3000)
    (tmp_path / "f").write_bytes(blob)
    (tmp_path / "d").mkdir()
    fd, dfd = os.open(tmp_path / "f", os.O_RDONLY), os.open(tmp_path / "d", os.O_RDONLY)
    try:
        buf = bytearray(4 * 1000)
        at = np.frombuffer(buf, np.uint8).ctypes.data
        got = ring.read_ranges([fd, fd, dfd, fd], [2500, 100, 0, 0], [1000, 1000, 10, 1000],
                               [at, at + 1000, at + 2000, at + 3000])
        assert got == [500, 1000, -21, 1000]  # short at the end of the file; EISDIR
        assert buf[:500] == blob[2500:] and buf[1000:2000] == blob[100:1100] and buf[3000:] == blob[:1000]
        for _ in range(300):  # both rings wrap many times, between calls of the other kind
            k = int(RNG.integers(1, uring.MAX_RANGES + 1))
            offs = [int(o) for o in RNG.integers(0, 2990, k)]
            out = bytearray(10 * k)
            base = np.frombuffer(out, np.uint8).ctypes.data
            assert ring.read_ranges([fd] * k, offs, [10] * k, [base + 10 * i for i in range(k)]) == [10] * k
            assert all(out[10 * i:10 * i + 10] == blob[o:o + 10] for i, o in enumerate(offs))
            assert ring.read_whole([os.fsencode(tmp_path / "f")], at, 4000) == [3000]
    finally:
        os.close(fd)
        os.close(dfd)
