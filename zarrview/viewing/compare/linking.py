"""Which plane of a second array B stands for the plane of array A shown.

Two datasets compared side by side rarely share an index space: a model's daily fields against
12-hourly analyses starting two days later, a 1° grid against a 0.5° one. Index 4 of A's time is
then not index 4 of B's, so B's plane is found by what the indices stand for: each dimension of
B is paired with one of A's (by name where both are named, else by position where the ranks
agree), and along each dimension that is not displayed, B takes the index whose coordinate is
nearest A's current value:

- times are compared as instants: each axis' values are days since its own ``units`` date, and
  the days between the two dates (cftime's arithmetic, across the real-world calendars standard,
  proleptic_gregorian and julian) put A's time on B's scale. Calendars whose days are not each
  other's (360_day against standard, say) are not matched: no instant of one is a day of the other;
- numbers are compared in one unit (``hPa`` against ``Pa`` converted, ``units.factor``),
  longitudes round the circle; text labels by equality;
- a value of A more than half a step outside B's coordinates, or in units that cannot be
  converted, is "not matched", with the reason, never quietly clamped to B's first or last index;
- where neither has a coordinate, the index itself is taken (clamped to B's length, saying so).

Along the displayed dimensions the two planes are on the same grid (the same coordinate values,
or the same length where there are none) or on different ones; then each displayed axis gets its
common window: the index ranges of A and of B that cover the overlap of their coordinate extents,
and for each index of A's range the index of B nearest it (what ``difference.window_difference``
resamples B with). Nothing here reads the store: the coordinates come with each side's ``CFView``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import cftime
import numpy as np

from ...zarrlib import Array
from ..cf.calendars import CFTIME_CALENDAR, CFTimeError, Fields, make_date, parse_datetime, split_units
from ..cf.coords import CoordAxis
from ..cf.dims import dimension_names
from ..cf.number_text import beyond, plain
from ..cf.time import TimeAxis
from ..cf.view import CFView
from ..image.state import ViewState
from .errors import LinkError, UnmatchedError
from .units import factor, plain_units

#: how a dimension of B got its index
Status = Literal["matched", "clamped", "not matched", "kept"]
#: the coordinates of two axes within this fraction of their smallest step are the same grid
SAME_GRID = 1e-6


@dataclass(frozen=True, eq=False)
class Side:
    """One array of the pair as it is compared: the array, its CF view (coordinates, decoding)
    and names for its dimensions where its metadata has none (an OME image's axes)."""

    array: Array
    cf: CFView | None = None
    names: tuple[str, ...] | None = None
    #: coordinates that stand in for the CF view's (a pyramid level's positions in level-0 space)
    axes: Mapping[int, CoordAxis] | None = None

    @classmethod
    def of(cls, state: ViewState) -> Side:
        """The side a view state shows."""
        return cls(state.array, state.cf, state.axis_names)

    def dim_names(self) -> tuple[str | None, ...]:
        """Each dimension's name (None where unnamed): the names given, else the array's own."""
        if self.names is not None and len(self.names) == self.array.ndim:
            return tuple(self.names)
        return dimension_names(self.array)

    def axis(self, dim: int) -> CoordAxis | None:
        """The coordinate of ``dim``, or None where it has none."""
        if self.axes is not None:
            return self.axes.get(dim)
        return None if self.cf is None else self.cf.axes.get(dim)

    def name(self, dim: int) -> str:
        """``dim``'s name for messages: its name, else ``dim_2``."""
        return self.dim_names()[dim] or f"dim_{dim}"


@dataclass(frozen=True)
class DimLink:
    """How B's index along one dimension that is not displayed was chosen."""

    #: B's dimension and its name
    b_dim: int
    name: str
    #: A's dimension paired with it (None: A has none)
    a_dim: int | None
    #: B's index along it: the match, the clamped index, or (not matched, nothing to match) B's own
    index: int
    status: Status
    #: what was matched ("time 2001-01-05 → 2001-01-05 00:00") or why not
    note: str


@dataclass(frozen=True, eq=False)
class AxisWindow:
    """The common window of one displayed axis: A's indices ``a_range`` and B's ``b_range``
    ([start, stop)) cover the overlap of their coordinates; ``b_of_a`` holds, for each index of
    A's range, the index of B whose coordinate is nearest it (B resampled onto A's grid)."""

    a_range: tuple[int, int]
    b_range: tuple[int, int]
    b_of_a: np.ndarray
    #: "coordinates" where the window comes from coordinate values, else "index"
    by: str

    @property
    def a_slice(self) -> slice:
        return slice(*self.a_range)

    @property
    def b_span(self) -> tuple[int, int]:
        """B's indices the resampling takes ([start, stop)): ``b_range``, and, where the element
        of B nearest one of A's lies just outside the overlap (less than half B's step beyond
        it), that element too."""
        if self.b_of_a.size == 0:
            return self.b_range
        return min(self.b_range[0], int(self.b_of_a.min())), max(self.b_range[1], int(self.b_of_a.max()) + 1)

    @property
    def b_slice(self) -> slice:
        """What to read of B for the window: ``b_span``."""
        return slice(*self.b_span)


@dataclass(frozen=True, eq=False)
class GridAxis:
    """One displayed axis of both planes (rows or columns)."""

    a_dim: int
    b_dim: int
    a_length: int
    b_length: int
    #: the same coordinate values (or, without coordinates, the same length)
    same: bool
    #: the common window, None where there is none (``reason`` says why)
    window: AxisWindow | None
    reason: str | None = None
    #: how the axes were compared, for the status bar ("lat", "by index")
    note: str = ""


@dataclass(frozen=True, eq=False)
class PlaneMatch:
    """B's plane that stands for A's: its indices, displayed dimensions and how both were found."""

    #: B's index along every dimension (those displayed are 0)
    indices: tuple[int, ...]
    #: B's rows, columns and colour dimension (paired with A's)
    y_dim: int
    x_dim: int
    channel_dim: int | None
    #: each dimension of B that is not displayed, in B's order
    dims: tuple[DimLink, ...]
    rows: GridAxis
    columns: GridAxis
    #: A's dimensions that are not displayed and have no dimension in B
    unpaired: tuple[str, ...] = ()

    @property
    def same_grid(self) -> bool:
        return self.rows.same and self.columns.same

    @property
    def matched(self) -> bool:
        """Whether every dimension of B found its index (none "not matched")."""
        return all(link.status != "not matched" for link in self.dims)

    @property
    def plane(self) -> dict[int, int]:
        """B's index along each dimension that is not displayed (what B's sliders are set to)."""
        return {link.b_dim: link.index for link in self.dims}

    @property
    def windows(self) -> tuple[AxisWindow | None, AxisWindow | None]:
        return self.rows.window, self.columns.window

    @property
    def notes(self) -> tuple[str, ...]:
        out = [link.note for link in self.dims]
        out += [f"{axis.note}: {axis.reason}" for axis in (self.rows, self.columns) if axis.reason]
        out += [f"A's {name} has no dimension in B" for name in self.unpaired]
        return tuple(out)

    def selection(self, window: bool = False) -> tuple[int | slice, ...]:
        """What to read of B: its plane (with ``window``, only what resampling B onto the common
        window takes, ``AxisWindow.b_span``), the colour dimension whole, every other dimension at
        its index."""
        out: list[int | slice] = []
        for d, i in enumerate(self.indices):
            if d in (self.y_dim, self.x_dim):
                axis = self.rows if d == self.y_dim else self.columns
                out.append(axis.window.b_slice if window and axis.window is not None else slice(None))
            elif d == self.channel_dim:
                out.append(slice(None))
            else:
                out.append(i)
        return tuple(out)

    @property
    def text(self) -> str:
        """One line for the status bar: B's index along each dimension, and the grids."""
        parts = [f"{link.name} {link.note}" if link.status != "not matched" else f"{link.name} not matched: {link.note}"
                 for link in self.dims]
        parts.append(self._grid_text())
        return "B: " + "; ".join(parts)

    def _grid_text(self) -> str:
        if self.same_grid:
            return "same grid"
        missing = [f"{axis.note}: {axis.reason}" for axis in (self.rows, self.columns) if axis.window is None]
        if missing:
            return "different grid, no common window (" + "; ".join(missing) + ")"
        r, c = self.rows.window, self.columns.window
        assert r is not None and c is not None
        return (f"different grid, common window A[{r.a_range[0]}:{r.a_range[1]}, {c.a_range[0]}:{c.a_range[1]}] "
                f"= B[{r.b_range[0]}:{r.b_range[1]}, {c.b_range[0]}:{c.b_range[1]}]")


def match_plane(a: ViewState, b: ViewState | Side | Array, *, b_indices: Sequence[int] | None = None,
                held: Mapping[int, int] | None = None) -> PlaneMatch:
    """The plane of ``b`` that stands for the plane ``a`` shows (see ``match_dims``). ``b``: B's
    view state (its CF view and indices used), a ``Side``, or the bare array (matched by index
    alone until its CF view is read); ``b_indices`` defaults to a view state's own."""
    if isinstance(b, ViewState):
        b_indices = b.indices if b_indices is None else b_indices
        b = Side.of(b)
    elif isinstance(b, Array):
        b = Side(b)
    return match_dims(Side.of(a), a.indices, a.y_dim, a.x_dim, b, channel_dim=a.channel_dim, b_indices=b_indices,
                      held=held)


def match_dims(a: Side, indices: Sequence[int], y_dim: int, x_dim: int, b: Side, *,
               channel_dim: int | None = None, b_indices: Sequence[int] | None = None,
               held: Mapping[int, int] | None = None) -> PlaneMatch:
    """The plane of ``b`` that stands for A's plane (rows ``y_dim``, columns ``x_dim``, colour
    ``channel_dim``, every other dimension at its index in ``indices``). ``b_indices``: B's
    indices as shown before, kept along dimensions A has nothing to say about; ``held``: B's
    dimensions held at an index of their own whatever A shows (one array against itself at
    another channel or time). Raises ``LinkError`` where B has no dimension for A's rows,
    columns or colour."""
    pairs = pair_dimensions(a.dim_names(), b.dim_names())
    by_a = {d: e for e, (d, _) in pairs.items()}
    shown: dict[str, int] = {}
    for role, d in (("rows", y_dim), ("columns", x_dim), ("colour", channel_dim)):
        if d is None:
            continue
        if d not in by_a:
            raise LinkError(f"B has no dimension for A's {role} ({a.name(d)})")
        shown[role] = by_a[d]
    kept = tuple(b_indices) if b_indices is not None and len(b_indices) == b.array.ndim else (0,) * b.array.ndim
    links: list[DimLink] = []
    out = [0] * b.array.ndim
    for e in range(b.array.ndim):
        if e in shown.values():
            continue
        pair = pairs.get(e)
        if held is not None and e in held:
            index = min(max(0, int(held[e])), max(0, b.array.shape[e] - 1))
            shows = f"A's [{indices[pair[0]]}]" if pair is not None else "A has none"
            link = DimLink(e, b.name(e), None if pair is None else pair[0], index, "kept", f"[{index}] (held; {shows})")
        elif pair is None:
            index = min(max(0, int(kept[e])), max(0, b.array.shape[e] - 1))
            link = DimLink(e, b.name(e), None, index, "kept", f"[{index}] (A has no {b.name(e)})")
        else:
            link = _link(a, pair[0], int(indices[pair[0]]), b, e, index=int(kept[e]))
        links.append(link)
        out[e] = link.index
    displayed = {y_dim, x_dim, channel_dim}
    unpaired = tuple(a.name(d) for d in range(a.array.ndim) if d not in displayed and d not in by_a)
    rows = grid_axis(a, y_dim, b, shown["rows"])
    columns = grid_axis(a, x_dim, b, shown["columns"])
    return PlaneMatch(tuple(out), shown["rows"], shown["columns"], shown.get("colour"), tuple(links), rows, columns,
                      unpaired)


def pair_dimensions(a_names: Sequence[str | None], b_names: Sequence[str | None]) -> dict[int, tuple[int, str]]:
    """B's dimension -> (A's dimension, "name" or "position"): by name where both are named (a
    name A uses once), then, where the ranks agree, each dimension still unpaired with A's at
    its position, where that one is unpaired too."""
    a_once = {n: d for d, n in enumerate(a_names) if n is not None and list(a_names).count(n) == 1}
    pairs: dict[int, tuple[int, str]] = {}
    for e, n in enumerate(b_names):
        if n is not None and n in a_once and list(b_names).count(n) == 1:
            pairs[e] = (a_once[n], "name")
    if len(a_names) == len(b_names):
        taken = {d for d, _ in pairs.values()}
        for e in range(len(b_names)):
            if e not in pairs and e not in taken:
                pairs[e] = (e, "position")
    return pairs


def _link(a: Side, d: int, i: int, b: Side, e: int, *, index: int) -> DimLink:
    """B's index along ``e`` for A's index ``i`` along ``d``; ``index``: B's own, kept where
    nothing matches."""
    name = b.name(e)
    length = b.array.shape[e]
    index = min(max(0, index), max(0, length - 1))
    aa, ba = a.axis(d), b.axis(e)
    if aa is not None and ba is not None:
        if not 0 <= i < len(aa):
            return DimLink(e, name, d, index, "not matched", f"A's index {i} is outside its {len(aa)} coordinates")
        try:
            j, note = nearest_index(aa, i, ba)
        except UnmatchedError as why:
            return DimLink(e, name, d, index, "not matched", str(why))
        return DimLink(e, name, d, j, "matched", note)
    only = "" if aa is None and ba is None else f", only {'A' if ba is None else 'B'} has coordinates"
    if length == 0:
        return DimLink(e, name, d, 0, "not matched", f"B's {name} is empty")
    if 0 <= i < length:
        return DimLink(e, name, d, i, "matched", f"[{i}] (by index{only})")
    j = min(max(0, i), length - 1)
    return DimLink(e, name, d, j, "clamped", f"[{j}]: A's index {i} is outside B's {length} (by index{only})")


def nearest_index(aa: CoordAxis, i: int, ba: CoordAxis) -> tuple[int, str]:
    """B's index whose coordinate is nearest the value of A's index ``i``, and the words for it
    (``2001-01-05 → 2001-01-05 00:00 [8]``); ``UnmatchedError`` where the value lies more than
    half a step outside B's coordinates or the two cannot be compared."""
    if aa.time is not None or ba.time is not None:
        if aa.time is None or ba.time is None:
            which = "A's" if aa.time is not None else "B's"
            raise UnmatchedError(f"only {which} {aa.name if aa.time is not None else ba.name} holds times")
        offset = epoch_offset(aa.time, ba.time)
        value = float(aa.numeric()[i])
        if not math.isfinite(value):
            raise UnmatchedError(f"A's time at index {i} is missing")
        target = value + offset
        positions = ba.numeric()
        j = _nearest_of(positions, target, ba, aa.label(i))
        away = abs(float(positions[j]) - target)
        return j, f"{aa.label(i)} → {ba.label(j)} [{j}]" + (f" ({_duration(away)} away)" if away * 86_400 >= 1e-6 else "")
    if aa.values.dtype.kind not in "iuf" or ba.values.dtype.kind not in "iuf":
        if aa.values.dtype.kind in "iuf" or ba.values.dtype.kind in "iuf":
            raise UnmatchedError(f"A's {aa.name} and B's {ba.name} are not both numbers or both labels")
        text = plain(aa.values[i])
        for j, v in enumerate(ba.values):
            if plain(v) == text:
                return j, f"{text} [{j}]"
        raise UnmatchedError(f"{text!r} is not one of B's {ba.name} labels")
    scale = factor(aa.units, ba.units)
    if scale is None:
        raise UnmatchedError(f"A's {aa.name} is in {plain_units(aa.units) or 'no units'!r} and B's {ba.name} in "
                           f"{plain_units(ba.units) or 'no units'!r}, which do not convert")
    value = float(aa.values[i])
    if not math.isfinite(value):
        raise UnmatchedError(f"A's {aa.name} at index {i} is missing")
    positions = ba.values.astype(np.float64)
    target = value * scale
    if _circular(aa, ba):
        target = _wrapped(target, positions)
    j = _nearest_of(positions, target, ba, aa.label(i))
    away = abs(float(positions[j]) - target)
    step = _step(positions)
    exact = away <= SAME_GRID * (step or max(1.0, abs(target)))
    unit = f" {plain_units(ba.units)}" if plain_units(ba.units) else ""
    return j, f"{aa.label(i)} → {ba.label(j)} [{j}]" + ("" if exact else f" ({away:.6g}{unit} away)")


def _nearest_of(positions: np.ndarray, target: float, ba: CoordAxis, text: str) -> int:
    """The index of ``positions`` nearest ``target`` (``text`` A's value in words);
    ``UnmatchedError`` where ``target`` lies more than half a step outside them."""
    finite = np.isfinite(positions)
    if not finite.any():
        raise UnmatchedError(f"B's {ba.name} has no values")
    if beyond(positions, target):
        lo, hi = int(np.nanargmin(positions)), int(np.nanargmax(positions))
        raise UnmatchedError(f"{text} is outside B's {ba.name}, which runs from {ba.label(lo)} to {ba.label(hi)}")
    distance = np.where(finite, np.abs(positions - target), np.inf)
    return int(np.argmin(distance))


def epoch_offset(ta: TimeAxis, tb: TimeAxis) -> float:
    """Days to add to a position on ``ta``'s scale (days since its units' date) to put it on
    ``tb``'s; ``UnmatchedError`` where the calendars share no instants or a date cannot be read."""
    if ta.calendar == "none" or tb.calendar == "none":
        if ta.calendar != tb.calendar:
            raise UnmatchedError("one of the times is a duration (calendar none), the other a date")
        return 0.0
    try:
        ea, eb = _epoch(ta), _epoch(tb)
    except CFTimeError as e:
        raise UnmatchedError(str(e)) from e
    if CFTIME_CALENDAR[ta.calendar] != CFTIME_CALENDAR[tb.calendar]:
        try:
            ea = ea.change_calendar(CFTIME_CALENDAR[tb.calendar], has_year_zero=eb.has_year_zero)
        except ValueError as e:
            raise UnmatchedError(f"A's times are in the {ta.calendar} calendar and B's in {tb.calendar}, "
                               "whose days are not each other's") from e
    delta = ea - eb
    return float(delta.days) + (delta.seconds + delta.microseconds / 1e6) / 86_400


def _epoch(t: TimeAxis) -> Any:
    """The date ``t``'s positions count days from (as ``cf.time`` counts them)."""
    parts = split_units(t.units)
    if parts is None:  # datetime64: days since 1970-01-01, proleptic Gregorian
        return make_date(Fields(1970), "proleptic_gregorian", "1970-01-01")
    date: cftime.datetime = make_date(parse_datetime(parts[1]), t.calendar, parts[1])
    return date


def _duration(days: float) -> str:
    if days >= 1:
        return f"{days:.4g} days"
    if days * 24 >= 1:
        return f"{days * 24:.4g} h"
    if days * 1440 >= 1:
        return f"{days * 1440:.4g} min"
    return f"{days * 86_400:.4g} s"


def _circular(aa: CoordAxis, ba: CoordAxis) -> bool:
    return aa.kind == "longitude" and ba.kind == "longitude"


def _wrapped(x: float, positions: np.ndarray) -> float:
    """Longitude ``x`` moved by whole turns to lie nearest the middle of ``positions``' range."""
    finite = positions[np.isfinite(positions)]
    if finite.size == 0:
        return x
    centre = (float(finite.min()) + float(finite.max())) / 2
    return centre + ((x - centre + 180.0) % 360.0 - 180.0)


def _step(values: np.ndarray) -> float:
    """The smallest step between neighbouring finite values (0 for fewer than two)."""
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return 0.0
    steps = np.abs(np.diff(finite))
    steps = steps[steps > 0]
    return float(steps.min()) if steps.size else 0.0


def grid_axis(a: Side, d: int, b: Side, e: int) -> GridAxis:
    """A's displayed dimension ``d`` against B's ``e``: the same grid, or their common window."""
    na, nb = a.array.shape[d], b.array.shape[e]
    aa, ba = a.axis(d), b.axis(e)
    name = a.name(d)
    if aa is None or ba is None:
        only = "" if aa is None and ba is None else f", only {'A' if ba is None else 'B'} has coordinates"
        n = min(na, nb)
        window = AxisWindow((0, n), (0, n), np.arange(n, dtype=np.int64), "index")
        if n == 0:
            return GridAxis(d, e, na, nb, na == nb, None, "one of them is empty", f"{name} by index{only}")
        return GridAxis(d, e, na, nb, na == nb, window, None, f"{name} by index{only}")
    try:
        va, vb = _positions(aa, ba)
    except UnmatchedError as why:
        return GridAxis(d, e, na, nb, False, None, str(why), name)
    if va is None or vb is None:  # text labels
        same = na == nb and [plain(v) for v in aa.values] == [plain(v) for v in ba.values]
        labelled = AxisWindow((0, na), (0, nb), np.arange(na, dtype=np.int64), "coordinates") if same else None
        return GridAxis(d, e, na, nb, same, labelled, None if same else "its labels differ", name)
    return _numeric_grid(d, e, va, vb, aa, name)


def _positions(aa: CoordAxis, ba: CoordAxis) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Both axes' values on A's scale (B's converted), None for text labels; ``UnmatchedError``
    where they cannot be put on one scale."""
    if aa.time is not None or ba.time is not None:
        if aa.time is None or ba.time is None:
            raise UnmatchedError("only one of them holds times")
        return aa.numeric(), ba.numeric() - epoch_offset(aa.time, ba.time)
    kinds = (aa.values.dtype.kind in "iuf", ba.values.dtype.kind in "iuf")
    if not any(kinds):
        return None, None
    if not all(kinds):
        raise UnmatchedError("one holds numbers, the other labels")
    scale = factor(ba.units, aa.units)
    if scale is None:
        raise UnmatchedError(f"A's {aa.name} is in {plain_units(aa.units) or 'no units'!r} and B's {ba.name} in "
                           f"{plain_units(ba.units) or 'no units'!r}, which do not convert")
    va = aa.values.astype(np.float64)
    vb = ba.values.astype(np.float64) * scale
    if _circular(aa, ba):
        fa, fb = va[np.isfinite(va)], vb[np.isfinite(vb)]
        if fa.size and fb.size:  # B turned by whole turns so that its middle is nearest A's
            ca, cb = (fa.min() + fa.max()) / 2, (fb.min() + fb.max()) / 2
            vb = vb + 360.0 * round(float(ca - cb) / 360.0)
    return va, vb


def _numeric_grid(d: int, e: int, va: np.ndarray, vb: np.ndarray, aa: CoordAxis, name: str) -> GridAxis:
    na, nb = len(va), len(vb)
    for which, v in (("A's", va), ("B's", vb)):
        if not np.isfinite(v).all():
            return GridAxis(d, e, na, nb, False, None, f"{which} coordinates have missing values", name)
        if v.size > 1 and not ((np.diff(v) > 0).all() or (np.diff(v) < 0).all()):
            return GridAxis(d, e, na, nb, False, None, f"{which} coordinates are not monotonic", name)
    step = min([s for s in (_step(va), _step(vb)) if s > 0], default=max(1.0, float(np.abs(va).max(initial=0))))
    tol = SAME_GRID * step
    if na == nb and np.allclose(va, vb, rtol=0.0, atol=tol):
        return GridAxis(d, e, na, nb, True, AxisWindow((0, na), (0, nb), np.arange(na, dtype=np.int64), "coordinates"),
                        None, name)
    lo = max(float(va.min()), float(vb.min()))
    hi = min(float(va.max()), float(vb.max()))
    ina = np.flatnonzero((va >= lo - tol) & (va <= hi + tol))
    inb = np.flatnonzero((vb >= lo - tol) & (vb <= hi + tol))
    if lo > hi + tol or ina.size == 0 or inb.size == 0:
        return GridAxis(d, e, na, nb, False, None,
                        f"they do not overlap (A's runs from {aa.format(float(va.min()))} to {aa.format(float(va.max()))}, "
                        f"B's from {aa.format(float(vb.min()))} to {aa.format(float(vb.max()))})", name)
    a_range = (int(ina[0]), int(ina[-1]) + 1)
    b_range = (int(inb[0]), int(inb[-1]) + 1)
    nearest = nearest_indices(vb, va[a_range[0]:a_range[1]])
    return GridAxis(d, e, na, nb, False, AxisWindow(a_range, b_range, nearest, "coordinates"), None, name)


def nearest_indices(values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each of ``targets``, the index of the monotonic ``values`` nearest it (the first of two
    as near), as int64."""
    n = len(values)
    if n == 1:
        return np.zeros(len(targets), dtype=np.int64)
    descending = values[0] > values[-1]
    ordered = values[::-1] if descending else values
    right = np.clip(np.searchsorted(ordered, targets), 1, n - 1)
    left = right - 1
    to_left, to_right = np.abs(targets - ordered[left]), np.abs(ordered[right] - targets)
    # a tie goes to the smaller index of ``values``: the left one, or the right one once reversed
    pick = np.where(to_left < to_right if descending else to_left <= to_right, left, right)
    return (n - 1 - pick if descending else pick).astype(np.int64)
