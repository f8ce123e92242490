"""CF calendars, time units and datetime text, the pieces ``time`` builds its axes from.

Kept apart from the axis so the rules of CF 4.4 (which names a calendar has, how long a unit is,
what a datetime string may look like) sit in one place, each checkable on its own; cftime does
the calendar arithmetic, here we only decide what the attributes and the user's text mean.
Every count of time is an exact integer number of microseconds (the resolution of cftime), so a
label, the value typed back in, and the position on a plot agree in every calendar.
"""

from __future__ import annotations

import datetime
import re
import warnings
from dataclasses import dataclass
from fractions import Fraction

import cftime
import numpy as np

#: the largest count of microseconds an axis holds: about 146,000 years either side of its epoch,
#: so a difference of two counts still fits an int64
LIMIT_US = 2**62
US_PER_DAY = 86_400_000_000


class CFTimeError(ValueError):
    """A text or a units string that cannot be understood as a time in its calendar."""


class OutsideTimesError(CFTimeError):
    """A date that lies beyond an axis' times (where the caller asked for one within them)."""


#: calendar attribute (lower case) -> the name an axis reports
CALENDARS = {
    "standard": "standard", "gregorian": "standard", "proleptic_gregorian": "proleptic_gregorian",
    "julian": "julian", "noleap": "noleap", "365_day": "noleap", "all_leap": "all_leap",
    "366_day": "all_leap", "360_day": "360_day", "none": "none", "utc": "utc", "tai": "tai",
}
#: reported name -> cftime's calendar; cftime has no ``utc`` (leap seconds), so it is counted as
#: proleptic Gregorian, which is what software that ignores leap seconds does (CF 4.4.3); ``none``
#: needs one only to read its reference date
CFTIME_CALENDAR = {name: name for name in set(CALENDARS.values())} | {
    "utc": "proleptic_gregorian", "none": "proleptic_gregorian"}
#: calendars without a year 0: year -1 is 1 BC there (cftime's ``has_year_zero=False``)
NO_YEAR_ZERO = frozenset(("standard", "julian", "tai"))

_SECOND = Fraction(1_000_000)
_DAY = 86_400 * _SECOND
#: udunits' year, the tropical year (CF 4.4.2: "It is not a calendar year"), and its twelfth
UDUNITS_YEAR = Fraction("365.242198781") * _DAY
_UNITS: dict[Fraction, tuple[str, ...]] = {
    Fraction(1, 1000): ("nanosecond", "nanoseconds", "ns", "nsec", "nsecs"),
    Fraction(1): ("microsecond", "microseconds", "us", "µs", "usec", "usecs"),
    Fraction(1000): ("millisecond", "milliseconds", "ms", "msec", "msecs"),
    _SECOND: ("second", "seconds", "s", "sec", "secs"),
    60 * _SECOND: ("minute", "minutes", "min", "mins"),
    3600 * _SECOND: ("hour", "hours", "h", "hr", "hrs"),
    _DAY: ("day", "days", "d"),
    7 * _DAY: ("week", "weeks"),
    365 * _DAY: ("common_year", "common_years"),
    UDUNITS_YEAR: ("year", "years", "yr", "yrs"),
    UDUNITS_YEAR / 12: ("month", "months"),
}
UNIT_US = {name: length for length, names in _UNITS.items() for name in names}
#: the month and year of a 360_day calendar are exact (30 and 360 days), as cftime counts them
_UNIT_US_360 = UNIT_US | {"month": 30 * _DAY, "months": 30 * _DAY} | {
    name: 360 * _DAY for name in ("year", "years", "yr", "yrs")}

_UNITS_SINCE = re.compile(r"\s*(\S+)\s+since\s+(\S.*?)\s*", re.IGNORECASE)
_DATETIME = re.compile(r"""
    (?P<year>[+-]?\d+)(?:-(?P<month>\d{1,2})(?:-(?P<day>\d{1,2}))?)?
    (?:(?:\s+|T)(?P<hour>\d{1,2})(?::(?P<minute>\d{1,2})(?::(?P<second>\d{1,2})(?:\.(?P<frac>\d*))?)?)?)?
    \s*(?P<tz>Z|UTC|GMT|[+-]\d{1,2}(?::?\d{2})?)?
    """, re.VERBOSE | re.IGNORECASE)


def split_units(units: str) -> tuple[str, str] | None:
    """``("hours", "2000-01-01")`` from ``"hours since 2000-01-01"``; None without ``since``."""
    match = _UNITS_SINCE.fullmatch(units)
    return (match.group(1), match.group(2)) if match else None


def unit_length(unit: str, calendar: str) -> Fraction | None:
    """Microseconds in one ``unit`` (any case, singular or plural) in ``calendar``; None when the
    word is not a unit of time. Months and years are udunits' fixed lengths (CF 4.4.2) except in
    the 360_day calendar, whose months and years have exact lengths (cftime's reading)."""
    table = _UNIT_US_360 if calendar == "360_day" else UNIT_US
    return table.get(unit.lower(), table.get(unit))


@dataclass(frozen=True)
class Fields:
    """A datetime as written: calendar-free fields and the time zone offset in minutes."""

    year: int
    month: int = 1
    day: int = 1
    hour: int = 0
    minute: int = 0
    second: int = 0
    microsecond: int = 0
    offset_minutes: int = 0


def parse_datetime(text: str) -> Fields:
    """CF's datetime string ``y-m-d [H:M:S[.f] [TZ]]`` (leading zeros optional, ``T`` or space
    between date and time), also cut short (``2001-03``, ``2001-03-04 06``); CFTimeError if not."""
    match = _DATETIME.fullmatch(text.strip())
    if match is None:
        raise CFTimeError(f"{text!r} is not a date (y-m-d [H:M:S])")
    g = match.groupdict()
    frac = (g["frac"] or "").ljust(6, "0")
    if len(frac) > 6 and frac[6:].strip("0"):
        raise CFTimeError(f"{text!r} has a fraction of a second finer than a microsecond")
    return Fields(
        int(g["year"]), int(g["month"] or 1), int(g["day"] or 1), int(g["hour"] or 0),
        int(g["minute"] or 0), int(g["second"] or 0), int(frac[:6]), _offset(g["tz"]))


def _offset(tz: str | None) -> int:
    if tz is None or tz.upper() in ("Z", "UTC", "GMT"):
        return 0
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    hours, minutes = (digits[:-2], digits[-2:]) if len(digits) > 2 else (digits, "0")
    return sign * (int(hours) * 60 + int(minutes))


def make_date(fields: Fields, calendar: str, text: str) -> cftime.datetime:
    """The instant ``fields`` name in ``calendar`` (the time zone offset taken off); CFTimeError
    naming ``text`` when the calendar has no such date (2001-02-30 in standard, 1582-10-10 in the
    mixed Julian/Gregorian standard calendar, year 0 where there is none)."""
    f = fields
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cftime's CFWarning for years before 1
            date = cftime.datetime(
                f.year, f.month, f.day, f.hour, f.minute, f.second, f.microsecond,
                calendar=CFTIME_CALENDAR[calendar], has_year_zero=calendar not in NO_YEAR_ZERO)
            return date - datetime.timedelta(minutes=f.offset_minutes) if f.offset_minutes else date
    except (ValueError, OverflowError) as err:
        reason = str(err).split(" provided in ")[0]  # cftime's "invalid day number", ...
        if "not present in the mixed" in reason:
            reason = "the days 1582-10-05 to 1582-10-14 were skipped"
        raise CFTimeError(f"{text!r} is not a date of the {calendar} calendar: {reason}") from err


def iso(date: cftime.datetime) -> str:
    """``date`` as cftime reads it back in a units string (full precision, signed year)."""
    sign = "-" if date.year < 0 else ""
    return (f"{sign}{abs(date.year):04d}-{date.month:02d}-{date.day:02d} "
            f"{date.hour:02d}:{date.minute:02d}:{date.second:02d}.{date.microsecond:06d}")


def to_microseconds(values: np.ndarray, length: Fraction) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (integers or floats) counted in units of ``length`` microseconds, as int64
    microseconds rounded to the nearest, and where that count is finite and within LIMIT_US.
    Integers are converted exactly whenever the unit is a whole number of microseconds."""
    if values.dtype.kind in "iu":
        bound = LIMIT_US // max(1, int(length))
        if values.dtype.kind == "u":
            ok = values <= np.uint64(bound)
        else:
            ok = (values >= -bound) & (values <= bound)
        exact = np.where(ok, values, 0).astype(np.int64)
        if length.denominator == 1:
            return exact * int(length), ok
        if length.numerator == 1:  # a fraction of a microsecond: round half up, in integers
            return (exact + length.denominator // 2) // length.denominator, ok
        counts, fits = _scaled(exact, length)
        return counts, ok & fits
    return _scaled(values, length)


def _scaled(values: np.ndarray, length: Fraction) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = values.astype(np.float64) * float(length)
        ok = np.isfinite(scaled) & (np.abs(scaled) <= LIMIT_US)
    return np.rint(np.where(ok, scaled, 0.0)).astype(np.int64), ok
