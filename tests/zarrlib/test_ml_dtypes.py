"""The registry's ML and sub-byte data types: arrays tensorstore writes read as tensorstore reads
them; the types it cannot write are stored here from ``ml_dtypes`` arrays (their bytes, the
bits above a sub-byte value set to noise, which readers must ignore) and read back as
``ml_dtypes`` holds them; fill values follow each type's encoding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import zarrview.zarrlib as zl

pytestmark = pytest.mark.timeout(120)
rng = np.random.default_rng(11)

TENSORSTORE_TYPES = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
                     "float8_e5m2fnuz", "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn", "int4", "int2"]
LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
SUB_BYTE_BITS = {"float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6, "int2": 2, "int4": 4, "uint2": 2,
                 "uint4": 4}


def sample(name: str, shape: tuple[int, ...]) -> np.ndarray:
    dtype = np.dtype(getattr(ml_dtypes, name))
    raw = rng.normal(size=shape) * 3
    if name.startswith("uint") or name == "float8_e8m0fnu":
        raw = np.abs(raw) + 0.5
    if name.startswith(("int", "uint")):
        lo, hi = int(ml_dtypes.iinfo(dtype).min), int(ml_dtypes.iinfo(dtype).max)
        raw = np.clip(np.rint(raw), lo, hi)
    return raw.astype(dtype)


@pytest.mark.parametrize("name", TENSORSTORE_TYPES)
def test_tensorstore_arrays_read_as_tensorstore_reads_them(tmp_path: Path, name: str) -> None:
    ts = pytest.importorskip("tensorstore")
    fill = 0 if name != "float8_e8m0fnu" else 1  # e8m0fnu has no zero
    endian = [{"name": "bytes", "configuration": {"endian": "big"}}] if name == "bfloat16" else [{"name": "bytes"}]
    store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / name)},
                     "metadata": {"shape": [7, 5], "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 5]}},
                                  "data_type": name, "fill_value": fill, "codecs": endian}}, create=True).result()
    values = sample(name, (7, 5))
    written = 7 if name == "float8_e8m0fnu" else 4  # tensorstore paints e8m0fnu fills with another value
    store[:written].write(values[:written]).result()
    expected = store.read().result()
    arr = zl.open(tmp_path / name)
    assert isinstance(arr, zl.Array) and arr.dtype == np.dtype(getattr(ml_dtypes, name))
    got = arr[...]
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))
    assert arr.data_type_name == name


def write_array(root: Path, name: str, doc: dict[str, Any], chunks: dict[str, bytes]) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    base = {"zarr_format": 3, "node_type": "array", "chunk_key_encoding": {"name": "default"}, "fill_value": 0}
    (folder / "zarr.json").write_text(json.dumps(base | doc))
    for key, data in chunks.items():
        path = folder / "c" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


def stored_bytes(values: np.ndarray, bits: int | None, endian: str = "<") -> bytes:
    """The bytes codec's layout from ml_dtypes' bytes: noise above a sub-byte value's bits."""
    raw = values.view(f"u{values.dtype.itemsize}").copy()
    if bits is not None:
        raw |= (rng.integers(0, 256 >> bits, raw.shape).astype(raw.dtype) << bits).astype(raw.dtype)
    return raw.astype(raw.dtype.newbyteorder(endian)).tobytes()


@pytest.mark.parametrize("name", ["float8_e4m3", "float6_e2m3fn", "float6_e3m2fn", "uint2", "uint4", "int4",
                                  "float4_e2m1fn", "float8_e8m0fnu"])
def test_bytes_of_each_type_read_as_ml_dtypes_values(tmp_path: Path, name: str) -> None:
    values = sample(name, (4, 6))
    write_array(tmp_path, name, {"shape": [4, 6], "data_type": name, "codecs": [{"name": "bytes"}],
                                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 6]}},
                                 "fill_value": 1}, {"0/0": stored_bytes(values, SUB_BYTE_BITS.get(name))})
    got = zl.open(tmp_path / name)[...]
    assert got.dtype == values.dtype
    np.testing.assert_array_equal(got.view(f"u{got.dtype.itemsize}"), values.view(f"u{values.dtype.itemsize}"))


@pytest.mark.parametrize("name, endian", [("complex_bfloat16", "big"), ("complex_float16", "little"),
                                          ("complex_float8_e4m3", None), ("complex_float4_e2m1fn", None),
                                          ("complex_float6_e3m2fn", None), ("complex_float8_e5m2fnuz", None)])
def test_complex_types_read_as_complex64(tmp_path: Path, name: str, endian: str | None) -> None:
    comp = name.removeprefix("complex_")
    cdtype = np.dtype(np.float16) if comp == "float16" else np.dtype(getattr(ml_dtypes, comp))
    parts = (rng.normal(size=(5, 2, 3)) * 2).astype(cdtype)  # (element..., [real, imaginary]) in store order
    parts = np.moveaxis(parts, 1, -1)
    codec: dict[str, Any] = {"name": "bytes"} if endian is None else {"name": "bytes", "configuration": {"endian": endian}}
    write_array(tmp_path, name, {"shape": [5, 3], "data_type": name, "codecs": [codec], "fill_value": [1, -2],
                                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 3]}}},
                {"0/0": stored_bytes(parts, SUB_BYTE_BITS.get(comp), ">" if endian == "big" else "<")})
    arr = zl.open(tmp_path / name)
    assert arr.dtype == np.complex64 and arr.fill_value == complex(1, -2)
    assert isinstance(arr, zl.Array) and arr.nbytes == 15 * 2 * cdtype.itemsize  # the stored components' bytes
    expected = parts[..., 0].astype(np.float32) + 1j * parts[..., 1].astype(np.float32)
    np.testing.assert_array_equal(arr[...], expected.astype(np.complex64))


def test_a_missing_chunk_reads_as_the_fill_value_bit_pattern(tmp_path: Path) -> None:
    write_array(tmp_path, "a", {"shape": [4], "data_type": "bfloat16", "fill_value": "0x3fc0",
                                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}}, {})
    got = zl.open(tmp_path / "a")[...]
    np.testing.assert_array_equal(got.view(np.uint16), [0x3FC0] * 4)
    assert got.astype(np.float32).tolist() == [1.5] * 4


@pytest.mark.parametrize("name, fill, bits", [("bfloat16", "NaN", 0x7FC0), ("float8_e4m3fnuz", "NaN", 0x80),
                                              ("float8_e8m0fnu", "NaN", 0xFF), ("float8_e5m2", "-Infinity", 0xFC),
                                              ("int4", -8, 0x08), ("float4_e2m1fn", -6.0, 0x0F)])
def test_fill_values_are_the_types_own_encodings(tmp_path: Path, name: str, fill: Any, bits: int) -> None:
    write_array(tmp_path, "a", {"shape": [3], "data_type": name, "fill_value": fill, "codecs": [LITTLE],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}, {})
    got = zl.open(tmp_path / "a")[...]
    assert got.view(np.uint8 if got.dtype.itemsize == 1 else np.uint16).tolist() == [bits] * 3


@pytest.mark.parametrize("name, fill, message", [
    ("float4_e2m1fn", "NaN", "has no NaN"), ("float6_e2m3fn", "Infinity", "has no infinity"),
    ("float8_e4m3fn", "-Infinity", "has no infinity"), ("int4", 8, "out of range for int4"),
    ("uint2", -1, "out of range for uint2"), ("float4_e2m1fn", "0x1f", "wider than 4 bits"),
    ("bfloat16", "1.0", "expected a number"), ("complex_bfloat16", 1.0, "expected a [real, imaginary] pair"),
    ("float8_e5m2", 1e10, "beyond the range"),
])
def test_fill_values_a_type_cannot_hold_are_named(tmp_path: Path, name: str, fill: Any, message: str) -> None:
    write_array(tmp_path, "a", {"shape": [3], "data_type": name, "fill_value": fill, "codecs": [LITTLE],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}, {})
    with pytest.raises(zl.MetadataError, match="zarr.json") as e:
        zl.open(tmp_path / "a")
    assert message in str(e.value)


def test_multi_byte_types_need_an_endian_and_short_chunks_are_named(tmp_path: Path) -> None:
    write_array(tmp_path, "a", {"shape": [3], "data_type": "bfloat16", "codecs": [{"name": "bytes"}],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}, {})
    with pytest.raises(zl.MetadataError, match="needs an 'endian' for bfloat16"):
        zl.open(tmp_path / "a")
    write_array(tmp_path, "b", {"shape": [3], "data_type": "int4", "codecs": [{"name": "bytes"}],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}, {"0": b"\x01\x02"})
    with pytest.raises(zl.CodecError, match=r"chunk c/0 of /: bytes: expected 3 bytes .* int4, found 2"):
        zl.open(tmp_path / "b")[...]


def test_an_unregistered_type_stays_unsupported_with_its_metadata(tmp_path: Path) -> None:
    write_array(tmp_path, "a", {"shape": [3], "data_type": "float5_e9m9", "codecs": [{"name": "bytes"}],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}}}, {})
    node = zl.open(tmp_path / "a")
    assert isinstance(node, zl.UnsupportedArray) and node.shape == (3,)
    with pytest.raises(zl.UnsupportedDataTypeError, match="float5_e9m9"):
        node[...]


@pytest.mark.parametrize("name, numpy_type", [("complex_float32", "<c8"), ("complex_float64", ">c16")])
def test_complex_float32_and_64_are_numpys_complex_types(tmp_path: Path, name: str, numpy_type: str) -> None:
    values = (rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))).astype(numpy_type)
    endian = "little" if numpy_type[0] == "<" else "big"
    write_array(tmp_path, name, {"shape": [3, 4], "data_type": name, "fill_value": ["NaN", 0],
                                 "codecs": [{"name": "bytes", "configuration": {"endian": endian}}],
                                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 4]}}},
                {"0/0": values.tobytes()})
    arr = zl.open(tmp_path / name)
    np.testing.assert_array_equal(arr[...], values)
    assert np.isnan(arr.fill_value.real) and arr.fill_value.imag == 0


def test_widened_reads_are_float32_and_bounded_by_their_widened_size(tmp_path: Path) -> None:
    values = sample("float8_e4m3", (60,))
    write_array(tmp_path, "a", {"shape": [60], "data_type": "float8_e4m3", "codecs": [{"name": "bytes"}],
                                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [20]}}},
                {str(i): values[20 * i:20 * i + 20].view("u1").tobytes() for i in range(3)})
    arr = zl.open(tmp_path / "a")
    assert isinstance(arr, zl.Array)
    arr.hierarchy.widen_ml_types = True
    assert arr.dtype == np.float32 and arr.stored_dtype == values.dtype and arr.nbytes == 60
    np.testing.assert_array_equal(arr[5:45], values[5:45].astype(np.float32))
    old = zl.limits.configure(read_bytes=100)
    try:
        with pytest.raises(zl.IndexingError, match="240 bytes as float32, more than the 100 bytes"):
            arr[...]
        arr.hierarchy.widen_ml_types = False
        assert arr[...].dtype == values.dtype  # 60 stored bytes are within the bound
    finally:
        zl.limits.restore(old)


@pytest.mark.parametrize("name", ["bfloat16", "int4", "float8_e5m2"])
def test_sharded_tensorstore_arrays_read_inner_chunks_alone(tmp_path: Path, name: str) -> None:
    ts = pytest.importorskip("tensorstore")
    inner = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]
    store = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / name)},
                     "metadata": {"shape": [12, 10], "data_type": name, "fill_value": 0,
                                  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [6, 10]}},
                                  "codecs": [{"name": "sharding_indexed", "configuration": {
                                      "chunk_shape": [3, 5], "codecs": inner}}]}}, create=True).result()
    values = sample(name, (12, 10))
    store[:9, 2:].write(values[:9, 2:]).result()
    expected = store.read().result()
    arr = zl.open(tmp_path / name)
    assert isinstance(arr, zl.Array) and arr.shards == (6, 10) and arr.chunks == (3, 5)
    np.testing.assert_array_equal(arr[...].astype(np.float64), expected.astype(np.float64))
    np.testing.assert_array_equal(arr[4:8, 3:7].astype(np.float64), expected[4:8, 3:7].astype(np.float64))
