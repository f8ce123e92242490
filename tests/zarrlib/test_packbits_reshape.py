"""``packbits`` against numpy's own bit packing (least significant bit first, as the spec lays
elements out) of ml_dtypes' and numpy's element bits; ``reshape`` against numpy's reshape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import zarrview.zarrlib as zl

pytestmark = pytest.mark.timeout(120)
rng = np.random.default_rng(5)


def write_array(root: Path, doc: dict[str, Any], chunks: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    base = {"zarr_format": 3, "node_type": "array", "chunk_key_encoding": {"name": "default"}, "fill_value": 0}
    (root / "zarr.json").write_text(json.dumps(base | doc))
    for key, data in chunks.items():
        (root / "c" / key).parent.mkdir(parents=True, exist_ok=True)
        (root / "c" / key).write_bytes(data)
    return root


def packed(fields: np.ndarray, bits: int, padding: str = "none") -> bytes:
    """Each of ``fields`` (unsigned) as ``bits`` bits, least significant first, by numpy."""
    stream = ((fields.reshape(-1, 1).astype(np.uint64) >> np.arange(bits, dtype=np.uint64)) & 1).astype(np.uint8)
    body = np.packbits(stream.reshape(-1), bitorder="little").tobytes()
    pad = (8 - stream.size % 8) % 8
    return {"none": body, "first_byte": bytes([pad]) + body, "last_byte": body + bytes([pad])}[padding]


def grid(shape: list[int]) -> dict[str, Any]:
    return {"name": "regular", "configuration": {"chunk_shape": shape}}


@pytest.mark.parametrize("name, bits", [("int4", 4), ("uint2", 2), ("float4_e2m1fn", 4), ("float6_e3m2fn", 6),
                                        ("int2", 2), ("uint4", 4)])
@pytest.mark.parametrize("padding", ["none", "first_byte", "last_byte"])
def test_sub_byte_types_unpack_to_ml_dtypes_values(tmp_path: Path, name: str, bits: int, padding: str) -> None:
    dtype = np.dtype(getattr(ml_dtypes, name))
    codes = rng.integers(0, 1 << bits, (5, 7)).astype(np.uint8)
    expected = codes.view(dtype)  # ml_dtypes keeps a sub-byte value in its byte's low bits
    write_array(tmp_path, {"shape": [5, 7], "data_type": name, "chunk_grid": grid([5, 7]),
                           "codecs": [{"name": "packbits", "configuration": {"padding_encoding": padding}}]},
                {"0/0": packed(codes, bits, padding)})
    arr = zl.open(tmp_path)
    got = arr[...]
    assert got.dtype == dtype and arr.codecs.startswith("packbits")
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))
    np.testing.assert_array_equal(arr[1:4, 2:5].astype(np.float64), expected[1:4, 2:5].astype(np.float64))


def test_bool_packs_one_bit_per_element(tmp_path: Path) -> None:
    values = rng.random((3, 11)) < 0.4
    body = np.packbits(values.reshape(-1), bitorder="little").tobytes()
    write_array(tmp_path, {"shape": [3, 11], "data_type": "bool", "chunk_grid": grid([3, 11]), "fill_value": False,
                           "codecs": [{"name": "packbits"}, {"name": "gzip", "configuration": {"level": 1}}]},
                {"0/0": __import__("gzip").compress(body)})
    np.testing.assert_array_equal(zl.open(tmp_path)[...], values)


def test_kept_bits_return_to_first_bit_and_signed_values_extend(tmp_path: Path) -> None:
    values = rng.integers(-512, 512, 40).astype(np.int16) * 4  # bits 2..11 carry all of each value
    fields = (values.view(np.uint16) >> 2) & 0x3FF
    write_array(tmp_path, {"shape": [40], "data_type": "int16", "chunk_grid": grid([40]),
                           "codecs": [{"name": "packbits", "configuration": {"first_bit": 2, "last_bit": 11}}]},
                {"0": packed(fields, 10)})
    np.testing.assert_array_equal(zl.open(tmp_path)[...], values)


def test_complex_components_pack_real_then_imaginary(tmp_path: Path) -> None:
    codes = rng.integers(0, 16, (6, 2)).astype(np.uint8)
    comps = codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    write_array(tmp_path, {"shape": [6], "data_type": "complex_float4_e2m1fn", "chunk_grid": grid([6]),
                           "fill_value": [0, 0], "codecs": [{"name": "packbits"}]}, {"0": packed(codes, 4)})
    np.testing.assert_array_equal(zl.open(tmp_path)[...], (comps[:, 0] + 1j * comps[:, 1]).astype(np.complex64))


def test_bad_chunks_and_configurations_are_named(tmp_path: Path) -> None:
    codes = rng.integers(0, 16, 9).astype(np.uint8)
    write_array(tmp_path / "a", {"shape": [9], "data_type": "uint4", "chunk_grid": grid([9]),
                                 "codecs": [{"name": "packbits", "configuration": {"padding_encoding": "last_byte"}}]},
                {"0": packed(codes, 4) + b"\x03"})
    with pytest.raises(zl.CodecError, match=r"chunk c/0 of /: packbits: the last byte says 3 padding bits, the chunk has 4"):
        zl.open(tmp_path / "a")[...]
    write_array(tmp_path / "b", {"shape": [9], "data_type": "uint4", "chunk_grid": grid([9]),
                                 "codecs": [{"name": "packbits"}]}, {"0": packed(codes, 4)[:-1]})
    with pytest.raises(zl.CodecError, match=r"chunk c/0 of /: packbits: expected 5 bytes .* found 4"):
        zl.open(tmp_path / "b")[...]
    (tmp_path / "b" / "c" / "0").write_bytes(packed(codes, 4) + b"\x00")  # longer than it can be: not read
    with pytest.raises(zl.CodecError, match=r"b/c/0: 6 bytes, more than the 5 bytes allowed for one chunk as"):
        zl.open(tmp_path / "b")[...]
    for config, message in (({"first_bit": 3, "last_bit": 1}, "less than first_bit"),
                            ({"last_bit": 4}, "must be a bit of the 4-bit uint4"),
                            ({"padding_encoding": "middle"}, "padding_encoding must be one of"),
                            ({"bits": 1}, "unknown fields")):
        write_array(tmp_path / "c", {"shape": [9], "data_type": "uint4", "chunk_grid": grid([9]),
                                     "codecs": [{"name": "packbits", "configuration": config}]}, {})
        with pytest.raises(zl.MetadataError, match=message):
            zl.open(tmp_path / "c")


def test_reshape_then_transpose_reads_as_numpy_reshapes(tmp_path: Path) -> None:
    values = rng.integers(0, 1000, (4, 6, 5)).astype("<i4")
    # store order: reshape (4, 6, 5) -> (24, 5), then transpose to (5, 24)
    stored = values.reshape(24, 5).T
    write_array(tmp_path, {"shape": [8, 6, 5], "data_type": "int32", "chunk_grid": grid([4, 6, 5]), "fill_value": -1,
                           "codecs": [{"name": "reshape", "configuration": {"shape": [[0, 1], -1]}},
                                      {"name": "transpose", "configuration": {"order": [1, 0]}},
                                      {"name": "bytes", "configuration": {"endian": "little"}}]},
                {"0/0/0": np.ascontiguousarray(stored).tobytes()})
    arr = zl.open(tmp_path)
    got = arr[...]
    np.testing.assert_array_equal(got[:4], values)
    assert (got[4:] == -1).all() and "reshape([[0, 1], -1])" in arr.codecs


@pytest.mark.parametrize("shape, message", [
    ([[1], [0]], "must increase strictly"), ([-1, -1], "may occur once"), ([7, 3], "does not hold the"),
    ([[1], 4], "does not ravel"), ([0], "not a positive size"), ([[0, 5]], "beyond the 2 of the chunk"),
])
def test_reshape_shapes_that_break_the_rules_are_metadata_errors(tmp_path: Path, shape: Any, message: str) -> None:
    write_array(tmp_path, {"shape": [4, 6], "data_type": "uint8", "chunk_grid": grid([4, 6]),
                           "codecs": [{"name": "reshape", "configuration": {"shape": shape}}, {"name": "bytes"}]}, {})
    with pytest.raises(zl.MetadataError, match=message):
        zl.open(tmp_path)


def test_float32_through_scale_offset_cast_to_int4_and_packbits(tmp_path: Path) -> None:
    """The codecs composed: x -> (x - 1) * 2 -> int4 -> 4 bits each; read back as x."""
    values = (rng.integers(-8, 8, (4, 6)) / 2 + 1).astype("<f4")
    codes = (((values - 1) * 2).astype(np.int8).view(np.uint8) & 0xF)
    write_array(tmp_path, {"shape": [8, 6], "data_type": "float32", "chunk_grid": grid([4, 6]), "fill_value": 1.5,
                           "codecs": [{"name": "scale_offset", "configuration": {"offset": 1, "scale": 2}},
                                      {"name": "cast_value", "configuration": {"data_type": "int4"}},
                                      {"name": "packbits"}]},
                {"0/0": packed(codes, 4)})
    arr = zl.open(tmp_path)
    assert arr.codecs == "scale_offset(offset 1, scale 2) → cast_value(int4) → packbits(none)"
    got = arr[...]
    np.testing.assert_array_equal(got[:4], values)
    assert (got[4:] == 1.5).all()


def test_float32_cast_to_bfloat16_reads_ml_dtypes_values(tmp_path: Path) -> None:
    values = rng.normal(size=(3, 5)).astype(ml_dtypes.bfloat16)
    write_array(tmp_path, {"shape": [3, 5], "data_type": "float32", "chunk_grid": grid([3, 5]), "fill_value": "NaN",
                           "codecs": [{"name": "cast_value", "configuration": {"data_type": "bfloat16"}},
                                      {"name": "bytes", "configuration": {"endian": "big"}}]},
                {"0/0": values.view("<u2").astype(">u2").tobytes()})
    np.testing.assert_array_equal(zl.open(tmp_path)[...], values.astype(np.float32))
