"""Coordinate variables: what each index of a dimension stands for (a date, a level, a latitude).

A slider that says ``500 hPa`` and an image ticked in degrees are what make a CF dataset readable;
the raw index alone is not. The rules are CF's (chapters 4 and 5, as xarray applies them): a 1-D
array named like a dimension is that dimension's coordinate variable, searched in the array's
group and then its ancestors (netCDF-4 scoping, xarray's inherited coordinates); the variables
named in a ``coordinates`` attribute are auxiliary coordinates, and only 1-D ones along one of the
array's dimensions can label an axis. ``coordinate_axes`` reads the coordinate arrays, so it runs
on a worker thread, decoding on the executor it is given (its job's); everything else here is pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...zarrlib import Array, Group, ZarrError
from ...zarrlib.errors import short
from .axis_kind import DEGREES, LAT_UNITS, LON_UNITS, PRESSURE_UNITS, axis_kind
from .dims import nczarr_size_notes, read_dimensions, under
from .number_text import beyond, decimals, number_text, plain
from .time import MISSING, CFTimeError, OutsideTimesError, TimeAxis, time_attrs, time_axis
from .values import value_coding

#: coordinate arrays longer than this are not read (a coordinate is a label, not data)
MAX_COORD_SIZE = 10**7
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


class CoordError(ValueError):
    """A typed coordinate value that cannot be read or matched; the message names the text."""


@dataclass(frozen=True, eq=False)
class CoordAxis:
    """One dimension's coordinate. ``values`` are decoded numbers (strings for a label axis), or
    the raw stored values for a time axis, whose dates come from ``time`` (a ``TimeAxis``)."""

    dim: int
    name: str
    values: np.ndarray
    units: str | None
    kind: str
    descending: bool
    positive_down: bool
    long_name: str | None = None
    time: TimeAxis | None = field(default=None, repr=False)
    _decimals: int | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_decimals", decimals(self.values) if self.values.dtype.kind in "iuf" else None)

    def __len__(self) -> int:
        return len(self.values)

    def label(self, i: int) -> str:
        """Index ``i`` as a person reads it: "2001-03-04 06:00", "500 hPa", "45.25 °N", "12.5 °W"."""
        if self.time is not None:
            return str(self.time.label(i))
        if self.values.dtype.kind not in "iuf":
            return plain(self.values[i])
        return self.format(float(self.values[i]))

    def labels(self) -> list[str]:
        return [self.label(i) for i in range(len(self))]

    def numeric(self) -> np.ndarray:
        """float64 positions for plots and ticks: the values, a time axis' own scale, or the index
        for text labels."""
        if self.time is not None:
            return np.asarray(self.time.numeric(), dtype=np.float64)
        if self.values.dtype.kind not in "iuf":
            return np.arange(len(self.values), dtype=np.float64)
        return self.values.astype(np.float64)

    def format(self, x: float) -> str:
        """A tick label at any position on the ``numeric()`` scale, with as many decimals as the
        axis' values need to tell neighbours apart."""
        if self.time is not None:
            return str(self.time.format(x))
        if self.values.dtype.kind not in "iuf":
            i = int(round(x))
            return plain(self.values[i]) if 0 <= i < len(self.values) else ""
        if not math.isfinite(x):
            return MISSING
        if self.kind == "latitude":
            return number_text(abs(x), self._decimals) + (" °S" if number_text(x, self._decimals).startswith("-") else " °N")
        if self.kind == "longitude":
            w = x % 360.0
            return (number_text(360.0 - w, self._decimals) + " °W") if w > 180 else (number_text(w, self._decimals) + " °E")
        text = number_text(x, self._decimals)
        unit = (self.units or "").strip()
        if unit.lower() in DEGREES:
            return text + "°"
        return text if unit in ("", "1") else f"{text} {unit}"

    def nearest(self, text: str, within: bool = False) -> int:
        """The index whose value is nearest to ``text``: "500", "500 hPa", "45.25", "45.25N",
        "12.5 W", "-12.5" (longitudes compared round the circle), a date on a time axis, a label
        on a text axis. Raises ``CoordError`` naming the text when it cannot be matched, and,
        ``within``, when it lies more than half a step beyond the axis' first or last value
        (the range named): a command line must not quietly take the end of the axis."""
        if self.time is not None:
            try:
                index = int(self.time.nearest(text, within=within))
            except OutsideTimesError as e:
                raise CoordError(f"{self.name}: {e}") from e
            except CFTimeError as e:
                raise CoordError(f"{text!r} is not a time on {self.name}: {e}") from e
            return index
        if self.values.dtype.kind not in "iuf":
            for i, v in enumerate(self.values):
                if plain(v) == text.strip():
                    return i
            raise CoordError(f"{text!r} is not one of the labels of {self.name}")
        x = self._parse(text)
        values = self.values.astype(np.float64)
        if self.kind == "longitude":
            distance = np.abs((values - x + 180.0) % 360.0 - 180.0)
        else:
            distance = np.abs(values - x)
        if not np.isfinite(distance).any():
            raise CoordError(f"{text!r}: {self.name} has no finite values to match")
        if within and self.kind != "longitude" and beyond(values, x):
            lo, hi = int(np.nanargmin(values)), int(np.nanargmax(values))
            raise CoordError(f"{text!r} is outside {self.name}, which runs from {self.label(lo)} to {self.label(hi)}")
        return int(np.nanargmin(np.where(np.isfinite(distance), distance, np.nan)))

    def _parse(self, text: str) -> float:
        m = _NUMBER.match(text) if isinstance(text, str) else None
        if m is None:
            raise CoordError(f"{text!r} is not a number{' in ' + self.units if self.units else ''} for {self.name}")
        x, rest = float(m.group(1)), m.group(2).replace(" ", "").lower()
        letters = {"latitude": ("n", "s"), "longitude": ("e", "w")}.get(self.kind)
        if letters is not None:
            if rest in (LAT_UNITS if self.kind == "latitude" else LON_UNITS) or rest.removeprefix("°") in ("", letters[0]):
                return x
            if rest.removeprefix("°") == letters[1]:
                return -x
            raise CoordError(f"{text!r}: {self.name} is in degrees {letters[0].upper()}/{letters[1].upper()}")
        unit = (self.units or "").replace(" ", "").lower()
        if rest in ("", unit) or (rest == "°" and unit in DEGREES):
            return x
        raise CoordError(f"{text!r}: {self.name} is in {self.units!r}, not {m.group(2)!r}" if self.units
                         else f"{text!r}: {self.name} has no units")


def coordinate_axes(group: Group, arr: Array, array_name: str, *, executor: ThreadPoolExecutor | None = None
                    ) -> tuple[dict[int, CoordAxis], list[str]]:
    """The coordinate of each dimension of ``arr`` that has one (by dimension index), and notes.

    ``array_name`` is the array's path relative to ``group``; coordinate names are relative to
    ``group`` too. Reads the coordinate arrays (call it on a worker thread), decoding them on
    ``executor`` (the job's, so the app's reads stay on its worker pool; None: zarrlib's
    default, for a script or the command line). A dimension's own
    coordinate variable comes first; a 1-D variable of the ``coordinates`` attribute along a
    dimension that has none takes its place; anything else named there is listed in a note. Too
    large, mismatched, unreadable or badly described coordinates give notes, never exceptions.
    """
    dims = read_dimensions(arr)
    notes = list(dims.notes) + nczarr_size_notes(group, dims, arr.shape)
    parent = array_name.strip("/").rpartition("/")[0]
    axes: dict[int, CoordAxis] = {}
    for d, dim_name in enumerate(dims.names):
        if dim_name is None:
            continue
        found = _find(group, parent, dim_name, dims.refs[d])
        if found is not None and found[1].path != arr.path:
            rel, node = found
            axis = _axis(node, rel, d, arr.shape[d], notes, dim_name, executor)
            if axis is not None:
                axes[d] = axis
    for name in _coordinates_attr(arr.attrs, notes):
        found = _find(group, parent, name, None)
        if found is None:
            notes.append(f"coordinates: {name!r} is not found beside {array_name}")
            continue
        rel, node = found
        node_dims = read_dimensions(node).names if isinstance(node, Array) else ()
        along = next((i for i, n in enumerate(dims.names) if n is not None and node_dims == (n,)), None)
        if along is None:
            what = f"dimensions ({', '.join(str(n) for n in node_dims)})" if node_dims else "no dimension names"
            notes.append(f"coordinates: {rel} has {what}, not one of {array_name}'s; listed, not on an axis")
        elif along in axes:
            if axes[along].name != rel:
                notes.append(f"coordinates: {rel} is also along {dims.names[along]}; {axes[along].name} labels it")
        else:
            axis = _axis(node, rel, along, arr.shape[along], notes, None, executor)
            if axis is not None:
                axes[along] = axis
    return axes, notes


def _axis(node: Any, rel: str, d: int, length: int, notes: list[str], dim_name: str | None,
          executor: ThreadPoolExecutor | None) -> CoordAxis | None:
    """Read ``node`` as the coordinate of dimension ``d`` (decoded on ``executor``), or None with
    a note saying why not."""
    if not isinstance(node, Array):
        why = getattr(node, "error", None)
        if why is not None or node.kind == "array":
            notes.append(f"coordinate {rel} cannot be read: {why}")
        return None  # a group of that name is no coordinate
    if dim_name is not None:
        own = read_dimensions(node).names
        if len(node.shape) != 1 or own[0] not in (None, dim_name):
            notes.append(f"{rel} is named like dimension {dim_name} but its shape {node.shape} / dimensions "
                         f"{own} are not ({dim_name},); not used as its coordinate")
            return None
    if node.shape[0] != length:
        notes.append(f"coordinate {rel} has {node.shape[0]} values for a dimension of {length}; not used")
        return None
    if node.size > MAX_COORD_SIZE:
        notes.append(f"coordinate {rel} has {node.size} values, more than {MAX_COORD_SIZE}; not read")
        return None
    try:
        raw = np.asarray(node.read(executor=executor))
    except ZarrError as e:
        notes.append(f"coordinate {rel} cannot be read: {e}")
        return None
    return make_axis(d, rel, raw, node.attrs, notes, node)


def make_axis(d: int, name: str, raw: np.ndarray, attrs: Mapping[str, Any], notes: list[str],
              node: Array | None = None) -> CoordAxis:
    """A ``CoordAxis`` from stored values and their attributes (no I/O): times through ``cf.time``,
    numbers decoded as CF says (fill values, packing) where the array ``node`` is given."""
    attrs = attrs if isinstance(attrs, Mapping) else {}
    units = _text_attr(attrs, "units", name, notes)
    std = (_text_attr(attrs, "standard_name", name, notes) or "").lower()
    axis_attr = _text_attr(attrs, "axis", name, notes)
    if axis_attr is not None and axis_attr.upper() not in ("X", "Y", "Z", "T"):
        notes.append(f"{name}: axis {axis_attr!r} is not X, Y, Z or T; ignored")
        axis_attr = None
    axis_attr = axis_attr.upper() if axis_attr else None
    positive = _text_attr(attrs, "positive", name, notes)
    if positive is not None and positive.lower() not in ("up", "down"):
        notes.append(f"{name}: positive {positive!r} is neither 'up' nor 'down'; ignored")
        positive = None
    long_name = _text_attr(attrs, "long_name", name, notes)
    time = None
    if raw.dtype.kind == "M" or (units is not None and " since " in f" {units.lower()} "):
        time, time_notes = _time_axis(node, raw, attrs)
        notes.extend(f"{name}: {n}" for n in time_notes)
    elif axis_attr == "T" or std == "time":
        notes.append(f"{name} is a time axis but its units {units!r} are not '<unit> since <date>'; shown as numbers")
    if time is not None:
        values, kind = raw, "time"
    else:
        values = raw
        if node is not None and raw.dtype.kind in "iuf":
            coding = value_coding(node)
            notes.extend(f"{name}: {n}" for n in coding.notes)
            values = np.asarray(coding.decode(raw))
        elif raw.dtype.kind not in "iufUSO":
            notes.append(f"coordinate {name} holds {raw.dtype} values; shown by index")
            values = np.arange(len(raw))
        kind = axis_kind(name, units, std, axis_attr, positive)
    u = (units or "").strip().lower()
    positive_down = positive.lower() == "down" if positive else (kind == "vertical" and u in PRESSURE_UNITS)
    descending = False
    if values.dtype.kind in "iuf" and len(values) > 1:
        step = np.diff(values.astype(np.float64))
        descending = bool((step < 0).all())
        if not descending and not (step > 0).all():
            notes.append(f"coordinate {name} is not strictly monotonic; nearest values are searched in order")
    return CoordAxis(d, name, values, units, kind, descending, positive_down, long_name, time)


def _find(group: Group, parent: str, name: str, ref: str | None) -> tuple[str, Any] | None:
    """(path relative to ``group``, node) of the variable ``name`` seen from ``parent``: an NCZarr
    dimension path first, then CF 1.8's search from the array's group up to ``group``."""
    parts = [p for p in parent.split("/") if p]
    if name.startswith("/"):
        candidates = [under(group, name)]
    elif "/" in name:
        candidates = ["/".join([*parts, name])]
    else:
        candidates = ["/".join([*parts[:i], name]) for i in range(len(parts), -1, -1)]
    for rel in [under(group, ref) if ref else None, *candidates]:
        if not rel:
            continue
        try:
            return rel, group[rel]
        except ZarrError:
            continue
    return None


def _coordinates_attr(attrs: Any, notes: list[str]) -> list[str]:
    value = attrs.get("coordinates") if isinstance(attrs, dict) else None
    if value is None:
        return []
    if not isinstance(value, str):
        notes.append(f"coordinates {short(value)} is not a string of names; ignored")
        return []
    return list(dict.fromkeys(value.split()))


def _text_attr(attrs: Mapping[str, Any], key: str, name: str, notes: list[str]) -> str | None:
    value = attrs.get(key)
    if value is None or isinstance(value, str):
        return value
    notes.append(f"{name}: {key} {short(value)} is not a string; ignored")
    return None


def _time_axis(node: Array | None, raw: np.ndarray, attrs: Mapping[str, Any]) -> tuple[TimeAxis | None, list[str]]:
    return time_axis(raw, time_attrs(node, attrs))


def own_axis(arr: Array, dim_name: str, notes: list[str], *, executor: ThreadPoolExecutor | None = None
             ) -> CoordAxis | None:
    """``arr`` itself as the coordinate variable of its one dimension (a 1-D array named like its
    dimension, CF 1.2), its values read (decoded on ``executor``, as ``coordinate_axes``'s) and
    decoded as any coordinate's (call it on a worker); None where it is none, or with a note
    where it cannot be read."""
    if arr.ndim != 1 or arr.name != dim_name:
        return None
    return _axis(arr, arr.name, 0, arr.shape[0], notes, dim_name, executor)
