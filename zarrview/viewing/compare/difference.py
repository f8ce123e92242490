"""The difference of two planes (or of any two blocks of values) and what it amounts to.

Two modes, each a plane of values drawn with a diverging colour map:

- ``"a-b"``: A − B. Its figure is max |A − B|, its display range symmetric about 0.
- ``"a/b"``: A / B, drawn as the ratio itself, its display range symmetric about 1. The ratio's
  figure is max |A/B − 1|, the largest relative departure (0.25 where A is a quarter above or
  below B), and its RMS is that of A/B − 1. A log ratio would make 2 and 0.5 equally far from
  the middle, but it has no value where the signs differ (temperatures in °C, anomalies) and
  reads as a number nobody measured; the ratio reads as it is, and its range is centred on 1.
  A zero in B gives NaN (not ±inf, which no colour map draws) and is counted apart
  (``zero_denominator``: zeros of B where A is a value, so missing data is not counted twice).

NaN in either gives NaN. The count of elements that differ is element-wise equality as
``np.array_equal(a, b, equal_nan=True)`` judges it (NaN against NaN equal, NaN against a number
different, inf equal to inf), whatever the mode. The maximum is over every difference that is
not NaN (an inf in one plane only is an infinite difference, and is where the maximum is); the
RMS is over the elements whose difference is finite (for ``a-b``, where both are finite); the
display range is the largest finite departure, so one inf does not wash out the colour map.

``DifferenceTally`` folds blocks of values one after another (``whole`` reads whole arrays so)
with float64 sums and exact counts, the maximum's place kept as the first in C order, so a
plane folded in blocks gives the figures of the plane at once. ``window_difference`` compares
two planes on different grids over their common window (``linking.AxisWindow``), B resampled
onto A's coordinates by nearest neighbour: each element of A's window is compared with the
element of B whose coordinates are nearest its own, which keeps B's values as they are (no
interpolated value that neither dataset holds) and costs one gather.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from typing import Any

import numpy as np

from ...scheduling import Context, Job
from ..image.contrast import displayable
from ..image.state import ViewState
from .errors import CompareError, GridMismatchError, ShapeMismatchError
from .linking import PlaneMatch

#: the modes a difference is taken in
MODES = ("a-b", "a/b")


def check_mode(mode: str) -> str:
    """``mode`` itself where it is one of ``MODES``; CompareError otherwise."""
    if mode not in MODES:
        raise CompareError(f"{mode!r} is not a difference mode (one of {', '.join(MODES)})")
    return mode


@dataclass(frozen=True)
class DifferenceStats:
    """What the difference of A and B amounts to."""

    mode: str
    #: elements compared
    count: int
    #: elements where A and B differ (NaN against NaN is equal, NaN against a number is not)
    differ: int
    #: elements whose difference is finite: the RMS is over these
    finite: int
    #: the largest |A − B| (``a-b``) or |A/B − 1| (``a/b``) that is not NaN; None where every one is
    max_abs: float | None
    #: where it is (the first in C order where several are as large), and A's and B's values there
    where: tuple[int, ...] | None
    a_value: float | None
    b_value: float | None
    #: the root mean square of A − B (``a-b``) or A/B − 1 (``a/b``) over ``finite`` elements
    rms: float | None
    #: NaN in A and in B
    nan_a: int
    nan_b: int
    #: ``a/b`` only: elements where B is 0 and A is not NaN (NaN in the ratio)
    zero_denominator: int
    #: the colour map's range: symmetric about 0 (``a-b``) or 1 (``a/b``), as far as the largest
    #: finite departure reaches (1 either side where there is none)
    display_range: tuple[float, float]
    #: elements left out: chunks of either array that could not be read
    unread: int = 0

    @property
    def statistic(self) -> str:
        """The name of ``max_abs``: "max |A−B|" or "max |A/B−1|"."""
        return "max |A−B|" if self.mode == "a-b" else "max |A/B−1|"

    @property
    def rms_name(self) -> str:
        return "RMSE" if self.mode == "a-b" else "RMS(A/B−1)"

    @property
    def identical(self) -> bool:
        """Whether A and B hold the same values everywhere compared."""
        return self.differ == 0

    @property
    def text(self) -> str:
        """One line: ``max |A−B| 0.52 at (3, 4) · RMSE 0.11 over 9,990 · 37 of 10,000 differ``."""
        if self.count == 0:
            return "nothing compared"
        parts = []
        if self.identical:
            parts.append("identical")
        elif self.max_abs is not None:
            at = "" if self.where is None else f" at ({', '.join(str(i) for i in self.where)})"
            parts.append(f"{self.statistic} {self.max_abs:.6g}{at}")
        if self.rms is not None and not self.identical:
            parts.append(f"{self.rms_name} {self.rms:.6g} over {self.finite:,}")
        parts.append(f"{self.differ:,} of {self.count:,} differ")
        if self.zero_denominator:
            parts.append(f"B is 0 at {self.zero_denominator:,} (NaN there)")
        if self.unread:
            parts.append(f"{self.unread:,} unread")
        return " · ".join(parts)


class DifferenceTally:
    """Difference statistics folded block by block: float64 sums of squares, exact counts and the
    largest difference with its place (the first in C order of the whole)."""

    def __init__(self, mode: str) -> None:
        self.mode = check_mode(mode)
        self.count = 0
        self.differ = 0
        self.finite = 0
        self.nan_a = 0
        self.nan_b = 0
        self.zero_denominator = 0
        self.unread = 0
        self.sum_squares = 0.0
        self.max_abs: float | None = None
        self.where: tuple[int, ...] | None = None
        self.a_value: float | None = None
        self.b_value: float | None = None
        self.reach = 0.0

    def add(self, a: np.ndarray, b: np.ndarray, origin: Sequence[int] | None = None,
            keep: np.ndarray | None = None) -> np.ndarray:
        """Fold in the values ``a`` and ``b`` (equal shapes) whose first element lies at
        ``origin`` of the whole; ``keep``: False where an element is left out (unread). Returns
        the difference's values (A − B or A / B, float64; NaN where left out)."""
        a64, b64 = as_float(a, "A"), as_float(b, "B")
        if a64.shape != b64.shape:
            raise ShapeMismatchError(f"A's values have shape {a64.shape} and B's {b64.shape}")
        origin = tuple(origin) if origin is not None else (0,) * a64.ndim
        nan_a, nan_b = np.isnan(a64), np.isnan(b64)
        with np.errstate(all="ignore"):
            if self.mode == "a-b":
                values = a64 - b64
                departure = np.abs(values)
                finite = np.isfinite(a64) & np.isfinite(b64)
            else:
                zero = b64 == 0
                values = a64 / np.where(zero, np.nan, b64)
                departure = np.abs(values - 1.0)
                finite = np.isfinite(values)
                zero &= ~nan_a
            differ = ~((a64 == b64) | (nan_a & nan_b))
        if keep is not None:
            left_out = ~keep
            self.unread += int(left_out.sum())
            for mask in (nan_a, nan_b, finite, differ):
                mask &= keep
            values[left_out] = np.nan
            departure[left_out] = np.nan
            if self.mode == "a/b":
                zero &= keep
            self.count += int(keep.sum())
        else:
            self.count += int(a64.size)
        if self.mode == "a/b":
            self.zero_denominator += int(zero.sum())
        self.nan_a += int(nan_a.sum())
        self.nan_b += int(nan_b.sum())
        self.differ += int(differ.sum())
        shown = departure[finite]
        self.finite += int(shown.size)
        if shown.size:
            self.sum_squares += float(np.dot(shown, shown))
        self._maximum(departure, a64, b64, origin)
        return values

    def _maximum(self, departure: np.ndarray, a: np.ndarray, b: np.ndarray, origin: tuple[int, ...]) -> None:
        present = ~np.isnan(departure)
        if not present.any():
            return
        top = float(np.max(departure, where=present, initial=-np.inf))
        reach = np.isfinite(departure) & present
        if reach.any():
            self.reach = max(self.reach, float(np.max(departure, where=reach, initial=0.0)))
        if self.max_abs is not None and top < self.max_abs:
            return
        flat = int(np.argmax(np.where(present, departure, -np.inf) == top))
        local = np.unravel_index(flat, departure.shape)
        where = tuple(int(o + i) for o, i in zip(origin, local))
        if self.max_abs is None or top > self.max_abs or (self.where is not None and where < self.where):
            self.max_abs, self.where = top, where
            self.a_value, self.b_value = float(a[local]), float(b[local])

    def stats(self) -> DifferenceStats:
        rms = math.sqrt(self.sum_squares / self.finite) if self.finite else None
        reach = self.reach if self.reach > 0 else 1.0
        centre = 0.0 if self.mode == "a-b" else 1.0
        return DifferenceStats(self.mode, self.count, self.differ, self.finite, self.max_abs, self.where,
                               self.a_value, self.b_value, rms, self.nan_a, self.nan_b, self.zero_denominator,
                               (centre - reach, centre + reach), self.unread)


def as_float(values: np.ndarray, which: str) -> np.ndarray:
    """``values`` as float64 (a view where they already are); CompareError for values that are not
    real numbers (complex, text)."""
    values = np.asarray(values)
    if values.dtype.kind not in "biuf":
        raise CompareError(f"{which}'s values are {values.dtype}, not real numbers")
    return values if values.dtype == np.float64 else values.astype(np.float64)


@dataclass(frozen=True, eq=False)
class PlaneDifference:
    """The difference of two planes: the values to draw and what they amount to."""

    values: np.ndarray
    stats: DifferenceStats
    #: the rows and columns of A's plane the values cover ([start, stop)): the whole plane, or
    #: the common window of two grids
    rows: tuple[int, int]
    columns: tuple[int, int]

    @property
    def mode(self) -> str:
        return self.stats.mode

    @property
    def ratio(self) -> bool:
        """Whether the values are A / B (else A − B)."""
        return self.stats.mode == "a/b"


def plane_difference(a: np.ndarray, b: np.ndarray, mode: str = "a-b") -> PlaneDifference:
    """The difference of two planes of equal shape (decoded values, any real type);
    ``ShapeMismatchError`` where the shapes differ."""
    if np.shape(a) != np.shape(b):
        raise ShapeMismatchError(f"A's plane has shape {np.shape(a)} and B's {np.shape(b)}: planes on different "
                                 "grids are compared on their common window")
    tally = DifferenceTally(mode)
    values = tally.add(a, b)
    rows, columns = (values.shape + (1, 1))[:2]
    return PlaneDifference(values, tally.stats(), (0, rows), (0, columns))


def window_difference(a: np.ndarray, b: np.ndarray, match: PlaneMatch, mode: str = "a-b", *,
                      b_origin: tuple[int, int] = (0, 0)) -> PlaneDifference:
    """The difference of A's plane ``a`` (rows and columns as A shows them) and B's plane ``b``
    (rows ``match.y_dim``, columns ``match.x_dim``) over their common window, B taken at the
    element nearest each of A's (``AxisWindow.b_of_a``). ``b`` may be B's whole plane or only
    what ``match.selection(window=True)`` reads of it: ``b_origin`` is B's (row, column) of its
    first element. The statistics' ``where`` is in A's plane. ``GridMismatchError`` where an
    axis has no common window (no overlap, units that do not convert)."""
    windows = []
    for axis in (match.rows, match.columns):
        if axis.window is None:
            raise GridMismatchError(f"{axis.note}: {axis.reason}")
        windows.append(axis.window)
    rows, columns = windows
    if np.shape(a) != (match.rows.a_length, match.columns.a_length):
        raise ShapeMismatchError(f"A's plane has shape {np.shape(a)}, not the {match.rows.a_length} rows and "
                                 f"{match.columns.a_length} columns its grid has")
    take_rows = rows.b_of_a - b_origin[0]
    take_columns = columns.b_of_a - b_origin[1]
    b = np.asarray(b)
    for taken, extent, what in ((take_rows, b.shape[0], "rows"), (take_columns, b.shape[1], "columns")):
        if taken.size and (taken.min() < 0 or taken.max() >= extent):
            raise GridMismatchError(f"B's values do not cover the common window's {what}")
    resampled = b[np.ix_(take_rows, take_columns)]
    tally = DifferenceTally(mode)
    values = tally.add(np.asarray(a)[rows.a_slice, columns.a_slice], resampled,
                       origin=(rows.a_range[0], columns.a_range[0]))
    return PlaneDifference(values, tally.stats(), rows.a_range, columns.a_range)


#: the most elements of a plane compared at once (512 MiB of float64 per copy); a larger plane's
#: figures come from the whole-array comparison, which reads in blocks
PLANE_ELEMENTS = 1 << 26


def plane_job(a: ViewState, b: ViewState, match: PlaneMatch, mode: str = "a-b") -> Job[PlaneDifference]:
    """The job that reads A's plane and B's matching one (only its common window where the grids
    differ) at full resolution, decoded and reduced as each view shows its values, and takes
    their difference (``plane_difference`` on one grid, ``window_difference`` on two). Refuses,
    on the thread that builds it, a plane of B that is not matched, a colour plane (compared one channel at a time), a window with
    no common part and a plane of more than ``PLANE_ELEMENTS``."""
    check_mode(mode)
    if not match.matched:
        raise CompareError("no plane of B matches A's: " + "; ".join(
            f"{link.name}: {link.note}" for link in match.dims if link.status == "not matched"))
    if a.channel_dim is not None or match.channel_dim is not None:
        raise CompareError("colour planes are compared one channel at a time")
    for axis in (match.rows, match.columns):
        if axis.window is None:
            raise GridMismatchError(f"{axis.note}: {axis.reason}")
    rows, columns = a.plane_shape
    if rows * columns > PLANE_ELEMENTS:
        raise CompareError(f"a plane of {rows:,} × {columns:,} is compared over the whole arrays, block by block")
    same = match.same_grid
    b_selection = match.selection(window=not same)
    assert match.rows.window is not None and match.columns.window is not None
    b_origin = (0, 0) if same else (match.rows.window.b_span[0], match.columns.window.b_span[0])

    def work(ctx: Context) -> PlaneDifference:
        a_plane = _read_plane(a, a.plane_selection(), a.y_dim, a.x_dim, ctx)
        b_plane = _read_plane(b, b_selection, match.y_dim, match.x_dim, ctx)
        if same:
            return plane_difference(a_plane, b_plane, mode)
        return window_difference(a_plane, b_plane, match, mode, b_origin=b_origin)

    return Job(work, f"difference of {a.array.path} and {b.array.path}")


def _read_plane(state: ViewState, selection: tuple[Any, ...], y_dim: int, x_dim: int, ctx: Context) -> np.ndarray:
    """``selection`` of ``state``'s array (two dimensions kept) with rows ``y_dim`` first, as
    its view shows the values (CF-decoded where it decodes, complex reduced by its mode)."""
    raw = state.array.read(selection, cancel=ctx.cancel, cache=ctx.cache, executor=ctx.executor,
                           failures=ctx.failures)
    plane = raw.T if y_dim > x_dim else raw
    decoding = state.decoding
    return displayable(plane if decoding is None else decoding.decode(plane), state.complex_mode)
