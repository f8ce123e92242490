"""Conformance of ``zarrview.zarrlib`` with Zarr v2 stores written by zarr-python 3.

Every store is written at test time by ``zarr.create_array(..., zarr_format=2)`` (sometimes with
``.zarray`` edited afterwards, or written by hand where zarr-python cannot write the layout),
read with ``zl.open(path)`` and compared with the numpy data written and with zarr-python's own
read of the same store.  Metadata attributes are compared with what zarr-python reports.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numcodecs
import numpy as np
import zarr

import zarrview.zarrlib as zl
from conformance_cases import V2, ArrayConformance, Built, Case, Cases
from conformance_helpers import transport  # noqa: F401  (autouse: every test also runs over HTTP)
from conformance_helpers import CONFORMANCE_MARKS, assert_array_matches, sample_data, write_json
from conformance_hierarchy import HierarchyConformance

pytestmark = CONFORMANCE_MARKS

CASES = Cases()
add = CASES.add


# --------------------------------------------------------------------------- data types

V2_DTYPES = [
    "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<c8", "<c16",
    ">i2", ">i4", ">i8", ">u2", ">u4", ">u8", ">f2", ">f4", ">f8", ">c8", ">c16",
]
for _i, _dt in enumerate(V2_DTYPES):
    _d = sample_data(np.dtype(_dt).newbyteorder("="), (7, 9), seed=_i).astype(_dt)
    add(Case(f"dtype-{_dt.replace('<', 'le-').replace('>', 'be-').replace('|', '')}", _d,
             chunks=(3, 4)))

# --------------------------------------------------------------------------- order C / F

for _dt in ["<i4", ">f8", "|u1", "<c8", "|b1"]:
    _d3 = sample_data(np.dtype(_dt).newbyteorder("="), (5, 6, 7), seed=3).astype(_dt)
    _tag = _dt.replace("<", "le-").replace(">", "be-").replace("|", "")
    add(Case(f"order-F-{_tag}-3d", _d3, chunks=(2, 4, 3), kwargs=dict(order="F")))
    add(Case(f"order-C-{_tag}-3d", _d3, chunks=(2, 4, 3), kwargs=dict(order="C")))
add(Case("order-F-2d-edge-chunks", sample_data("int16", (11, 13)), chunks=(4, 5),
         kwargs=dict(order="F")))
add(Case("order-F-filters-compressor", sample_data("int32", (11, 13)), chunks=(4, 5),
         kwargs=dict(order="F", filters=[numcodecs.Delta(dtype="<i4")],
                     compressors=numcodecs.Zlib(level=3))))
add(Case("order-F-missing-chunks", sample_data("float32", (11, 13)), chunks=(4, 5), fill_value=-2.5,
         write=(slice(0, 6), slice(2, 9)), kwargs=dict(order="F")))

# --------------------------------------------------------------------------- compressors / filters

_F8 = (np.arange(40 * 50, dtype="<f8").reshape(40, 50) * 0.25 - 100)
_I4 = (np.arange(40 * 50, dtype="<i4").reshape(40, 50) * 37 - 5000)
_COMPRESSORS = [
    ("none", None, _I4, ()),
    ("zlib", numcodecs.Zlib(level=6), _F8, ("zlib",)),
    ("gzip", numcodecs.GZip(level=1), _F8, ("gzip",)),
    ("bz2", numcodecs.BZ2(level=9), _F8, ("bz2",)),
    ("lzma", numcodecs.LZMA(), _I4, ("lzma",)),
    ("lz4", numcodecs.LZ4(), _I4, ("lz4",)),
    ("zstd", numcodecs.Zstd(level=5), _I4, ("zstd",)),
    ("zstd-checksum", numcodecs.Zstd(level=1, checksum=True), _I4, ("zstd",)),
    ("blosc-lz4-shuffle", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1), _F8, ("blosc",)),
    ("blosc-zstd-bitshuffle", numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2), _I4, ("blosc",)),
    ("blosc-zlib-noshuffle", numcodecs.Blosc(cname="zlib", clevel=1, shuffle=0), _F8, ("blosc",)),
    ("blosc-blosclz-autoshuffle", numcodecs.Blosc(cname="blosclz", clevel=9, shuffle=-1), _I4, ("blosc",)),
    ("blosc-lz4hc-blocksize", numcodecs.Blosc(cname="lz4hc", clevel=5, shuffle=1, blocksize=512), _F8, ("blosc",)),
    ("adler32", numcodecs.Adler32(), _I4, ("adler32",)),
    ("fletcher32", numcodecs.Fletcher32(), _I4, ("fletcher32",)),
    ("crc32", numcodecs.CRC32(), _I4, ("crc32",)),
    ("crc32c", numcodecs.CRC32C(), _I4, ("crc32c",)),
    ("jenkins_lookup3", numcodecs.JenkinsLookup3(), _I4, ("jenkins_lookup3",)),
]
for _name, _comp, _d, _names in _COMPRESSORS:
    add(Case(f"compressor-{_name}", _d, chunks=(16, 20), kwargs=dict(compressors=_comp),
             codec_names=_names))

_FILTERS = [
    ("delta", [numcodecs.Delta(dtype="<i4")], numcodecs.Zlib(), _I4, False),
    ("delta-be", [numcodecs.Delta(dtype=">i4")], None, _I4.astype(">i4"), False),
    ("fixedscaleoffset", [numcodecs.FixedScaleOffset(offset=100, scale=4, dtype="<f8", astype="<i4")], None, _F8, False),
    ("quantize", [numcodecs.Quantize(digits=3, dtype="<f8")], numcodecs.Zstd(), _F8 / 7, True),
    ("bitround", [numcodecs.BitRound(keepbits=8)], numcodecs.Zstd(), _F8 / 7, True),
    ("astype", [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")], None, _F8, False),
    ("shuffle", [numcodecs.Shuffle(elementsize=8)], numcodecs.Zlib(), _F8, False),
    ("delta-fixedscaleoffset-blosc", [numcodecs.Delta(dtype="<f8"),
                                      numcodecs.FixedScaleOffset(offset=0, scale=4, dtype="<f8", astype="<i8")],
     numcodecs.Blosc(cname="zstd", shuffle=1), _F8, False),
    ("zlib-as-filter", [numcodecs.Zlib(level=1)], numcodecs.Adler32(), _I4, False),
    ("crc32-as-filter", [numcodecs.CRC32()], numcodecs.GZip(), _I4, False),
]
for _name, _filters, _comp, _d, _lossy in _FILTERS:
    add(Case(f"filter-{_name}", _d, chunks=(16, 20), lossy=_lossy,
             kwargs=dict(filters=_filters, compressors=_comp), codec_names=(_name.split("-")[0],)))
add(Case("filter-packbits-bool", (np.arange(45) % 3 == 0).reshape(5, 9), chunks=(2, 4),
         kwargs=dict(filters=[numcodecs.PackBits()], compressors=None), codec_names=("packbits",)))

# --------------------------------------------------------------------------- fill values

# 10x12 arrays in 4x5 chunks, partly written: the missing chunks read as the fill value (Cases.fill_case).

CASES.fill_case("f4-NaN", "<f4", np.nan)
CASES.fill_case("f8-Infinity", "<f8", np.inf)
CASES.fill_case("be-f8-minus-Infinity", ">f8", -np.inf)
CASES.fill_case("f2-NaN", "<f2", np.nan)
CASES.fill_case("f8-value", "<f8", 1.0e-300)
CASES.fill_case("f4-minus-zero", "<f4", -0.0, bits=True)
CASES.fill_case("i4-negative", "<i4", -123)
CASES.fill_case("be-i2", ">i2", 300)
CASES.fill_case("u8-max", "<u8", np.iinfo("u8").max)
CASES.fill_case("i8-min", "<i8", np.iinfo("i8").min)
CASES.fill_case("b1-true", "|b1", True)
CASES.fill_case("c8-pair", "<c8", 1 - 2j)
CASES.fill_case("c16-nan-inf", "<c16", complex(np.nan, np.inf))
CASES.fill_case("f8-NaN-edited-from-zero", "<f8", 0.0, edit_fill="NaN", expected_fill=np.nan)
CASES.fill_case("f4-int-literal-edited", "<f4", 0.0, edit_fill=7, expected_fill=np.float32(7))

# fill_value null: only the value reported is defined, not what unwritten chunks hold
for _dt, _d in [("<i4", sample_data("int32", (6, 7))), ("<f8", sample_data("float64", (6, 7))),
                ("|b1", sample_data("bool", (6, 7))),
                ("<M8[s]", np.arange(42).astype("M8[s]").reshape(6, 7))]:
    add(Case(f"fill-null-{_dt.replace('<', 'le-').replace('|', '')}", _d.astype(_dt), chunks=(4, 4),
             fill_value=None, expect=dict(fill_value=None)))

add(Case("fill-nothing-written", sample_data("int16", (9, 11)), chunks=(4, 4), fill_value=42,
         write=None))

# --------------------------------------------------------------------------- shapes


add(Case("0d-f8", np.array(5.5), chunks=(), fill_value=3.0))
add(Case("0d-i2-missing", np.array(0, dtype="<i2"), chunks=(), fill_value=-3, write=None))
add(Case("0d-be-c16", np.array(1 + 2j, dtype=">c16"), chunks=()))
add(Case("zero-length-first-dim", np.zeros((0, 5), "<i2"), chunks=(2, 2)))
add(Case("zero-length-middle-dim", np.zeros((4, 0, 3), "<f4"), chunks=(2, 2, 2)))
add(Case("1d-long", sample_data("int32", (1000,)), chunks=(64,)))
add(Case("4d", sample_data("int16", (3, 4, 5, 2)), chunks=(2, 3, 2, 1)))
add(Case("chunk-larger-than-array", sample_data("int32", (7, 9)), chunks=(100, 50)))
add(Case("attributes", sample_data("int16", (4, 6)), chunks=(3, 3),
         kwargs=dict(attributes={"title": "Tëst 🎉", "n": [1, 2, {"a": None}], "flag": True})))

# --------------------------------------------------------------------------- dimension separator


def _expect_key(*parts: str) -> Callable[[Path], None]:
    def check(path: Path) -> None:
        assert path.joinpath(*parts).is_file(), f"fixture: chunk {parts} not in {sorted(os.listdir(path))}"
    return check


_SEP = sample_data("int32", (7, 9), seed=5)
add(Case("separator-dot", _SEP, chunks=(3, 4), kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "."}),
         post=_expect_key("2.2")))
add(Case("separator-slash", _SEP, chunks=(3, 4), kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "/"}),
         post=_expect_key("2", "2")))
add(Case("separator-slash-3d", sample_data("uint8", (3, 4, 5)), chunks=(2, 2, 2),
         kwargs=dict(chunk_key_encoding={"name": "v2", "separator": "/"}), post=_expect_key("1", "1", "2")))
add(Case("separator-absent", _SEP, chunks=(3, 4), edit=lambda d: d.pop("dimension_separator"),
         post=_expect_key("2.2")))
add(Case("filters-empty-list", _SEP, chunks=(3, 4), edit=lambda d: d.__setitem__("filters", [])))
add(Case("separator-null", _SEP, chunks=(3, 4), edit=lambda d: d.__setitem__("dimension_separator", None),
         post=_expect_key("2.2"), zarr_readable=False,
         expect=dict(shape=(7, 9), dtype=np.dtype("<i4"), chunks=(3, 4), shards=None, fill_value=0,
                     attrs={}, dimension_names=None)))

# --------------------------------------------------------------------------- strings, bytes, objects

_STRS = np.array(
    ["", "a", "hello", "Grüße", "日本語", "🎉🎉", "tab\tnew\nline", "a\x00b", "x" * 40, "ß"] * 5,
    dtype=object,
)
add(Case("object-vlen-utf8", _STRS.reshape(5, 10), dtype=str, chunks=(2, 3), codec_names=("vlen-utf8",)))
add(Case("object-vlen-utf8-no-compressor", _STRS, dtype=str, chunks=(7,), kwargs=dict(compressors=None)))
add(Case("object-vlen-utf8-missing", _STRS.reshape(5, 10), dtype=str, chunks=(2, 3),
         write=(slice(0, 2), slice(3, 7))))
add(Case("object-vlen-utf8-fill", _STRS.reshape(5, 10), dtype=str, chunks=(2, 3), fill_value="n/a",
         write=(slice(0, 2), slice(3, 6))))
add(Case("object-vlen-utf8-order-F", _STRS.reshape(5, 10), dtype=str, chunks=(2, 3),
         kwargs=dict(order="F")))
_BYTES = np.array([b"", b"a", b"\x00\xff\x00", b"bytes", b"\x80" * 30, b"z", b"\n", b"tail"] * 3,
                  dtype=object)[:20]
add(Case("object-vlen-bytes", _BYTES.reshape(4, 5), dtype=zarr.dtype.VariableLengthBytes(),
         chunks=(3, 2), codec_names=("vlen-bytes",)))
add(Case("object-vlen-bytes-missing", _BYTES.reshape(4, 5), dtype=zarr.dtype.VariableLengthBytes(),
         chunks=(3, 2), write=(slice(0, 3), slice(0, 2))))
add(Case("object-vlen-utf8-fill-null", _STRS[:12], dtype=str, chunks=(5,),
         edit=lambda d: d.__setitem__("fill_value", None), expect=dict(fill_value=None)))

_U5 = np.array(["", "abc", "Grüße", "日本", "🎉x", "five5"] * 3, dtype="<U5")
add(Case("U-le", _U5.reshape(3, 6), chunks=(2, 4)))
add(Case("U-be", _U5.astype(">U5").reshape(3, 6), chunks=(2, 4)))
add(Case("U-fill-missing", _U5.reshape(3, 6), chunks=(2, 4), fill_value="zz", write=(slice(0, 2), slice(0, 4))))
_S4 = np.array([b"", b"a", b"abcd", b"\xff\x01", b"ab\x00"] * 3, dtype="|S4")
add(Case("S", _S4.reshape(3, 5), chunks=(2, 4)))
add(Case("S-fill-missing", _S4.reshape(3, 5), chunks=(2, 4), fill_value=b"q", write=(slice(0, 2), slice(0, 4))))
_V3 = np.array([b"\x00\x01\x02", b"abc", b"\xff\xff\xff"] * 4, dtype="|V3")
add(Case("V", _V3.reshape(3, 4), chunks=(2, 3)))

# --------------------------------------------------------------------------- datetimes

for _dt in ["<M8[ns]", "<M8[D]", ">M8[s]", "<M8[10s]", "<M8[Y]", "<m8[ms]", ">m8[us]", "<m8[3h]"]:
    _v = np.random.default_rng(1).integers(-(10 ** 6), 10 ** 6, 14).astype("i8")
    _v[:3] = [0, -1, np.iinfo("i8").min]
    add(Case("datetime-" + _dt.replace("<", "le-").replace(">", "be-"),
             _v.view(np.dtype(_dt).newbyteorder("=")).astype(_dt).reshape(2, 7), chunks=(2, 3)))
add(Case("datetime-missing-value-fill", np.arange(14).astype("<M8[h]").reshape(2, 7), chunks=(2, 3),
         fill_value=np.datetime64(1000, "h"), write=(slice(None), slice(0, 3))))
add(Case("datetime-be-missing-NaT-fill", np.arange(14).astype(">M8[s]").reshape(2, 7), chunks=(2, 3),
         fill_value=np.datetime64("NaT", "s"), write=(slice(None), slice(0, 3))))
add(Case("datetime-be-missing-value-fill", np.arange(14).astype(">m8[D]").reshape(2, 7), chunks=(2, 3),
         fill_value=np.timedelta64(-9, "D"), write=(slice(None), slice(0, 3))))
add(Case("datetime-missing-NaT-fill", np.arange(14).astype("<M8[ms]").reshape(2, 7), chunks=(2, 3),
         fill_value=np.datetime64("NaT", "ms"), write=(slice(None), slice(0, 3))))

# --------------------------------------------------------------------------- structured

_ST_DT = np.dtype([("a", "<i4"), ("b", ">f8"), ("c", "|S3"), ("d", "|b1")])
_ST = np.zeros(15, dtype=_ST_DT)
_ST["a"] = np.arange(15) * -3
_ST["b"] = np.linspace(-1, 1, 15)
_ST["c"] = [b"x", b"yz", b"abc"] * 5
_ST["d"] = np.arange(15) % 2 == 0
_ST_FILL = np.array((7, 2.5, b"ff", True), dtype=_ST_DT)[()]
add(Case("structured", _ST.reshape(3, 5), chunks=(2, 2)))
add(Case("structured-fill-missing", _ST.reshape(3, 5), chunks=(2, 2), fill_value=_ST_FILL,
         write=(slice(0, 2), slice(0, 2))))
add(Case("structured-fill-null", _ST.reshape(3, 5), chunks=(2, 2), fill_value=None,
         expect=dict(fill_value=None)))
add(Case("structured-order-F", _ST.reshape(3, 5), chunks=(2, 2), kwargs=dict(order="F")))

_SUB_DT = np.dtype([("a", "<i4"), ("p", "<f4", (2,)), ("q", ">u2", (2, 2))])
_SUB = np.zeros(7, dtype=_SUB_DT)
_SUB["a"] = np.arange(7) - 3
_SUB["p"] = np.arange(14).reshape(7, 2) / 4
_SUB["q"] = np.arange(28).reshape(7, 2, 2) * 1000


def _write_subarray_store(path: Path) -> np.ndarray:
    """A v2 structured array with sub-array fields, written by hand (zarr-python 3 cannot)."""
    meta = {"zarr_format": 2, "shape": [7], "chunks": [3],
            "dtype": [["a", "<i4"], ["p", "<f4", [2]], ["q", ">u2", [2, 2]]],
            "compressor": None, "fill_value": None, "order": "C", "filters": None}
    write_json(path / ".zarray", meta)
    write_json(path / ".zattrs", {})
    for i in range(3):
        chunk = np.zeros(3, dtype=_SUB_DT)  # the last chunk is padded to the full chunk size
        part = _SUB[i * 3:(i + 1) * 3]
        chunk[: len(part)] = part
        assert chunk.dtype == _SUB_DT
        (path / str(i)).write_bytes(chunk.tobytes())
    return _SUB


add(Case("structured-subarray-hand-written", _SUB, custom_build=_write_subarray_store,
         zarr_readable=False,
         expect=dict(shape=(7,), dtype=_SUB_DT, chunks=(3,), shards=None, fill_value=None, attrs={},
                     dimension_names=None)))



class TestArrays(ArrayConformance):
    format = V2
    cases = CASES
    # selections against zarr-python's own reads (not only numpy) on representative layouts
    zarr_selection_cases = ["order-F-be-f8-3d", "object-vlen-utf8-order-F", "separator-slash-3d",
                            "structured-order-F", "fill-f4-NaN", "U-be"]
    out_of_bounds_cases = ["dtype-le-i4", "0d-f8", "object-vlen-utf8"]

    def test_missing_zattrs_means_no_attributes(self, built: Callable[[str], Built], tmp_path: Path) -> None:
        b = built("dtype-le-i4")
        dst = tmp_path / "no_attrs.zarr"
        shutil.copytree(b.path, dst)
        if (dst / ".zattrs").exists():
            (dst / ".zattrs").unlink()
        arr = zl.open(dst)
        assert dict(arr.attrs) == {}
        assert_array_matches(arr[...], b.data)


# --------------------------------------------------------------------------- hierarchies

_GROUP_DATA = {
    "a/b/arr": np.arange(24, dtype="<i2").reshape(4, 6),
    "a/x": np.linspace(0, 1, 9).astype(">f4"),
    "zeta": np.array([1, 2, 3], dtype="|u1"),
    "m": np.arange(12, dtype="<f8").reshape(3, 4),
}
_GROUP_ATTRS = {
    "": {"title": "root ü 🎉", "nested": {"a": [1, 2, {"b": None}]}},
    "a": {"level": 1},
    "a/b": {"level": 2},
    "a/b/c": {},
    "alpha": {"empty_group": True},
}


def _write_hierarchy(path: Path, consolidate: bool) -> Path:
    root = zarr.open_group(str(path), mode="w", zarr_format=2)
    root.attrs.update(_GROUP_ATTRS[""])
    for name in ["a", "a/b", "a/b/c", "alpha"]:
        g = root.require_group(name)
        g.attrs.update(_GROUP_ATTRS[name])
    for name, data in _GROUP_DATA.items():
        parent, _, leaf = name.rpartition("/")
        g = root[parent] if parent else root
        a = g.create_array(leaf, shape=data.shape, dtype=data.dtype,
                           chunks=tuple(max(1, s // 2) for s in data.shape),
                           attributes={"array": name, "_ARRAY_DIMENSIONS": ["r", "c"][: data.ndim]})
        a[...] = data
    if consolidate:
        zarr.consolidate_metadata(str(path))
    return path


class TestHierarchy(HierarchyConformance):
    format = V2
    data = _GROUP_DATA
    attrs = _GROUP_ATTRS

    write_hierarchy = staticmethod(_write_hierarchy)

    def array_attrs(self, rel: str) -> dict[str, Any]:
        return {"array": rel, "_ARRAY_DIMENSIONS": list(self.dimension_names(rel))}

    def dimension_names(self, rel: str) -> tuple[str, ...]:
        """xarray's convention: v2 dimension names are the ``_ARRAY_DIMENSIONS`` attribute."""
        return ("r", "c")[: _GROUP_DATA[rel].ndim]


def test_consolidated_fixture_has_zmetadata(tmp_path):
    p = _write_hierarchy(tmp_path / "c.zarr", True)
    assert (p / ".zmetadata").is_file()
