"""Hostile and corrupt metadata.

Every one costs a ``ZarrError`` that names the key or node, in bounded time and memory,
never another exception. Stores start as good ones written by zarr-python and are
broken on disk; each test failed before its fix.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import zarr
from zarr.codecs import TransposeCodec

import zarrview.zarrlib as zl
from _bad_helpers import assert_same_values, edit_json, names, peak_bytes, read_json, write_json
from _good_stores import meta_key, _templates, store, v2, v3, draft  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(60)


# ----------------------------------------------------------------------------------------------
# 1. JSON that json.loads chokes on with other exceptions


@pytest.mark.parametrize("breakage", ["deep", "long_int"])
def test_unusable_json_is_a_metadata_error(store, breakage):
    fmt, root = store
    key = meta_key(fmt, "arr")
    doc = read_json(root / key)
    text = json.dumps(doc)[:-1]
    if breakage == "deep":
        text += ', "x": ' + "[" * 1000 + "]" * 1000 + "}"
    else:
        text += ', "x": 1' + "0" * 5000 + "}"
    (root / key).write_text(text)
    with pytest.raises(zl.MetadataError, match=names(key)):
        zl.open(root)["arr"]
    children = zl.open(root).members()  # the sibling arrays still list
    assert [c.kind for c in children if c.name == "arr"] == ["error"]


def test_deep_attributes_are_refused_not_crashed_on(v2):
    (v2 / "arr" / ".zattrs").write_text('{"a": ' + "{\"b\": " * 300 + "1" + "}" * 300 + "}")
    with pytest.raises(zl.MetadataError, match=names("arr/.zattrs", "nested more than")):
        zl.open(v2)["arr"]


# ----------------------------------------------------------------------------------------------
# 2 and 11. Data types numpy cannot make, or makes with absurd sizes


@pytest.mark.parametrize("data_type", [
    "r²", "r" + "9" * 3000, "r800000000000", {"name": "raw_bytes", "configuration": {"length_bytes": 2**40}},
    {"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**31}},
    {"name": "null_terminated_bytes", "configuration": {"length_bytes": True}},
    {"name": "numpy.datetime64", "configuration": {"unit": ["s"], "scale_factor": 1}},
], ids=["superscript", "3000_digits", "r800000000000", "raw_1TiB", "utf32_2GiB", "bool_length", "list_unit"])
def test_bad_v3_data_types(v3, data_type):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.update(data_type=data_type, fill_value=0))
    result, peak = peak_bytes(lambda: zl.open(v3)["arr"])
    assert isinstance(result, zl.MetadataError), result
    assert "arr/zarr.json" in str(result) and len(str(result)) < 400
    assert peak < 16 << 20, f"parsing the data type allocated {peak >> 20} MiB"


@pytest.mark.parametrize("dtype", ["|V800000000000", "<U1000000000", [["a", "<f8", [2**40]]],
                                   [["a", [["b", [["c", "<i4"]]]]]], "<U" + "9" * 5000],
                         ids=["V_93GiB", "U_4GB", "subarray_2_40", "nested_struct", "U_5000_digits"])
def test_bad_v2_data_types(v2, dtype):
    edit_json(v2 / "arr" / ".zarray", lambda d: d.update(dtype=dtype))
    result, peak = peak_bytes(lambda: zl.open(v2)["arr"][...])
    if not isinstance(result, np.ndarray):  # nested structs are valid: only the bad ones must fail
        assert isinstance(result, zl.MetadataError), result
        assert "arr/.zarray" in str(result)
    assert peak < 16 << 20


@pytest.mark.parametrize("dtype", ["<U0", "|S0"])
def test_zero_length_strings_are_refused_not_widened(v2, dtype):
    edit_json(v2 / "arr" / ".zarray", lambda d: d.update(dtype=dtype, fill_value=None, compressor=None))
    with pytest.raises(zl.UnsupportedFeatureError, match=names("arr/.zarray", dtype, "zero-length")):
        zl.open(v2)["arr"]


# ----------------------------------------------------------------------------------------------
# 3 and 4. Codec configurations and storage transformers


@pytest.mark.parametrize("level", ["x", [1], float("nan"), float("inf"), {"a": 1}, 10**30, True])
def test_bad_zstd_level_fails_at_open(v3, level):
    def change(d):
        d["codecs"][-1]["configuration"]["level"] = level
    edit_json(v3 / "arr" / "zarr.json", change)
    with pytest.raises(zl.MetadataError, match=names("arr/zarr.json", "zstd", "level")):
        zl.open(v3)["arr"]


@pytest.mark.parametrize("where,value", [("checksum", "yes"), ("gzip_level", "9"), ("bitround", 1.5),
                                         ("blosc_clevel", [5]), ("blosc_cname", 7)])
def test_other_bad_codec_values_fail_at_open(tmp_path, where, value):
    root = tmp_path / "a.zarr"
    codec = {"checksum": {"name": "zstd", "configuration": {"level": 1, "checksum": value}},
             "gzip_level": {"name": "gzip", "configuration": {"level": value}},
             "blosc_clevel": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": value, "shuffle": "shuffle",
                                                                 "typesize": 4}},
             "blosc_cname": {"name": "blosc", "configuration": {"cname": value, "clevel": 5}}}.get(where)
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if where == "bitround":
        codecs.insert(0, {"name": "bitround", "configuration": {"keepbits": value}})
    else:
        codecs.append(codec)
    write_json(root / "zarr.json", {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float32",
                                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                                    "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs})
    with pytest.raises(zl.MetadataError, match=names("zarr.json")):
        zl.open(root)


@pytest.mark.parametrize("config", [[1, 2], "level=5", 5])
def test_draft_compressor_configuration_not_an_object(draft, config):
    key = "meta/root/g1/i2_gzip.array.json"
    edit_json(draft / key, lambda d: d["compressor"].__setitem__("configuration", config))
    with pytest.raises(zl.MetadataError, match=names(key)):
        zl.open(draft)["g1/i2_gzip"][...]


@pytest.mark.parametrize("sep", [5, None, ["/"], "x"])
def test_draft_separator_not_a_separator(draft, sep):
    key = "meta/root/g1/i2_gzip.array.json"
    edit_json(draft / key, lambda d: d["chunk_grid"].__setitem__("separator", sep))
    with pytest.raises(zl.MetadataError, match=names(key, "separator")):
        zl.open(draft)["g1/i2_gzip"][...]


@pytest.mark.parametrize("value", [5, True, 1.5, "sharding"])
def test_storage_transformers_not_a_list(v3, draft, value):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("storage_transformers", value))
    with pytest.raises(zl.MetadataError, match=names("arr/zarr.json", "storage_transformers")):
        zl.open(v3)["arr"]
    key = "meta/root/g1/i2_gzip.array.json"
    edit_json(draft / key, lambda d: d.__setitem__("storage_transformers", value))
    with pytest.raises(zl.MetadataError, match=names(key, "storage_transformers")):
        zl.open(draft)["g1/i2_gzip"]


def test_transpose_order_of_the_wrong_length_names_the_document(tmp_path):
    root = tmp_path / "t.zarr"
    a = zarr.create_array(root, shape=(4, 6), chunks=(2, 3), dtype="<i2", zarr_format=3,
                          filters=[TransposeCodec(order=(1, 0))], compressors=None)
    a[:] = np.arange(24, dtype="<i2").reshape(4, 6)
    assert_same_values(zl.open(root)[...], np.arange(24, dtype="<i2").reshape(4, 6))
    edit_json(root / "zarr.json", lambda d: d["codecs"][0]["configuration"].__setitem__("order", [2, 1, 0]))
    with pytest.raises(zl.MetadataError, match=names("zarr.json", "transpose", "[2, 1, 0]", "2 dimensions")):
        zl.open(root)


# ----------------------------------------------------------------------------------------------
# ----------------------------------------------------------------------------------------------
# 16. Attributes that are not objects


@pytest.mark.parametrize("attrs", ["text", [1, 2], 5])
def test_v3_consolidated_group_attributes_must_be_an_object(v3, attrs):
    zarr.consolidate_metadata(str(v3))
    edit_json(v3 / "zarr.json", lambda d: d["consolidated_metadata"]["metadata"]["sub"].__setitem__("attributes", attrs))
    root = zl.open(v3)
    sub = root["sub"]  # read directly: its own zarr.json is fine
    assert sub.attrs == {}
    h = root._h
    with pytest.raises(zl.MetadataError, match=names("consolidated metadata", "/sub", "attributes")):
        h._consolidated_entry("/sub")


@pytest.mark.parametrize("attrs", ["text", [1, 2], 5])
def test_draft_group_attributes_must_be_an_object(draft, attrs):
    edit_json(draft / "meta" / "root" / "g1.group.json", lambda d: d.__setitem__("attributes", attrs))
    with pytest.raises(zl.MetadataError, match=names("g1.group.json", "attributes")):
        zl.open(draft)["g1"]
    kinds = {c.name: c.kind for c in zl.open(draft).members()}
    assert kinds["g1"] == "error" and kinds["vol3d"] == "array"


def test_draft_array_attributes_must_be_an_object(draft):
    key = "meta/root/delta_i4.array.json"
    edit_json(draft / key, lambda d: d.__setitem__("attributes", ["filters"]))
    with pytest.raises(zl.MetadataError, match=names(key, "attributes")):
        zl.open(draft)["delta_i4"]


# ----------------------------------------------------------------------------------------------
# The bounds themselves


def test_limits_from_the_environment():
    got = zl.limits.from_environment("chunk_bytes=4G, metadata_bytes=512MiB,json_depth=64")
    assert (got.chunk_bytes, got.metadata_bytes, got.json_depth) == (4 << 30, 512 << 20, 64)
    assert got.object_bytes == zl.limits.Limits().object_bytes
    for bad in ("x=1", "chunk_bytes=-1", "chunk_bytes=4Q", "chunk_bytes"):
        with pytest.raises(ValueError, match="ZARRVIEW_LIMITS"):
            zl.limits.from_environment(bad)
    code = "import zarrview.zarrlib as zl; print(zl.limits.limits().chunk_bytes)"
    for env, expected in (("chunk_bytes=3M", str(3 << 20)), ("chunk_bytes=oops", str(1 << 30))):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "ZARRVIEW_LIMITS": env},
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected
        assert ("using the default limits" in out.stderr) == (env == "chunk_bytes=oops")


def test_limits_are_validated_and_restored():
    with pytest.raises(TypeError, match="unknown limits"):
        zl.limits.configure(chunk_size=5)
    with pytest.raises(ValueError, match="positive"):
        zl.limits.configure(chunk_bytes=0)
    old = zl.limits.configure(json_depth=7)
    try:
        assert zl.limits.limits().json_depth == 7
    finally:
        zl.limits.restore(old)
    assert zl.limits.limits().json_depth == old.json_depth and math.isfinite(old.read_bytes)
