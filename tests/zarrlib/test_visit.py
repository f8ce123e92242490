"""``Array.visit``: every chunk's part handed over as it is decoded, equal to what zarr-python
reads, with the fill value where nothing is stored or a chunk is broken, from the cache too."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import zarr

import zarrview.zarrlib as zl

rng = np.random.default_rng(3)
VALUES = rng.integers(0, 1000, (9, 11, 13)).astype("i4")


def gather(arr: zl.Array, selection: tuple[object, ...], shape: tuple[int, ...], **options: object) -> np.ndarray:
    """The selection put together from the parts ``visit`` hands over (before integer indices drop dimensions)."""
    out = np.full(shape, -1, "i4")
    seen: list[tuple[slice, ...]] = []
    lock = threading.Lock()

    def visit(index: tuple[slice, ...], values: np.ndarray) -> None:
        with lock:
            assert (out[index] == -1).all(), "a part handed over twice"
            out[index] = values
            seen.append(index)

    arr.visit(selection, visit, **options)  # type: ignore[arg-type]
    assert seen
    return out


def test_parts_equal_zarr_python_with_fill_and_integer_indices(tmp_path: Path) -> None:
    z = zarr.create_array(tmp_path / "a.zarr", shape=VALUES.shape, chunks=(2, 4, 5), dtype="i4", fill_value=7)
    z[:6] = VALUES[:6]  # the last chunks along the first dimension are never written: fill
    arr = zl.open(tmp_path / "a.zarr")
    assert isinstance(arr, zl.Array)
    truth = z[1:8, 3, 2:12]
    np.testing.assert_array_equal(gather(arr, (slice(1, 8), 3, slice(2, 12)), (7, 1, 10))[:, 0], truth)
    cache = zl.ChunkCache(1 << 20)
    first = gather(arr, (slice(None), slice(None), 4), (9, 11, 1), cache=cache)
    assert len(cache) > 0
    again = gather(arr, (slice(None), slice(None), 4), (9, 11, 1), cache=cache)  # the parts come from the cache
    np.testing.assert_array_equal(first[..., 0], z[:, :, 4])
    np.testing.assert_array_equal(again, first)


def test_a_broken_chunk_is_recorded_and_handed_over_as_fill(tmp_path: Path) -> None:
    z = zarr.create_array(tmp_path / "a.zarr", shape=VALUES.shape, chunks=(3, 11, 13), dtype="i4", fill_value=5)
    z[...] = VALUES
    (tmp_path / "a.zarr" / "c" / "1" / "0" / "0").write_bytes(b"not zstd")
    arr = zl.open(tmp_path / "a.zarr")
    assert isinstance(arr, zl.Array)
    failures: list[zl.ChunkFailure] = []
    got = gather(arr, (slice(None), slice(None), slice(None)), VALUES.shape, failures=failures)
    assert [f.coords for f in failures] == [(1, 0, 0)]
    expected = VALUES.copy()
    expected[3:6] = 5
    np.testing.assert_array_equal(got, expected)
