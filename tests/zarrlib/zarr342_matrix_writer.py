"""Writes one array for each layout zarr-python 3.4.2 offers (run in the Python 3.12 venv).

Usage: python zarr342_matrix_writer.py OUT_DIR

Zarr v3 and v2 formats; every serializer, compressor and filter zarr-python exposes (with
their settings), sharding with its index placements, index codecs and write orders, chunk
key encodings, memory orders, fill values with chunks never written, and every data type it
registers except the sub-byte, 8-bit float and bfloat16 types. For each case it writes
``OUT_DIR/NAME.zarr`` and zarr-python's own read of it as ``OUT_DIR/NAME.npy`` (text and
object arrays pickled), and ``OUT_DIR/manifest.json``: the cases written, and for each one
zarr-python refused to write, its error.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import zarr
import zarr.codecs as zc
import zarr.codecs.numcodecs as zn
from zarr.core.dtype import VariableLengthBytes

OUT = Path(sys.argv[1])
SHAPE, CHUNKS = (13, 17), (5, 6)
written: list[str] = []
refused: dict[str, str] = {}


def sample(dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = SHAPE[0] * SHAPE[1]
    if dtype == "bool":
        out = rng.integers(0, 2, n).astype(bool)
    elif dtype in ("str", "vlen-utf8"):
        words = ["", "a", "zarr", "grüße", "long " * 5, "𝔷"]
        out = np.array([words[i] for i in rng.integers(0, len(words), n)], dtype=object)
    elif dtype == "vlen-bytes":
        items = [b"", b"\x00\x01", b"bytes", b"x" * 40]
        out = np.array([items[i] for i in rng.integers(0, len(items), n)], dtype=object)
    elif dtype.startswith(("<U", "U")):
        out = np.array(["", "ab", "grüße", "zz"])[rng.integers(0, 4, n)].astype(dtype)
    elif dtype.startswith("S"):
        out = np.array([b"", b"ab", b"xyz\x00", b"q"])[rng.integers(0, 4, n)].astype(dtype)
    elif dtype.startswith("V"):
        out = np.frombuffer(rng.integers(0, 256, n * int(dtype[1:]), dtype="u1").tobytes(), dtype=dtype)
    elif dtype.startswith(("M8", "m8", "<M8", "<m8")):
        out = rng.integers(-10**6, 10**6, n).astype("i8").view(dtype)
    elif dtype == "struct":
        out = np.zeros(n, dtype=[("a", "<i4"), ("b", "<f8")])
        out["a"] = rng.integers(-100, 100, n)
        out["b"] = rng.normal(size=n)
    else:
        kind = np.dtype(dtype).kind
        if kind in "iu":
            info = np.iinfo(dtype)
            out = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        elif kind == "c":
            out = (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype)
        else:
            out = (rng.normal(scale=100, size=n)).astype(dtype)
    return out.reshape(SHAPE)


def case(name: str, dtype: str = "float32", *, region: tuple[slice, ...] | None = None,
         zdtype: Any = None, **kwargs: Any) -> None:
    """Write ``sample(dtype)`` (only ``region`` of it where given) with ``create_array(**kwargs)``."""
    path = OUT / f"{name}.zarr"
    try:
        data = sample(dtype, seed=len(written) + len(refused))
        kwargs.setdefault("chunks", CHUNKS)
        arr = zarr.create_array(str(path), shape=SHAPE, dtype=zdtype if zdtype is not None else data.dtype, **kwargs)
        where = region if region is not None else (slice(None), slice(None))
        arr[where] = data[where]
        back = zarr.open_array(str(path), mode="r")[...]
        if back.dtype.kind == "T":
            back = np.array(back.tolist(), dtype=object)
        np.save(OUT / f"{name}.npy", back, allow_pickle=True)
        written.append(name)
    except Exception as e:  # noqa: BLE001  (a layout zarr-python itself refuses is recorded, not fatal)
        refused[name] = f"{type(e).__name__}: {e}"[:300]
        if "-v" in sys.argv:
            traceback.print_exc()


def v3(name: str, **kwargs: Any) -> None:
    case(f"v3-{name}", zarr_format=3, **kwargs)


def v2(name: str, **kwargs: Any) -> None:
    case(f"v2-{name}", zarr_format=2, **kwargs)


CORE = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
        "float64", "complex64", "complex128"]
OTHER = ["<U7", "S5", "V3", "<M8[s]", "<M8[ns]", "<m8[ms]", "struct"]

for dt in CORE + OTHER:
    v3(f"dtype-{dt}", dtype=dt, zdtype=None if dt != "struct" else sample("struct").dtype, compressors=None)
    v3(f"dtype-{dt}-zstd-fill", dtype=dt, region=(slice(0, 6), slice(0, 7)))
    v2(f"dtype-{dt}", dtype=dt, region=(slice(0, 6), slice(0, 7)))
v3("dtype-str", dtype="str", zdtype=str)
v3("dtype-vlen-bytes", dtype="vlen-bytes", zdtype="variable_length_bytes")
v2("dtype-str", dtype="str", zdtype=str)
v2("dtype-vlen-bytes", dtype="vlen-bytes", zdtype=VariableLengthBytes())

for endian in ("little", "big"):
    for dt in ("int32", "float64", "complex64", "uint16"):
        v3(f"bytes-{endian}-{dt}", dtype=dt, serializer=zc.BytesCodec(endian=endian), compressors=None)
        v2(f"order-{endian}-{dt}", dtype=(">" if endian == "big" else "<") + np.dtype(dt).str[1:])
for level in (-3, 0, 5, 19):
    for checksum in (False, True):
        v3(f"zstd-{level}-{checksum}", compressors=zc.ZstdCodec(level=level, checksum=checksum))
for level in (0, 1, 9):
    v3(f"gzip-{level}", compressors=zc.GzipCodec(level=level))
for cname in ("lz4", "lz4hc", "blosclz", "zstd", "zlib"):
    for shuffle in ("noshuffle", "shuffle", "bitshuffle"):
        v3(f"blosc-{cname}-{shuffle}", dtype="int32",
           compressors=zc.BloscCodec(cname=cname, clevel=5, shuffle=shuffle))
v3("blosc-typesize-blocksize", dtype="float64",
   compressors=zc.BloscCodec(cname="zstd", clevel=3, shuffle="shuffle", typesize=8, blocksize=256))
v3("crc32c", compressors=[zc.ZstdCodec(), zc.Crc32cCodec()])
v3("crc32c-only", compressors=zc.Crc32cCodec())
v3("transpose", filters=[zc.TransposeCodec(order=(1, 0))])
v3("transpose-blosc", dtype="int16", filters=[zc.TransposeCodec(order=(1, 0))], compressors=zc.BloscCodec())
v3("shard-auto", dtype="uint16", chunks=(2, 3), shards=(4, 6), region=(slice(0, 9), slice(3, 17)))
v3("shard-edge", dtype="uint16", chunks=(5, 6), shards=(10, 12))
v3("shard-index-start", dtype="int32", chunks=(10, 12), compressors=None, serializer=zc.ShardingCodec(
    chunk_shape=(5, 6), index_location="start", codecs=[zc.BytesCodec(), zc.ZstdCodec()]))
v3("shard-index-nocrc", dtype="int32", chunks=(10, 12), compressors=None, serializer=zc.ShardingCodec(
    chunk_shape=(5, 3), index_codecs=[zc.BytesCodec()], codecs=[zc.BytesCodec(), zc.GzipCodec()]))
for order in ("morton", "unordered", "lexicographic", "colexicographic"):
    v3(f"shard-order-{order}", dtype="int32", chunks=(10, 12), compressors=None, serializer=zc.ShardingCodec(
        chunk_shape=(5, 3), subchunk_write_order=order, codecs=[zc.BytesCodec(), zc.ZstdCodec()]),
       region=(slice(0, 8), slice(0, 17)))
v3("shard-nested", dtype="int32", chunks=(10, 12), compressors=None, serializer=zc.ShardingCodec(
    chunk_shape=(5, 6), codecs=[zc.ShardingCodec(chunk_shape=(5, 3))]))
v3("shard-transpose", chunks=(2, 3), shards=(4, 6), filters=[zc.TransposeCodec(order=(1, 0))])
v3("shard-auto-strings", dtype="str", zdtype=str, chunks=(2, 3), shards=(4, 6))
v3("key-v2-dot", chunk_key_encoding={"name": "v2", "separator": "."})
v3("key-v2-slash", chunk_key_encoding={"name": "v2", "separator": "/"})
v3("key-default-dot", chunk_key_encoding={"name": "default", "separator": "."})
v3("dimension-names", dimension_names=["y", "x"], attributes={"a": [1, 2]})
v3("order-F", order="F")
v3("fill-nan", region=(slice(0, 5), slice(0, 6)), fill_value=np.nan)
v3("fill-inf", dtype="float64", region=(slice(0, 5), slice(0, 6)), fill_value=-np.inf)
v3("fill-int", dtype="int16", region=(slice(0, 5), slice(0, 6)), fill_value=-7)
v3("fill-complex", dtype="complex64", region=(slice(0, 5), slice(0, 6)), fill_value=1 + 2j)
v3("no-compressor-filters", filters=None, compressors=None)

NUMCODECS_V3: dict[str, Callable[[], Any]] = {
    "lz4": lambda: dict(compressors=zn.LZ4(acceleration=2)),
    "lzma": lambda: dict(compressors=zn.LZMA(preset=1)),
    "bz2": lambda: dict(compressors=zn.BZ2(level=3)),
    "zlib": lambda: dict(compressors=zn.Zlib(level=4)),
    "zstd": lambda: dict(compressors=zn.Zstd(level=2)),
    "gzip": lambda: dict(compressors=zn.GZip(level=2)),
    "blosc": lambda: dict(compressors=zn.Blosc(cname="lz4", clevel=4, shuffle=1)),
    "shuffle": lambda: dict(compressors=[zn.Shuffle(elementsize=4), zn.Zlib()]),
    "adler32": lambda: dict(compressors=zn.Adler32()),
    "crc32": lambda: dict(compressors=zn.CRC32()),
    "crc32c": lambda: dict(compressors=zn.CRC32C()),
    "fletcher32": lambda: dict(compressors=zn.Fletcher32()),
    "jenkins": lambda: dict(compressors=zn.JenkinsLookup3()),
    "delta": lambda: dict(filters=[zn.Delta(dtype="<f4")]),
    "fixedscaleoffset": lambda: dict(filters=[zn.FixedScaleOffset(offset=0, scale=10, dtype="<f4", astype="<i4")]),
    "quantize": lambda: dict(filters=[zn.Quantize(digits=2, dtype="<f4")]),
    "astype": lambda: dict(filters=[zn.AsType(encode_dtype="<f8", decode_dtype="<f4")]),
    "bitround": lambda: dict(filters=[zn.BitRound(keepbits=6)]),
    "pcodec": lambda: dict(serializer=zn.PCodec(level=4), compressors=None),
}
for name, make in NUMCODECS_V3.items():
    try:
        kwargs = make()
    except Exception as e:  # noqa: BLE001
        refused[f"v3-numcodecs-{name}"] = f"{type(e).__name__}: {e}"[:300]
        continue
    v3(f"numcodecs-{name}", **kwargs)

import numcodecs  # noqa: E402  (v2 compressors and filters are numcodecs objects)

NUMCODECS_V2: dict[str, Callable[[], dict[str, Any]]] = {
    "blosc-lz4": lambda: dict(compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)),
    "blosc-zstd-bit": lambda: dict(compressors=numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE)),
    "zstd": lambda: dict(compressors=numcodecs.Zstd(level=3)),
    "gzip": lambda: dict(compressors=numcodecs.GZip(level=5)),
    "zlib": lambda: dict(compressors=numcodecs.Zlib(level=1)),
    "bz2": lambda: dict(compressors=numcodecs.BZ2(level=1)),
    "lzma": lambda: dict(compressors=numcodecs.LZMA()),
    "lz4": lambda: dict(compressors=numcodecs.LZ4()),
    "none": lambda: dict(compressors=None),
    "delta": lambda: dict(filters=[numcodecs.Delta(dtype="<f4")]),
    "fixedscaleoffset": lambda: dict(filters=[numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f4", astype="<i4")]),
    "quantize": lambda: dict(filters=[numcodecs.Quantize(digits=2, dtype="<f4")]),
    "astype": lambda: dict(filters=[numcodecs.AsType(encode_dtype="<f8", decode_dtype="<f4")]),
    "bitround": lambda: dict(filters=[numcodecs.BitRound(keepbits=6)]),
    "shuffle": lambda: dict(filters=[numcodecs.Shuffle(elementsize=4)]),
    "crc32-filter": lambda: dict(filters=[numcodecs.CRC32()], compressors=None),
    "fletcher32-filter": lambda: dict(filters=[numcodecs.Fletcher32()], compressors=None),
    "order-F": lambda: dict(order="F"),
    "separator-slash": lambda: dict(chunk_key_encoding={"name": "v2", "separator": "/"}),
    "fill-none": lambda: dict(fill_value=None, region=(slice(0, 5), slice(0, 6))),
    "fill-nan": lambda: dict(fill_value=np.nan, region=(slice(0, 5), slice(0, 6))),
}
for name, make in NUMCODECS_V2.items():
    v2(f"numcodecs-{name}", **make())
v2("vlen-utf8-zstd", dtype="str", zdtype=str, filters=[numcodecs.VLenUTF8()], compressors=numcodecs.Zstd())

def shaped(name: str, shape: tuple[int, ...], chunks: Any, **kwargs: Any) -> None:
    """An array of another shape (a scalar, an empty one, one with a chunk larger than itself)."""
    path = OUT / f"{name}.zarr"
    try:
        arr = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype="int32", fill_value=-4, **kwargs)
        if arr.size:
            arr[...] = np.arange(arr.size, dtype="int32").reshape(shape)
        np.save(OUT / f"{name}.npy", zarr.open_array(str(path), mode="r")[...])
        written.append(name)
    except Exception as e:  # noqa: BLE001
        refused[name] = f"{type(e).__name__}: {e}"[:300]


for fmt in (2, 3):
    shaped(f"v{fmt}-scalar", (), (), zarr_format=fmt)
    shaped(f"v{fmt}-empty", (0, 4), (2, 2), zarr_format=fmt)
    shaped(f"v{fmt}-chunk-past-shape", (3, 5), (8, 8), zarr_format=fmt)
    shaped(f"v{fmt}-1d-long", (1000,), (7,), zarr_format=fmt)
    shaped(f"v{fmt}-4d", (2, 3, 4, 5), (1, 2, 3, 2), zarr_format=fmt)
shaped("v3-shard-4d", (4, 6, 4, 6), (1, 2, 2, 3), shards=(2, 4, 4, 6))

(OUT / "manifest.json").write_text(json.dumps({"written": written, "refused": refused}))
print(f"{len(written)} written, {len(refused)} refused")
