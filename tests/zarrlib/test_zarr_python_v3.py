"""Conformance of ``zarrview.zarrlib`` with Zarr v3 stores written by zarr-python 3.

Every store is written at test time by ``zarr.create_array(..., zarr_format=3)`` (sometimes with
its ``zarr.json`` edited afterwards to use a form zarr-python does not emit), then read with
``zl.open(path)`` and compared with

* the numpy data that was written (or the fill value where nothing was written), and
* zarr-python's own read of the same store (where zarr-python can read it).

Metadata attributes (shape, dtype, chunks, shards, fill_value, dimension_names, attrs, ...) are
compared with what zarr-python reports.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numpy as np
import pytest
import zarr
import zarr.codecs.numcodecs as zn
from zarr.codecs import (
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)

import zarrview.zarrlib as zl
from conformance_cases import DEFAULT, V3, ArrayConformance, Built, Case, Cases
from conformance_helpers import assert_member_names, transport  # noqa: F401  (autouse: every test also runs over HTTP)
from conformance_helpers import CONFORMANCE_MARKS, assert_array_matches, load_json, sample_data
from conformance_hierarchy import HierarchyConformance

pytestmark = CONFORMANCE_MARKS

CASES = Cases()
add = CASES.add


# --------------------------------------------------------------------------- core data types

CORE_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]

for _i, _dt in enumerate(CORE_DTYPES):
    # 7x9 with 3x4 chunks: overhanging edge chunks in both dimensions
    add(Case(f"dtype-{_dt}", sample_data(_dt, (7, 9), seed=_i), chunks=(3, 4)))

for _i, _dt in enumerate(["int16", "uint32", "int64", "uint64", "float16", "float32", "float64",
                          "complex64", "complex128"]):
    add(Case(f"bytes-big-endian-{_dt}", sample_data(_dt, (6, 5), seed=100 + _i), chunks=(4, 3),
             kwargs=dict(serializer=BytesCodec(endian="big")), codec_names=("bytes",)))
    add(Case(f"bytes-little-endian-{_dt}", sample_data(_dt, (6, 5), seed=200 + _i), chunks=(4, 3),
             kwargs=dict(serializer=BytesCodec(endian="little"), compressors=None)))


def _drop_bytes_config(doc: dict) -> None:
    for c in doc["codecs"]:
        if c["name"] == "bytes":
            c.pop("configuration", None)


for _dt in ["int8", "uint8", "bool"]:
    add(Case(f"bytes-no-endian-config-{_dt}", sample_data(_dt, (5, 4), seed=7), chunks=(2, 3),
             edit=_drop_bytes_config))

# --------------------------------------------------------------------------- fill values
# 10x12 array, 4x5 chunks; only the first chunk and a part of the middle one are written, so the
# other chunks are missing and must read as the fill value.

# 10x12 arrays in 4x5 chunks, partly written: the missing chunks read as the fill value (Cases.fill_case).

CASES.fill_case("float32-NaN", "float32", fill=np.nan)
CASES.fill_case("float64-Infinity", "float64", fill=np.inf)
CASES.fill_case("float64-minus-Infinity", "float64", fill=-np.inf)
CASES.fill_case("float16-NaN", "float16", fill=np.nan)
CASES.fill_case("float32-minus-zero", "float32", fill=-0.0, bits=True)
CASES.fill_case("float64-value", "float64", fill=-1.25e300)
CASES.fill_case("float32-hex-nan-payload", "float32", fill=0.0, edit_fill="0x7fc00001",
           expected_fill=np.frombuffer(np.uint32(0x7FC00001).tobytes(), "<f4")[0], bits=True)
CASES.fill_case("float32-hex-canonical-nan", "float32", fill=0.0, edit_fill="0x7fc00000",
           expected_fill=np.float32(np.nan), bits=True)
CASES.fill_case("float32-hex-minus-inf", "float32", fill=0.0, edit_fill="0xff800000",
           expected_fill=np.float32(-np.inf), bits=True)
CASES.fill_case("float64-hex-nan-payload", "float64", fill=0.0, edit_fill="0x7ff8000000000001",
           expected_fill=np.frombuffer(np.uint64(0x7FF8000000000001).tobytes(), "<f8")[0],
           bits=True)
CASES.fill_case("float64-hex-one", "float64", fill=0.0, edit_fill="0x3ff0000000000000",
           expected_fill=np.float64(1.0), bits=True)
CASES.fill_case("float16-hex-one", "float16", fill=0.0, edit_fill="0x3c00",
           expected_fill=np.float16(1.0), bits=True)
CASES.fill_case("float16-hex-minus-inf", "float16", fill=0.0, edit_fill="0xfc00",
           expected_fill=np.float16(-np.inf), bits=True)
CASES.fill_case("float32-string-NaN-edited", "float32", fill=0.0, edit_fill="NaN",
           expected_fill=np.float32(np.nan))
CASES.fill_case("float64-string-Infinity-edited", "float64", fill=0.0, edit_fill="-Infinity",
           expected_fill=-np.inf)
CASES.fill_case("int32-negative", "int32", fill=-7)
CASES.fill_case("int8-min", "int8", fill=-128)
CASES.fill_case("int64-min", "int64", fill=np.iinfo("int64").min)
CASES.fill_case("uint64-max", "uint64", fill=np.iinfo("uint64").max)
CASES.fill_case("uint16-default", "uint16")
CASES.fill_case("bool-true", "bool", fill=True)
CASES.fill_case("complex64-pair", "complex64", fill=1.5 - 2j)
CASES.fill_case("complex128-nan-inf-edited", "complex128", fill=0j, edit_fill=["NaN", "Infinity"],
           expected_fill=complex(np.nan, np.inf))
CASES.fill_case("complex64-minus-inf-edited", "complex64", fill=0j, edit_fill=["-Infinity", 2.5],
           expected_fill=complex(-np.inf, 2.5))
CASES.fill_case("complex64-hex-edited", "complex64", fill=0j, edit_fill=["0x3f800000", "0x7fc00000"],
           expected_fill=complex(1.0, np.nan), bits=True)
CASES.fill_case("complex128-hex-edited", "complex128", fill=0j,
           edit_fill=["0x4000000000000000", "0xfff0000000000000"],
           expected_fill=complex(2.0, -np.inf), bits=True)
CASES.fill_case("float64-int-literal-edited", "float64", fill=0.0, edit_fill=3,
           expected_fill=np.float64(3.0))

add(Case("fill-nothing-written", sample_data("int16", (9, 11)), chunks=(4, 4), fill_value=42,
         write=None))
add(Case("fill-nothing-written-nan", sample_data("float64", (9, 11)), chunks=(4, 4),
         fill_value=np.nan, write=None))
add(Case("fill-region-inside-one-chunk", sample_data("uint8", (9, 11)), chunks=(4, 4),
         fill_value=9, write=(slice(5, 6), slice(1, 3))))

# --------------------------------------------------------------------------- shapes


def _zero_d(value: Any, dtype: str) -> np.ndarray:
    return np.array(value, dtype=dtype)


add(Case("0d-float64", _zero_d(5.5, "float64"), chunks=(), fill_value=3.0))
add(Case("0d-int16-missing", _zero_d(0, "int16"), chunks=(), fill_value=-3, write=None))
add(Case("0d-complex128", _zero_d(1 + 2j, "complex128"), chunks=()))
add(Case("0d-bool", _zero_d(True, "bool"), chunks=()))
add(Case("zero-length-first-dim", np.zeros((0, 5), "int16"), chunks=(2, 2)))
add(Case("zero-length-middle-dim", np.zeros((4, 0, 3), "float32"), chunks=(2, 2, 2)))
add(Case("zero-length-1d", np.zeros((0,), "uint8"), chunks=(3,)))
add(Case("1d-long", sample_data("int32", (1000,)), chunks=(64,)))
add(Case("3d", sample_data("float32", (5, 6, 7)), chunks=(2, 3, 4)))
add(Case("4d", sample_data("int16", (3, 4, 5, 2)), chunks=(2, 3, 2, 1)))
add(Case("chunk-larger-than-array", sample_data("int32", (7, 9)), chunks=(100, 50)))
add(Case("chunk-size-one", sample_data("int8", (4, 5)), chunks=(1, 1)))
add(Case("chunk-equal-to-array", sample_data("uint32", (6, 8)), chunks=(6, 8)))
add(Case("dimension-names", sample_data("int16", (4, 6)), chunks=(3, 3),
         kwargs=dict(dimension_names=["y", "x"])))
add(Case("dimension-names-partial-null", sample_data("int16", (4, 6, 2)), chunks=(3, 3, 2),
         kwargs=dict(dimension_names=[None, "x", "band"])))
add(Case("dimension-names-all-null", sample_data("int16", (4, 6)), chunks=(3, 3),
         kwargs=dict(dimension_names=[None, None])))
add(Case("attributes-key-absent", sample_data("int16", (4, 6)), chunks=(3, 3),
         edit=lambda d: d.pop("attributes", None), expect=dict(attrs={})))
add(Case("attributes", sample_data("int16", (4, 6)), chunks=(3, 3),
         kwargs=dict(attributes={"title": "Tëst 🎉", "scale": 0.5, "n": [1, 2, {"a": None}],
                                 "flag": True, "empty": {}})))

# --------------------------------------------------------------------------- chunk key encodings


def _expect_key(*parts: str) -> Callable[[Path], None]:
    def check(path: Path) -> None:
        assert (path.joinpath(*parts)).is_file(), f"fixture: expected chunk file {parts} in {sorted(os.listdir(path))}"
    return check


def _set_cke(value: dict) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        doc["chunk_key_encoding"] = value
    return edit


_CKE_DATA = sample_data("int32", (7, 9), seed=5)
add(Case("cke-default-slash", _CKE_DATA, chunks=(3, 4),
         kwargs=dict(chunk_key_encoding={"name": "default", "separator": "/"}),
         post=_expect_key("c", "2", "2")))
add(Case("cke-default-dot", _CKE_DATA, chunks=(3, 4),
         kwargs=dict(chunk_key_encoding={"name": "default", "separator": "."}),
         post=_expect_key("c.2.2")))
add(Case("cke-v2-dot", _CKE_DATA, chunks=(3, 4),
         kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "."}),
         post=_expect_key("2.2")))
add(Case("cke-v2-slash", _CKE_DATA, chunks=(3, 4),
         kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "/"}),
         post=_expect_key("2", "2")))
add(Case("cke-default-no-configuration", _CKE_DATA, chunks=(3, 4),
         edit=_set_cke({"name": "default"}), post=_expect_key("c", "2", "2")))
add(Case("cke-default-empty-configuration", _CKE_DATA, chunks=(3, 4),
         edit=_set_cke({"name": "default", "configuration": {}}), post=_expect_key("c", "2", "2")))
add(Case("cke-v2-no-configuration", _CKE_DATA, chunks=(3, 4),
         kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "."}),
         edit=_set_cke({"name": "v2"}), post=_expect_key("2.2")))
add(Case("cke-v2-dot-3d", sample_data("uint8", (3, 4, 5)), chunks=(2, 2, 2),
         kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "."}),
         post=_expect_key("1.1.2")))
add(Case("cke-v2-0d", _zero_d(7, "int32"), chunks=(),
         kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "."}),
         post=_expect_key("0")))
add(Case("cke-default-0d", _zero_d(7, "int32"), chunks=(), post=_expect_key("c")))

# --------------------------------------------------------------------------- codecs

_F64 = (np.arange(40 * 50, dtype="float64").reshape(40, 50) * 0.25 - 100)
_I32 = (np.arange(40 * 50, dtype="int32").reshape(40, 50) * 37 - 5000)
_U16_3D = np.arange(6 * 7 * 8, dtype="uint16").reshape(6, 7, 8) * 13

add(Case("codec-no-compressor", _I32, chunks=(16, 16), kwargs=dict(compressors=None)))
add(Case("codec-transpose-2d", _I32, chunks=(16, 20),
         kwargs=dict(filters=[TransposeCodec(order=(1, 0))]), codec_names=("transpose",)))
for _order in [(0, 1, 2), (2, 0, 1), (1, 2, 0), (0, 2, 1), (2, 1, 0)]:
    add(Case("codec-transpose-3d-" + "".join(map(str, _order)), _U16_3D, chunks=(4, 3, 5),
             kwargs=dict(filters=[TransposeCodec(order=_order)]), codec_names=("transpose",)))
add(Case("codec-transpose-big-endian-gzip", _F64, chunks=(16, 20),
         kwargs=dict(filters=[TransposeCodec(order=(1, 0))], serializer=BytesCodec(endian="big"),
                     compressors=[GzipCodec(level=6)])))
add(Case("codec-transpose-twice", _U16_3D, chunks=(4, 3, 5),
         kwargs=dict(filters=[TransposeCodec(order=(2, 0, 1)), TransposeCodec(order=(1, 0, 2))])))
for _lvl in (0, 1, 9):
    add(Case(f"codec-gzip-level{_lvl}", _F64, chunks=(16, 20),
             kwargs=dict(compressors=[GzipCodec(level=_lvl)]), codec_names=("gzip",)))
for _cname, _shuffle, _dt in [
    ("lz4", "noshuffle", "float64"), ("lz4", "shuffle", "int32"), ("lz4hc", "bitshuffle", "float64"),
    ("zstd", "shuffle", "float64"), ("zstd", "bitshuffle", "int32"), ("zstd", "noshuffle", "int32"),
    ("zlib", "shuffle", "float64"), ("blosclz", "bitshuffle", "int32"), ("blosclz", "noshuffle", "float64"),
]:
    add(Case(f"codec-blosc-{_cname}-{_shuffle}-{_dt}", _F64 if _dt == "float64" else _I32,
             chunks=(16, 20), kwargs=dict(compressors=[BloscCodec(cname=_cname, clevel=5, shuffle=_shuffle)]),
             codec_names=("blosc",)))
add(Case("codec-blosc-blocksize-256", _F64, chunks=(16, 20),
         kwargs=dict(compressors=[BloscCodec(cname="lz4", clevel=9, shuffle="shuffle", blocksize=256)])))
add(Case("codec-blosc-typesize-mismatch", _F64, chunks=(16, 20),
         kwargs=dict(compressors=[BloscCodec(cname="zstd", clevel=3, shuffle="shuffle", typesize=2)])))
for _lvl, _ck in [(0, False), (3, False), (3, True), (19, True), (-3, False)]:
    add(Case(f"codec-zstd-level{_lvl}-checksum-{str(_ck).lower()}", _I32, chunks=(16, 20),
             kwargs=dict(compressors=[ZstdCodec(level=_lvl, checksum=_ck)]), codec_names=("zstd",)))
add(Case("codec-crc32c", _I32, chunks=(16, 20), kwargs=dict(compressors=[Crc32cCodec()]),
         codec_names=("crc32c",)))
add(Case("codec-gzip-then-crc32c", _I32, chunks=(16, 20),
         kwargs=dict(compressors=[GzipCodec(level=5), Crc32cCodec()]), codec_names=("gzip", "crc32c")))
add(Case("codec-crc32c-then-zstd", _F64, chunks=(16, 20),
         kwargs=dict(compressors=[Crc32cCodec(), ZstdCodec(level=1)])))
add(Case("codec-crc32c-big-endian", _I32, chunks=(16, 20),
         kwargs=dict(serializer=BytesCodec(endian="big"), compressors=[Crc32cCodec()])))

# numcodecs.* codecs, as zarr-python 3.1.6 writes them
_NUMCODECS: list[tuple[str, dict, np.ndarray, bool]] = [
    ("delta", dict(filters=[zn.Delta(dtype="int32")]), _I32, False),
    ("delta-float", dict(filters=[zn.Delta(dtype="float64")]), _F64, False),
    ("fixedscaleoffset", dict(filters=[zn.FixedScaleOffset(offset=100, scale=4, dtype="float64", astype="int32")]), _F64, False),
    ("quantize", dict(filters=[zn.Quantize(digits=3, dtype="float64")]), _F64 / 7, True),
    ("bitround", dict(filters=[zn.BitRound(keepbits=6)]), _F64 / 7, True),
    ("astype", dict(filters=[zn.AsType(encode_dtype="float32", decode_dtype="float64")]), _F64, False),
    ("zlib", dict(compressors=[zn.Zlib(level=5)]), _F64, False),
    ("gzip", dict(compressors=[zn.GZip(level=5)]), _F64, False),
    ("bz2", dict(compressors=[zn.BZ2(level=5)]), _F64, False),
    ("lzma", dict(compressors=[zn.LZMA()]), _F64, False),
    ("lz4", dict(compressors=[zn.LZ4()]), _I32, False),
    ("zstd", dict(compressors=[zn.Zstd(level=3)]), _I32, False),
    ("blosc", dict(compressors=[zn.Blosc(cname="lz4", shuffle=1)]), _F64, False),
    ("shuffle-zlib", dict(compressors=[zn.Shuffle(elementsize=8), zn.Zlib()]), _F64, False),
    ("adler32", dict(compressors=[zn.Adler32()]), _I32, False),
    ("fletcher32", dict(compressors=[zn.Fletcher32()]), _I32, False),
    ("crc32", dict(compressors=[zn.CRC32()]), _I32, False),
    ("crc32c", dict(compressors=[zn.CRC32C()]), _I32, False),
    ("jenkins_lookup3", dict(compressors=[zn.JenkinsLookup3()]), _I32, False),
    ("delta-zlib-adler32", dict(filters=[zn.Delta(dtype="int32")], compressors=[zn.Zlib(level=1), zn.Adler32()]), _I32, False),
]
for _name, _kw, _d, _lossy in _NUMCODECS:
    add(Case(f"numcodecs-{_name}", _d, chunks=(16, 20), kwargs=_kw, lossy=_lossy,
             codec_names=(_name.split("-")[0],)))
add(Case("numcodecs-packbits-bool", (np.arange(45) % 3 == 0).reshape(5, 9), chunks=(2, 4),
         kwargs=dict(filters=[zn.PackBits()]), codec_names=("packbits",)))

# --------------------------------------------------------------------------- sharding

_SH = np.arange(50 * 60, dtype="int32").reshape(50, 60) * 3 - 999
_SH_EDGE = _SH[:47, :58]


def _sharding(inner: tuple, codecs=None, index_location="end", index_codecs=None) -> ShardingCodec:
    kw: dict[str, Any] = dict(chunk_shape=inner, index_location=index_location)
    if codecs is not None:
        kw["codecs"] = codecs
    if index_codecs is not None:
        kw["index_codecs"] = index_codecs
    return ShardingCodec(**kw)


add(Case("shard-index-end", _SH, chunks=(5, 6), kwargs=dict(shards=(20, 30)),
         codec_names=("sharding",)))
add(Case("shard-index-start", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec(), ZstdCodec()], "start"),
                     compressors=None), codec_names=("sharding",)))
add(Case("shard-index-end-explicit-no-compression", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((10, 10), [BytesCodec()], "end"), compressors=None)))
add(Case("shard-index-no-crc32c", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec()], "end", [BytesCodec()]),
                     compressors=None)))
add(Case("shard-index-no-crc32c-start", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec()], "start", [BytesCodec()]),
                     compressors=None)))
add(Case("shard-index-crc32c-start", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec(), GzipCodec()], "start",
                                          [BytesCodec(), Crc32cCodec()]), compressors=None)))
add(Case("shard-index-big-endian", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec()], "end",
                                          [BytesCodec(endian="big"), Crc32cCodec()]),
                     compressors=None)))
add(Case("shard-partial-at-edge", _SH_EDGE, chunks=(5, 6), kwargs=dict(shards=(20, 30))))
add(Case("shard-partial-at-edge-start", _SH_EDGE, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec(), ZstdCodec()], "start"),
                     compressors=None)))
add(Case("shard-empty-inner-chunks", _SH, chunks=(5, 6), fill_value=-1,
         write=(slice(3, 12), slice(7, 19)), kwargs=dict(shards=(20, 30))))
add(Case("shard-empty-inner-chunks-start", _SH_EDGE, chunks=(20, 30), fill_value=5,
         write=(slice(18, 44), slice(25, 33)),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec(), ZstdCodec()], "start"),
                     compressors=None)))
add(Case("shard-nothing-written", _SH, chunks=(5, 6), fill_value=77, write=None,
         kwargs=dict(shards=(20, 30))))
add(Case("shard-zeros-not-stored", np.where(_SH % 7 == 0, _SH, 0).astype("int32") * (np.arange(60) > 40),
         chunks=(5, 6), kwargs=dict(shards=(20, 30))))
add(Case("shard-single-inner-chunk", _SH, chunks=(20, 30), kwargs=dict(shards=(20, 30))))
add(Case("shard-inner-transpose", _SH_EDGE, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [TransposeCodec(order=(1, 0)), BytesCodec(endian="big"),
                                                   GzipCodec()]), compressors=None)))
add(Case("shard-inner-crc32c", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec(), Crc32cCodec()]), compressors=None)))
# sharding_indexed followed by a codec over the whole shard: zarr-python 3.1.6 treats the shard
# as the chunk (chunks=(20, 30), shards=None); reporting the inner chunk and the shard is
# accepted too.
add(Case("shard-outer-compressor", _SH, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec()]), compressors=[GzipCodec()]),
         codec_names=("sharding", "gzip"),
         expect=dict(chunks=DEFAULT, shards=DEFAULT,
                     chunks_shards=[((20, 30), None), ((5, 6), (20, 30))])))
# transpose before sharding: zarr-python 3.1.6 reports chunks=(20, 20), shards=None (it only
# recognises a sharding codec that is the only codec); tensorstore's chunk layout reports the read
# chunk in array order, (4, 5) = the inner (5, 4) transposed back, and the shard.  Either answer
# is accepted; the inner chunk shape in the transposed order, (5, 4), is neither.
add(Case("shard-outer-transpose", _SH_EDGE, chunks=(20, 20),
         kwargs=dict(filters=[TransposeCodec(order=(1, 0))],
                     serializer=_sharding((5, 4), [BytesCodec(), ZstdCodec()]), compressors=None),
         expect=dict(chunks=DEFAULT, shards=DEFAULT,
                     chunks_shards=[((20, 20), None), ((4, 5), (20, 20))])))
add(Case("shard-3d", np.arange(9 * 10 * 11, dtype="float32").reshape(9, 10, 11), chunks=(2, 3, 4),
         kwargs=dict(shards=(4, 6, 8))))
add(Case("shard-float-nan-fill-partial", sample_data("float64", (30, 31)), chunks=(4, 5),
         fill_value=np.nan, write=(slice(0, 9), slice(11, 30)), kwargs=dict(shards=(8, 10))))
add(Case("shard-nested", _SH_EDGE, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((10, 15), [_sharding((5, 5), [BytesCodec()], "start")],
                                          "end"), compressors=None),
         codec_names=("sharding",), expect=dict(chunks=DEFAULT)))
add(Case("shard-nested-empty-inner", _SH, chunks=(20, 30), fill_value=3,
         write=(slice(2, 9), slice(33, 47)),
         kwargs=dict(serializer=_sharding((10, 15), [_sharding((5, 5), [BytesCodec(), ZstdCodec()], "end")],
                                          "start"), compressors=None)))
add(Case("shard-strings", np.array([f"s{i}-ü{'x' * (i % 5)}" for i in range(37)], dtype=object),
         dtype=str, chunks=(3,), kwargs=dict(shards=(12,))))

add(Case("shard-strings-missing-inner", np.array([f"v{i}-é" * (i % 4) for i in range(40)], dtype=object),
         dtype=str, chunks=(3,), fill_value="fill ü", write=(slice(13, 20),), kwargs=dict(shards=(12,))))
add(Case("shard-vlen-bytes", np.array([bytes([i % 256]) * (i % 5) for i in range(30)], dtype=object),
         dtype=zarr.dtype.VariableLengthBytes(), chunks=(4,), kwargs=dict(shards=(8,))))
add(Case("shard-inner-numcodecs-zlib", _SH_EDGE, chunks=(20, 30),
         kwargs=dict(serializer=_sharding((5, 6), [BytesCodec(), zn.Zlib(level=3)]), compressors=None)))
add(Case("shard-complex-big-endian", sample_data("complex128", (9, 10)), chunks=(4, 6),
         kwargs=dict(serializer=_sharding((2, 3), [BytesCodec(endian="big")], "start"), compressors=None)))


# --------------------------------------------------------------------------- strings and bytes

_STRS = np.array(
    ["", "a", "hello", "Grüße", "日本語", "🎉🎉", "tab\tnew\nline", "a\x00b", "x" * 40, "ß",
     "Ωmega", "", "end", "mixed ascii ü", "\u00e9\u0301", "last"] * 3 + ["extra", "π"],
    dtype=object,
)[:50]
add(Case("string-vlen-utf8", _STRS.reshape(5, 10), dtype=str, chunks=(2, 3),
         codec_names=("vlen-utf8",)))
add(Case("string-vlen-utf8-1d-uncompressed", _STRS, dtype=str, chunks=(7,),
         kwargs=dict(compressors=None)))
add(Case("string-vlen-utf8-missing-chunks", _STRS.reshape(5, 10), dtype=str, chunks=(2, 3),
         write=(slice(0, 2), slice(3, 7))))
add(Case("string-vlen-utf8-fill-value", _STRS.reshape(5, 10), dtype=str, chunks=(2, 3),
         fill_value="n/a ü", write=(slice(1, 4), slice(0, 2))))
add(Case("string-vlen-utf8-all-empty", np.array([""] * 12, dtype=object), dtype=str, chunks=(5,)))
add(Case("string-0d", np.array("zero-d ü", dtype=object), dtype=str, chunks=()))
add(Case("string-zero-length", np.array([], dtype=object), dtype=str, chunks=(4,)))

_BYTES = np.array([b"", b"a", b"\x00\xff\x00", b"bytes", b"\x80" * 30, b"z", b"\n", b"tail"] * 3,
                  dtype=object)[:22]
add(Case("bytes-vlen", _BYTES, dtype=zarr.dtype.VariableLengthBytes(), chunks=(4,),
         codec_names=("vlen-bytes",)))
add(Case("bytes-vlen-2d-missing", _BYTES[:20].reshape(4, 5), dtype=zarr.dtype.VariableLengthBytes(),
         chunks=(2, 2), write=(slice(0, 2), slice(1, 4))))


def _to_bytes_name(fill: Any) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        assert doc["data_type"] == "variable_length_bytes"
        doc["data_type"] = "bytes"
        doc["fill_value"] = fill
    return edit


add(Case("bytes-name-bytes-base64-fill", _BYTES[:20].reshape(4, 5),
         dtype=zarr.dtype.VariableLengthBytes(), chunks=(2, 2), write=(slice(0, 2), slice(2, 4)),
         edit=_to_bytes_name("AQID"), expected_fill=b"\x01\x02\x03",
         expect=dict(fill_value=b"\x01\x02\x03")))
add(Case("bytes-name-bytes-list-fill", _BYTES[:20].reshape(4, 5),
         dtype=zarr.dtype.VariableLengthBytes(), chunks=(2, 2), write=(slice(0, 2), slice(2, 4)),
         edit=_to_bytes_name([1, 2, 3]), expected_fill=b"\x01\x02\x03",
         zarr_readable=False,  # zarr-python 3.1.6 only accepts the base64 form
         expect=dict(shape=(4, 5), dtype=np.dtype(object), chunks=(2, 2), shards=None,
                     fill_value=b"\x01\x02\x03", dimension_names=None, attrs={})))

_U7 = np.array(["", "abc", "Grüße", "日本語テキスト", "🎉x", "seven77", "a"] * 4, dtype="<U7")[:24]
add(Case("fixed-length-utf32", _U7.reshape(4, 6), chunks=(3, 4)))
add(Case("fixed-length-utf32-missing-fill", _U7.reshape(4, 6), chunks=(3, 4), fill_value="ab",
         write=(slice(0, 3), slice(0, 4))))
add(Case("fixed-length-utf32-big-endian", _U7.reshape(4, 6), chunks=(3, 4),
         kwargs=dict(serializer=BytesCodec(endian="big"))))
_S5 = np.array([b"", b"a", b"hello", b"ab\x00", b"\xff\x01", b"12345"] * 3, dtype="|S5")
add(Case("null-terminated-bytes", _S5.reshape(3, 6), chunks=(2, 4)))
add(Case("null-terminated-bytes-missing-fill", _S5.reshape(3, 6), chunks=(2, 4), fill_value=b"zz",
         write=(slice(0, 2), slice(0, 4))))
_V4 = np.array([b"\x00\x01\x02\x03", b"\xff\xff\xff\xff", b"abcd", b"\x00\x00\x00\x00",
                b"\x10\x20\x30\x40"] * 4, dtype="|V4")
add(Case("raw-bytes", _V4.reshape(4, 5), chunks=(3, 2)))
add(Case("raw-bytes-missing-fill", _V4.reshape(4, 5), chunks=(3, 2), fill_value=np.void(b"WXYZ"),
         write=(slice(0, 3), slice(0, 2))))


def _to_r32(doc: dict) -> None:
    assert doc["data_type"]["name"] == "raw_bytes"
    doc["data_type"] = "r32"
    doc["fill_value"] = [1, 2, 3, 4]


add(Case("raw-r32-edited", _V4.reshape(4, 5), chunks=(3, 2), write=(slice(0, 3), slice(0, 2)),
         edit=_to_r32, expected_fill=np.void(b"\x01\x02\x03\x04"), zarr_readable=False,
         expect=dict(shape=(4, 5), dtype=np.dtype("V4"), chunks=(3, 2), shards=None,
                     fill_value=np.void(b"\x01\x02\x03\x04"), dimension_names=None, attrs={})))

# --------------------------------------------------------------------------- datetimes


def _times(unit: str, n: int = 14, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vals = rng.integers(-(10 ** 6), 10 ** 6, n).astype("int64")
    vals[:4] = [0, -1, 1, np.iinfo("int64").min]  # epoch, before, after, NaT
    return vals.view(f"M8[{unit}]")


for _unit in ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "10ms", "3s", "25us", "7D"]:
    add(Case(f"datetime64-{_unit}", _times(_unit).reshape(2, 7), chunks=(2, 3)))
for _unit in ["D", "h", "s", "ms", "us", "ns", "ps", "10ms", "3s"]:
    add(Case(f"timedelta64-{_unit}", _times(_unit, seed=1).view(f"m8[{_unit}]").reshape(2, 7),
             chunks=(2, 3)))
add(Case("datetime64-ns-missing-nat-fill", _times("ns").reshape(2, 7), chunks=(2, 3),
         write=(slice(None), slice(0, 3))))
add(Case("datetime64-s-missing-value-fill", _times("s").reshape(2, 7), chunks=(2, 3),
         fill_value=np.datetime64(86400 * 365, "s"), write=(slice(None), slice(0, 3))))
add(Case("datetime64-s-fill-NaT-string-edited", _times("s").reshape(2, 7), chunks=(2, 3),
         fill_value=np.datetime64(0, "s"), write=(slice(None), slice(0, 3)),
         edit=lambda d: d.__setitem__("fill_value", "NaT"), expected_fill=np.datetime64("NaT", "s")))
add(Case("timedelta64-ms-missing-value-fill", _times("ms").view("m8[ms]").reshape(2, 7), chunks=(2, 3),
         fill_value=np.timedelta64(-5, "ms"), write=(slice(None), slice(0, 3))))
add(Case("datetime64-big-endian", _times("us").reshape(2, 7), chunks=(2, 3),
         kwargs=dict(serializer=BytesCodec(endian="big"))))

# --------------------------------------------------------------------------- structured / struct

_ST_DT = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "u1")])
_ST = np.zeros(15, dtype=_ST_DT)
_ST["a"] = np.arange(15) * -3
_ST["b"] = np.linspace(-1, 1, 15)
_ST["c"] = np.arange(15) * 17 % 256
_ST_FILL = np.array((3, 1.5, 7), dtype=_ST_DT)[()]

add(Case("structured", _ST.reshape(3, 5), chunks=(2, 2)))
add(Case("structured-missing-fill", _ST.reshape(3, 5), chunks=(2, 2), fill_value=_ST_FILL,
         write=(slice(0, 2), slice(0, 2))))


def _to_struct(fill: Any) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        assert doc["data_type"]["name"] == "structured"
        doc["data_type"] = {"name": "struct", "configuration": {"fields": [
            {"name": "a", "data_type": "int32"},
            {"name": "b", "data_type": "float64"},
            {"name": "c", "data_type": "uint8"},
        ]}}
        doc["fill_value"] = fill
        for c in doc["codecs"]:
            if c["name"] == "bytes":
                c["configuration"] = {"endian": "little"}
    return edit


_ST_EXPECT = dict(shape=(3, 5), dtype=_ST_DT, chunks=(2, 2), shards=None, dimension_names=None,
                  attrs={})
add(Case("struct-edited-object-fields", _ST.reshape(3, 5), chunks=(2, 2), fill_value=_ST_FILL,
         write=(slice(0, 2), slice(0, 2)), edit=_to_struct({"a": 3, "b": 1.5, "c": 7}),
         zarr_readable=False, expect=dict(_ST_EXPECT, fill_value=_ST_FILL)))
add(Case("struct-edited-nan-fill", _ST.reshape(3, 5), chunks=(2, 2), fill_value=_ST_FILL,
         write=(slice(0, 2), slice(0, 2)), edit=_to_struct({"a": -1, "b": "NaN", "c": 255}),
         expected_fill=np.array((-1, np.nan, 255), dtype=_ST_DT)[()], zarr_readable=False,
         expect=dict(_ST_EXPECT, fill_value=np.array((-1, np.nan, 255), dtype=_ST_DT)[()])))



def _struct_big_endian_chunks(path: Path) -> None:
    """Rewrite the (uncompressed, little-endian) chunks written by zarr-python big-endian."""
    for dirpath, _, files in os.walk(path / "c"):
        for f in files:
            p = Path(dirpath) / f
            p.write_bytes(np.frombuffer(p.read_bytes(), _ST_DT).astype(_ST_DT.newbyteorder(">")).tobytes())


def _to_struct_big_endian(doc: dict) -> None:
    _to_struct({"a": 3, "b": 1.5, "c": 7})(doc)
    for c in doc["codecs"]:
        if c["name"] == "bytes":
            c["configuration"] = {"endian": "big"}


add(Case("struct-edited-big-endian", _ST.reshape(3, 5), chunks=(2, 2), fill_value=_ST_FILL,
         write=(slice(0, 2), slice(0, 2)), edit=_to_struct_big_endian, post=_struct_big_endian_chunks,
         zarr_readable=False, kwargs=dict(compressors=None),
         expect=dict(_ST_EXPECT, fill_value=_ST_FILL)))

_NEST_FLAT = np.dtype([("px", "<f4"), ("py", "<f4"), ("v", "<f8")])
_NEST_DT = np.dtype([("point", [("x", "<f4"), ("y", "<f4")]), ("v", "<f8")])
_NEST = np.zeros(10, dtype=_NEST_FLAT)
_NEST["px"] = np.arange(10) * 0.5
_NEST["py"] = -np.arange(10) * 2.0
_NEST["v"] = np.arange(10) ** 2


def _to_nested_struct(doc: dict) -> None:
    doc["data_type"] = {"name": "struct", "configuration": {"fields": [
        {"name": "point", "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "x", "data_type": "float32"},
            {"name": "y", "data_type": {"name": "float32"}},
        ]}}},
        {"name": "v", "data_type": "float64"},
    ]}}
    doc["fill_value"] = {"point": {"x": 1.0, "y": 2.0}, "v": 3.25}
    for c in doc["codecs"]:
        if c["name"] == "bytes":
            c["configuration"] = {"endian": "little"}


_NEST_FILL = np.array(((1.0, 2.0), 3.25), dtype=_NEST_DT)[()]
_nest_expected = _NEST.view(_NEST_DT).copy()
_nest_expected[6:] = _NEST_FILL
add(Case("struct-edited-nested", _NEST, chunks=(3,), write=(slice(0, 6),), edit=_to_nested_struct,
         expected_data=_nest_expected, zarr_readable=False,
         expect=dict(shape=(10,), dtype=_NEST_DT, chunks=(3,), shards=None, fill_value=_NEST_FILL,
                     dimension_names=None, attrs={})))
add(Case("structured-nested-zarr", _NEST.view(_NEST_DT).copy(), chunks=(4,)))

_STDT_DT = np.dtype([("t", "<M8[s]"), ("v", "<f4")])
_STDT = np.zeros(8, dtype=_STDT_DT)
_STDT["t"] = (np.arange(8) * 1000).astype("M8[s]")
_STDT["v"] = np.arange(8) / 4
add(Case("structured-datetime-field", _STDT, chunks=(3,)))


def _to_struct_dt(doc: dict) -> None:
    doc["data_type"] = {"name": "struct", "configuration": {"fields": [
        {"name": "t", "data_type": {"name": "numpy.datetime64",
                                     "configuration": {"unit": "s", "scale_factor": 1}}},
        {"name": "v", "data_type": "float32"},
    ]}}
    doc["fill_value"] = {"t": "NaT", "v": 0.5}
    for c in doc["codecs"]:
        if c["name"] == "bytes":
            c["configuration"] = {"endian": "little"}


_STDT_FILL = np.array((np.datetime64("NaT"), 0.5), dtype=_STDT_DT)[()]
add(Case("struct-edited-datetime-field", _STDT, chunks=(3,), write=(slice(0, 3),),
         edit=_to_struct_dt, expected_fill=_STDT_FILL, zarr_readable=False,
         expect=dict(shape=(8,), dtype=_STDT_DT, chunks=(3,), shards=None, fill_value=_STDT_FILL,
                     dimension_names=None, attrs={})))



class TestArrays(ArrayConformance):
    format = V3
    cases = CASES
    # selections against zarr-python's own reads (not only numpy) on representative layouts
    zarr_selection_cases = ["shard-partial-at-edge", "shard-nested", "codec-transpose-3d-201", "string-vlen-utf8",
                            "fill-float32-NaN", "datetime64-10ms", "structured", "cke-v2-dot-3d"]
    out_of_bounds_cases = ["dtype-int32", "0d-float64", "shard-index-end", "string-vlen-utf8"]

    def test_nested_sharding_chunks(self, built: Callable[[str], Built]) -> None:
        """Nested sharding: ``chunks`` is a chunk the array is read in, below the outer shard."""
        arr = zl.open(built("shard-nested").path)
        assert tuple(arr.shards) == (20, 30)
        assert tuple(arr.chunks) in {(10, 15), (5, 5)}


# --------------------------------------------------------------------------- hierarchies

_GROUP_DATA = {
    "a/b/arr": np.arange(24, dtype="int16").reshape(4, 6),
    "a/x": np.linspace(0, 1, 9).astype("float32"),
    "zeta": np.array([1, 2, 3], dtype="uint8"),
    "m": np.arange(12, dtype="float64").reshape(3, 4),
}
_GROUP_ATTRS = {
    "": {"title": "root ü 🎉", "nested": {"a": [1, 2, {"b": None}]}, "flag": False},
    "a": {"level": 1},
    "a/b": {"level": 2, "name": "b"},
    "a/b/c": {},
    "alpha": {"empty_group": True},
}


def _write_hierarchy(path: Any, consolidate: bool) -> Any:
    store = str(path) if isinstance(path, Path) else path
    root = zarr.open_group(store, mode="w", zarr_format=3)
    root.attrs.update(_GROUP_ATTRS[""])
    for name in ["a", "a/b", "a/b/c", "alpha"]:
        g = root.require_group(name)
        g.attrs.update(_GROUP_ATTRS[name])
    for name, data in _GROUP_DATA.items():
        parent, _, leaf = name.rpartition("/")
        g = root[parent] if parent else root
        kw = dict(dimension_names=["row", "col"]) if name == "m" else {}
        a = g.create_array(leaf, shape=data.shape, dtype=data.dtype, chunks=tuple(max(1, s // 2) for s in data.shape),
                           attributes={"array": name}, **kw)
        a[...] = data
    if consolidate:
        zarr.consolidate_metadata(store)
    return path


class TestHierarchy(HierarchyConformance):
    format = V3
    data = _GROUP_DATA
    attrs = _GROUP_ATTRS

    write_hierarchy = staticmethod(_write_hierarchy)

    def array_attrs(self, rel: str) -> dict[str, Any]:
        return {"array": rel}

    def dimension_names(self, rel: str) -> tuple[str, ...] | None:
        return ("row", "col") if rel == "m" else None


def test_consolidated_fixture_is_consolidated(tmp_path):
    p = _write_hierarchy(tmp_path / "c.zarr", True)
    assert "consolidated_metadata" in load_json(p / "zarr.json")



# --------------------------------------------------------------------------- locations


@pytest.fixture(scope="session")
def small_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("loc3") / "small.zarr"
    return _write_hierarchy(path, False)


def _zip_dir(src: Path, dst: Path) -> Path:
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_STORED) as zf:
        for dirpath, _, files in os.walk(src):
            for f in sorted(files):
                p = Path(dirpath) / f
                zf.write(p, p.relative_to(src).as_posix())
    return dst


@pytest.mark.parametrize("form", ["path", "str", "file-url", "zip", "zarr-zipstore", "memory"])
def test_open_locations(small_store, tmp_path, form):
    if form == "path":
        loc = small_store
    elif form == "str":
        loc = str(small_store)
    elif form == "file-url":
        loc = small_store.resolve().as_uri()
    elif form == "zip":
        loc = str(_zip_dir(small_store, tmp_path / "small.zip"))
    elif form == "zarr-zipstore":
        zpath = tmp_path / "zs.zip"
        store = zarr.storage.ZipStore(str(zpath), mode="w")
        _write_hierarchy(store, False)
        store.close()
        loc = str(zpath)
    else:
        store = zarr.storage.FsspecStore.from_url(f"memory://zarrview-test-{os.getpid()}/h.zarr",
                                                  read_only=False)
        _write_hierarchy(store, False)
        loc = f"memory://zarrview-test-{os.getpid()}/h.zarr"
    g = zl.open(loc)
    assert g.kind == "group"
    assert_member_names(g, ["a", "alpha", "m", "zeta"])
    assert dict(g.attrs) == _GROUP_ATTRS[""]
    for rel, data in _GROUP_DATA.items():
        assert_array_matches(g[rel][...], data)
