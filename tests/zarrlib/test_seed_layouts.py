"""Hand-built stores for layouts that no library writes, built byte by byte from the specs (core
v3, v2, zarr-extensions and the proposal for string and variable-length binary data types).  Each
test's truth is the numpy array it encoded itself.
"""

from __future__ import annotations

import base64
import gzip as gzip_mod
import json
import math
import struct
import zlib
from pathlib import Path

import numcodecs
import numpy as np
import pytest

import zarrview.zarrlib as zl
from conformance_helpers import assert_member_names, transport  # noqa: F401  (autouse: every test also runs over HTTP)
from _bad_helpers import (
    assert_same_values,
    chunk_grid_iter,
    crc32c_bytes,
    names,
    padded_chunk,
    v3_array_meta,
    v3_group_meta,
    write_json,
)

pytestmark = pytest.mark.timeout(60)


def put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def v3_key(idx, sep="/") -> str:
    return sep.join(["c", *map(str, idx)])


# ==============================================================================================
# Strings ZEP (seeds/003): data_type "string" / "binary", chunk = (n+1) int32 LE offsets,
# zero padding to a multiple of 64 bytes, then the data buffer.  Codecs: plain "bytes",
# optionally followed by a compressor.


def round_up_64(n: int) -> int:
    return -(-n // 64) * 64


def zep_chunk(items: list) -> bytes:
    """Encode one chunk's items (C order) exactly as the ZEP's 'Writing' section says."""
    bufs = [x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in items]
    offsets = [0]
    for b in bufs:
        offsets.append(offsets[-1] + len(b))
    off = struct.pack(f"<{len(offsets)}i", *offsets)
    pad = round_up_64(len(off)) - len(off)
    return off + b"\x00" * pad + b"".join(bufs)


def test_zep_chunk_encoder_matches_the_seed_example():
    """Our encoder against the ZEP's own numpy 'Writing' recipe."""
    array = np.array(["the", "quick", "", "fox"], dtype=object)
    offsets = np.zeros(array.size + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(x.encode()) for x in array])
    data_buffer = memoryview("".join(array).encode())
    offset_buffer = offsets.view(np.uint8)
    data_start_idx = round_up_64(len(offset_buffer))
    chunk_buffer = np.zeros(data_start_idx + len(data_buffer), dtype=np.uint8)
    chunk_buffer[: len(offset_buffer)] = offset_buffer
    chunk_buffer[data_start_idx:] = data_buffer
    assert zep_chunk(list(array)) == chunk_buffer.tobytes()
    assert len(zep_chunk(["a"] * 15)) == 64 + 15  # 16 offsets fill 64 bytes: no padding


COMPRESS = {
    None: (lambda b: b, []),
    "gzip": (lambda b: gzip_mod.compress(b, 6), [{"name": "gzip", "configuration": {"level": 6}}]),
    "zstd": (lambda b: numcodecs.Zstd(level=3).encode(b),
             [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}]),
}

PAD_STR = "PAD-not-in-array"


def build_zep_array(path: Path, values: np.ndarray, chunks, data_type, fill_value, *,
                    compressor=None, skip=(), bytes_codec=None, pad_item=None) -> None:
    """Write ``values`` (object array of str/bytes) as a ZEP string/binary array at ``path``."""
    encode, comp_codecs = COMPRESS[compressor]
    codecs = [bytes_codec or {"name": "bytes"}] + comp_codecs
    write_json(path / "zarr.json", v3_array_meta(values.shape, chunks, data_type,
                                                 fill_value=fill_value, codecs=codecs))
    for idx in chunk_grid_iter(values.shape, chunks):
        if tuple(idx) in skip:
            continue
        chunk = padded_chunk(values, idx, chunks, pad_item)
        put(path / v3_key(idx), encode(zep_chunk(list(chunk.ravel(order="C")))))


def check_object_array(got, expected: np.ndarray, kind: type) -> None:
    got = np.asarray(got)
    assert got.dtype == object, got.dtype
    assert got.shape == expected.shape
    assert all(isinstance(x, kind) for x in got.ravel()), [type(x) for x in got.ravel()]
    assert got.tolist() == expected.tolist()


STRINGS_1D = np.array(["", "a", "héllo wörld", "日本語テキスト", "emoji 🎉🐍", "", "tab\tnew\nline",
                       "x" * 100], dtype=object)
BINARY_1D = np.array([b"", b"\x00", b"\xff\xfe\x00\x01", b"abc", bytes(range(256)), b"",
                      b"\x80" * 3], dtype=object)


@pytest.mark.parametrize("data_type", ["string", {"name": "string"}], ids=["short", "object"])
@pytest.mark.parametrize("compressor", [None, "gzip", "zstd"])
@pytest.mark.parametrize("chunk", [3, 8, 20], ids=["chunk3", "chunk8", "chunk20"])
def test_zep_strings_1d(tmp_path, data_type, compressor, chunk):
    build_zep_array(tmp_path / "s", STRINGS_1D, (chunk,), data_type, "",
                    compressor=compressor, pad_item=PAD_STR)
    a = zl.open(tmp_path / "s")
    assert a.kind == "array" and a.shape == (8,)
    check_object_array(a[...], STRINGS_1D, str)
    check_object_array(a[2:7:2], STRINGS_1D[2:7:2], str)
    assert a[3].tolist() == STRINGS_1D[3]


@pytest.mark.parametrize("data_type", ["binary", {"name": "binary"}], ids=["short", "object"])
@pytest.mark.parametrize("compressor", [None, "gzip", "zstd"])
def test_zep_binary_1d(tmp_path, data_type, compressor):
    build_zep_array(tmp_path / "b", BINARY_1D, (3,), data_type, [],
                    compressor=compressor, pad_item=b"PAD")
    a = zl.open(tmp_path / "b")
    check_object_array(a[...], BINARY_1D, bytes)
    check_object_array(a[1:5], BINARY_1D[1:5], bytes)


def _strings_2d() -> np.ndarray:
    words = ["α", "", "βγ", "δεζ", "plain", "🙂", "κ" * 7, "end", "über", "ñ", "", "x"]
    vals = np.empty((5, 7), dtype=object)
    for i in range(5):
        for j in range(7):
            vals[i, j] = f"{words[(i * 7 + j) % len(words)]}{i}{j}" if (i + j) % 4 else ""
    return vals


@pytest.mark.parametrize("compressor", [None, "gzip", "zstd"])
def test_zep_strings_2d_multichunk_with_missing_chunk(tmp_path, compressor):
    vals = _strings_2d()
    chunks = (2, 3)
    missing = (1, 1)
    build_zep_array(tmp_path / "s2", vals, chunks, "string", "FILL·ß", compressor=compressor,
                    skip={missing}, pad_item=PAD_STR)
    expected = vals.copy()
    expected[2:4, 3:6] = "FILL·ß"
    a = zl.open(tmp_path / "s2")
    assert a.shape == (5, 7) and tuple(a.chunks) == chunks
    check_object_array(a[...], expected, str)
    check_object_array(a[1:4, 2:], expected[1:4, 2:], str)
    check_object_array(a[..., 3], expected[..., 3], str)
    check_object_array(a[4, ::3], expected[4, ::3], str)


def test_zep_binary_2d_missing_chunk(tmp_path):
    vals = np.empty((4, 4), dtype=object)
    for i in range(4):
        for j in range(4):
            vals[i, j] = bytes([i, j]) * (i + j)
    build_zep_array(tmp_path / "b2", vals, (3, 3), "binary", [1, 2, 3], skip={(0, 1)},
                    pad_item=b"PAD")
    expected = vals.copy()
    expected[0:3, 3:4] = b"\x01\x02\x03"
    a = zl.open(tmp_path / "b2")
    check_object_array(a[...], expected, bytes)


def test_zep_strings_all_chunks_missing(tmp_path):
    path = tmp_path / "s0"
    write_json(path / "zarr.json", v3_array_meta((3, 2), (2, 2), "string", fill_value="nothing",
                                                 codecs=[{"name": "bytes"}]))
    a = zl.open(path)
    check_object_array(a[...], np.full((3, 2), "nothing", dtype=object), str)


def test_zep_strings_64_byte_boundaries(tmp_path):
    """15 items -> 16 offsets = exactly 64 bytes (no padding); 16 items -> 68 -> padded to 128."""
    vals = np.array([f"s{i}" * (i % 3) for i in range(31)], dtype=object)
    write_json(tmp_path / "s" / "zarr.json",
               v3_array_meta((31,), (15,), "string", fill_value="", codecs=[{"name": "bytes"}]))
    for i in range(3):
        part = list(vals[i * 15:(i + 1) * 15]) + [""] * (15 - len(vals[i * 15:(i + 1) * 15]))
        put(tmp_path / "s" / f"c/{i}", zep_chunk(part))
    write_json(tmp_path / "t" / "zarr.json",
               v3_array_meta((31,), (16,), "string", fill_value="", codecs=[{"name": "bytes"}]))
    for i in range(2):
        part = list(vals[i * 16:(i + 1) * 16]) + [""] * (16 - len(vals[i * 16:(i + 1) * 16]))
        blob = zep_chunk(part)
        assert blob[68:128] == b"\x00" * 60
        put(tmp_path / "t" / f"c/{i}", blob)
    check_object_array(zl.open(tmp_path / "s")[...], vals, str)
    check_object_array(zl.open(tmp_path / "t")[...], vals, str)


def test_zep_strings_in_a_group_and_scalar(tmp_path):
    write_json(tmp_path / "zarr.json", v3_group_meta())
    write_json(tmp_path / "scalar" / "zarr.json",
               v3_array_meta((), (), "string", fill_value="", codecs=[{"name": "bytes"}]))
    put(tmp_path / "scalar" / "c", zep_chunk(["only one — ∞"]))
    g = zl.open(tmp_path)
    a = g["scalar"]
    assert a.shape == ()
    got = a[...]
    assert got.dtype == object and got.shape == () and got.item() == "only one — ∞"


@pytest.mark.parametrize("bad", ["short", "offsets-past-end", "decreasing", "bad-utf8"])
def test_zep_corrupt_string_chunks(tmp_path, bad):
    vals = np.array(["ab", "cd", "ef"], dtype=object)
    write_json(tmp_path / "zarr.json", v3_group_meta())
    path = tmp_path / "bad_strings"
    write_json(path / "zarr.json", v3_array_meta((3,), (3,), "string", fill_value="",
                                                 codecs=[{"name": "bytes"}]))
    blob = bytearray(zep_chunk(list(vals)))
    if bad == "short":
        blob = blob[:10]
    elif bad == "offsets-past-end":
        blob[12:16] = struct.pack("<i", 1000)
    elif bad == "decreasing":
        blob[4:8] = struct.pack("<i", 5)
        blob[8:12] = struct.pack("<i", 1)
    else:
        blob[64:66] = b"\xff\xfe"
    put(path / "c" / "0", bytes(blob))
    with pytest.raises(zl.CodecError, match=names("bad_strings/c/0")):
        zl.open(tmp_path)["bad_strings"][...]


# ==============================================================================================
# Zarr v3 fill values written by hand


def v3_empty(path: Path, data_type, fill_value, shape=(3, 2), chunks=(2, 2), **kw) -> None:
    codecs = kw.pop("codecs", None)
    if codecs is None:
        codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    write_json(path / "zarr.json", v3_array_meta(shape, chunks, data_type,
                                                 fill_value=fill_value, codecs=codecs, **kw))


FLOAT_FILLS = [
    ("float16", "NaN", 0x7E00),
    ("float32", "NaN", 0x7FC00000),
    ("float64", "NaN", 0x7FF8000000000000),
    ("float16", "Infinity", 0x7C00),
    ("float32", "Infinity", 0x7F800000),
    ("float64", "Infinity", 0x7FF0000000000000),
    ("float16", "-Infinity", 0xFC00),
    ("float32", "-Infinity", 0xFF800000),
    ("float64", "-Infinity", 0xFFF0000000000000),
    ("float16", "0x7e01", 0x7E01),
    ("float32", "0x7fc00001", 0x7FC00001),
    ("float64", "0x7ff8000000000001", 0x7FF8000000000001),
    ("float32", "0xffc00000", 0xFFC00000),          # negative NaN
    ("float32", "0x7f800001", 0x7F800001),          # signalling NaN: bits kept exactly
    ("float16", "0x3c00", 0x3C00),                  # 1.0
    ("float32", "0x3f800000", 0x3F800000),          # 1.0
    ("float64", "0xbff0000000000000", 0xBFF0000000000000),  # -1.0
    ("float32", "0x00000001", 0x00000001),          # smallest subnormal
    ("float64", -0.0, 0x8000000000000000),
    ("float32", 0.1, 0x3DCCCCCD),                   # rounded half to even from 0.1
    ("float16", 65504, 0x7BFF),
]


def _uint_view(dtype: str) -> str:
    return {"float16": "<u2", "float32": "<u4", "float64": "<u8"}[dtype]


@pytest.mark.parametrize("dtype,fill,bits", FLOAT_FILLS,
                         ids=[f"{d}-{f}" for d, f, _ in FLOAT_FILLS])
def test_v3_float_fill_values(tmp_path, dtype, fill, bits):
    v3_empty(tmp_path / "f", dtype, fill)
    a = zl.open(tmp_path / "f")
    got = np.ascontiguousarray(a[...])
    assert got.shape == (3, 2) and got.dtype == np.dtype(dtype)
    assert (got.astype(got.dtype.newbyteorder("<")).view(_uint_view(dtype)) == bits).all(), \
        [hex(x) for x in got.astype(got.dtype.newbyteorder("<")).view(_uint_view(dtype)).ravel()]
    fv = np.asarray(a.fill_value, dtype=dtype)
    ev = np.array(bits, dtype=_uint_view(dtype)).view(dtype)
    assert (np.isnan(fv) and np.isnan(ev)) or (fv == ev and np.signbit(fv) == np.signbit(ev)), \
        (a.fill_value, ev)


def test_v3_float_fill_mixed_with_written_chunk(tmp_path):
    path = tmp_path / "f"
    v3_empty(path, "float32", "NaN", shape=(4,), chunks=(2,))
    put(path / "c" / "1", np.array([1.5, -2.5], "<f4").tobytes())
    got = zl.open(path)[...]
    assert np.isnan(got[:2]).all() and got[2:].tolist() == [1.5, -2.5]


COMPLEX_FILLS = [
    ("complex64", ["NaN", 1.5], (0x7FC00000, np.float32(1.5).view("<u4"))),
    ("complex128", ["-Infinity", "NaN"], (0xFFF0000000000000, 0x7FF8000000000000)),
    ("complex64", ["0x7fc00001", "Infinity"], (0x7FC00001, 0x7F800000)),
    ("complex128", [1, -2], (np.float64(1).view("<u8"), np.float64(-2).view("<u8"))),
    ("complex64", ["Infinity", "0x3f800000"], (0x7F800000, 0x3F800000)),
]


@pytest.mark.parametrize("dtype,fill,bits", COMPLEX_FILLS,
                         ids=[f"{d}-{f[0]}-{f[1]}" for d, f, _ in COMPLEX_FILLS])
def test_v3_complex_fill_values(tmp_path, dtype, fill, bits):
    v3_empty(tmp_path / "c", dtype, fill)
    got = np.ascontiguousarray(zl.open(tmp_path / "c")[...])
    assert got.dtype == np.dtype(dtype)
    u = "<u4" if dtype == "complex64" else "<u8"
    parts = got.astype(got.dtype.newbyteorder("<")).view(u).reshape(3, 2, 2)
    assert (parts[..., 0] == bits[0]).all() and (parts[..., 1] == bits[1]).all()


INT_FILLS = [
    ("bool", True, np.True_),
    ("bool", False, np.False_),
    ("uint64", 18446744073709551615, np.uint64(2 ** 64 - 1)),
    ("int64", -9223372036854775808, np.int64(-2 ** 63)),
    ("int64", 9223372036854775807, np.int64(2 ** 63 - 1)),
    ("uint32", 4294967295, np.uint32(2 ** 32 - 1)),
    ("int8", -128, np.int8(-128)),
    ("uint8", 255, np.uint8(255)),
    ("int16", -1, np.int16(-1)),
]


@pytest.mark.parametrize("dtype,fill,expected", INT_FILLS,
                         ids=[f"{d}-{f}" for d, f, _ in INT_FILLS])
def test_v3_integer_and_bool_fill_values(tmp_path, dtype, fill, expected):
    codecs = [{"name": "bytes"}] if np.dtype(dtype).itemsize == 1 else None
    v3_empty(tmp_path / "i", dtype, fill, codecs=codecs)
    a = zl.open(tmp_path / "i")
    got = a[...]
    assert_same_values(got, np.full((3, 2), expected, dtype=dtype))
    assert np.asarray(a.fill_value, dtype=dtype) == expected


@pytest.mark.parametrize("bits", [16, 24, 8])
def test_v3_raw_bits_data_type(tmp_path, bits):
    n = bits // 8
    fill = list(range(1, n + 1))
    path = tmp_path / "raw"
    write_json(path / "zarr.json", v3_array_meta((5,), (2,), f"r{bits}", fill_value=fill,
                                                 codecs=[{"name": "bytes"}]))
    written = bytes(range(100, 100 + 2 * n))   # chunk 1 = elements 2, 3
    put(path / "c" / "1", written)
    a = zl.open(path)
    assert np.dtype(a.dtype).itemsize == n
    got = a[...]
    assert got.shape == (5,) and got.dtype.itemsize == n
    fill_b = bytes(fill)
    assert got.tobytes() == fill_b * 2 + written + fill_b
    assert got[3:4].tobytes() == written[n:]


@pytest.mark.parametrize("fill", [[1], [1, 2, 3], [256, 0], [-1, 0], 7],
                         ids=["too-short", "too-long", "out-of-range", "negative", "scalar"])
def test_v3_raw_bits_bad_fill(tmp_path, fill):
    path = tmp_path / "rawfill"
    write_json(path / "zarr.json", v3_array_meta((5,), (2,), "r16", fill_value=fill,
                                                 codecs=[{"name": "bytes"}]))
    with pytest.raises(zl.MetadataError, match=names("zarr.json", "fill")):
        zl.open(path)[...]


# ==============================================================================================
# Zarr v3 spelling variants: short-hand names, missing configuration, must_understand


def write_uint8(path: Path, codecs, chunk_key_encoding, sep: str, values=None, **extra) -> np.ndarray:
    values = np.arange(24, dtype="u1").reshape(4, 6) if values is None else values
    write_json(path / "zarr.json", v3_array_meta(values.shape, (2, 4), "uint8", fill_value=7,
                                                 codecs=codecs,
                                                 chunk_key_encoding=chunk_key_encoding, **extra))
    for idx in chunk_grid_iter(values.shape, (2, 4)):
        raw = padded_chunk(values, idx, (2, 4), 7).tobytes()
        blob = raw
        for c in codecs[1:]:
            name = c if isinstance(c, str) else c["name"]
            if name == "crc32c":
                blob = blob + crc32c_bytes(blob)
            elif name == "gzip":
                blob = gzip_mod.compress(blob)
            else:
                raise AssertionError(name)
        if chunk_key_encoding in ("v2",) or (isinstance(chunk_key_encoding, dict)
                                             and chunk_key_encoding.get("name") == "v2"):
            key = sep.join(map(str, idx))
        else:
            key = sep.join(["c", *map(str, idx)])
        put(path / key, blob)
    return values


SPELLINGS = [
    (["bytes"], "default", "/", "shorthand-bytes+default"),
    (["bytes", "crc32c"], {"name": "default"}, "/", "shorthand-crc+default-noconf"),
    ([{"name": "bytes"}, {"name": "crc32c"}], {"name": "v2"}, ".", "noconf+v2-noconf"),
    ([{"name": "bytes", "configuration": {}}], {"name": "default", "configuration": {}}, "/",
     "empty-conf"),
    (["bytes"], "v2", ".", "shorthand-v2"),
    ([{"name": "bytes"}], {"name": "default", "configuration": {"separator": "."}}, ".",
     "default-dot"),
    ([{"name": "bytes"}], {"name": "v2", "configuration": {"separator": "/"}}, "/", "v2-slash"),
    ([{"name": "bytes", "must_understand": True},
      {"name": "gzip", "configuration": {"level": 1}, "must_understand": True}],
     {"name": "default"}, "/", "codec-must-understand-true"),
    ([{"name": "bytes"}, {"name": "crc32c", "must_understand": False}],
     {"name": "default"}, "/", "known-codec-must-understand-false"),
    ([{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 5}, "must_understand": False}],
     {"name": "default"}, "/", "known-gzip-must-understand-false"),
]


@pytest.mark.parametrize("codecs,cke,sep", [s[:3] for s in SPELLINGS], ids=[s[3] for s in SPELLINGS])
def test_v3_spelling_variants(tmp_path, codecs, cke, sep):
    values = write_uint8(tmp_path / "u", codecs, cke, sep)
    a = zl.open(tmp_path / "u")
    assert_same_values(a[...], values)
    assert_same_values(a[1:3, 3:], values[1:3, 3:])


def test_v3_shorthand_chunk_grid_object_data_type(tmp_path):
    """data_type and chunk_key_encoding as extension objects without configuration."""
    values = np.arange(6, dtype="<i2")
    doc = v3_array_meta((6,), (4,), {"name": "int16"}, fill_value=-1,
                        codecs=[{"name": "bytes", "configuration": {"endian": "little"}}],
                        chunk_key_encoding={"name": "default"})
    write_json(tmp_path / "zarr.json", doc)
    put(tmp_path / "c" / "0", values[:4].tobytes())
    expected = values.copy()
    expected[4:] = -1
    assert_same_values(zl.open(tmp_path)[...], expected)


def test_v3_big_endian_bytes_codec(tmp_path):
    values = np.arange(-3, 3, dtype=">i4")
    write_json(tmp_path / "zarr.json", v3_array_meta(
        (6,), (3,), "int32", fill_value=0,
        codecs=[{"name": "bytes", "configuration": {"endian": "big"}}]))
    put(tmp_path / "c" / "0", values[:3].tobytes())
    put(tmp_path / "c" / "1", values[3:].tobytes())
    got = zl.open(tmp_path)[...]
    assert got.tolist() == values.tolist()


@pytest.mark.parametrize("where", ["array", "group", "root-group"])
def test_v3_must_understand_false_extension_fields(tmp_path, where):
    ext = {"must_understand": False, "name": "frobnicate.hint", "configuration": {"x": [1, 2]}}
    write_json(tmp_path / "zarr.json", v3_group_meta(**({"frob_ext": ext} if where == "root-group" else {})))
    write_json(tmp_path / "grp" / "zarr.json",
               v3_group_meta(**({"frob_ext": ext} if where == "group" else {})))
    values = np.arange(4, dtype="u1")
    write_json(tmp_path / "grp" / "arr" / "zarr.json", v3_array_meta(
        (4,), (4,), "uint8", fill_value=0, codecs=[{"name": "bytes"}],
        **({"frob_ext": ext} if where == "array" else {})))
    put(tmp_path / "grp" / "arr" / "c" / "0", values.tobytes())
    g = zl.open(tmp_path)
    assert_member_names(g, ["grp"])
    assert_same_values(g["grp/arr"][...], values)
    assert g["grp"].kind == "group"


def test_v3_consolidated_metadata_field_is_accepted(tmp_path):
    write_json(tmp_path / "zarr.json", v3_group_meta(consolidated_metadata={
        "must_understand": False, "kind": "inline", "metadata": {}}))
    write_json(tmp_path / "a" / "zarr.json", v3_array_meta((2,), (2,), "uint8", fill_value=3,
                                                           codecs=["bytes"]))
    g = zl.open(tmp_path)
    assert_same_values(g["a"][...], np.array([3, 3], "u1"))


def test_v3_attributes_and_dimension_names(tmp_path):
    attrs = {"unit": "µm", "nested": {"a": [1, None, "ü"]}, "nan": "NaN"}
    write_json(tmp_path / "zarr.json", v3_array_meta(
        (2, 3), (2, 3), "uint8", fill_value=0, codecs=["bytes"], attributes=attrs,
        dimension_names=["y", None]))
    a = zl.open(tmp_path)
    assert a.attrs == attrs
    assert list(a.dimension_names) == ["y", None]


def test_v3_transpose_codec_by_hand(tmp_path):
    values = np.arange(12, dtype="<u2").reshape(3, 4)
    write_json(tmp_path / "zarr.json", v3_array_meta(
        (3, 4), (3, 4), "uint16", fill_value=0,
        codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "bytes", "configuration": {"endian": "little"}}]))
    put(tmp_path / "c" / "0" / "0", np.ascontiguousarray(values.T).tobytes())
    assert_same_values(zl.open(tmp_path)[...], values)


def test_v3_zero_dim_array_key(tmp_path):
    """Spec: a 0-d array's only chunk has key 'c' (default) or '0' (v2 encoding)."""
    write_json(tmp_path / "d" / "zarr.json", v3_array_meta((), (), "int32", fill_value=0))
    put(tmp_path / "d" / "c", np.array(42, "<i4").tobytes())
    write_json(tmp_path / "v" / "zarr.json", v3_array_meta((), (), "int32", fill_value=0,
                                                           chunk_key_encoding={"name": "v2"}))
    put(tmp_path / "v" / "0", np.array(-7, "<i4").tobytes())
    assert zl.open(tmp_path / "d")[...].tolist() == 42
    assert zl.open(tmp_path / "v")[()].tolist() == -7


# ==============================================================================================
# Node names and broken children


UNICODE_NAMES = ["données", "日本語", "emoji🎉", "Ω mega", "ü"]


@pytest.mark.parametrize("fmt", [3, 2], ids=["v3", "v2"])
def test_non_ascii_node_names(tmp_path, fmt):
    root = tmp_path / "unicode.zarr"
    if fmt == 3:
        write_json(root / "zarr.json", v3_group_meta(attributes={"title": "naïve"}))
    else:
        write_json(root / ".zgroup", {"zarr_format": 2})
        write_json(root / ".zattrs", {"title": "naïve"})
    for i, name in enumerate(UNICODE_NAMES):
        if fmt == 3:
            write_json(root / name / "zarr.json", v3_array_meta((3,), (2,), "uint8",
                                                                fill_value=i, codecs=["bytes"]))
            put(root / name / "c" / "0", bytes([i, i + 1]))
        else:
            write_json(root / name / ".zarray", {
                "zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "|u1", "fill_value": i,
                "order": "C", "filters": None, "compressor": None})
            put(root / name / "0", bytes([i, i + 1]))
    # a nested group below a non-ASCII name
    if fmt == 3:
        write_json(root / "données" / "zarr.json", v3_group_meta())
        write_json(root / "données" / "température" / "zarr.json",
                   v3_array_meta((2,), (2,), "uint8", fill_value=9, codecs=["bytes"]))
    else:
        (root / "données" / ".zarray").unlink()
        (root / "données" / "0").unlink()
        write_json(root / "données" / ".zgroup", {"zarr_format": 2})
        write_json(root / "données" / "température" / ".zarray", {
            "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|u1", "fill_value": 9,
            "order": "C", "filters": None, "compressor": None})
    g = zl.open(root)
    assert g.attrs == {"title": "naïve"}
    assert_member_names(g, sorted(UNICODE_NAMES))
    if g.can_list_members:
        assert [m.path for m in g.members()] == ["/" + n for n in sorted(UNICODE_NAMES)]
    for i, name in enumerate(UNICODE_NAMES):
        if name == "données":
            continue
        a = g[name]
        assert a.name == name and a.path == "/" + name
        assert_same_values(a[...], np.array([i, i + 1, i], "u1"))
    t = g["données/température"]
    assert t.path == "/données/température" and t.name == "température"
    assert_same_values(t[...], np.array([9, 9], "u1"))
    assert_same_values(g["données"]["température"][...], np.array([9, 9], "u1"))
    with pytest.raises(zl.NodeNotFoundError, match=names("données")):
        g["données/nope"]


@pytest.mark.parametrize("breakage", ["truncated", "not-object", "unknown-codec", "bad-shape",
                                      "unknown-field"])
@pytest.mark.parametrize("fmt", [3, 2], ids=["v3", "v2"])
def test_group_with_broken_child(tmp_path, fmt, breakage):
    root = tmp_path / "family.zarr"
    ok = np.arange(4, dtype="u1")
    if fmt == 3:
        write_json(root / "zarr.json", v3_group_meta())
        for name in ("alpha", "broken_kid", "omega"):
            write_json(root / name / "zarr.json", v3_array_meta((4,), (4,), "uint8",
                                                                fill_value=0, codecs=["bytes"]))
            put(root / name / "c" / "0", ok.tobytes())
        key = "broken_kid/zarr.json"
    else:
        write_json(root / ".zgroup", {"zarr_format": 2})
        for name in ("alpha", "broken_kid", "omega"):
            write_json(root / name / ".zarray", {
                "zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "|u1", "fill_value": 0,
                "order": "C", "filters": None, "compressor": None})
            put(root / name / "0", ok.tobytes())
        key = "broken_kid/.zarray"
    p = root / key
    doc = json.loads(p.read_text())
    if breakage == "truncated":
        p.write_text(p.read_text()[:20])
    elif breakage == "not-object":
        p.write_text("[]")
    elif breakage == "unknown-codec":
        if fmt == 3:
            doc["codecs"] = ["bytes", {"name": "frobnicate_codec"}]
        else:
            doc["compressor"] = {"id": "frobnicate_codec"}
        p.write_text(json.dumps(doc))
    elif breakage == "bad-shape":
        doc["shape"] = [-4]
        p.write_text(json.dumps(doc))
    else:
        doc["frobnicate_field"] = 1
        p.write_text(json.dumps(doc))
        if fmt == 2:
            pytest.skip("v2 has no must_understand rule for extra .zarray fields")
    g = zl.open(root)
    if g.can_list_members:
        members = g.members()            # listing must not fail because one child is broken
        listed = [m.name for m in members]
        assert "alpha" in listed and "omega" in listed
    assert_same_values(g["alpha"][...], ok)
    assert_same_values(g["omega"][...], ok)
    with pytest.raises(zl.MetadataError, match=names("broken_kid")):
        n = g["broken_kid"]
        n[...]
    # opened directly, the broken document is the store's root key
    with pytest.raises(zl.MetadataError, match=names(key.split("/")[-1])):
        n = zl.open(root / "broken_kid")
        n[...]


# ==============================================================================================
# Zarr v2 hand-built


def v2_meta(shape, chunks, dtype, fill_value, **extra) -> dict:
    doc = {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype,
           "fill_value": fill_value, "order": "C", "filters": None, "compressor": None}
    doc.update(extra)
    return doc


def write_v2_meta_raw(path: Path, doc: dict) -> str:
    """json.dumps with Python's default allow_nan: NaN/Infinity become bare tokens."""
    path.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc)
    (path / ".zarray").write_text(text)
    return text


@pytest.mark.parametrize("token,check", [
    (float("nan"), math.isnan),
    (float("inf"), lambda x: x == math.inf),
    (float("-inf"), lambda x: x == -math.inf),
], ids=["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("dtype", ["<f8", "<f4", ">f8", "<f2"])
def test_v2_bare_nan_infinity_tokens(tmp_path, token, check, dtype):
    path = tmp_path / "bare"
    text = write_v2_meta_raw(path, v2_meta((5,), (2,), dtype, token))
    assert any(t in text for t in (": NaN", ": Infinity", ": -Infinity"))  # really bare tokens
    put(path / "1", np.array([1.25, -3.5], dtype=dtype).tobytes())
    a = zl.open(path)
    got = a[...]
    assert got.dtype.str[1:] == np.dtype(dtype).str[1:]
    assert all(check(float(got[i])) for i in (0, 1, 4))
    assert got[2:4].tolist() == [1.25, -3.5]
    assert check(float(a.fill_value))


@pytest.mark.parametrize("fill", ["NaN", "Infinity", "-Infinity"])
def test_v2_string_nan_fill(tmp_path, fill):
    path = tmp_path / "strnan"
    write_v2_meta_raw(path, v2_meta((3,), (2,), "<f4", fill))
    got = zl.open(path)[...]
    expected = float(fill.replace("Infinity", "inf"))
    assert_same_values(got, np.full(3, expected, "<f4"))


def test_v2_bare_nan_in_attributes(tmp_path):
    path = tmp_path / "attrs"
    write_v2_meta_raw(path, v2_meta((2,), (2,), "<f8", 0.0))
    (path / ".zattrs").write_text('{"missing": NaN, "top": Infinity, "ok": 1}')
    a = zl.open(path)
    assert math.isnan(a.attrs["missing"]) and a.attrs["top"] == math.inf and a.attrs["ok"] == 1


@pytest.mark.parametrize("fill_bytes", [b"ab\x00\xff", b"\x00\x00\x00\x00", b"zzzz", b"\x01"],
                         ids=["mixed", "zeros", "ascii", "short"])
def test_v2_fixed_bytes_fill_base64(tmp_path, fill_bytes):
    path = tmp_path / "sdt"
    fill_b64 = base64.standard_b64encode(fill_bytes).decode()
    write_v2_meta_raw(path, v2_meta((5,), (2,), "|S4", fill_b64))
    written = np.array([b"hi", b"\xde\xad\xbe\xef"], dtype="S4")
    put(path / "1", written.tobytes())
    got = zl.open(path)[...]
    expected = np.array([fill_bytes] * 2 + list(written) + [fill_bytes], dtype="S4")
    assert got.dtype == np.dtype("S4")
    assert got.tobytes() == expected.tobytes()


def test_v2_unicode_fixed_width(tmp_path):
    path = tmp_path / "udt"
    write_v2_meta_raw(path, v2_meta((3,), (2,), "<U3", ""))
    put(path / "0", np.array(["añ", "日本語"], dtype="<U3").tobytes())
    got = zl.open(path)[...]
    assert got.tolist() == ["añ", "日本語", ""]


@pytest.mark.parametrize("compressor", [None, {"id": "zlib", "level": 1}], ids=["raw", "zlib"])
def test_v2_nested_keys_without_dimension_separator(tmp_path, compressor):
    path = tmp_path / "nested"
    values = np.arange(30, dtype="<i2").reshape(5, 6)
    doc = v2_meta((5, 6), (2, 4), "<i2", -1, compressor=compressor)
    assert "dimension_separator" not in doc
    write_v2_meta_raw(path, doc)
    for idx in chunk_grid_iter((5, 6), (2, 4)):
        raw = padded_chunk(values, idx, (2, 4), -1).tobytes()
        if compressor:
            raw = zlib.compress(raw, 1)
        put(path / str(idx[0]) / str(idx[1]), raw)
    assert not (path / "0.0").exists()
    got = zl.open(path)[...]
    assert_same_values(got, values)


def test_v2_dot_keys_without_dimension_separator(tmp_path):
    path = tmp_path / "dotted"
    values = np.arange(6, dtype="<i2").reshape(2, 3)
    write_v2_meta_raw(path, v2_meta((2, 3), (1, 3), "<i2", 0))
    put(path / "0.0", values[0].tobytes())
    put(path / "1.0", values[1].tobytes())
    assert_same_values(zl.open(path)[...], values)


def test_v2_order_f_by_hand(tmp_path):
    path = tmp_path / "fortran"
    values = np.arange(12, dtype="<u4").reshape(3, 4)
    write_v2_meta_raw(path, v2_meta((3, 4), (3, 4), "<u4", 0, order="F"))
    put(path / "0.0", values.tobytes(order="F"))
    assert_same_values(zl.open(path)[...], values)


@pytest.mark.parametrize("with_attrs", [False, True], ids=["bare", "with-zattrs"])
@pytest.mark.needs_listing  # an implicit group is a folder: only a listing shows it
def test_v2_implicit_group(tmp_path, with_attrs):
    root = tmp_path / "implicit.zarr"
    values = np.arange(4, dtype="<i4")
    for name in ("arr", "other"):
        write_v2_meta_raw(root / name, v2_meta((4,), (4,), "<i4", 0))
        put(root / name / "0", values.tobytes())
    # nested implicit group too: deep/inner/.zarray with no .zgroup anywhere
    write_v2_meta_raw(root / "deep" / "inner", v2_meta((2,), (2,), "<i4", 5))
    if with_attrs:
        write_json(root / ".zattrs", {"a": 1})
    assert not (root / ".zgroup").exists()
    g = zl.open(root)
    assert g.kind == "group" and g.zarr_format == 2 and g.path == "/"
    assert_member_names(g, ["arr", "deep", "other"])
    assert_same_values(g["arr"][...], values)
    assert g["deep"].kind == "group"
    assert_same_values(g["deep/inner"][...], np.array([5, 5], "<i4"))
    if with_attrs:
        assert g.attrs == {"a": 1}


@pytest.mark.needs_listing
def test_v2_group_member_without_metadata_is_not_listed(tmp_path):
    root = tmp_path / "g.zarr"
    write_json(root / ".zgroup", {"zarr_format": 2})
    write_v2_meta_raw(root / "arr", v2_meta((2,), (2,), "|u1", 1))
    (root / "junk").mkdir()
    (root / "junk" / "notes.txt").write_text("not zarr")
    g = zl.open(root)
    assert_member_names(g, ["arr"])
