"""Hostile files and chunk bytes: devices, FIFOs, loops, bombs, item counts.

Every one costs a ``ZarrError`` that names the key or node, in bounded time and memory,
never another exception. Stores start as good ones written by zarr-python and are
broken on disk; each test failed before its fix.
"""

from __future__ import annotations

import ctypes
import os
import threading
import zlib
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BytesCodec, GzipCodec

import zarrview.zarrlib as zl
from _bad_helpers import assert_same_values, peak_bytes, read_json, write_json
from _good_stores import DATA, _templates, store, v2, v3, small_limits  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(60)


# ----------------------------------------------------------------------------------------------
# 7 and 12. Local files that are not plain files


def test_symlink_loops_do_not_break_listing(v3):
    os.symlink("loop_b", v3 / "loop_a")
    os.symlink("loop_a", v3 / "loop_b")
    os.symlink("..", v3 / "arr" / "c" / "up")  # a directory cycle inside the chunk tree
    root = zl.open(v3)
    assert sorted(c.name for c in root.members()) == ["arr", "bl", "crc", "gz", "raw", "sh", "sub"]
    count, total = root["arr"].stored_objects()
    assert count == 4 and total == sum(p.stat().st_size for p in (v3 / "arr" / "c").rglob("*") if p.is_file()
                                       and "up" not in p.parts)


def test_metadata_symlinked_to_dev_zero(v3):
    (v3 / "arr" / "zarr.json").unlink()
    os.symlink("/dev/zero", v3 / "arr" / "zarr.json")
    result, peak = peak_bytes(lambda: zl.open(v3)["arr"])
    assert isinstance(result, zl.StoreError) and "arr/zarr.json" in str(result), result
    assert "character device" in str(result) and peak < 4 << 20
    members = {c.name: c for c in zl.open(v3).members()}  # listed as a broken node, not dropped
    assert members["arr"].kind == "error" and "character device" in str(members["arr"].error)
    assert members["gz"].kind == "array"


def test_chunk_symlinked_to_dev_zero_fails_that_chunk(v3):
    (v3 / "arr" / "c" / "1" / "1").unlink()
    os.symlink("/dev/zero", v3 / "arr" / "c" / "1" / "1")
    failures: list = []
    out = zl.open(v3)["arr"].read(..., failures=failures)
    assert [f.key for f in failures] == ["arr/c/1/1"]
    expected = DATA.copy()
    expected[5:, 5:] = 0
    assert_same_values(out, expected)


def test_fifo_chunk_does_not_block(v3):
    (v3 / "arr" / "c" / "0" / "1").unlink()
    os.mkfifo(v3 / "arr" / "c" / "0" / "1")
    done = threading.Event()
    errors: list = []

    def read():
        try:
            zl.open(v3)["arr"][...]
        except zl.ZarrError as e:
            errors.append(e)
        done.set()

    threading.Thread(target=read, daemon=True).start()
    if not done.wait(10):  # unblock the reader stuck in open() so the test process can end
        fd = os.open(v3 / "arr" / "c" / "0" / "1", os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("reading a FIFO chunk blocked")
    assert len(errors) == 1 and "arr/c/0/1" in str(errors[0]) and "FIFO" in str(errors[0])


# 9 and 10. Decompression bombs and item counts


def _bomb_codec_v2(root: Path, filters, compressor, dtype="<i4") -> None:
    a = zarr.create_array(root, shape=(16,), chunks=(16,), dtype=dtype, zarr_format=2,
                          filters=filters, compressors=compressor)
    a[:] = np.arange(16).astype(dtype) if dtype is not str else [str(i) for i in range(16)]


@pytest.mark.parametrize("case", ["v2_filters_zlib", "v2_objects_zlib", "v2_bz2", "v2_lzma", "v3_vlen_gzip",
                                  "v3_zstd_no_content_size"])
def test_decompression_bombs_stop_at_the_bound(tmp_path, small_limits, case):
    root = tmp_path / "bomb.zarr"
    zeros = bytes(64 << 20)  # 8x the bound, so an unbounded decoder shows in the peak
    if case == "v2_filters_zlib":
        _bomb_codec_v2(root, [numcodecs.Delta("<i4")], numcodecs.Zlib())
        key, blob = "0", zlib.compress(zeros)
    elif case == "v2_objects_zlib":
        _bomb_codec_v2(root, [numcodecs.VLenUTF8()], numcodecs.Zlib(), dtype=str)
        key, blob = "0", zlib.compress(zeros)
    elif case == "v2_bz2":
        _bomb_codec_v2(root, [numcodecs.Delta("<i4")], numcodecs.BZ2())
        key, blob = "0", numcodecs.BZ2().encode(zeros)
    elif case == "v2_lzma":
        _bomb_codec_v2(root, [numcodecs.Delta("<i4")], numcodecs.LZMA())
        key, blob = "0", numcodecs.LZMA(preset=1).encode(zeros)
    elif case == "v3_vlen_gzip":
        a = zarr.create_array(root, shape=(16,), chunks=(16,), dtype=str, zarr_format=3, compressors=[GzipCodec()])
        a[:] = [str(i) for i in range(16)]
        key, blob = "c/0", numcodecs.GZip(level=1).encode(zeros)
    else:
        a = zarr.create_array(root, shape=(16,), chunks=(16,), dtype="<i4", zarr_format=3,
                              serializer=BytesCodec(), compressors=[zarr.codecs.ZstdCodec()])
        a[:] = np.arange(16, dtype="<i4")
        key, blob = "c/0", _zstd_without_content_size(zeros)
    del zeros
    (root / key).write_bytes(blob)
    a = zl.open(root)
    result, peak = peak_bytes(lambda: a[...])
    assert isinstance(result, zl.CodecError) and key in str(result), result
    assert peak < 3 * small_limits.chunk_bytes, f"{peak >> 20} MiB for a bound of {small_limits.chunk_bytes >> 20}"


@pytest.mark.parametrize("filters,nbytes", [([numcodecs.Delta("<i4")], 64), ([numcodecs.Delta("<i4", astype="<i2")], 32),
                                            ([numcodecs.Shuffle(4), numcodecs.Delta("<i4")], 64),
                                            ([numcodecs.AsType(encode_dtype="<f2", decode_dtype="<i4")], 32)])
def test_bombs_behind_size_known_filters_stop_at_the_chunk_size(tmp_path, filters, nbytes):
    """Found by the fuzzer: behind a filter the decoded size was taken as unknown, so a bomb
    inflated to the 1 GiB bound (seconds and gigabytes per read). These filters' output sizes
    follow from the chunk, so the compressor is bounded by that."""
    root = tmp_path / "f.zarr"
    _bomb_codec_v2(root, filters, numcodecs.Zlib())
    assert_same_values(zl.open(root)[...], np.arange(16, dtype="<i4"))
    (root / "0").write_bytes(zlib.compress(bytes(64 << 20)))
    result, peak = peak_bytes(lambda: zl.open(root)[...])
    assert isinstance(result, zl.CodecError) and f"more than {nbytes} bytes" in str(result), result
    assert peak < 1 << 20


@pytest.mark.parametrize("first,step", [(64 << 20, 4 << 20), (1 << 20, 1 << 18)], ids=["one_call", "in_steps"])
def test_bounded_decompressors_against_the_standard_library(monkeypatch, first, step):
    """Exact sizes pass, one byte over the bound fails, truncation fails, concatenated gzip
    members join, in one call or in steps (a stream past the first call's size once looped)."""
    import bz2
    import gzip
    import lzma

    from zarrview.zarrlib.codecs import bounded

    monkeypatch.setattr(bounded, "_FIRST", first)
    monkeypatch.setattr(bounded, "_STEP", step)
    src = np.random.default_rng(5).integers(0, 4, 5 << 20, dtype=np.uint8).tobytes()
    two = gzip.compress(src, 1) + gzip.compress(b"ab")
    assert bounded.inflate(zlib.compress(src, 1), len(src)) == src
    assert bounded.inflate(two, len(src) + 2) == src + b"ab"
    assert bounded.unbz2(bz2.compress(src, 1), len(src)) == src
    xz = numcodecs.LZMA(preset=1)
    assert bounded.unxz(xz.encode(src), len(src), xz) == src
    for call, message in [(lambda: bounded.inflate(two, len(src) + 1), "more than"),
                          (lambda: bounded.inflate(zlib.compress(src, 1)[:-9], len(src)), "truncated"),
                          (lambda: bounded.unbz2(bz2.compress(src, 1), len(src) - 1), "more than"),
                          (lambda: bounded.unxz(lzma.compress(src, preset=1)[:-30], len(src), xz), "lzma")]:
        with pytest.raises(zl.CodecError, match=message):
            call()


def _zstd_without_content_size(data: bytes) -> bytes:
    """A zstd frame whose header leaves out the decompressed size (streaming writers do that)."""
    from zarrview.zarrlib.codecs.libzstd import _lib

    if _lib is None:
        pytest.skip("needs the system libzstd to write such a frame")
    _lib.ZSTD_createCCtx.restype = ctypes.c_void_p
    _lib.ZSTD_freeCCtx.argtypes = [ctypes.c_void_p]
    _lib.ZSTD_CCtx_setParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    _lib.ZSTD_compress2.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    _lib.ZSTD_compress2.restype = ctypes.c_size_t
    ctx = _lib.ZSTD_createCCtx()
    try:
        _lib.ZSTD_CCtx_setParameter(ctx, 200, 0)  # ZSTD_c_contentSizeFlag = 0
        out = ctypes.create_string_buffer(len(data) // 100 + 1024)
        n = _lib.ZSTD_compress2(ctx, out, len(out), data, len(data))
        return out.raw[:n]
    finally:
        _lib.ZSTD_freeCCtx(ctx)


def test_zstd_frames_without_content_size_still_read(tmp_path):
    """The bound must not cost real data: such frames decode when they are the right size."""
    root = tmp_path / "z.zarr"
    a = zarr.create_array(root, shape=(64,), chunks=(32,), dtype="<f8", zarr_format=3, compressors=[zarr.codecs.ZstdCodec()])
    values = np.linspace(0, 1, 64)
    a[:] = values
    (root / "c" / "1").write_bytes(_zstd_without_content_size(values[32:].tobytes()))
    assert_same_values(zl.open(root)[...], values)


@pytest.mark.parametrize("fmt", [2, 3])
def test_vlen_item_count_is_checked_before_allocating(tmp_path, fmt):
    root = tmp_path / "s.zarr"
    a = zarr.create_array(root, shape=(4,), chunks=(4,), dtype=str, zarr_format=fmt, compressors=None)
    a[:] = ["a", "bb", "ccc", "dddd"]
    key = root / ("0" if fmt == 2 else "c/0")
    blob = bytearray(key.read_bytes())
    blob[0:4] = (2**31).to_bytes(4, "little")
    key.write_bytes(bytes(blob))
    result, peak = peak_bytes(lambda: zl.open(root)[...])
    assert isinstance(result, zl.CodecError) and "claims 2147483648 items" in str(result), result
    assert peak < 16 << 20


def _vlen_layout(count: int, first_length: int) -> bytes:
    """The head of numcodecs' variable-length layout: the item count and the first item's length."""
    return count.to_bytes(4, "little") + first_length.to_bytes(4, "little")


@pytest.mark.parametrize("compressor", ["zlib", "gzip", "bz2", "lzma", "v3_gzip"])
@pytest.mark.parametrize("head", ["zeros", "count_right_then_zeros"])
def test_a_bomb_behind_strings_stops_at_the_layouts_bound(tmp_path, compressor, head):
    """With the default bounds: a stream of zeros (no items) is refused from its first decoded
    bytes; one that starts right is stopped where n items of at most ``element_bytes`` end,
    not at the gigabyte bound on a chunk."""
    import bz2
    import lzma

    root = tmp_path / "bomb.zarr"
    items = 4
    v3 = compressor == "v3_gzip"
    a = zarr.create_array(root, shape=(items,), chunks=(items,), dtype=str, zarr_format=3 if v3 else 2,
                          compressors=[GzipCodec()] if v3 else [numcodecs.get_codec({"id": compressor})])
    a[:] = ["a", "bb", "ccc", "dddd"]
    limit = 4 + items * (4 + zl.limits.limits().element_bytes)
    size = limit + (8 << 20)
    stream = (b"" if head == "zeros" else _vlen_layout(items, 0)) + bytes(size)
    pack = {"zlib": zlib.compress, "gzip": lambda b: numcodecs.GZip(1).encode(b), "bz2": bz2.compress,
            "lzma": lambda b: lzma.compress(b, preset=1), "v3_gzip": lambda b: numcodecs.GZip(1).encode(b)}[compressor]
    key = "c/0" if v3 else "0"
    (root / key).write_bytes(pack(stream))
    del stream
    arr = zl.open(root)
    result, peak = peak_bytes(lambda: arr[...])
    assert isinstance(result, zl.CodecError) and key in str(result), result
    if head == "zeros":
        assert "holds 0 items, expected 4" in str(result) and peak < 16 << 20, (result, peak >> 20)
    else:
        assert f"more than {limit} bytes" in str(result) and peak < 3 * limit, (result, peak >> 20)


def test_metadata_larger_than_the_bound(v3, small_limits):
    doc = read_json(v3 / "arr" / "zarr.json")
    doc["attributes"] = {"padding": "x" * (2 << 20)}
    write_json(v3 / "arr" / "zarr.json", doc)
    result, peak = peak_bytes(lambda: zl.open(v3)["arr"])
    assert isinstance(result, zl.TooLargeError) and "arr/zarr.json" in str(result), result
    assert peak < 1 << 20  # refused from its size, before reading it


@pytest.mark.parametrize("dtype", ["<U3", ">U3"])
def test_text_beyond_unicode_fails_its_chunk_by_name(tmp_path: Path, dtype: str) -> None:
    """A flipped bit in fixed-length text can make a code point no string can hold (above
    U+10FFFF): numpy keeps it, Python's ``tolist`` raises SystemError on it. It is the chunk's
    CodecError instead, and the other chunks read."""
    z = zarr.create_array(tmp_path / "t.zarr", shape=(4,), chunks=(2,), dtype=dtype, zarr_format=2, compressors=None)
    z[...] = np.array(["ab", "cde", "f", "ghi"], dtype=dtype)
    chunk = tmp_path / "t.zarr" / "1"
    raw = bytearray(chunk.read_bytes())
    order = "little" if dtype[0] == "<" else "big"
    raw[4:8] = (0x110000 + 7).to_bytes(4, order)  # the second code point of "f"
    chunk.write_bytes(bytes(raw))
    arr = zl.open(tmp_path / "t.zarr")
    with pytest.raises(zl.CodecError, match=r"chunk 1 of /: the code point 0x110007 of its text is beyond Unicode"):
        arr[...]
    failures: list = []
    out = arr.read(..., failures=failures)
    assert [f.key for f in failures] == ["1"]
    assert out[:2].tolist() == ["ab", "cde"]  # the good chunk, as written
