"""Coordinate values as text: as few decimals as keep neighbours apart, and how far outside its
values a typed one lies."""

from __future__ import annotations

from typing import Any

import numpy as np


def decimals(values: np.ndarray) -> int | None:
    """The fewest decimals that write every value to within a thousandth of the smallest step
    between them (so neighbours differ) and to the precision they were stored in; None where even
    twelve are not enough (very small or irregular values: then six significant digits)."""
    v = values.astype(np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0 or values.dtype.kind in "iu":
        return 0
    u = np.unique(v)
    steps = np.diff(u)
    scale = float(np.abs(u).max())
    step = float(steps.min()) if steps.size else (scale or 1.0)
    if scale >= 1e15:
        return None
    tol = max(step * 1e-3, scale * float(np.finfo(values.dtype).eps) * 4)
    for d in range(13):
        if float(np.abs(np.round(v, d) - v).max()) <= tol:
            return d
    return None


def number_text(x: float, places: int | None) -> str:
    """``x`` with ``places`` decimals, trailing zeros dropped (six significant digits for None)."""
    if places is None:
        return f"{x:.6g}"
    text = f"{x:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def plain(v: Any) -> str:
    """A text coordinate's value as a str (bytes read as UTF-8)."""
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def beyond(values: np.ndarray, x: float) -> bool:
    """Whether ``x`` lies more than half a step (the median spacing) outside ``values``' range."""
    finite = np.sort(values[np.isfinite(values)].astype(np.float64))
    if finite.size == 0:
        return False
    half = float(np.median(np.diff(finite))) / 2 if finite.size > 1 else 0.0
    return bool(x < finite[0] - half or x > finite[-1] + half)
