"""Casting numbers between integer and float types by value, with a rounding rule and an
out-of-range rule (the ``cast_value`` codec's procedure).

Values are reasoned about in float64 (every float type here, ML ones included, is exact
there) or as wide integers; the result is checked against what the target type holds, so a
value that would otherwise become NaN, infinity or a wrapped integer is an error unless the
rules say otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from .scale_offset import int_range, is_integral


def _has_inf(dtype: np.dtype[Any]) -> bool:
    return bool(np.isinf(np.array(np.inf).astype(dtype).astype(np.float64)))


def _has_nan(dtype: np.dtype[Any]) -> bool:
    return bool(np.isnan(np.array(np.nan).astype(dtype).astype(np.float64)))


def _round(f: np.ndarray, rounding: str) -> np.ndarray:
    if rounding == "nearest-even":
        return np.rint(f)
    if rounding == "towards-zero":
        return np.trunc(f)
    if rounding == "towards-positive":
        return np.ceil(f)
    if rounding == "towards-negative":
        return np.floor(f)
    return np.sign(f) * np.floor(np.abs(f) + 0.5)


@dataclass(frozen=True)
class Cast:
    """Casts to ``target``; ``pairs`` are the scalar map's (input, output) entries, first wins."""

    target: np.dtype[Any]
    rounding: str
    out_of_range: str | None
    pairs: tuple[tuple[Any, Any], ...]

    def __call__(self, arr: np.ndarray) -> np.ndarray:
        out = np.zeros(arr.shape, self.target)
        done = np.zeros(arr.shape, bool)
        floating = not is_integral(arr.dtype)
        for key, value in self.pairs:
            k = float(key) if floating else int(key)
            hit = ~done & ((arr == arr.dtype.type(key)) | (np.isnan(arr.astype(np.float64)) if np.isnan(k) else False))
            out[hit] = value
            done |= hit
        rest = ~done
        if rest.any():
            values = arr[rest]
            out[rest] = self._to_int(values) if is_integral(self.target) else self._to_float(values)
        return out

    def _to_int(self, values: np.ndarray) -> np.ndarray:
        if is_integral(values.dtype):
            wide = values.astype(object) if values.dtype == np.uint64 else values.astype(np.int64)
        else:
            f = values.astype(np.float64)
            if not np.isfinite(f).all():
                raise ValueError(f"NaN or infinity has no {self.target.name} value (no scalar_map entry for it)")
            wide = _round(f, self.rounding)
        lo, hi = int_range(self.target)
        low, high = wide < lo, wide > hi
        if low.any() or high.any():
            if self.out_of_range is None:
                raise ValueError(f"a value is outside {self.target.name}'s range [{lo}, {hi}]")
            if self.out_of_range == "clamp":
                wide = np.where(low, lo, np.where(high, hi, wide))
            else:
                span = hi - lo + 1
                wrapped = [(int(v) - lo) % span + lo for v in wide.reshape(-1)]
                return np.array(wrapped, np.int64 if lo < 0 or hi < 2**63 else object).astype(self.target)
        return np.asarray(wide).astype(self.target)

    def _to_float(self, values: np.ndarray) -> np.ndarray:
        if is_integral(values.dtype):
            f = values.astype(np.float64)
        else:
            f = values.astype(np.float64)
            if np.isnan(f).any() and not _has_nan(self.target):
                raise ValueError(f"NaN has no {self.target.name} value (no scalar_map entry for it)")
            if np.isinf(f).any() and not _has_inf(self.target):
                raise ValueError(f"infinity has no {self.target.name} value (no scalar_map entry for it)")
        y = self._rounded(f)
        y64 = y.astype(np.float64)
        beyond = np.isfinite(f) & ~np.isfinite(y64)
        if self.target.name == "float8_e8m0fnu":
            beyond |= np.isfinite(f) & (f <= 0)  # no zero, no negative values
        if beyond.any():
            if self.out_of_range is None:
                raise ValueError(f"a value is outside {self.target.name}'s finite range")
            info = ml_dtypes.finfo(self.target)
            edge = np.where(f > 0, np.inf if _has_inf(self.target) else float(info.max),
                            -np.inf if _has_inf(self.target) else float(info.min))
            if self.target.name == "float8_e8m0fnu":
                edge = np.where(f > 0, float(info.max), float(info.tiny))
            y = np.where(beyond, edge, y64).astype(self.target)
        return y

    def _rounded(self, f: np.ndarray) -> np.ndarray:
        """``f`` in the target type by the rounding rule (nearest-even is numpy's own cast)."""
        with np.errstate(over="ignore", invalid="ignore"):
            y = f.astype(self.target)
        if self.rounding == "nearest-even":
            return y
        y64 = y.astype(np.float64)
        inexact = np.isfinite(f) & np.isfinite(y64) & (y64 != f)
        if not inexact.any():
            return y
        info = ml_dtypes.finfo(self.target)  # the finite ends: most of these formats have no infinity
        up = np.nextafter(y, np.array(float(info.max)).astype(self.target))
        down = np.nextafter(y, np.array(float(info.min)).astype(self.target))
        if self.rounding == "towards-positive":
            return np.where(inexact & (y64 < f), up, y)
        if self.rounding == "towards-negative":
            return np.where(inexact & (y64 > f), down, y)
        if self.rounding == "towards-zero":
            return np.where(inexact & (np.abs(y64) > np.abs(f)), np.where(f > 0, down, up), y)
        away = np.where(f > 0, up, down)
        tie = inexact & (np.abs(y64) < np.abs(f)) & (np.abs(away.astype(np.float64) - f) == np.abs(f - y64))
        return np.where(tie, away, y)
