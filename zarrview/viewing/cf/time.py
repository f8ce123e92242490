"""Time coordinates as a viewer shows them: a label per value, the value nearest a typed date, and a
position on a plot, for CF's ``"<unit> since <date>"`` in every calendar and for numpy datetime64.

Why not xarray's decoder: xarray is only a test extra, and it raises on what a viewer must still
show (an unknown calendar, a units string it cannot parse); here a bad attribute becomes a note and
the raw numbers stay on screen. Each value is held as exact microseconds since the axis' epoch, so
labels, ``nearest`` and ``numeric`` agree with each other, and cftime names the dates in every
calendar (numpy's datetime64 cannot hold noleap or 360_day, nor dates far from 1970 in [ns]).

Choices where CF leaves room or xarray differs:
- ``month``/``year`` units are udunits' fixed lengths (CF 4.4.2: a year of 365.242198781 days, a
  month its twelfth), not calendar months, and a note says so; xarray refuses them. In 360_day they
  are that calendar's exact 30 and 360 days (as cftime reads them), without a note.
- no ``calendar`` means standard; names are case-insensitive; ``gregorian`` is reported as
  ``standard``, ``365_day`` as ``noleap``, ``366_day`` as ``all_leap``. The standard calendar is
  Julian before 1582-10-15 (cftime's mixed calendar); ``utc`` is counted without leap seconds
  (note); explicitly defined calendars (``month_lengths``) and unknown names give a note and None.
- ``none`` (CF 4.4.5, no annual cycle): the values are durations, labelled ``"2.5 days"``, and
  ``nearest`` takes a number with an optional unit (``"60 hours"``).
- missing values, labelled "—" and skipped by ``nearest``: NaN, ``_FillValue`` and
  ``missing_value`` (what xarray masks; pass a v2 array's ``fill_value`` as ``_FillValue`` as
  xarray does), int64's minimum (xarray's NaT) and NaT; values beyond ±146,000 years (note).
- float values are moved onto the coarsest whole hour, minute, ... that they all lie within
  their float's precision of, so hourly float32 days are labelled on the hour (xarray shows the
  float's error as seconds).
- datetime64 is proleptic Gregorian with its epoch at 1970-01-01, ``units`` is the dtype's name
  (``"datetime64[ns]"``); parts finer than a microsecond are rounded (note).
- decoded dates are datetime64[ns], as xarray decodes them, where they all fit nanoseconds
  (1677-09-21 to 2262-04-11); beyond, where xarray gives cftime dates, datetime64[us].
"""

from __future__ import annotations

import base64
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any

import cftime
import numpy as np

from .calendars import (
    CALENDARS, CFTIME_CALENDAR, LIMIT_US, US_PER_DAY, CFTimeError, Fields, OutsideTimesError, iso, make_date,
    parse_datetime, split_units, to_microseconds, unit_length)

if TYPE_CHECKING:
    from ...zarrlib import Array

__all__ = ["CFTimeError", "MISSING", "OutsideTimesError", "TimeAxis", "time_attrs", "time_axis"]

#: the label of a missing value
MISSING = "—"
#: the step of each label resolution in microseconds: date, minutes, seconds, ms, µs
_STEPS = (US_PER_DAY, 60_000_000, 1_000_000, 1000, 1)
#: numpy's unit for each label resolution
_NUMPY_RESOLUTION: tuple[Any, ...] = ("D", "m", "s", "ms", "us")  # numpy's stubs take units as literals
_REFORM, _YEAR_10000 = np.datetime64("1582-10-15", "us"), np.datetime64("10000-01-01", "us")
#: the first and last microseconds datetime64[ns] holds (int64 nanoseconds since 1970, NaT aside)
_NS_FIRST = np.datetime64(-(np.iinfo(np.int64).max // 1000), "us")
_NS_LAST = np.datetime64(np.iinfo(np.int64).max // 1000, "us")
#: microseconds in one step of numpy's fixed datetime64 units
_NUMPY_UNIT_US = {
    "W": Fraction(7 * US_PER_DAY), "D": Fraction(US_PER_DAY), "h": Fraction(3_600_000_000),
    "m": Fraction(60_000_000), "s": Fraction(1_000_000), "ms": Fraction(1000), "us": Fraction(1),
    "ns": Fraction(1, 10**3), "ps": Fraction(1, 10**6), "fs": Fraction(1, 10**9),
    "as": Fraction(1, 10**12), "generic": Fraction(1)}
_DURATION = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*(\S*)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class TimeAxis:
    """The times of a 1-D coordinate, each an exact count of microseconds since ``_epoch``."""

    calendar: str   # normalised name ("standard", "noleap", ...)
    units: str      # as stored, e.g. "hours since 2000-01-01" ("datetime64[ns]" for datetime64)
    _counts: np.ndarray = field(repr=False, compare=False)  # int64 µs since the epoch, 0 if missing
    _valid: np.ndarray = field(repr=False, compare=False)   # bool, False where missing
    _epoch: Any = field(repr=False, compare=False)          # cftime.datetime, UTC
    _unit: tuple[str, Fraction] = field(repr=False, compare=False)  # the unit word and its length

    def __len__(self) -> int:
        return len(self._counts)

    def label(self, i: int) -> str:
        """``"2001-03-04 06:00"``, at the resolution of the whole axis; "—" where missing."""
        if not self._valid[i]:
            return MISSING
        return self._texts(self._counts[i:i + 1] if i >= 0 else self._counts[[i]])[0]

    def labels(self) -> list[str]:
        return list(self._labels)

    @cached_property
    def _labels(self) -> tuple[str, ...]:
        out = [MISSING] * len(self)
        where = np.flatnonzero(self._valid)
        for i, text in zip(where.tolist(), self._texts(self._counts[where])):
            out[i] = text
        return tuple(out)

    def nearest(self, text: str, within: bool = False) -> int:
        """Index of the value nearest the date (or, in calendar none, duration) ``text``; the first
        of two as near. CFTimeError naming ``text`` when it is not a date of this calendar, or,
        ``within``, when it lies more than half a step outside the times (the range named)."""
        target = self._count_of(text)
        if not self._valid.any():
            raise CFTimeError(f"no times to find {text!r} among: every value is missing")
        if within:
            from .number_text import beyond

            counts = self._counts[self._valid]
            if beyond(counts.astype(np.float64), float(target)):
                first, last = self._texts(np.array([counts.min(), counts.max()], dtype=np.int64), finer=True)
                raise OutsideTimesError(f"{text!r} is outside the times, which run from {first} to {last}")
        target = max(-LIMIT_US + 1, min(LIMIT_US - 1, target))
        distance = np.where(self._valid, np.abs(self._counts - target), np.iinfo(np.int64).max)
        return int(np.argmin(distance))

    def numeric(self) -> np.ndarray:
        """float64 days since the epoch (the reference date, UTC; 1970-01-01 for datetime64),
        NaN where missing: the positions of the values on a plot's axis."""
        return np.where(self._valid, self._counts / US_PER_DAY, np.nan)

    def format(self, x: float) -> str:
        """The label of position ``x`` of ``numeric``'s scale, for tick labels: at the axis'
        resolution or finer where ``x`` falls between (rounded to the second on an axis of dates
        or minutes)."""
        if not np.isfinite(x):
            return MISSING
        count = round(max(-LIMIT_US, min(LIMIT_US, float(x) * US_PER_DAY)))
        if self.calendar != "none" and self._rank < 2:
            count = round(count / _STEPS[2]) * _STEPS[2]
        return self._texts(np.array([count], dtype=np.int64), finer=True)[0]

    def datetimes(self) -> np.ndarray | None:
        """datetime64 of every value (NaT where missing), as xarray decodes a Gregorian calendar:
        in nanoseconds where every time fits them (1677-09-21 to 2262-04-11), as xarray gives
        them, else in microseconds (where xarray gives cftime dates); None where numpy's dates
        are not this calendar's (noleap, 360_day, ..., or a standard calendar reaching before
        1582-10-15), where the labels stand for the dates."""
        epoch = self._gregorian_epoch
        if epoch is None:
            return None
        times = epoch + self._counts.astype("timedelta64[us]")
        present = times[self._valid]
        if present.size and present.min() < _REFORM and self.calendar == "standard":
            return None
        if not present.size or (present.min() >= _NS_FIRST and present.max() <= _NS_LAST):
            return np.where(self._valid, times.astype("datetime64[ns]"), np.datetime64("NaT", "ns"))
        return np.where(self._valid, times, np.datetime64("NaT", "us"))

    @cached_property
    def _since(self) -> str:
        return f"microseconds since {iso(self._epoch)}"

    @cached_property
    def _rank(self) -> int:
        """0 dates only, 1 minutes, 2 seconds, 3 milliseconds, 4 microseconds."""
        return _rank_of(self._time_of_day(self._counts[self._valid]))

    def _time_of_day(self, counts: np.ndarray) -> np.ndarray:
        """Microseconds since midnight: every CF calendar's day has 86,400 s (no leap seconds)."""
        return (counts % US_PER_DAY + _of_day(self._epoch)) % US_PER_DAY

    def _texts(self, counts: np.ndarray, finer: bool = False) -> list[str]:
        if self.calendar == "none":
            word, length = self._unit
            return [f"{_number(float(Fraction(int(c)) / length))} {word}" for c in counts]
        rank = max(self._rank, _rank_of(self._time_of_day(counts))) if finer else self._rank
        gregorian = self._gregorian_epoch
        if gregorian is not None and len(counts) > 1:
            times = gregorian + counts.astype("timedelta64[us]")
            if times.min() >= _REFORM and times.max() < _YEAR_10000:  # where numpy's dates are CF's
                texts = np.datetime_as_string(times, unit=_NUMPY_RESOLUTION[rank])
                return [t.replace("T", " ") for t in texts.tolist()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cftime's CFWarning for years before 1
            dates = cftime.num2date(counts, self._since, calendar=CFTIME_CALENDAR[self.calendar],
                                    only_use_cftime_datetimes=True)
        return [_date_text(d, rank) for d in np.atleast_1d(dates)]

    @cached_property
    def _gregorian_epoch(self) -> np.datetime64 | None:
        """The epoch for numpy (many times formatted at once, ten times faster than by cftime)
        where the calendar is Gregorian from 1582-10-15 on."""
        if self.calendar not in ("standard", "proleptic_gregorian", "utc") or self._epoch.year < 1583:
            return None
        return np.datetime64(iso(self._epoch).replace(" ", "T"), "us")

    def _count_of(self, text: str) -> int:
        if self.calendar == "none":
            match = _DURATION.fullmatch(text)
            length = self._unit[1] if match and not match.group(2) else (
                unit_length(match.group(2), "none") if match else None)
            if match is None or length is None:
                raise CFTimeError(f"{text!r} is not a duration (a number and a unit of time)")
            return round(Fraction(match.group(1)) * length)
        date = make_date(parse_datetime(text), self.calendar, text)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return round(cftime.date2num(date, self._since, calendar=CFTIME_CALENDAR[self.calendar]))
        except OverflowError:  # beyond int64 microseconds: nearer the end on its side
            return LIMIT_US if date > self._epoch else -LIMIT_US


def time_attrs(node: Array | None, attrs: Mapping[str, Any]) -> Mapping[str, Any]:
    """``attrs`` as ``time_axis`` reads them: a v2 array's ``fill_value`` is its ``_FillValue``,
    as xarray reads a v2 array."""
    if node is not None and node.zarr_format == 2 and node.fill_value is not None and "_FillValue" not in attrs:
        return {**attrs, "_FillValue": node.fill_value}
    return attrs


def time_axis(values: np.ndarray, attrs: Mapping[str, Any]) -> tuple[TimeAxis | None, list[str]]:
    """The time axis of a 1-D coordinate's raw ``values`` and ``attrs``. None when the values are
    not times (no datetime64 dtype and no ``"<unit> since <date>"`` units), or when the attributes
    cannot be understood; the list holds notes (strings) for bad attributes, never an exception."""
    notes: list[str] = []
    values = np.asarray(values).ravel()
    if values.dtype.kind == "M":
        return _datetime64_axis(values, notes), notes
    units = attrs.get("units")
    parts = split_units(units) if isinstance(units, str) else None
    if parts is None or not isinstance(units, str):
        return None, notes
    calendar = _calendar(attrs, notes)
    if calendar is None:
        return None, notes
    unit, reference = parts
    length = unit_length(unit, calendar)
    if length is None:
        notes.append(f"units {units!r}: {unit!r} is not a unit of time")
        return None, notes
    try:
        epoch = make_date(parse_datetime(reference), calendar, reference)
    except CFTimeError as err:
        notes.append(f"units {units!r}: {err}")
        return None, notes
    if values.dtype.kind not in "iuf":
        notes.append(f"units {units!r} name times, but the values are {values.dtype}, not numbers")
        return None, notes
    if unit.lower() in ("month", "months", "year", "years", "yr", "yrs") and calendar != "360_day":
        notes.append(f"units {units!r}: a {unit.lower().rstrip('s')} is udunits' fixed "
                     f"{float(length) / US_PER_DAY:.6g} days, not a calendar one (CF 4.4.2)")
    counts, fits = to_microseconds(values, length)
    valid = _unmasked(values, attrs, notes)
    _note_out_of_range(valid & ~fits, reference, notes)
    valid &= fits
    if values.dtype.kind == "f" and calendar != "none":
        counts = _snapped(counts, valid, np.abs(np.spacing(values)) * float(length), epoch)
    return TimeAxis(calendar, units, counts, valid, epoch, (unit, length)), notes


def _snapped(counts: np.ndarray, valid: np.ndarray, noise: np.ndarray, epoch: Any) -> np.ndarray:
    """Counts moved onto the coarsest whole day, hour, minute, second or millisecond that every
    value lies within its float's precision of: hourly times stored as float32 days (±10 s at
    3650 days) are labelled on the hour, not with the float's error in seconds."""
    if not valid.any() or noise[valid].max() < 1:
        return counts
    start = _of_day(epoch)
    for step in (US_PER_DAY, 3_600_000_000, *_STEPS[1:-1]):
        off = (counts % step + start) % step  # past the last multiple of step since midnight
        back = np.where(off <= step // 2, -off, step - off)
        if np.all((np.abs(back) <= noise)[valid]):
            return np.where(valid, counts + back, counts)
    return counts


def _calendar(attrs: Mapping[str, Any], notes: list[str]) -> str | None:
    raw = attrs.get("calendar")
    explicit = "month_lengths" in attrs
    if raw is None and not explicit:
        return "standard"
    name = CALENDARS.get(raw.strip().lower()) if isinstance(raw, str) else None
    if name is None:
        notes.append('"month_lengths": explicitly defined calendars (CF 4.4.6) are not supported'
                     if explicit else f"calendar {raw!r} is not a CF calendar "
                     f"(one of {', '.join(sorted(CALENDARS))})")
    elif name == "utc":
        notes.append('calendar "utc": leap seconds are not counted, so times since 1972 may '
                     "be shown up to 27 s late")
    return name


def _unmasked(values: np.ndarray, attrs: Mapping[str, Any], notes: list[str]) -> np.ndarray:
    """Where the values are not missing: NaN, xarray's NaT (int64's minimum), the fill values."""
    valid = ~np.isnan(values) if values.dtype.kind == "f" else np.ones(values.shape, dtype=bool)
    if values.dtype == np.int64:
        valid &= values != np.iinfo(np.int64).min
    for key in ("_FillValue", "missing_value"):
        raw = attrs.get(key)
        for marker in ([] if raw is None else raw if isinstance(raw, list) else [raw]):
            value = _marker(marker, values.dtype)
            if value is None:
                notes.append(f"{key} {marker!r} is not a {values.dtype} value: ignored")
            else:  # a float fill compared as stored (-9999.9 as float32 is not -9999.9)
                valid &= values != (values.dtype.type(value) if values.dtype.kind == "f" else value)
    return valid


def _marker(raw: Any, dtype: np.dtype) -> int | float | np.integer | np.floating | None:
    """A fill value as a number: as written, as a float's name ("NaN"), or in base64 (xarray
    writes a float ``_FillValue`` of a v3 array so, as a little-endian float64 whatever the dtype)."""
    if isinstance(raw, (int, float, np.integer, np.floating)) and not isinstance(raw, bool):
        return raw
    if not isinstance(raw, str):
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        data = base64.b64decode(raw, validate=True)
    except ValueError:
        return None
    if dtype.kind != "f" or len(data) != 8:
        return None
    return float(np.frombuffer(data, dtype="<f8")[0])


def _note_out_of_range(out: np.ndarray, reference: str, notes: list[str]) -> None:
    if out.any():
        notes.append(f"{int(out.sum())} of {len(out)} values lie more than "
                     f"{LIMIT_US // (365 * US_PER_DAY):,} years from {reference}: shown as missing")


def _datetime64_axis(values: np.ndarray, notes: list[str]) -> TimeAxis:
    unit, step = np.datetime_data(values.dtype)
    valid = ~np.isnat(values)
    if unit in ("Y", "M"):  # calendar years and months: numpy counts them in days exactly
        raw, length = values.astype("datetime64[D]").view(np.int64), Fraction(US_PER_DAY)
    else:
        raw, length = values.view(np.int64), _NUMPY_UNIT_US[unit] * step
    raw = np.where(valid, raw, 0)
    if length.denominator > 1 and np.any(raw % length.denominator):
        notes.append(f"{values.dtype}: parts of a second finer than a microsecond are rounded")
    counts, fits = to_microseconds(raw, length)
    _note_out_of_range(valid & ~fits, "1970-01-01", notes)
    epoch = make_date(Fields(1970), "proleptic_gregorian", "1970-01-01")
    name = str(values.dtype)
    return TimeAxis("proleptic_gregorian", name, counts, valid & fits, epoch, (name, length))


def _of_day(date: cftime.datetime) -> int:
    return ((date.hour * 60 + date.minute) * 60 + date.second) * 1_000_000 + date.microsecond


def _rank_of(time_of_day: np.ndarray) -> int:
    return next(rank for rank, step in enumerate(_STEPS) if not np.any(time_of_day % step))


def _date_text(d: cftime.datetime, rank: int) -> str:
    sign = "-" if d.year < 0 else ""
    text = f"{sign}{abs(d.year):04d}-{d.month:02d}-{d.day:02d}"
    if rank >= 1:
        text += f" {d.hour:02d}:{d.minute:02d}"
    if rank >= 2:
        text += f":{d.second:02d}"
    if rank == 3:
        text += f".{d.microsecond // 1000:03d}"
    elif rank == 4:
        text += f".{d.microsecond:06d}"
    return text


def _number(x: float) -> str:
    return np.format_float_positional(x, trim="-")
