"""``bitround``: chunks rounded by numcodecs' BitRound (the codec's reference for floats) read as
the rounded values, also in front of a bfloat16 array (nothing to undo on decode)."""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numcodecs
import numpy as np
import pytest

import zarrview.zarrlib as zl

pytestmark = pytest.mark.timeout(60)


def write(root: Path, stored: np.ndarray, data_type: str, keepbits: int) -> None:
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": list(stored.shape), "data_type": data_type, "fill_value": 0,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(stored.shape)}},
        "chunk_key_encoding": {"name": "default"},
        "codecs": [{"name": "bitround", "configuration": {"keepbits": keepbits}},
                   {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]}))
    (root / "c" / "0").mkdir(parents=True)
    (root / "c" / "0" / "0").write_bytes(numcodecs.Zstd(1).encode(stored.tobytes()))


def test_float32_reads_as_numcodecs_rounds_it(tmp_path: Path) -> None:
    data = np.random.default_rng(4).normal(size=(6, 9)).astype("<f4")
    rounded = np.asarray(numcodecs.BitRound(keepbits=5).encode(data)).view("<f4").reshape(data.shape)
    assert not np.array_equal(rounded, data)
    write(tmp_path / "a", rounded, "float32", 5)
    arr = zl.open(tmp_path / "a")
    assert isinstance(arr, zl.Array) and arr.codecs.startswith("bitround(5)")
    np.testing.assert_array_equal(arr[...], rounded)


def test_bfloat16_behind_bitround_reads_its_stored_values(tmp_path: Path) -> None:
    data = np.random.default_rng(4).normal(size=(3, 4)).astype(ml_dtypes.bfloat16)
    write(tmp_path / "a", data.view("<u2"), "bfloat16", 3)
    np.testing.assert_array_equal(zl.open(tmp_path / "a")[...].view(np.uint16), data.view(np.uint16))
