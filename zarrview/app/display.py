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
