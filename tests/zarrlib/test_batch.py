"""Batched zstd decoding (zarrview/zarrlib/batch.py): several back-to-back frames in one libzstd
call must give exactly what zarr-python wrote, and a bad frame among them must fail only its own
chunk, named as the chunk-by-chunk path names it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BytesCodec, ShardingCodec, ZstdCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib import batch
from zarrview.zarrlib.cache import ChunkCache
from zarrview.zarrlib.codecs.libzstd import frames_decoder

pytestmark = pytest.mark.skipif(frames_decoder() is None, reason="libzstd cannot be loaded here")

RNG = np.random.default_rng(15)
#: compressible but not trivial, so that frames have several sizes
DATA = (RNG.integers(0, 64, (6, 40, 48)) * RNG.integers(1, 3, (6, 40, 48))).astype("<u2")
SELECTIONS: list[Any] = [
    (slice(None), slice(None), slice(None)),
    (3, slice(None), slice(None)),
    (slice(None), 17, slice(None)),
    (slice(1, 5), slice(3, 37), slice(5, 41)),
    (slice(None, None, 2), slice(1, None, 3), 7),
]


def _v3(path: Path, sharded: bool) -> Path:
    g = zarr.open_group(path, mode="w", zarr_format=3)
    if sharded:  # index without a checksum, so that tests can rewrite it
        codec = ShardingCodec(chunk_shape=(1, 8, 8), codecs=[BytesCodec(), ZstdCodec(level=1)],
                              index_codecs=[BytesCodec()])
        a = g.create_array("a", shape=DATA.shape, chunks=(3, 16, 24), dtype=DATA.dtype,
                           serializer=codec, compressors=None, fill_value=0)
    else:
        a = g.create_array("a", shape=DATA.shape, chunks=(1, 8, 8), dtype=DATA.dtype,
                           compressors=[ZstdCodec(level=1)], fill_value=0)
    a[...] = DATA
    return path


def _v2(path: Path, order: str) -> Path:
    a = zarr.create_array(path / "a", shape=DATA.shape, chunks=(1, 8, 8), dtype=DATA.dtype, zarr_format=2,
                          compressors=numcodecs.Zstd(level=1), order=order, fill_value=0)
    a[...] = DATA
    return path


@pytest.fixture(params=["v3_sharded", "v3_chunked", "v2_C", "v2_F"])
def stack(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    kind = request.param
    if kind.startswith("v3"):
        return _v3(tmp_path / "s.zarr", kind == "v3_sharded")
    return _v2(tmp_path / "s.zarr", kind[-1])


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of frames of every batched libzstd call."""
    seen: list[int] = []
    real = batch.Batcher.decode

    def counted(self: batch.Batcher, b: batch.Batch, run: list[Any]) -> bool:
        seen.append(len(run))
        return real(self, b, run)

    monkeypatch.setattr(batch.Batcher, "decode", counted)
    return seen


def _open(path: Path) -> Any:
    a = zl.open(path)["a"]
    assert a.reader._batcher is not None
    return a


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("sel", SELECTIONS)
def test_batched_reads_equal_zarr_python(stack: Path, sel: Any, workers: int, calls: list[int]) -> None:
    want = zarr.open_array(stack / "a", mode="r")[sel]
    got = _open(stack).read(sel, executor=ThreadPoolExecutor(workers))
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(got, DATA[sel])


def test_frames_are_decoded_several_per_call(stack: Path, calls: list[int]) -> None:
    """A one-thread read of the whole stack (240 chunks of 128 bytes) decodes them in calls of
    many frames: a shard's inner chunks back to back, chunk files read one after another (the
    last blocks of a read are single chunks, decoded alone)."""
    _open(stack).read(..., executor=ThreadPoolExecutor(1))
    assert 6 * 5 * 6 - 4 <= sum(calls) <= 6 * 5 * 6 and len(calls) < 40 and max(calls) > 8, calls


def test_reads_that_fill_a_cache_are_not_batched(stack: Path, calls: list[int]) -> None:
    """A cached chunk owns its memory: such reads decode each chunk into its own array, and the
    cached chunks keep their values after the thread's buffers are overwritten."""
    a = _open(stack)
    cache = ChunkCache(1 << 20)
    one = ThreadPoolExecutor(1)
    assert np.array_equal(a.read(..., cache=cache, executor=one), DATA)
    assert calls == []
    _open(_v3(stack.parent / "other.zarr", sharded=True)).read(..., executor=one)  # fills the buffers
    assert calls
    b = zl.open(stack)["a"]
    b.reader.cache_id = a.reader.cache_id  # a second reader of the same array, served from the cache
    assert np.array_equal(b.read(..., cache=cache, executor=one), DATA)


def test_a_bad_frame_among_good_ones_fails_only_its_chunk(tmp_path: Path) -> None:
    """Chunk-per-file: one chunk's frame is garbage; the others, decoded in the same batches,
    keep zarr-python's values, and the failure names that chunk's key."""
    path = _v3(tmp_path / "s.zarr", sharded=False)
    bad = path / "a" / "c" / "2" / "1" / "3"
    bad.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(40))
    failures: list[Any] = []
    got = _open(path).read(..., failures=failures, executor=ThreadPoolExecutor(1))
    assert [f.key for f in failures] == ["a/c/2/1/3"] and "zstd" in failures[0].message
    box = (2, slice(8, 16), slice(24, 32))
    want = DATA.copy()
    want[box] = 0
    assert np.array_equal(got, want)
    with pytest.raises(zl.CodecError, match="a/c/2/1/3"):
        _open(path).read(..., executor=ThreadPoolExecutor(1))


N_INNER = 3 * 2 * 3  # inner chunks per shard


def _shard(path: Path, *key: str) -> tuple[Path, bytearray, np.ndarray, np.ndarray]:
    """A shard of ``_v3(..., sharded=True)``: its file, bytes, index (offset, length per inner
    chunk, C order) and the inner chunks in the order their bytes lie."""
    shard = path.joinpath("a", "c", *key)
    blob = bytearray(shard.read_bytes())
    index = np.frombuffer(bytes(blob[-16 * N_INNER:]), "<u8").reshape(N_INNER, 2).copy()
    return shard, blob, index, np.argsort(index[:, 0])


def _rewrite(shard: Path, blob: bytearray, index: np.ndarray) -> None:
    blob[-16 * N_INNER:] = index.astype("<u8").tobytes()
    shard.write_bytes(bytes(blob))


def test_a_frame_of_another_size_fails_only_its_inner_chunk(tmp_path: Path) -> None:
    """An inner chunk whose frame declares fewer bytes than the chunk holds: its neighbours in
    the run decode; it fails, named by shard and position, as on the chunk-by-chunk path."""
    path = _v3(tmp_path / "s.zarr", sharded=True)
    shard, blob, index, order = _shard(path, "0", "0", "0")
    victim = int(order[4])  # an inner chunk with neighbours on both sides
    off, size = (int(v) for v in index[victim])
    short = numcodecs.Zstd(level=1).encode(np.zeros(60, "<u2"))
    assert len(short) <= size
    blob[off:off + size] = short + bytes(size - len(short))
    index[victim, 1] = len(short)
    _rewrite(shard, blob, index)

    def read(env: str, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, list[Any]]:
        monkeypatch.setenv("ZARRVIEW_NO_BATCH", env)
        failures: list[Any] = []
        a = zl.open(path)["a"]
        assert (a.reader._batcher is None) == bool(env)
        return a.read(..., failures=failures, executor=ThreadPoolExecutor(1)), failures

    with pytest.MonkeyPatch.context() as mp:
        got, failures = read("", mp)
        old, old_failures = read("1", mp)
    coords = np.unravel_index(victim, (3, 2, 3))
    assert [f.coords for f in failures] == [tuple(int(c) for c in coords)]
    assert [(f.key, f.message) for f in failures] == [(f.key, f.message) for f in old_failures]
    assert "shard" in failures[0].message and "a/c/0/0/0" in failures[0].message
    want = DATA.copy()
    z, y, x = (int(c) for c in coords)
    want[z, y * 8:(y + 1) * 8, x * 8:(x + 1) * 8] = 0
    assert np.array_equal(got, want) and np.array_equal(old, want)


def test_index_spans_that_cut_frames_wrongly_are_not_trusted(tmp_path: Path, calls: list[int]) -> None:
    """Two neighbouring inner chunks whose index entries move their boundary by 5 bytes: the
    frames, back to back, would still decode together, but each span is no frame of its own, so
    both fail as they do chunk by chunk, and every other chunk reads."""
    path = _v3(tmp_path / "s.zarr", sharded=True)
    shard, blob, index, order = _shard(path, "1", "1", "1")
    first, second = int(order[6]), int(order[7])
    assert index[first, 0] + index[first, 1] == index[second, 0]
    index[first, 1] += 5
    index[second, 0] += 5
    index[second, 1] -= 5
    _rewrite(shard, blob, index)
    failures: list[Any] = []
    got = _open(path).read(..., failures=failures, executor=ThreadPoolExecutor(1))
    bad = {tuple(int(c) for c in np.unravel_index(i, (3, 2, 3))) for i in (first, second)}
    assert {tuple(np.array(f.coords) % (3, 2, 3)) for f in failures} == bad and len(failures) == 2
    assert all(f.key == "a/c/1/1/1" for f in failures)
    want = DATA.copy()
    for z, y, x in bad:
        want[3 + z, 16 + y * 8:16 + (y + 1) * 8, 24 + x * 8:24 + (x + 1) * 8] = 0
    assert np.array_equal(got, want)


def test_a_full_stack_sends_a_read_elsewhere_and_still_reads(stack: Path, monkeypatch: pytest.MonkeyPatch,
                                                            calls: list[int]) -> None:
    """A stack too small for the batch: reads that do not fit get buffers of their own."""
    monkeypatch.setattr(batch, "_mine", batch._Thread())
    monkeypatch.setattr(batch, "STACK_BATCHES", 0)
    real = batch.Stack.__init__

    def tiny(self: batch.Stack, capacity: int) -> None:
        real(self, 300)  # two or three frames

    monkeypatch.setattr(batch.Stack, "__init__", tiny)
    got = _open(stack).read(..., executor=ThreadPoolExecutor(1))
    assert np.array_equal(got, DATA)


def _raw_frame(content: bytes) -> bytes:
    """A zstd frame by hand: one raw block, single segment, its 1-byte content size declared."""
    assert len(content) < 256
    block = (len(content) << 3 | 1).to_bytes(3, "little")  # last block, raw
    return b"\x28\xb5\x2f\xfd" + bytes([0x20, len(content)]) + block + content


def test_frames_that_straddle_chunk_files_are_not_decoded_together(tmp_path: Path) -> None:
    """Hostile chunk files: the first holds the start of a frame, the second the rest of it
    (which begins with what looks like a frame header declaring the chunk's size) and a whole
    frame. Read back to back they decode to two chunks' worth of bytes, yet neither file is a
    frame: both must fail, as they do chunk by chunk."""
    path = tmp_path / "s.zarr"
    a = zarr.create_array(path / "a", shape=(8, 32), chunks=(8, 8), dtype="<u2", zarr_format=3,
                          compressors=[ZstdCodec(level=1)], fill_value=0)
    a[...] = 1
    fake = _raw_frame(bytes(128))[:6] + b"\xff\xff\xff"  # a header, then a reserved block type
    whole = _raw_frame(fake + bytes(128 - len(fake)))
    second = _raw_frame(bytes(range(128)))
    (path / "a" / "c" / "0" / "0").write_bytes(whole[:9])  # frame header and block header
    (path / "a" / "c" / "0" / "1").write_bytes(whole[9:] + second)
    assert zstd_declared(whole[9:]) == 128
    failures: list[Any] = []
    got = _open(path).read(..., failures=failures, executor=ThreadPoolExecutor(1))  # blocks of 2, 1, 1
    assert sorted(f.key for f in failures) == ["a/c/0/0", "a/c/0/1"]
    assert not got[:, :16].any() and (got[:, 16:] == 1).all()


def test_frames_of_other_sizes_that_add_up_are_not_decoded_together(tmp_path: Path) -> None:
    """Two chunk files, each one frame, of 120 and 136 bytes where a chunk holds 128: together
    they make two chunks' worth, but neither is a chunk, and both must fail."""
    path = tmp_path / "s.zarr"
    a = zarr.create_array(path / "a", shape=(8, 32), chunks=(8, 8), dtype="<u2", zarr_format=3,
                          compressors=[ZstdCodec(level=1)], fill_value=0)
    a[...] = 1
    (path / "a" / "c" / "0" / "0").write_bytes(_raw_frame(bytes(120)))
    (path / "a" / "c" / "0" / "1").write_bytes(_raw_frame(bytes(136)))
    failures: list[Any] = []
    got = _open(path).read(..., failures=failures, executor=ThreadPoolExecutor(1))  # blocks of 2, 1, 1
    assert sorted(f.key for f in failures) == ["a/c/0/0", "a/c/0/1"]
    assert not got[:, :16].any() and (got[:, 16:] == 1).all()


def zstd_declared(data: bytes) -> int | None:
    from zarrview.zarrlib.codecs.zstd import frame_content_size

    return frame_content_size(data)


@pytest.mark.parametrize("sharded", [True, False])
def test_chunks_never_written_read_as_the_fill_value_between_batched_ones(tmp_path: Path, sharded: bool,
                                                                         calls: list[int]) -> None:
    """zarr-python does not store chunks that hold only the fill value: a batch of stored chunks
    has such gaps (a missing file, an empty index entry), read as the fill value."""
    data = DATA.copy()
    data[1, :, :24] = 0  # chunk-aligned regions of zeros: never stored
    data[4, 8:24, :] = 0
    g = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    kw: dict[str, Any] = {"shards": (3, 16, 24)} if sharded else {}
    a = g.create_array("a", shape=data.shape, chunks=(1, 8, 8), dtype=data.dtype,
                       compressors=[ZstdCodec(level=1)], fill_value=0, **kw)
    a[...] = data
    got = _open(tmp_path / "s.zarr").read(..., executor=ThreadPoolExecutor(1))
    assert np.array_equal(got, zarr.open_array(tmp_path / "s.zarr" / "a", mode="r")[...])
    assert np.array_equal(got, data) and max(calls) > 8


def test_a_zeroed_shard_index_fails_each_of_its_chunks_by_name(tmp_path: Path, calls: list[int]) -> None:
    """Every entry of a shard's index zeroed (offset 0, 0 bytes: not the 'missing' sentinel): the
    shard's inner chunks are empty, so no frame is left to decode together. zarr-python fails on
    them; zarrview names each, as the chunk-by-chunk path does, and reads every other shard."""
    path = _v3(tmp_path / "s.zarr", sharded=True)
    shard, blob, index, _ = _shard(path, "0", "0", "0")
    index[:] = 0
    _rewrite(shard, blob, index)
    with pytest.raises(Exception, match="(?i)zstd"):
        zarr.open_array(path / "a", mode="r")[...]
    failures: list[Any] = []
    got = _open(path).read(..., failures=failures, executor=ThreadPoolExecutor(1))
    assert len(failures) == N_INNER and {f.key for f in failures} == {"a/c/0/0/0"}
    assert all("empty (0 bytes)" in f.message for f in failures)
    assert sum(calls) > 0  # the other shards still decode several frames per call
    want = DATA.copy()
    want[:3, :16, :24] = 0
    assert np.array_equal(got, want)
    with pytest.raises(zl.CodecError, match="inner chunk .* in shard a/c/0/0/0 of /a: zstd: the stored chunk is empty"):
        _open(path).read((slice(0, 3), slice(0, 16), slice(0, 24)), executor=ThreadPoolExecutor(1))
