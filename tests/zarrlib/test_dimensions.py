"""As many dimensions as the numpy in use holds, and a refusal that names that limit: the
metadata comes from zarr-python, the chunk bytes from numpy."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.limits import NUMPY_MAXDIMS


def _array(root: Path, ndim: int) -> np.ndarray:
    """(2, 1, 1, ...) of uint8, each element a chunk file written byte for byte."""
    zarr.create_array(root, shape=(2,) + (1,) * (ndim - 1), chunks=(1,) * ndim, dtype="u1", fill_value=0,
                      compressors=None)
    values = np.array([7, 9], dtype="u1").reshape((2,) + (1,) * (ndim - 1))
    for i in (0, 1):
        folder = root.joinpath("c", str(i), *["0"] * (ndim - 2))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "0").write_bytes(values.reshape(-1)[i:i + 1].tobytes())
    return values


def test_the_most_dimensions_numpy_holds_read(tmp_path: Path) -> None:
    values = _array(tmp_path / "a.zarr", NUMPY_MAXDIMS)
    arr = zl.open(tmp_path / "a.zarr")
    assert arr.ndim == NUMPY_MAXDIMS
    np.testing.assert_array_equal(arr[...], values)
    np.testing.assert_array_equal(arr[1:, ...], values[1:, ...])


def test_one_more_is_refused_naming_numpys_limit(tmp_path: Path) -> None:
    _array(tmp_path / "a.zarr", 3)
    doc = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    n = NUMPY_MAXDIMS + 1
    doc["shape"], doc["chunk_grid"]["configuration"]["chunk_shape"] = [1] * n, [1] * n
    (tmp_path / "a.zarr" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(zl.UnsupportedFeatureError) as e:
        zl.open(tmp_path / "a.zarr")
    assert f"{n} dimensions; at most {NUMPY_MAXDIMS} are supported (numpy {np.__version__}'s limit)" in str(e.value)


def test_a_sharded_array_takes_one_dimension_fewer(tmp_path: Path) -> None:
    """Its shard index has a dimension more than the array."""
    zarr.create_array(tmp_path / "s.zarr", shape=(4, 4), chunks=(2, 2), shards=(4, 4), dtype="u1")
    doc = json.loads((tmp_path / "s.zarr" / "zarr.json").read_text())
    n = NUMPY_MAXDIMS
    doc["shape"], doc["chunk_grid"]["configuration"]["chunk_shape"] = [1] * n, [1] * n
    doc["codecs"][0]["configuration"]["chunk_shape"] = [1] * n
    (tmp_path / "s.zarr" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(zl.UnsupportedFeatureError) as e:
        zl.open(tmp_path / "s.zarr")
    assert f"a shard index of {n} dimensions has {n + 1}" in str(e.value) and np.__version__ in str(e.value)
    assert not os.path.exists(tmp_path / "s.zarr" / "c")
