"""Generate the zarr-python 2.x test fixtures under ``tests/data/zarr2/``.

Why these fixtures are committed
--------------------------------
zarrview's own reader (``zarrview.zarrlib``) must read stores written by an
*independent* implementation.  zarr-python 3 (a test dependency) can write
Zarr v2 and final Zarr v3, but it cannot write several things real-world
data contains: the zarr 2.x-only object codecs (VLenArray, JSON, MsgPack,
Pickle, Categorize), legacy filters, ``NestedDirectoryStore`` quirks,
``ZipStore`` archives, and the *pre-final* Zarr v3 layout (root
``zarr.json`` + ``meta/root/...`` + ``data/root/...``, sharding storage
transformer) that zarr-python 2.x wrote with its experimental v3 API.
zarr 2.x cannot be installed beside zarr 3 in one environment, so the stores
are generated once with zarr 2.x in a throw-away virtualenv and committed.
The tests need only numpy to load the expected values.

How to regenerate
-----------------
::

    python3 -m venv /tmp/venv-zarr2
    /tmp/venv-zarr2/bin/pip install "zarr==2.18.7" "numcodecs==0.15.2" \\
        "numpy==2.4.6" "msgpack" "pytest"
    /tmp/venv-zarr2/bin/python tests/data/make_zarr2_fixtures.py

(``pytest`` is needed only because zarr 2.18 imports ``zarr.tests`` when it
decodes a v3 storage transformer.)  The script deletes and rewrites
``tests/data/zarr2/`` and ``tests/data/zarr2_expected/`` and nothing else,
then reopens every array with zarr 2.x and checks it against its expected
values.  With the same package versions the output is byte-for-byte
reproducible (the script pins gzip header mtimes to 0 and zip entry
timestamps to 2020-01-01).

Layout
------
* ``zarr2/<store>``: only what zarr 2.x wrote (plus the deliberate edits
  listed in the manifest: a deleted ``.zgroup``, removed
  ``dimension_separator`` keys).
* ``zarr2_expected/<store>/<array path>.npy``: the values each array must
  read as (``np.load(..., allow_pickle=True)`` for object arrays).
* ``zarr2_expected/MANIFEST.json``: every store, group and array with its
  format, dtype, shape, chunks, fill value, codecs, the chunks that were
  deliberately never written, and a description.  ``"must_refuse": true``
  marks an array a safe reader must refuse to decode (Pickle).
"""

from __future__ import annotations

import os

# Must be set before zarr is imported.
os.environ["ZARR_V3_EXPERIMENTAL_API"] = "1"
os.environ["ZARR_V3_SHARDING"] = "1"

import gzip  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numcodecs  # noqa: E402
import numcodecs.errors  # noqa: E402
import numcodecs.pickles  # noqa: E402
import numpy as np  # noqa: E402
import zarr  # noqa: E402
from numcodecs import (  # noqa: E402
    BZ2,
    JSON,
    LZ4,
    LZMA,
    AsType,
    Blosc,
    Categorize,
    Delta,
    FixedScaleOffset,
    GZip,
    MsgPack,
    PackBits,
    Pickle,
    Quantize,
    Shuffle,
    VLenArray,
    VLenBytes,
    VLenUTF8,
    Zlib,
    Zstd,
)

if not zarr.__version__.startswith("2."):
    sys.exit(f"this script needs zarr-python 2.x, found {zarr.__version__}")

from zarr._storage.v3 import DirectoryStoreV3  # noqa: E402
from zarr._storage.v3_storage_transformers import ShardingStorageTransformer  # noqa: E402

# Byte-reproducible output: pin the gzip header mtime (numcodecs GZip leaves it to
# the gzip module) and the timestamps ZipStore gives its entries.
gzip.time = types.SimpleNamespace(time=lambda: 0.0)
zarr.storage.time = types.SimpleNamespace(time=lambda: 1577836800.0, localtime=time.gmtime)

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", category=UserWarning)

HERE = Path(__file__).resolve().parent
OUT = HERE / "zarr2"
EXP = HERE / "zarr2_expected"

MANIFEST: dict = {
    "generator": "tests/data/make_zarr2_fixtures.py",
    "zarr_python": zarr.__version__,
    "numcodecs": numcodecs.__version__,
    "numpy": np.__version__,
    "notes": (
        "Expected values are in zarr2_expected/<store>/<array path>.npy. "
        "missing_chunks lists chunk grid indices that were never written and "
        "must read as fill_value. fill_value is the raw JSON value from the "
        "array metadata. zarr_format is 2 or '3-draft' (the pre-final v3 "
        "layout of zarr-python 2.x's experimental API)."
    ),
    "stores": [],
}


def rng_for(name: str) -> np.random.Generator:
    # stable across runs (the builtin hash() is salted)
    return np.random.default_rng(sum((i + 1) * ord(c) for i, c in enumerate(name)))


def chunk_slices(shape, chunks, idx):
    return tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))


def chunk_grid(shape, chunks):
    return [math.ceil(s / c) if c else 0 for s, c in zip(shape, chunks)]


# --------------------------------------------------------------------------
# store bookkeeping
# --------------------------------------------------------------------------


class StoreRec:
    def __init__(self, name, rel, kind, zarr_format, description, consolidated=False):
        self.entry = {
            "name": name,
            "path": rel,
            "kind": kind,
            "zarr_format": zarr_format,
            "consolidated": consolidated,
            "description": description,
            "groups": [],
            "arrays": [],
            "edits": [],
        }
        self.name = name
        MANIFEST["stores"].append(self.entry)

    def group(self, path, description, attrs=None, implicit=False):
        self.entry["groups"].append(
            {"path": path, "implicit": implicit, "attributes": attrs or {},
             "description": description}
        )

    def array(self, z, path, expected, description, missing=(), must_refuse=False,
              zarr_format=2, extra=None):
        exp_rel = f"zarr2_expected/{self.name}/{path}.npy"
        p = HERE / exp_rel
        p.parent.mkdir(parents=True, exist_ok=True)
        np.save(p, expected, allow_pickle=expected.dtype.hasobject)
        ent = {
            "path": path,
            "zarr_format": zarr_format,
            "dtype": z.dtype.str,
            "numpy_dtype": repr(z.dtype.descr) if z.dtype.fields else str(z.dtype),
            "shape": list(z.shape),
            "chunks": list(z.chunks),
            "order": z.order,
            "expected": exp_rel,
            "missing_chunks": [list(m) for m in missing],
            "must_refuse": must_refuse,
            "description": description,
        }
        ent.update(extra or {})
        self.entry["arrays"].append(ent)


def write_except(z, data, skip=()):
    """Write ``data`` chunk by chunk, never touching the chunks in ``skip``."""
    skip = {tuple(s) for s in skip}
    if z.ndim == 0:
        if () not in skip:
            z[...] = data
        return
    for idx in itertools.product(*(range(n) for n in chunk_grid(z.shape, z.chunks))):
        if idx in skip:
            continue
        sl = chunk_slices(z.shape, z.chunks, idx)
        z[sl] = data[sl]


def expected_with_fill(data, chunks, fill, skip=()):
    exp = data.copy()
    for idx in skip:
        if data.ndim == 0:
            exp[...] = fill
        else:
            exp[chunk_slices(data.shape, chunks, idx)] = fill
    return exp


def add_v2(rec, g, path, data, *, chunks, description, fill_value=0, skip=((1, 1),),
           expected=None, must_refuse=False, attrs=None, **kw):
    """Create array ``path`` in group ``g``, write it except ``skip`` chunks."""
    if fill_value is None and skip and not data.dtype.hasobject:
        raise ValueError("null fill value with missing chunks is undefined")
    z = g.create_dataset(path, shape=data.shape, chunks=chunks, dtype=data.dtype,
                         fill_value=fill_value, **kw)
    if attrs:
        z.attrs.update(attrs)
    write_except(z, data, skip)
    base = data if expected is None else expected
    exp = expected_with_fill(base, z.chunks, z.fill_value, skip)
    full = (g.path + "/" + path) if g.path else path
    meta = json.loads(g.store[_meta_key(full)])
    extra = {
        "dtype_metadata": meta["dtype"],
        "fill_value": meta["fill_value"],
        "compressor": meta["compressor"],
        "filters": meta["filters"],
        "dimension_separator": meta.get("dimension_separator"),
    }
    rec.array(z, full, exp, description, missing=skip, must_refuse=must_refuse, extra=extra)
    return z


def _meta_key(path):
    return (path + "/.zarray") if path else ".zarray"


# --------------------------------------------------------------------------
# Zarr v2 stores
# --------------------------------------------------------------------------

SHAPE = (10, 13)
CHUNKS = (4, 5)  # 3x3 chunk grid, last row/column of chunks overhang the edge
# smaller variant for the many-array stores: 2x2 chunk grid, both edges overhang
SMALL, SMALL_CHUNKS, SMALL_SKIP = (7, 9), (4, 5), ((0, 1),)


def make_data(dtype, name, shape=SHAPE):
    dt = np.dtype(dtype)
    r = rng_for(name)
    n = int(np.prod(shape))
    k = dt.kind
    if dt.fields:
        out = np.zeros(shape, dtype=dt)
        for fname in dt.names:
            out[fname] = make_data(dt.fields[fname][0], name + fname, shape)
        return out
    if dt.subdtype is not None:  # subarray field
        base, sub = dt.subdtype
        return make_data(base, name, shape + sub)
    if k == "b":
        return (r.integers(0, 2, n) == 1).reshape(shape)
    if k in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -(10**6)), min(info.max, 10**6)
        vals = r.integers(lo, hi, n, dtype=np.int64).astype(dt)
        flat = vals.reshape(-1)
        if n > 2:  # include the extremes
            flat[0] = info.max
            flat[1] = info.min
        return flat.reshape(shape)
    if k == "f":
        vals = (r.standard_normal(n) * 100).astype(dt)
        if n > 3:
            vals[0], vals[1], vals[2] = np.inf, -np.inf, -0.0
        return vals.reshape(shape)
    if k == "c":
        vals = (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(dt)
        return vals.reshape(shape)
    if k == "M":
        unit = np.datetime_data(dt)[0]
        base = np.datetime64("2001-02-03T04:05:06", "s").astype(dt)
        vals = base + r.integers(-10**6, 10**6, n).astype(f"m8[{unit}]")
        vals = vals.astype(dt)
        if n > 1:
            vals[1] = np.datetime64("NaT")
        return vals.reshape(shape)
    if k == "m":
        vals = r.integers(-10**6, 10**6, n).astype(dt)
        if n > 1:
            vals[1] = np.timedelta64("NaT")
        return vals.reshape(shape)
    if k == "S":
        words = [b"", b"a", b"ab\x00c", b"hello", b"zarr!", b"\xff\xfe", b"xyz"]
        return np.array([words[i % len(words)] for i in r.integers(0, 99, n)],
                        dtype=dt).reshape(shape)
    if k == "U":
        words = ["", "a", "\u00e9t\u00e9", "\u2713ok", "zarr", "\U0001f600", "\u03a9\u03c9"]
        words = [w[: dt.itemsize // 4] for w in words]
        return np.array([words[i % len(words)] for i in r.integers(0, 99, n)],
                        dtype=dt).reshape(shape)
    if k == "V":
        return np.frombuffer(r.bytes(n * dt.itemsize), dtype=dt).reshape(shape).copy()
    raise TypeError(dt)


def store_dtypes():
    name = "v2_dtypes"
    path = OUT / name
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "One array per dtype, both byte orders; default Blosc(lz4) compressor; "
                   "shape (7,9), chunks (4,5); chunk (0,1) of every array never written.")
    g = zarr.open_group(zarr.DirectoryStore(str(path)), mode="w")
    rec.group("", "root group")
    dtypes = {
        "i2_le": "<i2", "i4_be": ">i4", "u8_le": "<u8", "f8_be": ">f8", "f2_le": "<f2",
        "c8_le": "<c8", "c16_be": ">c16", "b1": "|b1", "i1": "|i1", "u1": "|u1",
        "u2_be": ">u2", "f4_le": "<f4",
        "M8_ns": "<M8[ns]", "M8_D": "<M8[D]", "m8_s": "<m8[s]", "M8_ms_be": ">M8[ms]",
        "S5": "|S5", "U4_le": "<U4", "U3_be": ">U3", "V6": "|V6",
    }
    for aname, dt in dtypes.items():
        add_v2(rec, g, aname, make_data(dt, aname, SMALL), chunks=SMALL_CHUNKS, skip=SMALL_SKIP,
               description=f"dtype {dt}, fill 0")
    structs = {
        "struct_flat": ([("x", "<i4"), ("y", "<f8"), ("flag", "|b1"), ("name", "|S3")],
                        "flat structured dtype"),
        "struct_nested": ([("id", "<u2"),
                           ("inner", [("a", "<i2"), ("b", [("c", "<f4"), ("d", "|u1")])])],
                          "nested structured dtype (two levels)"),
        "struct_subarray": ([("pos", "<f4", (3,)), ("rgb", "|u1", (3,)), ("w", "<f8")],
                            "structured dtype with subarray fields"),
        "struct_be": ([("a", ">i4"), ("b", ">f8"), ("c", "<u2"), ("d", ">U2")],
                      "structured dtype with mixed big/little-endian fields"),
    }
    for aname, (descr, what) in structs.items():
        dt = np.dtype(descr)
        add_v2(rec, g, aname, make_data(dt, aname, SMALL), chunks=SMALL_CHUNKS, skip=SMALL_SKIP,
               description=what + ", fill 0 (all-zero bytes)")


def store_order():
    name = "v2_order"
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "Chunk memory order C vs F.")
    g = zarr.open_group(zarr.DirectoryStore(str(OUT / name)), mode="w")
    rec.group("", "root group")
    d2 = np.arange(130, dtype="<i4").reshape(SHAPE)
    add_v2(rec, g, "c_2d", d2, chunks=CHUNKS, order="C", description="order C, <i4")
    add_v2(rec, g, "f_2d", d2, chunks=CHUNKS, order="F", description="order F, <i4")
    add_v2(rec, g, "f_2d_raw", d2.astype(">i2"), chunks=CHUNKS, order="F", compressor=None,
           description="order F, >i2, uncompressed (chunk bytes are Fortran-ordered)")
    d3 = np.arange(5 * 6 * 7, dtype=">f8").reshape(5, 6, 7) / 7
    add_v2(rec, g, "f_3d_be", d3, chunks=(2, 3, 4), order="F", skip=((1, 0, 1),),
           description="order F, 3-D >f8, chunk (1,0,1) missing")
    add_v2(rec, g, "f_struct", make_data([("a", "<i2"), ("b", ">f4")], "fs"),
           chunks=CHUNKS, order="F", description="order F, structured dtype")
    add_v2(rec, g, "f_U3", make_data("<U3", "fu"), chunks=CHUNKS, order="F",
           compressor=Zlib(1), description="order F, <U3, zlib")


def store_compressors():
    name = "v2_compressors"
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "Same data under every compressor; chunk (1,1) missing.")
    g = zarr.open_group(zarr.DirectoryStore(str(OUT / name)), mode="w")
    rec.group("", "root group")
    d = (np.arange(130, dtype="<f8").reshape(SHAPE) * 1.5) % 17
    di = np.arange(130, dtype="<i4").reshape(SHAPE) // 3
    comps = {
        "blosc_lz4_shuffle": Blosc("lz4", 5, Blosc.SHUFFLE),
        "blosc_zstd_shuffle": Blosc("zstd", 3, Blosc.SHUFFLE),
        "blosc_blosclz_bitshuffle": Blosc("blosclz", 5, Blosc.BITSHUFFLE),
        "blosc_zlib_noshuffle": Blosc("zlib", 4, Blosc.NOSHUFFLE),
        "blosc_lz4hc_autoshuffle": Blosc("lz4hc", 5, Blosc.AUTOSHUFFLE),
        "zstd": Zstd(level=3),
        "gzip": GZip(level=6),
        "zlib": Zlib(level=4),
        "bz2": BZ2(level=9),
        "lzma": LZMA(),
        "lz4": LZ4(acceleration=1),
        "none": None,
    }
    for aname, comp in comps.items():
        add_v2(rec, g, aname, d, chunks=CHUNKS, compressor=comp,
               description=f"<f8 with compressor {comp!r}")
    add_v2(rec, g, "blosc_bitshuffle_i4", di, chunks=CHUNKS,
           compressor=Blosc("zstd", 1, Blosc.BITSHUFFLE), description="<i4, blosc zstd bitshuffle")
    add_v2(rec, g, "blosc_shuffle_u1", di.astype("u1"), chunks=CHUNKS,
           compressor=Blosc("lz4", 5, Blosc.SHUFFLE), description="|u1, blosc lz4 shuffle")


def store_filters():
    name = "v2_filters"
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "Legacy numcodecs filters. Lossy filters: expected = "
                   "filter.decode(filter.encode(data)) applied elementwise.")
    g = zarr.open_group(zarr.DirectoryStore(str(OUT / name)), mode="w")
    rec.group("", "root group")
    r = rng_for("filters")
    ints = np.cumsum(r.integers(-50, 50, 130)).astype("<i4").reshape(SHAPE)
    floats = (r.standard_normal(130) * 10 + 1000).reshape(SHAPE)
    add_v2(rec, g, "delta_i4", ints, chunks=CHUNKS, filters=[Delta(dtype="<i4")],
           description="Delta(<i4)")
    add_v2(rec, g, "delta_i8_astype_i2", ints.astype("<i8"), chunks=CHUNKS,
           filters=[Delta(dtype="<i8", astype="<i2")], description="Delta(<i8, astype <i2)")
    fso = FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<u2")
    add_v2(rec, g, "fixedscaleoffset", floats, chunks=CHUNKS, filters=[fso],
           expected=fso.decode(fso.encode(floats)).reshape(SHAPE),
           description="FixedScaleOffset(offset=1000, scale=10, <f8 -> <u2), lossy")
    q = Quantize(digits=2, dtype="<f8")
    add_v2(rec, g, "quantize", floats, chunks=CHUNKS, filters=[q],
           expected=q.decode(q.encode(floats)).reshape(SHAPE),
           description="Quantize(digits=2, <f8), lossy")
    add_v2(rec, g, "shuffle", floats, chunks=CHUNKS, filters=[Shuffle(elementsize=8)],
           compressor=Zlib(1), description="numcodecs Shuffle(elementsize=8) + zlib")
    at = AsType(encode_dtype="<f4", decode_dtype="<f8")
    add_v2(rec, g, "astype_f8_f4", floats, chunks=CHUNKS, filters=[at],
           expected=floats.astype("<f4").astype("<f8"),
           description="AsType(encode <f4, decode <f8), lossy")
    bools = r.integers(0, 2, 130).astype(bool).reshape(SHAPE)
    add_v2(rec, g, "packbits", bools, chunks=CHUNKS, filters=[PackBits()],
           description="PackBits on |b1")
    labels = ["apple", "banana", "cherry"]
    cats = np.array([labels[i] for i in r.integers(0, 3, 130)], dtype=object).reshape(SHAPE)
    add_v2(rec, g, "categorize", cats, chunks=CHUNKS, fill_value="",
           filters=[Categorize(labels, dtype=object, astype="|u1")],
           description="object strings via Categorize(labels, astype |u1); fill ''")
    add_v2(rec, g, "chain_delta_shuffle_zstd", ints, chunks=CHUNKS,
           filters=[Delta(dtype="<i4"), Shuffle(elementsize=4)], compressor=Zstd(5),
           description="filter chain Delta -> Shuffle, then Zstd")


def obj_array(items, shape):
    a = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        a[i] = v
    return a.reshape(shape)


def store_objects():
    name = "v2_objects"
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "Object arrays with each object codec. pickle must be refused.")
    g = zarr.open_group(zarr.DirectoryStore(str(OUT / name)), mode="w")
    rec.group("", "root group")
    shp, ch = (5, 7), (2, 3)  # 3x3 chunk grid
    r = rng_for("objects")
    words = ["", "a", "hello", "\u00e9t\u00e9", "\u2713 check", "\U0001f600 emoji",
             "long string " * 3, "nul\x00inside"]
    strs = obj_array([words[i] for i in r.integers(0, len(words), 35)], shp)
    add_v2(rec, g, "vlen_utf8", strs, chunks=ch, object_codec=VLenUTF8(), fill_value="",
           description="VLenUTF8 strings; fill ''; chunk (1,1) missing")
    add_v2(rec, g, "vlen_utf8_1d", obj_array(words * 2, (16,)), chunks=(5,),
           object_codec=VLenUTF8(), fill_value=None, skip=(),
           description="1-D VLenUTF8, null fill, fully written")
    bwords = [b"", b"\x00", b"abc", b"\xff\x00\xfe", b"bytes" * 5]
    add_v2(rec, g, "vlen_bytes", obj_array([bwords[i] for i in r.integers(0, 5, 35)], shp),
           chunks=ch, object_codec=VLenBytes(), fill_value=None, skip=(),
           description="VLenBytes; null fill; fully written")
    arrs = [np.arange(int(k), dtype="<i4") * (i + 1) - 3 for i, k in
            enumerate(r.integers(0, 6, 35))]
    add_v2(rec, g, "vlen_array_i4", obj_array(arrs, shp), chunks=ch,
           object_codec=VLenArray("<i4"), fill_value=None, skip=(),
           description="VLenArray('<i4') ragged int arrays (some empty); null fill")
    jitems = [0, 1.5, "s", None, True, {"k": "v", "n": 2}, -7, "\u00e9", False,
              {"nested": {"x": 1}}]
    add_v2(rec, g, "json", obj_array([jitems[i % len(jitems)] for i in range(35)], shp),
           chunks=ch, object_codec=JSON(), fill_value=None, skip=(),
           description="JSON object codec: ints, floats, strings, null, bools, dicts")
    mitems = [0, 2.25, "str", None, True, -(2**40), "\u2713", b"raw"]
    add_v2(rec, g, "msgpack", obj_array([mitems[i % len(mitems)] for i in range(35)], shp),
           chunks=ch, object_codec=MsgPack(), fill_value=None, skip=(),
           description="MsgPack object codec: ints, floats, strings, null, bools, bytes")
    add_v2(rec, g, "pickle", obj_array([f"item{i}" for i in range(35)], shp), chunks=ch,
           object_codec=Pickle(), fill_value=None, skip=(), must_refuse=True,
           description="Pickle object codec: a reader MUST refuse to decode this "
                       "(unpickling is arbitrary code execution)")


def store_fill_values():
    name = "v2_fill_values"
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "Fill value encodings; shape (6,7), chunks (4,4), chunk (1,1) "
                   "(an overhanging edge chunk) and sometimes more never written.")
    g = zarr.open_group(zarr.DirectoryStore(str(OUT / name)), mode="w")
    rec.group("", "root group")
    shp, ch = (6, 7), (4, 4)
    sk = ((1, 1),)
    sk2 = ((0, 1), (1, 1))

    def d(dt, nm):
        return make_data(dt, nm, shp)

    add_v2(rec, g, "f8_nan", d("<f8", "a"), chunks=ch, fill_value=np.nan, skip=sk2,
           description='fill "NaN"')
    add_v2(rec, g, "f4_inf", d("<f4", "b"), chunks=ch, fill_value=np.inf, skip=sk,
           description='fill "Infinity"')
    add_v2(rec, g, "f4_be_ninf", d(">f4", "c"), chunks=ch, fill_value=-np.inf, skip=sk,
           description='>f4, fill "-Infinity"')
    add_v2(rec, g, "f2_half", d("<f2", "d"), chunks=ch, fill_value=0.5, skip=sk,
           description="<f2, fill 0.5")
    add_v2(rec, g, "f8_negzero", d("<f8", "d2"), chunks=ch, fill_value=-0.0, skip=sk,
           description="<f8, fill -0.0")
    add_v2(rec, g, "i2_zero", d("<i2", "e"), chunks=ch, fill_value=0, skip=sk,
           description="fill 0")
    add_v2(rec, g, "u1_null", d("|u1", "f"), chunks=ch, fill_value=None, skip=(),
           description="fill null (fully written; missing chunks would be undefined)")
    add_v2(rec, g, "f8_null", d("<f8", "g"), chunks=ch, fill_value=None, skip=(),
           description="<f8, fill null, fully written")
    add_v2(rec, g, "i4_be_42", d(">i4", "h"), chunks=ch, fill_value=42, skip=sk2,
           description=">i4, non-zero int fill 42")
    add_v2(rec, g, "i8_neg", d("<i8", "i"), chunks=ch, fill_value=-9999, skip=sk,
           description="<i8, fill -9999")
    add_v2(rec, g, "u8_max", d("<u8", "j"), chunks=ch, fill_value=2**64 - 1, skip=sk,
           description="<u8, fill 18446744073709551615 (exceeds int64)")
    add_v2(rec, g, "b1_true", d("|b1", "k"), chunks=ch, fill_value=True, skip=sk,
           description="bool, fill true")
    add_v2(rec, g, "c16_fill", d("<c16", "l"), chunks=ch, fill_value=1 + 2j, skip=sk,
           description="<c16, fill [1.0, 2.0]")
    add_v2(rec, g, "c8_nan_fill", d("<c8", "m"), chunks=ch, fill_value=complex(np.nan, -1),
           skip=sk, description='<c8, fill ["NaN", -1.0]')
    add_v2(rec, g, "S5_bytes", d("|S5", "n"), chunks=ch, fill_value=b"ab\x00c", skip=sk,
           description="|S5, fill b'ab\\x00c' (zarr 2 writes base64 'YWIAYw==')")
    add_v2(rec, g, "U4_str", d("<U4", "o"), chunks=ch, fill_value="z\u00e9", skip=sk,
           description="<U4, fill 'z\u00e9' (plain JSON string)")
    add_v2(rec, g, "V6_bytes", d("|V6", "p"), chunks=ch, fill_value=b"\x01\x02\x03\x04\x05\x06",
           skip=sk, description="|V6, fill base64 'AQIDBAUG'")
    add_v2(rec, g, "M8_ns_nat", d("<M8[ns]", "q"), chunks=ch,
           fill_value=np.datetime64("NaT", "ns"), skip=sk,
           description="<M8[ns], fill NaT (written as int64 min)")
    add_v2(rec, g, "M8_D_date", d("<M8[D]", "r"), chunks=ch,
           fill_value=np.datetime64("2020-01-01", "D"), skip=sk,
           description="<M8[D], fill 2020-01-01 (written as int 18262)")
    sdt = np.dtype([("a", "<i4"), ("b", ">f8"), ("c", "|S2")])
    add_v2(rec, g, "struct_fill", d(sdt, "s"), chunks=ch,
           fill_value=np.array((-1, 2.5, b"hi"), dtype=sdt)[()], skip=sk2,
           description="structured fill (-1, 2.5, b'hi'), base64 of the record bytes")
    add_v2(rec, g, "all_missing_i2", d("<i2", "t"), chunks=ch, fill_value=-3,
           skip=((0, 0), (0, 1), (1, 0), (1, 1)),
           description="no chunk ever written; every element reads as fill -3")


def store_separators():
    name = "v2_separators"
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "dimension_separator '.' and '/' in a plain DirectoryStore.")
    g = zarr.open_group(zarr.DirectoryStore(str(OUT / name)), mode="w")
    rec.group("", "root group")
    d3 = np.arange(5 * 6 * 7, dtype="<i2").reshape(5, 6, 7)
    add_v2(rec, g, "dot", d3, chunks=(2, 3, 4), dimension_separator=".", skip=((1, 1, 0),),
           description="explicit dimension_separator '.', keys like 0.1.0")
    add_v2(rec, g, "slash", d3, chunks=(2, 3, 4), dimension_separator="/", skip=((1, 1, 0),),
           description="explicit dimension_separator '/', keys like 0/1/0")
    add_v2(rec, g, "legacy_no_key", d3[0], chunks=(3, 4), dimension_separator=".",
           description="'.' keys, dimension_separator key removed from .zarray "
                       "(as written by zarr < 2.8); default is '.'")
    _drop_separator(OUT / name / "legacy_no_key" / ".zarray", rec, "legacy_no_key")


def _drop_separator(zarray: Path, rec, path):
    meta = json.loads(zarray.read_text())
    del meta["dimension_separator"]
    zarray.write_text(json.dumps(meta, indent=4, sort_keys=True, ensure_ascii=True,
                                 separators=(",", ": ")))
    rec.entry["edits"].append(f"removed 'dimension_separator' from {path}/.zarray")
    for a in rec.entry["arrays"]:
        if a["path"] == path:
            a["dimension_separator"] = None


def store_nested():
    name = "v2_nested"
    rec = StoreRec(name, f"zarr2/{name}", "NestedDirectoryStore", 2,
                   "zarr.NestedDirectoryStore: chunk keys nested ('0/1').")
    g = zarr.open_group(zarr.NestedDirectoryStore(str(OUT / name)), mode="w")
    rec.group("", "root group")
    d = np.arange(130, dtype=">u4").reshape(SHAPE)
    add_v2(rec, g, "nested", d, chunks=CHUNKS,
           description="NestedDirectoryStore, .zarray says dimension_separator '/'")
    add_v2(rec, g, "nested_no_key", d * 2, chunks=CHUNKS,
           description="NestedDirectoryStore, keys nested but .zarray has NO "
                       "dimension_separator key (deleted after writing): metadata alone "
                       "implies '.', the files are nested")
    _drop_separator(OUT / name / "nested_no_key" / ".zarray", rec, "nested_no_key")
    rec.entry["arrays"][-1]["ambiguity"] = (
        "expected is what zarr 2 NestedDirectoryStore reads (the data). A reader that "
        "trusts the metadata alone looks for '0.0' keys and sees only fill (0); "
        "zarr-python 3.1 does that.")
    sub = g.create_group("sub")
    rec.group("sub", "subgroup")
    add_v2(rec, sub, "vol", np.arange(5 * 6 * 7, dtype="<f4").reshape(5, 6, 7),
           chunks=(2, 3, 4), skip=((2, 1, 1),), description="3-D nested keys 0/0/0")


NAN_ATTRS = {
    "title": "zarr2 hierarchy fixture",
    "nested": {"a": [1, 2, {"b": None}], "nan": float("nan"), "inf": float("inf"),
               "ninf": float("-inf"), "unicode": "Gr\u00fc\u00dfe \u2713", "empty": {}},
    "list": [1.5, "x", True, None],
    "big_int": 2**62,
}


def store_hierarchy():
    name = "v2_hierarchy"
    path = OUT / name
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "Groups several levels deep, attributes incl. NaN/Infinity, an implicit "
                   "group (.zgroup deleted), 0-d arrays, a zero-length dimension.")
    store = zarr.DirectoryStore(str(path))
    root = zarr.open_group(store, mode="w")
    root.attrs.update(NAN_ATTRS)
    rec.group("", "root; .zattrs contains NaN, Infinity, -Infinity literals",
              attrs={**NAN_ATTRS, "nested": {**NAN_ATTRS["nested"], "nan": "NaN",
                                             "inf": "Infinity", "ninf": "-Infinity"}})
    a = root.create_group("a")
    a.attrs["level"] = 1
    rec.group("a", "level 1", {"level": 1})
    b = a.create_group("b")
    rec.group("a/b", "level 2, no attributes")
    c = b.create_group("c")
    c.attrs["level"] = 3
    rec.group("a/b/c", "level 3", {"level": 3})
    dgrp = c.create_group("d")
    dgrp.attrs.update({"level": 4, "deep": {"x": [1, {"y": "z"}]}})
    rec.group("a/b/c/d", "level 4", {"level": 4, "deep": {"x": [1, {"y": "z"}]}})
    add_v2(rec, dgrp, "deep", np.arange(20, dtype="<i4").reshape(4, 5), chunks=(2, 2),
           attrs={"units": "m", "scale": 0.5}, skip=((1, 2),),
           description="array 5 levels down, with attributes")
    add_v2(rec, a, "arr_a", np.linspace(0, 1, 30, dtype="<f4").reshape(5, 6), chunks=(2, 4),
           description="array in group a")
    imp = a.create_group("implicit")
    add_v2(rec, imp, "x", np.arange(12, dtype="<i2").reshape(3, 4), chunks=(2, 2),
           description="array inside implicit group a/implicit")
    add_v2(rec, imp, "y", np.arange(6, dtype="<f8") / 3, chunks=(4,), skip=((1,),),
           description="1-D array inside implicit group a/implicit")
    (path / "a" / "implicit" / ".zgroup").unlink()
    rec.group("a/implicit", "IMPLICIT group: directory with arrays but no .zgroup "
              "(deleted after writing)", implicit=True)
    rec.entry["edits"].append("deleted a/implicit/.zgroup")
    add_v2(rec, root, "scalar", np.array(3.25, dtype="<f8"), chunks=(), skip=(),
           attrs={"kind": "0-d"}, description="0-d array (shape [], chunks [], chunk key '0')")
    add_v2(rec, root, "scalar_missing", np.array(0, dtype=">i4"), chunks=(), fill_value=7,
           skip=((),), description="0-d array never written: reads as fill 7")
    add_v2(rec, root, "scalar_str", np.array("h\u00e9", dtype="<U2"), chunks=(), skip=(),
           description="0-d <U2 array")
    add_v2(rec, root, "empty", np.zeros((0, 5), dtype="<f4"), chunks=(2, 5), skip=(),
           description="zero-length first dimension: no chunks at all")
    add_v2(rec, root, "empty_1d", np.zeros((0,), dtype="<i8"), chunks=(1,), skip=(),
           description="1-D zero-length")
    add_v2(rec, root, "one_by_one", np.array([[9]], dtype="<u2"), chunks=(1, 1), skip=(),
           description="1x1 array")
    add_v2(rec, root, "chunk_bigger_than_array", np.arange(6, dtype="<i4").reshape(2, 3),
           chunks=(10, 10), skip=(), description="single chunk larger than the array")


def store_consolidated():
    name = "v2_consolidated"
    path = OUT / name
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "Hierarchy with .zmetadata written by zarr.consolidate_metadata.",
                   consolidated=True)
    store = zarr.DirectoryStore(str(path))
    root = zarr.open_group(store, mode="w")
    root.attrs.update({"description": "consolidated", "version": 2})
    rec.group("", "root", {"description": "consolidated", "version": 2})
    grp = root.create_group("grp")
    grp.attrs["kind"] = "sub"
    rec.group("grp", "subgroup", {"kind": "sub"})
    sub = grp.create_group("sub")
    rec.group("grp/sub", "sub-subgroup")
    add_v2(rec, root, "counts", np.arange(130, dtype="<u2").reshape(SHAPE), chunks=CHUNKS,
           attrs={"units": "1"}, description="root array")
    add_v2(rec, grp, "temp", make_data("<f4", "temp"), chunks=CHUNKS, fill_value=np.nan,
           description="float array, NaN fill")
    add_v2(rec, sub, "labels", make_data("<U4", "lab", (7,)), chunks=(3,), skip=((1,),),
           description="1-D unicode")
    add_v2(rec, sub, "words", obj_array(["x", "yy", "", "\u00e9"], (4,)), chunks=(3,),
           object_codec=VLenUTF8(), fill_value=None, skip=(), description="VLenUTF8")
    zarr.consolidate_metadata(store)


def store_xarray():
    name = "v2_xarray"
    path = OUT / name
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStore", 2,
                   "xarray-style dataset: every array has _ARRAY_DIMENSIONS; "
                   "consolidated like xarray.to_zarr does.", consolidated=True)
    store = zarr.DirectoryStore(str(path))
    root = zarr.open_group(store, mode="w")
    rattrs = {"Conventions": "CF-1.8", "title": "tiny air temperature"}
    root.attrs.update(rattrs)
    rec.group("", "dataset root", rattrs)
    t = np.arange(6, dtype="<i8")
    lat = np.array([60, 45, 30, 15, 0], dtype="<f4")
    lon = np.arange(8, dtype="<f4") * 45 - 180
    r = rng_for("air")
    air = (r.standard_normal((6, 5, 8)) * 5 + 280).astype("<f4")
    add_v2(rec, root, "time", t, chunks=(6,), skip=(),
           attrs={"_ARRAY_DIMENSIONS": ["time"], "units": "days since 2000-01-01",
                  "calendar": "proleptic_gregorian"}, description="time coordinate")
    add_v2(rec, root, "lat", lat, chunks=(5,), skip=(), fill_value=np.nan,
           attrs={"_ARRAY_DIMENSIONS": ["lat"], "units": "degrees_north"},
           description="lat coordinate")
    add_v2(rec, root, "lon", lon, chunks=(8,), skip=(), fill_value=np.nan,
           attrs={"_ARRAY_DIMENSIONS": ["lon"], "units": "degrees_east"},
           description="lon coordinate")
    add_v2(rec, root, "air", air, chunks=(4, 5, 4), fill_value=np.nan, skip=((1, 0, 1),),
           attrs={"_ARRAY_DIMENSIONS": ["time", "lat", "lon"], "units": "K",
                  "long_name": "air temperature"},
           description="(time, lat, lon) data variable, chunk (1,0,1) missing -> NaN")
    add_v2(rec, root, "mask", np.ones((5, 8), dtype="|b1"), chunks=(5, 8), skip=(),
           attrs={"_ARRAY_DIMENSIONS": ["lat", "lon"]}, description="2-D bool")
    zarr.consolidate_metadata(store)


def store_zip():
    name = "v2_zip"
    path = OUT / "v2_zip.zip"
    rec = StoreRec(name, "zarr2/v2_zip.zip", "ZipStore", 2,
                   "zarr.ZipStore (ZIP_STORED) holding a small hierarchy.")
    store = zarr.ZipStore(str(path), mode="w")
    root = zarr.group(store=store)
    root.attrs.update({"zip": True})
    rec.group("", "root", {"zip": True})
    sub = root.create_group("sub")
    rec.group("sub", "subgroup")
    add_v2(rec, root, "data", np.arange(130, dtype="<i4").reshape(SHAPE), chunks=CHUNKS,
           description="<i4 in zip, chunk (1,1) missing")
    add_v2(rec, sub, "values", make_data(">f8", "zipv", (7,)), chunks=(3,), skip=((1,),),
           compressor=Zlib(5), description=">f8 in zip, zlib")
    add_v2(rec, sub, "words", obj_array(["a", "bc", "\u00e9"], (3,)), chunks=(2,),
           object_codec=VLenUTF8(), fill_value=None, skip=(), description="VLenUTF8 in zip")
    store.close()


# --------------------------------------------------------------------------
# pre-final Zarr v3 ("v3 draft") store
# --------------------------------------------------------------------------


def add_v3(rec, store, path, data, *, chunks, description, fill_value=0, skip=((1, 1),),
           expected=None, attrs=None, **kw):
    z = zarr.create(store=store, path=path, shape=data.shape, chunks=chunks,
                    dtype=data.dtype, fill_value=fill_value, zarr_version=3, **kw)
    if attrs:
        z.attrs.update(attrs)
    write_except(z, data, skip)
    base = data if expected is None else expected
    exp = expected_with_fill(base, z.chunks, z.fill_value, skip)
    meta = json.loads(store[f"meta/root/{path}.array.json"])
    extra = {
        "dtype_metadata": meta["data_type"],
        "fill_value": meta["fill_value"],
        "compressor": meta.get("compressor"),
        "filters": meta["attributes"].get("filters"),
        "chunk_separator": meta["chunk_grid"]["separator"],
        "storage_transformers": meta.get("storage_transformers"),
    }
    rec.array(z, path, exp, description, missing=skip, zarr_format="3-draft", extra=extra)
    return z


def store_v3draft():
    name = "v3draft"
    path = OUT / name
    rec = StoreRec(name, f"zarr2/{name}", "DirectoryStoreV3", "3-draft",
                   "Pre-final Zarr v3 layout written by zarr-python 2.18's experimental "
                   "v3 API: zarr.json entry point, meta/root/<path>.array.json / "
                   ".group.json, chunks at data/root/<path>/c<i>/<j> (0-d: data/root/"
                   "<path>/c0). Filters live in attributes['filters'].")
    store = DirectoryStoreV3(str(path))
    root = zarr.open_group(store, mode="w", zarr_version=3, path="/")
    rattrs = {"title": "v3 draft fixture", "nested": {"a": [1, 2], "nan": float("nan")}}
    root.attrs.update(rattrs)
    rec.group("", "root group: meta/root.group.json",
              {**rattrs, "nested": {"a": [1, 2], "nan": "NaN"}})
    g1 = root.create_group("g1")
    g1.attrs.update({"level": 1})
    rec.group("g1", "group", {"level": 1})
    g2 = g1.create_group("g2")
    g2.attrs.update({"level": 2, "tags": ["x", "y"]})
    rec.group("g1/g2", "group", {"level": 2, "tags": ["x", "y"]})

    add_v3(rec, store, "g1/i2_gzip", make_data("<i2", "v3a"), chunks=CHUNKS,
           compressor=GZip(5), attrs={"units": "counts"}, description="<i2, gzip")
    add_v3(rec, store, "g1/f8_be_blosc", make_data(">f8", "v3b"), chunks=CHUNKS,
           compressor=Blosc("zstd", 3, Blosc.SHUFFLE), fill_value=np.nan,
           description=">f8, blosc zstd shuffle, NaN fill")
    add_v3(rec, store, "g1/g2/u4_zstd", make_data("<u4", "v3c"), chunks=CHUNKS,
           compressor=Zstd(3), fill_value=7, description="<u4, zstd, fill 7")
    add_v3(rec, store, "b1_none", make_data("|b1", "v3d"), chunks=CHUNKS, compressor=None,
           description="bool ('bool' data_type), no compressor")
    add_v3(rec, store, "u1_none", make_data("|u1", "v3d1"), chunks=CHUNKS, compressor=None,
           description="u1, no compressor (chunk files are raw bytes)")
    add_v3(rec, store, "f4_order_f", make_data("<f4", "v3e"), chunks=CHUNKS, order="F",
           compressor=Zlib(3), description="<f4, chunk_memory_layout 'F', zlib")
    add_v3(rec, store, "vol3d", np.arange(5 * 6 * 7, dtype="<i8").reshape(5, 6, 7),
           chunks=(2, 3, 4), compressor=BZ2(5), skip=((1, 0, 1),),
           description="3-D <i8, bz2, keys c0/0/0, chunk (1,0,1) missing")
    add_v3(rec, store, "dot_sep", make_data("<i4", "v3f"), chunks=CHUNKS,
           dimension_separator=".", compressor=None,
           description="chunk_grid separator '.', keys like c0.1")
    add_v3(rec, store, "c16", make_data("<c16", "v3g"), chunks=CHUNKS, compressor=LZ4(),
           description="<c16 as extension data_type object, lz4")
    add_v3(rec, store, "m8_s", make_data("<M8[s]", "v3h"), chunks=CHUNKS,
           compressor=GZip(1), description="<M8[s] datetime extension data_type")
    add_v3(rec, store, "delta_i4", np.cumsum(np.arange(130)).astype("<i4").reshape(SHAPE),
           chunks=CHUNKS, filters=[Delta(dtype="<i4")], compressor=Zlib(1),
           description="Delta filter, recorded in attributes['filters']")
    add_v3(rec, store, "scalar", np.array(-1.5, dtype="<f8"), chunks=(), skip=(),
           compressor=None,
           description="0-d array; zarr 2 uses chunk index (0,): key data/root/scalar/c0")
    add_v3(rec, store, "implicit/a", np.arange(12, dtype="<u2").reshape(3, 4),
           chunks=(2, 2), compressor=GZip(1), skip=((1, 0),),
           description="array under implicit group 'implicit' (no group document)")
    add_v3(rec, store, "implicit/deeper/b", np.arange(5, dtype=">i4"), chunks=(2,),
           compressor=None, skip=(),
           description="array two implicit levels down")
    rec.group("implicit", "IMPLICIT group (no meta/root/implicit.group.json)", implicit=True)
    rec.group("implicit/deeper", "IMPLICIT group", implicit=True)
    rec.group("sharded", "IMPLICIT group holding sharded arrays", implicit=True)

    # Sharding: shape (8, 11), chunks (3, 3) -> chunk grid (3, 4); 2x2 chunks per shard
    # -> shard grid (2, 2).  Shard row 1 holds chunk row 2 (partial, overhangs) and chunk
    # row 3 (entirely outside the array: its index entries are always empty).
    sh = ShardingStorageTransformer("indexed", chunks_per_shard=(2, 2))
    d = np.arange(88, dtype="<u2").reshape(8, 11) + 100
    add_v3(rec, store, "sharded/u2_raw", d, chunks=(3, 3), compressor=None,
           storage_transformers=[sh], skip=((0, 1),),
           description="sharding transformer, chunks_per_shard (2,2), no compressor; inner "
                       "chunk (0,1) never written (empty index entry in shard c0/0); "
                       "edge shards contain out-of-bounds chunk slots")
    sh2 = ShardingStorageTransformer("indexed", chunks_per_shard=(2, 2))
    add_v3(rec, store, "sharded/f4_blosc", make_data("<f4", "v3s", (8, 11)), chunks=(3, 3),
           compressor=Blosc("lz4", 5, Blosc.SHUFFLE), storage_transformers=[sh2],
           fill_value=-1.0, skip=((0, 0), (2, 2), (2, 3)),
           description="sharded + blosc; inner chunk (0,0) missing and shard c1/1 "
                       "never written at all; fill -1.0")
    sh3 = ShardingStorageTransformer("indexed", chunks_per_shard=(2, 1, 2))
    add_v3(rec, store, "sharded/vol3d", np.arange(5 * 6 * 7, dtype=">i2").reshape(5, 6, 7),
           chunks=(2, 3, 4), compressor=GZip(1), storage_transformers=[sh3],
           skip=((1, 1, 0),), description="3-D sharded, chunks_per_shard (2,1,2), gzip")


# --------------------------------------------------------------------------
# verification
# --------------------------------------------------------------------------


def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.hasobject:
        for x, y in zip(a.reshape(-1), b.reshape(-1)):
            if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
                if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
                        and x.dtype == y.dtype and np.array_equal(x, y)):
                    return False
            elif type(x) is not type(y) or x != y:
                return False
        return True
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def open_store(st):
    p = str(HERE / st["path"])
    kind = st["kind"]
    if kind == "DirectoryStore":
        return zarr.DirectoryStore(p)
    if kind == "NestedDirectoryStore":
        return zarr.NestedDirectoryStore(p)
    if kind == "ZipStore":
        return zarr.ZipStore(p, mode="r")
    if kind == "DirectoryStoreV3":
        return DirectoryStoreV3(p)
    raise ValueError(kind)


def verify():
    n = 0
    for st in MANIFEST["stores"]:
        store = open_store(st)
        ver = 3 if st["zarr_format"] == "3-draft" else 2
        views = [None]
        if st["consolidated"]:
            views.append(zarr.open_consolidated(store, mode="r"))
        for a in st["arrays"]:
            exp = np.load(HERE / a["expected"], allow_pickle=True)
            z = zarr.open_array(store, path=a["path"], mode="r", zarr_version=ver)
            if a["must_refuse"]:
                # numcodecs >= 0.15.2 itself refuses to unpickle by default
                try:
                    z[...]
                except numcodecs.errors.UnsafeDecodeError:
                    pass
                else:
                    raise AssertionError("zarr 2 decoded a must_refuse array by default")
            for view in views:
                zz = z if view is None else view[a["path"]]
                numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE = a["must_refuse"]
                try:
                    got = zz[...]
                finally:
                    numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE = False
                assert got.dtype.str == a["dtype"], (st["name"], a["path"])
                assert list(zz.shape) == a["shape"] and list(zz.chunks) == a["chunks"]
                if not same(got, exp):
                    raise AssertionError(f"{st['name']}/{a['path']}: mismatch\n{got}\n{exp}")
            n += 1
        for grp in st["groups"]:
            if grp["implicit"]:
                continue
            g = zarr.open_group(store, path=grp["path"] or None, mode="r", zarr_version=ver)
            got = _jsonable(g.attrs.asdict())
            assert got == grp["attributes"], (st["name"], grp["path"], got)
        if hasattr(store, "close"):
            store.close()
    # the edited / special stores
    hier = OUT / "v2_hierarchy" / "a" / "implicit"
    assert not (hier / ".zgroup").exists() and (hier / "x" / ".zarray").exists()
    nested = OUT / "v2_nested" / "nested_no_key"
    assert (nested / "0" / "0").is_file()
    assert "dimension_separator" not in json.loads((nested / ".zarray").read_text())
    shard = OUT / "v3draft" / "data" / "root" / "sharded" / "u2_raw" / "c0" / "0"
    idx = np.frombuffer(shard.read_bytes()[-64:], dtype="<u8").reshape(4, 2)
    assert (idx[1] == 2**64 - 1).all() and not (idx[0] == 2**64 - 1).any()
    assert not (OUT / "v3draft" / "data" / "root" / "sharded" / "f4_blosc" / "c1" / "1").exists()
    assert not (OUT / "v3draft" / "meta" / "root" / "implicit.group.json").exists()
    return n


def _jsonable(x):
    """Attributes as in the manifest: non-finite floats become "NaN" etc."""
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return x


def tree_size(p: Path):
    files = [f for f in p.rglob("*") if f.is_file()]
    return len(files), sum(f.stat().st_size for f in files)


def main():
    for d in (OUT, EXP):
        if d.exists():
            shutil.rmtree(d)
    OUT.mkdir(parents=True)
    EXP.mkdir(parents=True)
    store_dtypes()
    store_order()
    store_compressors()
    store_filters()
    store_objects()
    store_fill_values()
    store_separators()
    store_nested()
    store_hierarchy()
    store_consolidated()
    store_xarray()
    store_zip()
    store_v3draft()
    (EXP / "MANIFEST.json").write_text(
        json.dumps(MANIFEST, indent=1, sort_keys=False, allow_nan=False) + "\n")
    n = verify()
    nf, sz = tree_size(HERE)
    print(f"verified {n} arrays in {len(MANIFEST['stores'])} stores with zarr "
          f"{zarr.__version__}, numcodecs {numcodecs.__version__}, numpy {np.__version__}")
    print(f"tests/data: {nf} files, {sz} bytes ({sz / 2**20:.2f} MiB)")


if __name__ == "__main__":
    main()
