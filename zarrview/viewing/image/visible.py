"""The values on screen: the loaded tiles of the plane shown, cut to the region in view.

Automatic levels describe what the user looks at: zoomed into a dark corner, the corner's values
set the contrast, not the whole plane's. The values come from one tile, at the level shown: the
finest tile that covers the visible part of the plane (full resolution once it has landed, the
preview or a coarser pyramid level until then); where none covers it (a pan whose detail is still
being read), the tile that shows most of it. A tile is cut to the elements any part of which is
on screen. With nothing of the plane on screen (panned away, or no region known yet before the
first layout) the finest tile is taken whole, so that a plane still gets levels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .contrast import ValueSummary, summarize
from .scene import Tile
from .state import Region


def on_plane(region: Region | None, plane_shape: tuple[int, int]) -> Region | None:
    """The part of ``region`` that lies on the plane (``plane_shape`` rows and columns), or None
    where none does or no region is known."""
    if region is None:
        return None
    rows, cols = plane_shape
    r0, r1, c0, c1 = region
    r0, r1, c0, c1 = max(0.0, float(r0)), min(float(rows), float(r1)), max(0.0, float(c0)), min(float(cols), float(c1))
    return (r0, r1, c0, c1) if r1 > r0 and c1 > c0 else None


def _span(start: float, step: float, length: int, lo: float, hi: float) -> tuple[int, int]:
    """The elements [i0, i1) of a row or column of ``length`` elements placed from ``start`` by
    ``step`` that reach into [lo, hi)."""
    i0 = max(0, math.floor((lo - start) / step))
    i1 = min(length, math.ceil((hi - start) / step))
    return i0, max(i0, i1)


def visible_part(tile: Tile, region: Region | None) -> np.ndarray:
    """The displayable values (``Tile.image``) of the elements of ``tile`` that reach into
    ``region`` (level-0 rows r0:r1, columns c0:c1); the whole image where ``region`` is None."""
    if region is None:
        return tile.image
    r0, r1, c0, c1 = region
    i0, i1 = _span(tile.r0, tile.step_r, tile.image.shape[0], r0, r1)
    j0, j1 = _span(tile.c0, tile.step_c, tile.image.shape[1], c0, c1)
    return tile.image[i0:i1, j0:j1]


def _overlap(tile: Tile, region: Region) -> float:
    r0, r1, c0, c1 = region
    rows = min(r1, tile.r1) - max(r0, tile.r0)
    cols = min(c1, tile.c1) - max(c0, tile.c0)
    return max(0.0, rows) * max(0.0, cols)


def visible_tile(tiles: Sequence[Tile], region: Region | None, plane_shape: tuple[int, int]) -> Tile | None:
    """Of the tiles of the plane shown (coarsest first, as ``Scene.tiles`` lists them), the one
    whose values are on screen: the finest covering the visible part of the plane, else the one
    showing most of it (the finer of equals), else the finest; None without tiles."""
    if not tiles:
        return None
    shown = on_plane(region, plane_shape)
    if shown is None:
        return tiles[-1]
    finest_first = list(reversed(tiles))
    covering = next((t for t in finest_first if t.covers(*shown)), None)
    if covering is not None:
        return covering
    best = max(finest_first, key=lambda t: _overlap(t, shown))  # max keeps the first (finest) of equals
    return best if _overlap(best, shown) > 0 else tiles[-1]


def visible_values(tiles: Sequence[Tile], region: Region | None,
                   plane_shape: tuple[int, int]) -> tuple[Tile, np.ndarray] | None:
    """The tile whose values are on screen and those values (displayable numbers, rows and
    columns cut to the visible part of the plane); None without tiles."""
    tile = visible_tile(tiles, region, plane_shape)
    if tile is None:
        return None
    shown = on_plane(region, plane_shape)
    return tile, (visible_part(tile, shown) if shown is not None and _overlap(tile, shown) > 0 else tile.image)


def visible_summary(tiles: Sequence[Tile], region: Region | None, plane_shape: tuple[int, int]) -> ValueSummary | None:
    """The levels of the values on screen by the rule of ``contrast.summarize`` (0.5 and 99.5
    percentiles of the finite values), with their counts; None without tiles."""
    found = visible_values(tiles, region, plane_shape)
    return None if found is None else summarize(found[1])


def visible_levels(tiles: Sequence[Tile], region: Region | None,
                   plane_shape: tuple[int, int]) -> tuple[float, float] | None:
    """The automatic levels of the values on screen, or None without tiles."""
    summary = visible_summary(tiles, region, plane_shape)
    return None if summary is None else summary.levels
