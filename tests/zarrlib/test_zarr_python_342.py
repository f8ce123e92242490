"""Every array zarr-python 3.4.2 writes, in every layout it offers, reads as zarr-python reads it.

zarr-python 3.4.2 (in the Python 3.12 oracle venv) writes the matrix of
``zarr342_matrix_writer.py``: Zarr v3 and v2, every serializer, compressor and filter it
exposes with their settings, sharding with its index placements, index codecs, write orders
and nesting, chunk key encodings, fill values over chunks never written, and its data types
(not the sub-byte, 8-bit float and bfloat16 ones). zarrview must read each whole array, and
random selections of it, exactly as zarr-python reads the array back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import py312_env
import zarrview.zarrlib as zl

WRITER = Path(__file__).parent / "zarr342_matrix_writer.py"
#: layouts zarr-python 3.4.2 itself refuses to write (its own error, not zarrview's)
REFUSED_BY_WRITER = {"v2-order-big-int32": "non-native byteorder", "v2-order-big-uint16": "non-native byteorder"}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("zarr342")
    python = py312_env.require(py312_env.ZARR_342)
    py312_env.run(python, WRITER, str(out), timeout=600)
    return out, json.loads((out / "manifest.json").read_text())


def _differs(got: np.ndarray, want: np.ndarray) -> str | None:
    """Why ``got`` is not ``want`` (None where it is)."""
    if got.shape != want.shape:
        return f"shape {got.shape}, zarr-python {want.shape}"
    if want.dtype.kind == "O" or got.dtype.kind == "O":
        return None if got.tolist() == want.tolist() else "values differ"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, zarr-python {want.dtype}"
    if want.dtype.kind in "mM":  # NaT compares unequal to itself: compare the stored integers
        got, want = got.view("i8"), want.view("i8")
    same = np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    return None if same else "values differ"


def test_every_layout_reads_as_zarr_python_reads_it(matrix: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = matrix
    assert {k: v for k, v in manifest["refused"].items() if REFUSED_BY_WRITER.get(k, "\x00") not in v} == {}
    assert len(manifest["written"]) >= 180
    rng = np.random.default_rng(0)
    problems: dict[str, str] = {}
    for name in manifest["written"]:
        want = np.load(root / f"{name}.npy", allow_pickle=True)  # written by the oracle script above
        try:
            arr = zl.open(root / f"{name}.zarr")
            assert isinstance(arr, zl.Array)
            why = _differs(arr[...], want)
            for _ in range(6 if want.ndim and want.size else 0):
                if why is not None:
                    break
                a, b = sorted(int(v) for v in rng.integers(0, want.shape[0] + 1, 2))
                sel = (slice(a, b, int(rng.integers(1, 4))), *(int(rng.integers(0, n)) for n in want.shape[1:]))
                why = _differs(arr[sel], want[sel])
                why = None if why is None else f"{why} at {sel}"
        except zl.ZarrError as e:
            why = f"{type(e).__name__}: {e}"
        if why is not None:
            problems[name] = why
    assert problems == {}
