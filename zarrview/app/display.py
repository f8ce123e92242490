"""Turning array values into what pyqtgraph can show, and naming dimensions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..zarrlib import Array


def dim_names(arr: Array) -> list[str]:
    names = arr.dimension_names or ()
    return [str(names[i]) if i < len(names) and names[i] else f"dim {i}" for i in range(arr.ndim)]


def displayable(data: np.ndarray, complex_mode: str = "magnitude") -> np.ndarray:
    """Numbers pyqtgraph can show: complex reduced, times as integers, bools as 0/1."""
    if data.dtype.kind == "c":
        return {"magnitude": np.abs, "phase": np.angle, "real": np.real, "imaginary": np.imag}[complex_mode](data)
    if data.dtype.kind in "mM":
        return data.view("i8").astype("f8")
    if data.dtype.kind == "b":
        return data.astype("u1")
    return data


def image_axes(img: np.ndarray) -> dict[str, int]:
    return {"y": 0, "x": 1, "c": 2} if img.ndim == 3 else {"y": 0, "x": 1}


def selection_text(s: Any) -> str:
    if isinstance(s, slice):
        return ":" if s.start is None and s.stop is None else f"{s.start or ''}:{s.stop or ''}"
    return str(s)


#: at most this many values feed the contrast percentiles: on the GUI thread, a 2048x2048
#: plane would otherwise cost tens of milliseconds of sorting per auto-contrast
LEVEL_SAMPLES = 1 << 18


def percentile_levels(img: np.ndarray) -> tuple[float, float]:
    """Levels from the 0.5 and 99.5 percentiles of the finite values (an even subsample if large)."""
    flat = img.reshape(-1)
    if flat.size > LEVEL_SAMPLES:
        flat = flat[:: -(-flat.size // LEVEL_SAMPLES)]
    if flat.dtype.kind == "f":
        flat = flat[np.isfinite(flat)]
    if not flat.size:
        return 0.0, 1.0
    lo, hi = (float(v) for v in np.percentile(flat, (0.5, 99.5)))
    return lo, hi if hi > lo else lo + 1
