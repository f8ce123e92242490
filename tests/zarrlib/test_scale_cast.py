"""``scale_offset`` and ``cast_value``: arrays written by zarr-python 3.4.2 (with cast-value-rs, in
the Python 3.12 oracle venv) read as zarr-python reads them, alone, chained, inside and around
sharding, with unwritten chunks at the fill value; hostile configurations and chunks fail
with errors naming the key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import py312_env
import zarrview.zarrlib as zl
from zarrview.zarrlib.codecs.casting import Cast

pytestmark = pytest.mark.timeout(600)

WRITER = Path(__file__).parent / "scale_cast_writer.py"
ORACLE = py312_env.ORACLES
CASES = ["f4_to_u1", "f4_scale_only", "u2_range", "f8_nan_map", "i2_wrap", "f8_towards_zero", "f4_to_f2",
         "i4_scale", "sharded_cast", "cast_in_shard", "cast_around_shard"]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scale_cast")
    py312_env.run(py312_env.require(ORACLE), WRITER, str(out), timeout=300)
    return out


@pytest.mark.parametrize("name", CASES)
def test_reads_as_zarr_python_reads(written: Path, name: str) -> None:
    expected = np.load(written / f"{name}.npy")
    arr = zl.open(written / "s.zarr")[name]
    assert isinstance(arr, zl.Array)
    got = arr[...]
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    # a part of it, through the chunk plan, equals the same part of the oracle's read
    np.testing.assert_array_equal(arr[1:5, 2:7], expected[1:5, 2:7])


def test_codecs_are_named_in_the_description(written: Path) -> None:
    arr = zl.open(written / "s.zarr")["f8_nan_map"]
    assert isinstance(arr, zl.Array)
    assert "scale_offset(offset -10, scale 0.1) → cast_value(uint8)" in arr.codecs


def edited(written: Path, tmp_path: Path, name: str, change: Any) -> Path:
    root = tmp_path / "s.zarr"
    shutil.copytree(written / "s.zarr", root)
    meta = root / name / "zarr.json"
    doc = json.loads(meta.read_text())
    change(doc)
    meta.write_text(json.dumps(doc))
    return root


@pytest.mark.parametrize("change, message", [
    (lambda d: d["codecs"][0]["configuration"].__setitem__("scale", 0), "scale must not be zero"),
    (lambda d: d["codecs"][0]["configuration"].__setitem__("bogus", 1), "unknown fields"),
    (lambda d: d["codecs"][1]["configuration"].__setitem__("data_type", "string"), "not an integer or float"),
    (lambda d: d["codecs"][1]["configuration"].__setitem__("out_of_range", "wrap") or
     d["codecs"][1]["configuration"].__setitem__("data_type", "float16"), "needs an integer data_type"),
    (lambda d: d["codecs"][1]["configuration"].__setitem__("rounding", "sideways"), "rounding must be one of"),
    (lambda d: d["codecs"][1]["configuration"].pop("scalar_map"), "NaN or infinity has no uint8 value"),
])
def test_bad_configurations_are_metadata_errors(written: Path, tmp_path: Path, change: Any, message: str) -> None:
    root = edited(written, tmp_path, "f8_nan_map", change)
    with pytest.raises(zl.MetadataError, match="f8_nan_map/zarr.json") as e:
        zl.open(root)["f8_nan_map"]
    assert message in str(e.value)


def test_a_stored_value_outside_the_array_type_fails_naming_the_chunk(written: Path, tmp_path: Path) -> None:
    # int8 -> int16 with scale 3: a stored 100 is not a multiple of 3
    root = edited(written, tmp_path, "i4_scale", lambda d: None)
    chunk = root / "i4_scale" / "c" / "0" / "0"
    doc = json.loads((root / "i4_scale" / "zarr.json").read_text())
    assert doc["codecs"][0]["name"] == "scale_offset"
    import numcodecs

    chunk.write_bytes(numcodecs.Zstd().encode(np.full(12, 100, "<i4").tobytes()))
    arr = zl.open(root)["i4_scale"]
    with pytest.raises(zl.CodecError, match=r"c/0/0.*not a multiple of the scale 3"):
        arr[...]


def test_a_truncated_chunk_fails_naming_the_chunk(written: Path, tmp_path: Path) -> None:
    root = edited(written, tmp_path, "f4_to_u1", lambda d: None)
    chunk = root / "f4_to_u1" / "c" / "1" / "1"
    import numcodecs

    chunk.write_bytes(numcodecs.Zstd().encode(b"\x01" * 7))
    with pytest.raises(zl.CodecError, match=r"c/1/1.*expected 30 bytes"):
        zl.open(root)["f4_to_u1"][...]


@pytest.mark.parametrize("rounding, expected", [
    ("nearest-even", [2, 2, -2, -2, 3]), ("towards-zero", [2, 1, -2, -1, 2]), ("towards-positive", [3, 2, -2, -1, 3]),
    ("towards-negative", [2, 1, -3, -2, 2]), ("nearest-away", [3, 2, -3, -2, 3]),
])
def test_rounding_to_integers_follows_each_rule(rounding: str, expected: list[int]) -> None:
    cast = Cast(np.dtype("i1"), rounding, None, ())
    np.testing.assert_array_equal(cast(np.array([2.5, 1.5, -2.5, -1.5, 2.75])), expected)


@pytest.mark.parametrize("target", ["float16", "bfloat16", "float8_e4m3fnuz", "float8_e5m2", "float8_e8m0fnu",
                                    "float6_e3m2fn", "float4_e2m1fn"])
def test_rounding_to_a_narrower_float_brackets_the_value(target: str) -> None:
    import ml_dtypes

    dtype = np.dtype(getattr(ml_dtypes, target, target))
    values = np.array([1 / 3, 1.3, 3.3, 0.3])
    down = Cast(dtype, "towards-negative", None, ())(values)
    up = Cast(dtype, "towards-positive", None, ())(values)
    assert (down.astype(np.float64) <= values).all() and (up.astype(np.float64) >= values).all()
    # neighbours in the target type: nothing lies between them
    np.testing.assert_array_equal(np.nextafter(down, np.array(float(ml_dtypes.finfo(dtype).max)).astype(dtype)), up)
    np.testing.assert_array_equal(Cast(dtype, "towards-zero", None, ())(values), down)  # all positive
    nearest = Cast(dtype, "nearest-even", None, ())(values).astype(np.float64)
    assert (np.abs(nearest - values) <= np.minimum(values - down.astype(np.float64), up.astype(np.float64) - values)).all()


def test_out_of_range_rules() -> None:
    values = np.array([128.0, -129.0, 300.0])
    with pytest.raises(ValueError, match="outside int8's range"):
        Cast(np.dtype("i1"), "nearest-even", None, ())(values)
    np.testing.assert_array_equal(Cast(np.dtype("i1"), "nearest-even", "clamp", ())(values), [127, -128, 127])
    np.testing.assert_array_equal(Cast(np.dtype("i1"), "nearest-even", "wrap", ())(values),
                                  np.array([128, -129, 300]).astype(np.int8))
    np.testing.assert_array_equal(Cast(np.dtype("f2"), "nearest-even", "clamp", ())(np.array([1e6, -1e6])),
                                  [np.inf, -np.inf])
