"""Pyramid arithmetic: pixel sizes, the level a zoom needs, regions carried between levels.

Pure functions of :class:`~zarrview.viewing.ome.model.Level` values (only ``index``, ``scale``,
``translation``, ``shape`` and ``array`` are used, so tests build levels by hand).

Convention: ``physical = scale * i + translation`` is the centre of pixel ``i`` (the one
ome-zarr-py writes its per-level translations in: level 1 of a factor-2 pyramid has translation
0.5 level-0 pixels). A *region* is given in edge coordinates, pixel ``k`` spanning ``[k, k + 1)``
along each axis, so edge ``x`` sits at ``scale * (x - 0.5) + translation``. Any factor per axis
works (3, 1.5, none along Z, ...): nothing assumes powers of two.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .model import Level

Region = tuple[tuple[float, float], ...]
IntRegion = tuple[tuple[int, int], ...]
_TOLERANCE = 1e-6


def pixel_size(level: Level) -> tuple[float, ...]:
    """The physical size of one pixel of ``level`` along each axis (in the axes' units)."""
    return level.scale


def factors(levels: Sequence[Level]) -> list[tuple[float, ...]]:
    """Each level's pixel size over the first level's, per axis (1, 2, 4... for a factor-2 pyramid)."""
    base = levels[0].scale
    return [tuple(s / b for s, b in zip(lv.scale, base)) for lv in levels]


def choose_level(levels: Sequence[Level], screen_scale: Mapping[int, float]) -> int:
    """The index (``Level.index``) of the coarsest readable level whose pixels are at least as
    fine as the screen's, in physical space, along every axis in ``screen_scale``.

    ``screen_scale[axis]`` is the size of one screen pixel in level-0 pixels along that axis
    (4.0 when zoomed out to 1:4; 0.5 at 2:1). Level 0 is the first readable level. Where no level
    is fine enough (zoomed in past level 0), level 0; where none is readable, ``levels[0]``.
    """
    readable = [lv for lv in levels if lv.array is not None]
    if not readable:
        return levels[0].index
    ref = readable[0]
    best = ref
    best_size = _area(ref, screen_scale)
    for lv in readable[1:]:
        fine_enough = all(lv.scale[a] <= ref.scale[a] * s * (1 + _TOLERANCE) for a, s in screen_scale.items())
        size = _area(lv, screen_scale)
        if fine_enough and size > best_size * (1 + _TOLERANCE):
            best, best_size = lv, size
    return best.index


def _area(level: Level, screen_scale: Mapping[int, float]) -> float:
    return math.prod(level.scale[a] for a in screen_scale)


def to_physical(level: Level, region: Region) -> Region:
    """A region in ``level``'s edge coordinates, in physical coordinates."""
    return tuple((s * (lo - 0.5) + t, s * (hi - 0.5) + t)
                 for (lo, hi), s, t in zip(region, level.scale, level.translation))


def from_physical(level: Level, region: Region) -> Region:
    """A physical region in ``level``'s edge coordinates (the inverse of :func:`to_physical`)."""
    return tuple(((lo - t) / s + 0.5, (hi - t) / s + 0.5)
                 for (lo, hi), s, t in zip(region, level.scale, level.translation))


def map_region(source: Level, target: Level, region: Region) -> Region:
    """A region in ``source``'s edge coordinates, in ``target``'s (exact, not rounded)."""
    return from_physical(target, to_physical(source, region))


def to_level(levels: Sequence[Level], index: int, region: Region) -> Region:
    """A region in level-0 coordinates in level ``index``'s."""
    return map_region(levels[0], _by_index(levels, index), region)


def from_level(levels: Sequence[Level], index: int, region: Region) -> Region:
    """A region in level ``index``'s coordinates in level 0's."""
    return map_region(_by_index(levels, index), levels[0], region)


def covering(level: Level, region: Region) -> IntRegion:
    """The whole pixels of ``level`` that a (float) region touches, clipped to its shape: what to
    read so that the region is covered."""
    out = []
    for (lo, hi), n in zip(region, level.shape):
        a = max(0, min(n, math.floor(lo + _TOLERANCE)))
        b = max(a, min(n, math.ceil(hi - _TOLERANCE)))
        out.append((a, b))
    return tuple(out)


def map_index(source: Level, target: Level, axis: int, i: int) -> int:
    """The pixel of ``target`` along ``axis`` whose centre is nearest the centre of ``source``'s
    pixel ``i`` (a slider position carried across a Z- or T-downsampled level), clipped."""
    p = source.scale[axis] * i + source.translation[axis]
    j = math.floor((p - target.translation[axis]) / target.scale[axis] + 0.5 - _TOLERANCE)
    n = target.shape[axis] if axis < len(target.shape) else j + 1
    return max(0, min(n - 1, j))


def _by_index(levels: Sequence[Level], index: int) -> Level:
    return next(lv for lv in levels if lv.index == index)
