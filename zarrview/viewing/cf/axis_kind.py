"""What a coordinate axis is (latitude, longitude, vertical or other), from its units, name and
CF attributes, and which way up an image along it is drawn."""

from __future__ import annotations

from typing import Protocol

#: CF 4.1/4.2: the accepted spellings of latitude and longitude units
LAT_UNITS = frozenset(("degrees_north", "degree_north", "degree_n", "degrees_n", "degreen", "degreesn"))
LON_UNITS = frozenset(("degrees_east", "degree_east", "degree_e", "degrees_e", "degreee", "degreese"))
#: units that say degrees without saying which way (a name or an `axis` decides)
DEGREES = frozenset(("degrees", "degree", "deg", "°"))
#: CF 4.3: pressure units (then `positive` defaults to down)
PRESSURE_UNITS = frozenset(("pa", "hpa", "kpa", "bar", "mbar", "millibar", "millibars", "mb", "decibar", "dbar",
                            "cbar", "atm", "atmosphere", "pascal", "pascals", "hectopascal", "hectopascals", "psi"))
_VERTICAL_NAMES = frozenset(("level", "levels", "lev", "plev", "pressure", "pressure_level", "isobaricinhpa",
                             "depth", "height", "altitude", "alt", "z", "deptht", "depthu", "depthv"))
_VERTICAL_STANDARD = frozenset(("altitude", "height", "depth", "air_pressure", "geopotential_height",
                                "model_level_number", "height_above_geopotential_datum",
                                "height_above_reference_ellipsoid", "height_above_mean_sea_level"))


def axis_kind(name: str, units: str | None, std: str, axis: str | None, positive: str | None) -> str:
    """"latitude", "longitude", "vertical" or "other": CF's units and attributes first, then the
    names people give such variables where the attributes say nothing."""
    u = (units or "").strip().lower()
    base = name.rsplit("/", 1)[-1].lower()
    degree_like = u in ("", *DEGREES)
    if u in LAT_UNITS or std == "latitude" or (axis == "Y" and degree_like and base != "y"):
        return "latitude"
    if u in LON_UNITS or std == "longitude" or (axis == "X" and degree_like and base != "x"):
        return "longitude"
    if axis is None and not std and degree_like:
        if base in ("lat", "latitude", "nav_lat"):
            return "latitude"
        if base in ("lon", "long", "longitude", "nav_lon"):
            return "longitude"
    if (axis == "Z" or positive is not None or u in PRESSURE_UNITS or std in _VERTICAL_STANDARD
            or std.endswith("_coordinate") or (axis is None and not std and base in _VERTICAL_NAMES)):
        return "vertical"
    return "other"


class Oriented(Protocol):
    """What the drawing direction depends on: an axis' kind, whether its values descend along
    the index, and whether larger values lie down. A protocol, so that this module stays below
    ``coords``, whose ``CoordAxis`` is one."""

    @property
    def kind(self) -> str: ...

    @property
    def descending(self) -> bool: ...

    @property
    def positive_down(self) -> bool: ...


def flip_vertical(axis: Oriented) -> bool:
    """Whether an image whose rows follow ``axis`` is drawn with row 0 at the BOTTOM (rows going
    up the screen) instead of the raster default, row 0 at the top.

    The aim is north up and depth down, whatever order the file stores: latitude (and any ``Y``
    or upward vertical axis) puts larger values up, so it flips when its values ascend along the
    rows (-90 .. 90) and not when they descend (ERA5's 90 .. -90, shown as stored); a ``positive:
    down`` axis (depth, pressure levels) puts larger values down, so it flips when its values
    descend (1000 .. 100 hPa: row 0, the lowest level, at the bottom). Time, longitude and other
    axes keep the raster default. In plot terms (values increasing upward): latitude descending
    or ``positive: down`` is the case where the value axis runs top-down.
    """
    upward = axis.kind == "latitude" or (axis.kind == "vertical" and not axis.positive_down)
    if upward:
        return not axis.descending
    if axis.kind == "vertical":
        return axis.descending
    return False
