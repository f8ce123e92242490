"""Whether two coordinates' units measure the same quantity, and the factor between them.

Coordinates of two datasets are compared as numbers only where their units agree: a level in
``hPa`` and one in ``Pa`` are the same pressure a hundred times apart, while a level in ``m`` and
one in ``hPa`` are not comparable at all. The table holds the units coordinates are written in
(CF's pressure, length and angle spellings); anything else is comparable only to itself.
"""

from __future__ import annotations

from ..cf.axis_kind import DEGREES, LAT_UNITS, LON_UNITS

#: units (lower case, spaces removed) -> (quantity, the size of one unit in the quantity's base)
_SCALES: dict[str, tuple[str, float]] = {
    **{u: ("pressure", 1.0) for u in ("pa", "pascal", "pascals")},
    **{u: ("pressure", 100.0) for u in ("hpa", "hectopascal", "hectopascals", "mbar", "millibar", "millibars", "mb")},
    "kpa": ("pressure", 1000.0),
    "cbar": ("pressure", 1000.0),
    **{u: ("pressure", 10_000.0) for u in ("dbar", "decibar")},
    "bar": ("pressure", 100_000.0),
    **{u: ("pressure", 101_325.0) for u in ("atm", "atmosphere")},
    **{u: ("length", 1.0) for u in ("m", "meter", "meters", "metre", "metres")},
    **{u: ("length", 1000.0) for u in ("km", "kilometer", "kilometers", "kilometre", "kilometres")},
    **{u: ("length", 0.01) for u in ("cm", "centimeter", "centimeters", "centimetre", "centimetres")},
    **{u: ("length", 0.001) for u in ("mm", "millimeter", "millimeters", "millimetre", "millimetres")},
    **{u: ("degree_north", 1.0) for u in LAT_UNITS},
    **{u: ("degree_east", 1.0) for u in LON_UNITS},
    **{u: ("degree", 1.0) for u in DEGREES},
}


def plain_units(units: str | None) -> str:
    """``units`` as compared: stripped, "" for none and for CF's dimensionless ``"1"``."""
    text = (units or "").strip()
    return "" if text == "1" else text


def factor(source: str | None, target: str | None) -> float | None:
    """What a value in ``source`` units is multiplied by to be in ``target`` units (1 where they
    are the same), or None where they measure different quantities or either is unknown here.
    Plain degrees are taken for degrees north or east: an axis' kind, not its units, says which."""
    a, b = plain_units(source), plain_units(target)
    if a == b:
        return 1.0
    sa, sb = _SCALES.get(a.replace(" ", "").lower()), _SCALES.get(b.replace(" ", "").lower())
    if sa is None or sb is None:
        return None
    if sa[0] != sb[0] and "degree" not in (sa[0], sb[0]):
        return None
    if sa[0] != sb[0] and not (sa[0].startswith("degree") and sb[0].startswith("degree")):
        return None
    return sa[1] / sb[1]
