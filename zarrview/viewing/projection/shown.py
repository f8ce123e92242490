"""A projection as the image view shows it: a scene of one full-resolution tile, its readout,
and what File > Export writes of it.

The window draws a projected plane exactly as it draws a read plane (``image.scene.Scene``):
the values as numbers the display can take (or the composite of its channels), levels from the
percentiles of its finite values, the window's colour map on top. The readout names the
projection in place of the reduced dimension's index, and an export writes the projection's
values through the export of planes (``export.plane.PlaneSpec.values``), as ``zarrview export
--reduce`` does.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..export.plane import PlaneSpec
from ..image.contrast import displayable, percentile_levels
from ..image.readout import channel_values, format_value
from ..image.scene import Scene, Tile
from ..image.state import ViewState
from ..image.axes import dim_names
from .spec import Projection
from .view import Engine, ProjectedPlane, ProjectionValues, plane_spec


def short_label(p: Projection) -> str:
    """``max over z [0:100]``: what the view says it shows."""
    names = p.array.dimension_names or ()
    name = p.dim_name or (names[p.dim] if p.dim < len(names) and names[p.dim] else f"dimension {p.dim}")
    return f"{p.op} over {name} [{p.start}:{p.stop}]"


def projected_scene(plane: ProjectedPlane, state: ViewState) -> Scene:
    """The scene of a projected plane: one tile at full resolution over the whole plane."""
    assert plane.image is not None
    shown = displayable(plane.image, state.complex_mode)
    levels = (0.0, 1.0) if state.composite else percentile_levels(shown)
    tile = Tile(plane.image, np.ascontiguousarray(shown), 0.0, 0.0, 1.0, 1.0, ("projection", plane.label))
    return Scene(detail=tile, levels=levels, status=plane.status, channel_dim=state.channel_dim,
                 composite=state.composite, channels=state.channels if state.composite else ())


def projected_readout(plane: ProjectedPlane, state: ViewState, what: str, row: int, col: int) -> str:
    """``y 120, x 33 (max over z [0:100]): 2210`` for the element under the cursor."""
    if plane.image is None or not (0 <= row < plane.image.shape[0] and 0 <= col < plane.image.shape[1]):
        return ""
    names = dim_names(state.array, state.axis_names)
    value = plane.image[row, col]
    text = channel_values(state, value) if state.composite else format_value(value)
    return f"{names[state.y_dim]} {row:,}, {names[state.x_dim]} {col:,} ({what}): {text}"


def projected_export(spec: PlaneSpec, p: Projection, dims: tuple[int, int], channel_dim: int | None,
                     engine: Engine | None = None) -> PlaneSpec:
    """``spec`` (the view's plane with its levels and colours) standing for the projection ``p``:
    its values computed, not read, and no label layer drawn over it (they label one plane)."""
    base = plane_spec(p, dims, channel_dim, spec.complex_mode)
    return replace(spec, selection=base.selection, values=ProjectionValues(p, engine or Engine()), labels=(), decode=False)
