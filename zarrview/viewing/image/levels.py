"""Which resolution level a view reads, and where that level's pixels lie in level-0 coordinates.

A view state speaks in level-0 coordinates (the region on screen, the slider indices), so that
zooming never moves anything; a pyramid level is only a cheaper way to fill that region. For
each read the controller takes a :class:`LevelView`: the level's array, the region and the
fixed indices carried into its coordinates, the screen's scale per level pixel, and the affine
map back (``level0 = a * x + b`` along rows and columns, from the levels' scale and
translation), which places the answer's tile exactly over the others whatever the factors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...zarrlib import Array
from .state import Region, ViewState


@dataclass(frozen=True)
class LevelView:
    index: int
    array: Array
    #: every dimension's index in this level (those of the displayed dimensions are ignored)
    indices: tuple[int, ...]
    #: the visible region in this level's coordinates, or None for the whole plane
    region: Region | None
    #: screen pixels per pixel of this level (rows, columns)
    screen_scale: tuple[float, float]
    #: level-0 coordinate = a * level coordinate + b, along rows and along columns
    rows: tuple[float, float] = (1.0, 0.0)
    cols: tuple[float, float] = (1.0, 0.0)


def level_views(state: ViewState) -> tuple[LevelView, LevelView]:
    """(the level the view needs, the coarsest readable level): the same for a plain array."""
    if not state.pyramid:
        view = LevelView(0, state.array, state.indices, state.region, state.screen_scale)
        return view, view
    levels = [lv for lv in state.pyramid if lv.array is not None]
    from ..ome import pyramid as arith  # the OME model is only needed for pyramids

    if state.level is not None and any(lv.index == state.level for lv in levels):
        wanted = state.level
    else:
        sy, sx = state.screen_scale
        wanted = arith.choose_level(levels, {state.y_dim: 1.0 / sy, state.x_dim: 1.0 / sx})
    coarsest = max(levels, key=lambda lv: _area(lv.scale, state)).index
    return _view(state, levels, wanted), _view(state, levels, coarsest)


def level_view(state: ViewState, index: int) -> LevelView:
    """The view of level ``index`` (a plain array's only level, whatever ``index``)."""
    levels = [lv for lv in state.pyramid or () if lv.array is not None]
    if not any(lv.index == index for lv in levels):
        return level_views(state)[0]
    return _view(state, levels, index)


def coarser_views(state: ViewState, index: int) -> list[LevelView]:
    """The readable levels of the pyramid coarser than level ``index``, finest first."""
    levels = [lv for lv in state.pyramid or () if lv.array is not None]
    ref = next((lv for lv in levels if lv.index == index), None)
    if ref is None:
        return []
    area = _area(ref.scale, state)
    coarser = sorted((lv for lv in levels if _area(lv.scale, state) > area), key=lambda lv: _area(lv.scale, state))
    return [_view(state, levels, lv.index) for lv in coarser]


def _area(scale: Sequence[float], state: ViewState) -> float:
    return scale[state.y_dim] * scale[state.x_dim]


def _view(state: ViewState, levels: list, index: int) -> LevelView:
    from ..ome import pyramid as arith

    level0 = levels[0]
    level = next(lv for lv in levels if lv.index == index)
    assert level.array is not None
    ndim = len(state.indices)
    y, x = state.y_dim, state.x_dim
    unit = tuple((0.0, 1.0) for _ in range(ndim))
    edges = arith.map_region(level, level0, unit)  # where this level's pixel 0 lies in level 0
    a_r, b_r = edges[y][1] - edges[y][0], edges[y][0]
    a_c, b_c = edges[x][1] - edges[x][0], edges[x][0]
    shown = state.plane_dims
    indices = tuple(i if d in shown else arith.map_index(level0, level, d, i) for d, i in enumerate(state.indices))
    region = None
    if state.region is not None:
        r0, r1, c0, c1 = state.region
        region = ((r0 - b_r) / a_r, (r1 - b_r) / a_r, (c0 - b_c) / a_c, (c1 - b_c) / a_c)
    sy, sx = state.screen_scale
    return LevelView(index, level.array, indices, region, (sy * a_r, sx * a_c), (a_r, b_r), (a_c, b_c))


def exact(x: float) -> float:
    """A level-0 coordinate as an int when it is integral: plain arrays and aligned levels place
    and index their tiles with it."""
    return int(x) if float(x).is_integer() else x
