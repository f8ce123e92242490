"""Turning stored values into numbers a display can map to colours, and choosing the levels.

Levels come from the finite values alone: one NaN or infinity would otherwise make the
percentiles NaN or stretch the range until every real value maps to one grey. A plane with
no finite value at all still gets levels (0, 1), so it is drawn (in the NaN colour) rather
than left blank or keeping the previous image.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: at most this many values feed the contrast percentiles: on the GUI thread, a 2048x2048
#: plane would otherwise cost tens of milliseconds of sorting per auto-contrast
LEVEL_SAMPLES = 1 << 18
PERCENTILES = (0.5, 99.5)
#: the colour of a NaN: magenta, which no grey ramp and none of the usual colormaps end in
NAN_RGBA = (255, 0, 255, 255)


def displayable(data: np.ndarray, complex_mode: str = "magnitude") -> np.ndarray:
    """Numbers a display can show: complex reduced, times as float ticks (NaT as NaN), bools as 0/1."""
    if data.dtype.kind == "c":
        reducers: dict[str, Callable[[np.ndarray], Any]] = {"magnitude": np.abs, "phase": np.angle,
                                                            "real": np.real, "imaginary": np.imag}
        reduce = reducers[complex_mode]
        return np.asarray(reduce(data))
    if data.dtype.kind in "mM":
        ints = data.view("i8")
        out = ints.astype("f8")
        out[ints == np.iinfo(np.int64).min] = np.nan  # NaT
        return out
    if data.dtype.kind == "b":
        return data.astype("u1")
    if data.dtype.kind == "f" and data.dtype.itemsize == 2:
        return data.astype("f4")  # half floats: most display paths have no 16-bit float LUT
    return data


@dataclass(frozen=True)
class ValueSummary:
    """What the levels were computed from: the counts (of the values looked at, a subsample of a
    large plane) let the view say why a plane looks uniform."""

    levels: tuple[float, float]
    finite: int
    nan: int
    infinite: int

    @property
    def note(self) -> str:
        """A phrase for the status bar when the plane is not simply numbers, else ''."""
        total = self.finite + self.nan + self.infinite
        if self.finite == 0 and total:
            what = "NaN" if not self.infinite else "±inf" if not self.nan else "NaN or ±inf"
            return f"no finite value: every value is {what}"
        if self.nan or self.infinite:
            parts = [f"{_share(n, total)} {what}" for n, what in ((self.nan, "NaN"), (self.infinite, "±inf")) if n]
            return ", ".join(parts) + " (not counted in the contrast)"
        return ""


def _share(n: int, total: int) -> str:
    pct = 100.0 * n / total
    return f"{pct:.2g}%" if pct >= 0.01 else "<0.01%"


def summarize(img: np.ndarray) -> ValueSummary:
    """Levels from the 0.5 and 99.5 percentiles of the finite values (an even subsample if large)."""
    flat = img.reshape(-1)
    if flat.size > LEVEL_SAMPLES:
        flat = flat[:: -(-flat.size // LEVEL_SAMPLES)]
    nan = inf = 0
    if flat.dtype.kind == "f":
        finite = np.isfinite(flat)
        if not finite.all():
            nan = int(np.isnan(flat).sum())
            inf = int(flat.size - finite.sum()) - nan
            flat = flat[finite]
    if not flat.size:
        return ValueSummary((0.0, 1.0), 0, nan, inf)
    lo, hi = (float(v) for v in np.percentile(flat, PERCENTILES))
    if not hi > lo:  # a uniform plane: a unit range around its value, so it shows mid-grey, not black
        lo, hi = lo - 0.5, lo + 0.5
    return ValueSummary((lo, hi), int(flat.size), nan, inf)


def percentile_levels(img: np.ndarray) -> tuple[float, float]:
    return summarize(img).levels
