"""The ``zfp`` codec: headerless chunks written by zfpy read as zfpy decodes the same data with its
header, in the fixed modes, the reversible mode, and expert parameters equal to a fixed mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl

zfpy = pytest.importorskip("zfpy")
pytestmark = pytest.mark.timeout(120)
rng = np.random.default_rng(9)


def write(root: Path, data: np.ndarray, chunks: tuple[int, ...], config: dict[str, Any], keywords: dict[str, Any],
          data_type: str) -> np.ndarray:
    """Chunks of ``data`` zfp-compressed without headers; returns zfpy's own decoding of each
    chunk (compressed with a header), assembled."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": list(data.shape), "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "zfp", "configuration": config}]}))
    expected = np.zeros_like(data)
    for index in np.ndindex(*(-(-n // c) for n, c in zip(data.shape, chunks))):
        region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(index, chunks))
        block = np.zeros(chunks, data.dtype)
        part = data[region]
        block[tuple(slice(0, n) for n in part.shape)] = part
        key = root / "c" / "/".join(map(str, index))
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(zfpy.compress_numpy(block, write_header=False, **keywords))
        decoded = zfpy.decompress_numpy(zfpy.compress_numpy(block, write_header=True, **keywords))
        expected[region] = decoded[tuple(slice(0, n) for n in part.shape)]
    return expected


@pytest.mark.parametrize("config, keywords", [
    ({"mode": "fixed_accuracy", "tolerance": 0.05}, {"tolerance": 0.05}),
    ({"mode": "fixed_rate", "rate": 10.5}, {"rate": 10.5}),
    ({"mode": "fixed_precision", "precision": 19}, {"precision": 19}),
])
@pytest.mark.parametrize("data_type", ["float32", "float64", "int32", "int64"])
def test_each_mode_reads_as_zfpy_decodes(tmp_path: Path, config: dict[str, Any], keywords: dict[str, Any],
                                         data_type: str) -> None:
    values = rng.normal(size=(9, 13, 6)) * 1000
    data = (values if data_type.startswith("float") else np.rint(values)).astype(data_type)
    expected = write(tmp_path / "a", data, (4, 8, 6), config, keywords, data_type)
    arr = zl.open(tmp_path / "a")
    assert isinstance(arr, zl.Array) and arr.codecs.startswith("zfp(")
    np.testing.assert_array_equal(arr[...], expected)
    np.testing.assert_array_equal(arr[2:7, 5:11, 1], expected[2:7, 5:11, 1])


def test_a_truncated_or_oversized_chunk_is_contained(tmp_path: Path) -> None:
    data = rng.normal(size=(16, 16)).astype("f4")
    write(tmp_path / "a", data, (16, 16), {"mode": "fixed_accuracy", "tolerance": 1e-6}, {"tolerance": 1e-6}, "float32")
    chunk = tmp_path / "a" / "c" / "0" / "0"
    chunk.write_bytes(chunk.read_bytes()[:40])  # the decoder reads zeros past the end, not memory
    assert zl.open(tmp_path / "a")[...].shape == (16, 16)
    chunk.write_bytes(b"\x00" * 1_000_000)
    with pytest.raises(zl.CodecError, match=r"chunk c/0/0 of /: zfp: 1000000 bytes are more than"):
        zl.open(tmp_path / "a")[...]


@pytest.mark.parametrize("data_type", ["float32", "float64", "int32", "int64"])
def test_reversible_streams_read_back_exactly(tmp_path: Path, data_type: str) -> None:
    """zfpy writes reversible (lossless) streams when given no parameters."""
    values = rng.normal(size=(6, 10)) * 1000
    data = (values if data_type.startswith("float") else np.rint(values)).astype(data_type)
    expected = write(tmp_path / "a", data, (4, 8), {"mode": "reversible"}, {}, data_type)
    np.testing.assert_array_equal(expected, data)  # zfpy's own decoding is lossless
    np.testing.assert_array_equal(zl.open(tmp_path / "a")[...], data)


@pytest.mark.parametrize("expert, keywords", [
    # zfp's fixed modes are expert parameter sets: (minbits, maxbits, maxprec, minexp)
    ({"minbits": 1, "maxbits": 16658, "maxprec": 14, "minexp": -1074}, {"precision": 14}),
    ({"minbits": 1, "maxbits": 16658, "maxprec": 64, "minexp": -6}, {"tolerance": 2.0 ** -6}),
    ({"minbits": 128, "maxbits": 128, "maxprec": 64, "minexp": -1074}, {"rate": 8}),
])
def test_expert_streams_read_as_the_equivalent_fixed_mode(tmp_path: Path, expert: dict[str, int],
                                                          keywords: dict[str, Any]) -> None:
    data = rng.normal(size=(9, 7)).astype("f4")
    expected = write(tmp_path / "a", data, (8, 4), {"mode": "expert", **expert}, keywords, "float32")
    arr = zl.open(tmp_path / "a")
    assert isinstance(arr, zl.Array) and arr.codecs.startswith("zfp(expert minbits")
    np.testing.assert_array_equal(arr[...], expected)


@pytest.mark.parametrize("config, data_type, message", [
    ({"mode": "fixed_rate", "rate": "fast"}, "float32", "rate must be a non-negative number"),
    ({"mode": "fixed_precision", "precision": 1.5}, "float32", "precision must be a non-negative integer"),
    ({"mode": "lossy"}, "float32", "mode must be one of"),
    ({"mode": "fixed_rate", "rate": 8, "tolerance": 1}, "float32", "unknown fields"),
    ({"mode": "expert", "minbits": 9, "maxbits": 8, "maxprec": 3, "minexp": 0}, "float32", "minbits <= maxbits"),
    ({"mode": "expert", "minbits": 1, "maxbits": 8, "maxprec": 3}, "float32", "minexp must be an integer"),
])
def test_bad_configurations_are_named(tmp_path: Path, config: dict[str, Any], data_type: str, message: str) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": data_type, "fill_value": 0,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "codecs": [{"name": "zfp", "configuration": config}]}))
    with pytest.raises(zl.MetadataError, match=message):
        zl.open(tmp_path / "a")


@pytest.mark.parametrize("data_type", ["int8", "uint8", "int16", "uint16"])
def test_narrow_integers_are_promoted_and_demoted_as_the_spec_says(tmp_path: Path, data_type: str) -> None:
    info = np.iinfo(data_type)
    values = rng.integers(info.min, int(info.max) + 1, (6, 9)).astype(data_type)
    bits = 8 * values.dtype.itemsize
    offset = 1 << (bits - 1) if values.dtype.kind == "u" else 0
    promoted = ((values.astype(np.int64) - offset) << (31 - bits)).astype(np.int32)  # the spec's promotion
    decoded = write(tmp_path / "a", promoted, (6, 9), {"mode": "fixed_precision", "precision": 24},
                    {"precision": 24}, "int32")
    meta = json.loads((tmp_path / "a" / "zarr.json").read_text())
    meta["data_type"] = data_type
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(meta))
    expected = np.clip((decoded.astype(np.int64) >> (31 - bits)) + offset, info.min, info.max)  # the spec's demotion
    got = zl.open(tmp_path / "a")[...]
    assert got.dtype == np.dtype(data_type)
    np.testing.assert_array_equal(got, expected)
    assert np.abs(got.astype(np.int64) - values).max() <= 1  # 24 bit planes keep 8- and 16-bit values


@pytest.mark.parametrize("data_type", ["float16", "bfloat16"])
def test_narrow_floats_are_float32_streams(tmp_path: Path, data_type: str) -> None:
    import ml_dtypes

    dtype = np.dtype(getattr(ml_dtypes, data_type, data_type))
    values = rng.normal(size=(5, 7)).astype(dtype)
    decoded = write(tmp_path / "a", values.astype(np.float32), (5, 7), {"mode": "reversible"}, {}, "float32")
    meta = json.loads((tmp_path / "a" / "zarr.json").read_text())
    meta["data_type"] = data_type
    meta["fill_value"] = 0.0
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(meta))
    got = zl.open(tmp_path / "a")[...]
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.astype(np.float32), decoded.astype(dtype).astype(np.float32))
    np.testing.assert_array_equal(got.view(np.uint16), values.view(np.uint16))  # reversible: exact


def test_a_type_zfp_cannot_hold_is_shown_unsupported(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint64", "fill_value": 0,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "codecs": [{"name": "zfp", "configuration": {"mode": "reversible"}}]}))
    node = zl.open(tmp_path / "a")
    assert isinstance(node, zl.UnsupportedArray) and node.shape == (4,)
    with pytest.raises(zl.UnsupportedCodecError, match="data type uint64 is not one zfp holds"):
        node[...]
