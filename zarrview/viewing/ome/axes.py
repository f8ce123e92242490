"""``axes``: names, types and units, and the rules of the specification about them."""

from __future__ import annotations

from typing import Any

from .doc import Reporter, kind_of
from .model import Axis

SPACE_UNITS = frozenset((
    "angstrom", "attometer", "centimeter", "decimeter", "exameter", "femtometer", "foot", "gigameter",
    "hectometer", "inch", "kilometer", "megameter", "meter", "micrometer", "mile", "millimeter",
    "nanometer", "parsec", "petameter", "picometer", "terameter", "yard", "yoctometer", "yottameter",
    "zeptometer", "zettameter"))
TIME_UNITS = frozenset((
    "attosecond", "centisecond", "day", "decisecond", "exasecond", "femtosecond", "gigasecond",
    "hectosecond", "hour", "kilosecond", "megasecond", "microsecond", "millisecond", "minute",
    "nanosecond", "petasecond", "picosecond", "second", "terasecond", "yoctosecond", "yottasecond",
    "zeptosecond", "zettasecond"))
AXIS_TYPES = ("space", "time", "channel")

#: 0.1 and 0.2 had no axes: the arrays were 5-D t, c, z, y, x
_IMPLIED = (Axis("t", "time"), Axis("c", "channel"), Axis("z", "space"), Axis("y", "space"), Axis("x", "space"))


def guessed_type(name: str) -> str | None:
    return {"x": "space", "y": "space", "z": "space", "t": "time", "c": "channel"}.get(name.lower())


def parse_axes(value: Any, path: str, rep: Reporter) -> tuple[Axis, ...] | None:
    """The axes as written (0.3's plain names get a type from their name); None where unusable."""
    if value is None:
        rep.error(path, '"axes" is required and missing')
        return None
    if not isinstance(value, list):
        rep.error(path, f'"axes" must be a list, not {kind_of(value)}')
        return None
    axes = []
    for i, entry in enumerate(value):
        where = f"{path}[{i}]"
        if isinstance(entry, str):  # 0.3
            rep.warning(where, f'axis {entry!r} is a plain name (0.3); an axis is an object with "name" and "type"')
            axes.append(Axis(entry, guessed_type(entry)))
            continue
        if not isinstance(entry, dict):
            rep.error(where, f"an axis must be an object, not {kind_of(entry)}")
            return None
        name = entry.get("name")
        if not isinstance(name, str):
            rep.error(f"{where}.name", f'an axis MUST have a string "name", not {name!r}')
            return None
        typ = entry.get("type")
        if typ is not None and not isinstance(typ, str):
            rep.error(f"{where}.type", f'axis {name!r}: "type" must be a string, not {typ!r}')
            typ = None
        unit = entry.get("unit")
        if unit is not None and not isinstance(unit, str):
            rep.error(f"{where}.unit", f'axis {name!r}: "unit" must be a string, not {unit!r}')
            unit = None
        axes.append(Axis(name, typ, unit))
    return tuple(axes)


def implied_axes(ndim: int) -> tuple[Axis, ...]:
    """Axes for a multiscale without usable ``axes``: the last ``ndim`` of t, c, z, y, x (0.1/0.2),
    or dim_0, dim_1, ... beyond five dimensions."""
    if 0 < ndim <= 5:
        return _IMPLIED[5 - ndim:]
    return tuple(Axis(f"dim_{i}") for i in range(ndim))


def check_axes(axes: tuple[Axis, ...], path: str, rep: Reporter) -> None:
    """The rules about axes alone (their number against the arrays is checked with the levels)."""
    if not 2 <= len(axes) <= 5:
        rep.error(path, f"there MUST be 2 to 5 axes, not {len(axes)}")
    names = [a.name for a in axes]
    for i, a in enumerate(axes):
        where = f"{path}[{i}]"
        if names.count(a.name) > 1 and names.index(a.name) == i:
            rep.error(f"{where}.name", f"axis names MUST be unique: {a.name!r} appears {names.count(a.name)} times")
        if a.type is None:
            rep.warning(where, f'axis {a.name!r} SHOULD have a "type" (space, time or channel)')
        elif a.type not in AXIS_TYPES:
            rep.warning(f"{where}.type", f"axis {a.name!r} has the custom type {a.type!r} (not space, time or channel)")
        if a.unit is not None:
            allowed = SPACE_UNITS if a.type == "space" else TIME_UNITS if a.type == "time" else SPACE_UNITS | TIME_UNITS
            if a.unit not in allowed:
                what = f"a {a.type} unit" if a.type in ("space", "time") else "a space or time unit"
                rep.warning(f"{where}.unit", f"axis {a.name!r}: unit {a.unit!r} is not {what} of the specification")
    types = [a.type for a in axes]
    spaces = types.count("space")
    if not 2 <= spaces <= 3:
        rep.error(path, f'there MUST be 2 or 3 axes of type "space", not {spaces}')
    if types.count("time") > 1:
        rep.error(path, f'there MAY be one axis of type "time", not {types.count("time")}')
    others = [t for t in types if t not in ("space", "time")]
    if len(others) > 1:
        rep.error(path, f'there MAY be one axis of type "channel" or a custom type, not {len(others)}')
    rank = [0 if t == "time" else 2 if t == "space" else 1 for t in types]
    if rank != sorted(rank):
        order = ", ".join(f"{a.name} ({a.type})" for a in axes)
        rep.error(path, f"axes MUST be ordered time, then channel or custom, then space: not {order}")
