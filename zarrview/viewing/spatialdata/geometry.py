"""A GeoParquet ``geometry`` column as shapes, in either encoding spatialdata writes: WKB (binary,
``wkb.py``; the default) or GeoArrow's native one (``shapes_geometry_encoding="geoarrow"``: a
point is a struct of x and y, a polygon a list of rings of such points, a multipolygon a list of
polygons), whose coordinates pyarrow hands over as flat arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from .wkb import Shape, WkbError, parse


class GeometryError(ValueError):
    """A geometry column of a layout the view cannot draw (said with the column's type)."""


def decode(column: Any) -> list[Shape | None]:
    """Each row's shape (None for a null); raises :class:`WkbError` for bad WKB and
    :class:`GeometryError` for a column that is neither encoding."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return [parse(raw) if raw is not None else None for raw in column.to_pylist()]
    depth, inner = 0, kind
    while pa.types.is_list(inner) or pa.types.is_large_list(inner):
        depth, inner = depth + 1, inner.value_type
    if not pa.types.is_struct(inner) or inner.get_field_index("x") < 0 or inner.get_field_index("y") < 0 \
            or depth not in (0, 2, 3):
        raise GeometryError(f"a geometry column of type {kind} is neither WKB nor a GeoArrow point, polygon or "
                            f"multipolygon")
    if depth == 0:
        xy = _xy(column)
        return [Shape("point", xy[i:i + 1]) for i in range(len(xy))]
    return _nested(column, depth)


def _xy(points: Any) -> np.ndarray:
    x = np.asarray(points.field("x").to_numpy(zero_copy_only=False), dtype=np.float64)
    y = np.asarray(points.field("y").to_numpy(zero_copy_only=False), dtype=np.float64)
    return np.column_stack([x, y])


def _nested(column: Any, depth: int) -> list[Shape | None]:
    """Polygons (depth 2: rings of points) or multipolygons (depth 3) split by their lengths."""
    import pyarrow.compute as pc

    counts = []  # per level, how many of the next level each element holds
    level = column
    for _ in range(depth):
        counts.append(np.asarray(pc.list_value_length(level).fill_null(0).to_numpy(zero_copy_only=False), np.int64))
        level = pc.list_flatten(level)
    xy = _xy(level)
    rings = np.split(xy, np.cumsum(counts[-1])[:-1]) if len(counts[-1]) else []
    per_row = counts[0]
    if depth == 3:  # rings per multipolygon: the rings of its polygons
        rings_before = np.r_[0, np.cumsum(counts[1])]
        polygons_before = np.r_[0, np.cumsum(counts[0])]
        per_row = rings_before[polygons_before[1:]] - rings_before[polygons_before[:-1]]
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    out: list[Shape | None] = []
    at = 0
    for row, n in enumerate(per_row.tolist()):
        out.append(Shape("polygon", np.zeros((0, 2)), tuple(rings[at:at + n])) if valid[row] else None)
        at += n
    return out


__all__ = ["GeometryError", "WkbError", "decode"]
