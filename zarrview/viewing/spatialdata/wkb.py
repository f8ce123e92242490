"""Well-known binary (WKB) geometries, as GeoParquet stores a shapes element's ``geometry``:
points, polygons and multipolygons (and their Z and M variants, ISO or EWKB codes; the extra
ordinates are read past). Each count is checked against the bytes left before anything is
allocated, so a hostile geometry costs a :class:`WkbError`, never memory.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ...zarrlib.errors import ZarrError

POINT, LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING, MULTIPOLYGON = 1, 2, 3, 4, 5, 6
#: how deep a collection may nest (a multipolygon holds polygons: 2)
MAX_DEPTH = 3


class WkbError(ZarrError):
    """A geometry that is not well-formed WKB, or of a kind the view cannot draw."""


@dataclass(frozen=True)
class Shape:
    """One geometry: ``points`` (n × 2, x and y) for a point or multipoint; ``rings`` for a
    polygon or multipolygon (each ring n × 2, exteriors and holes, closed as written);
    ``lines`` for a line string."""

    kind: str
    points: np.ndarray
    rings: tuple[np.ndarray, ...] = ()


def parse(data: bytes | memoryview) -> Shape:
    """The geometry ``data`` holds; raises :class:`WkbError`."""
    buf = memoryview(data).cast("B")
    kind, end, points, rings = _geometry(buf, 0, 0)
    if end != len(buf):
        raise WkbError(f"WKB geometry has {len(buf) - end} bytes after its end")
    name = {POINT: "point", MULTIPOINT: "point", POLYGON: "polygon", MULTIPOLYGON: "polygon",
            LINESTRING: "line", MULTILINESTRING: "line"}[kind]
    return Shape(name, np.vstack(points) if points else np.zeros((0, 2)), tuple(rings))


def _header(buf: memoryview, at: int) -> tuple[str, int, int, int]:
    """(byte order, base type, ordinates per vertex, where the body starts)."""
    if at + 5 > len(buf):
        raise WkbError(f"WKB geometry ends at byte {at} inside a header")
    order = "<" if buf[at] == 1 else ">" if buf[at] == 0 else None
    if order is None:
        raise WkbError(f"WKB byte order must be 0 or 1, not {buf[at]} (byte {at})")
    code = struct.unpack_from(order + "I", buf, at + 1)[0]
    at += 5
    dims = 2
    if code & 0x80000000:  # EWKB flags: Z, M, SRID
        dims += 1
    if code & 0x40000000:
        dims += 1
    if code & 0x20000000:
        at += 4  # the SRID
    code &= 0x0FFFFFFF
    thousands, base = divmod(code, 1000)
    if thousands:  # ISO: 1000 Z, 2000 M, 3000 ZM
        dims = 2 + (2 if thousands == 3 else 1)
    if base not in (POINT, LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING, MULTIPOLYGON) or thousands > 3:
        raise WkbError(f"WKB geometry type {code} cannot be drawn (points, lines and polygons can)")
    return order, base, dims, at


def _count(buf: memoryview, at: int, order: str, each: int, what: str) -> tuple[int, int]:
    if at + 4 > len(buf):
        raise WkbError(f"WKB geometry ends at byte {at} before its {what} count")
    n = struct.unpack_from(order + "I", buf, at)[0]
    if n * each > len(buf) - at - 4:
        raise WkbError(f"WKB geometry claims {n:,} {what} at byte {at}; only {len(buf) - at - 4:,} bytes follow")
    return n, at + 4


def _coords(buf: memoryview, at: int, order: str, n: int, dims: int) -> tuple[np.ndarray, int]:
    size = n * dims * 8
    if at + size > len(buf):
        raise WkbError(f"WKB geometry ends inside {n:,} coordinates at byte {at}")
    values = np.frombuffer(buf, dtype=np.dtype(order + "f8"), count=n * dims, offset=at).reshape(n, dims)
    return values[:, :2].astype(np.float64), at + size


def _geometry(buf: memoryview, at: int, depth: int) -> tuple[int, int, list[np.ndarray], list[np.ndarray]]:
    order, base, dims, at = _header(buf, at)
    points: list[np.ndarray] = []
    rings: list[np.ndarray] = []
    if base == POINT:
        xy, at = _coords(buf, at, order, 1, dims)
        if not np.isnan(xy).all():  # POINT EMPTY is written as NaNs
            points.append(xy)
    elif base == LINESTRING:
        n, at = _count(buf, at, order, 8 * dims, "vertices")
        xy, at = _coords(buf, at, order, n, dims)
        rings.append(xy)
    elif base == POLYGON:
        n, at = _count(buf, at, order, 4, "rings")
        for _ in range(n):
            m, at = _count(buf, at, order, 8 * dims, "vertices")
            xy, at = _coords(buf, at, order, m, dims)
            rings.append(xy)
    else:
        if depth >= MAX_DEPTH - 1:
            raise WkbError("WKB collections nest too deep")
        n, at = _count(buf, at, order, 9, "parts")
        want = {MULTIPOINT: POINT, MULTILINESTRING: LINESTRING, MULTIPOLYGON: POLYGON}[base]
        for _ in range(n):
            kind, at, p, r = _geometry(buf, at, depth + 1)
            if kind != want:
                raise WkbError(f"a WKB multi-geometry of type {base} holds a part of type {kind}")
            points += p
            rings += r
    return base, at, points, rings
