"""The chunk grid of the plane shown: where its chunk and shard boundaries lie on screen, which
chunk is under the cursor, and what the store holds for it.

Boundaries are those of the level shown (a pyramid's levels are chunked each their own way),
carried into level-0 coordinates like its pixels (``levels.LevelView``), and only those in the
visible region: a grid of 10**6 chunks a side draws the few dozen lines in view. Where more than
``MOST_LINES`` chunk boundaries would be in view, they would be closer than a few screen pixels
and show nothing but a grey wash, so only the shard boundaries are drawn and the grid says it is
too dense. What is stored for a chunk (its object, its bytes) is found on a worker from the
shard index or the object's size (``Array.chunks_stored``); nothing here reads the store.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ..metadata import human_bytes
from ...zarrlib import Array
from ...zarrlib.audit import ChunkStored
from ...zarrlib.grid import Axis
from .levels import LevelView
from .state import ViewState

#: chunk boundaries drawn along one direction at most (a 2000-pixel view shows a line per 4 pixels)
MOST_LINES = 500


@dataclass(frozen=True)
class GridLines:
    """Boundaries in level-0 plane coordinates: rows (horizontal lines) and columns (vertical),
    of read chunks (inner chunks where sharded) and of shards; ``dense``: chunk lines left out."""

    level: int
    chunk_rows: tuple[float, ...]
    chunk_cols: tuple[float, ...]
    shard_rows: tuple[float, ...] = ()
    shard_cols: tuple[float, ...] = ()
    dense: bool = False


def _chunk_axis(arr: Array, dim: int) -> Axis | int:
    """The read chunks along ``dim``: the rectilinear grid's axis, or the regular extent."""
    grid = arr.meta.read_grid
    return grid.axes[dim] if grid is not None else arr.chunks[dim]


def _shard_axis(arr: Array, dim: int) -> Axis | int | None:
    if arr.shards is None:
        return None
    grid = arr.meta.grid
    return grid.axes[dim] if grid is not None else arr.shards[dim]


def edges_in(axis: Axis | int, extent: int, lo: float, hi: float, most: int) -> list[int] | None:
    """The element offsets of boundaries along one dimension that lie in [lo, hi] (the array's
    ends included where in range); None where there are more than ``most``."""
    lo_i, hi_i = max(0, math.ceil(lo)), min(extent, math.floor(hi))
    if hi_i < lo_i:
        return []
    if isinstance(axis, int):
        first, last = -(-lo_i // axis), hi_i // axis
        if last - first + 1 > most:
            return None
        out = [k * axis for k in range(first, last + 1)]
    else:
        if axis.n == 0:
            return []
        c0, c1 = axis.chunk_of(min(lo_i, extent - 1)), axis.chunk_of(min(hi_i, extent - 1))
        if c1 - c0 + 2 > most:
            return None
        out = [axis.span(c)[0] for c in range(c0, c1 + 1)] + [axis.span(c1)[1]]
    if hi_i == extent and (not out or out[-1] != extent):
        out.append(extent)
    return [e for e in out if lo_i <= e <= hi_i]


def grid_lines(lv: LevelView, y_dim: int, x_dim: int, region: tuple[float, float, float, float],
               most: int = MOST_LINES) -> GridLines:
    """The boundaries of ``lv``'s array in the level-0 ``region`` (r0, r1, c0, c1)."""
    arr = lv.array
    (a_r, b_r), (a_c, b_c) = lv.rows, lv.cols
    r0, r1, c0, c1 = region
    lo_r, hi_r = sorted(((r0 - b_r) / a_r, (r1 - b_r) / a_r))
    lo_c, hi_c = sorted(((c0 - b_c) / a_c, (c1 - b_c) / a_c))
    extents = (arr.shape[y_dim], arr.shape[x_dim])

    def placed(values: list[int] | None, a: float, b: float) -> tuple[float, ...]:
        return tuple(a * v + b for v in values or ())

    rows = edges_in(_chunk_axis(arr, y_dim), extents[0], lo_r, hi_r, most)
    cols = edges_in(_chunk_axis(arr, x_dim), extents[1], lo_c, hi_c, most)
    dense = rows is None or cols is None
    lines = GridLines(lv.index, () if dense else placed(rows, a_r, b_r), () if dense else placed(cols, a_c, b_c),
                      dense=dense)
    shard_y, shard_x = _shard_axis(arr, y_dim), _shard_axis(arr, x_dim)
    if shard_y is None or shard_x is None:
        return lines
    srows = edges_in(shard_y, extents[0], lo_r, hi_r, most)
    scols = edges_in(shard_x, extents[1], lo_c, hi_c, most)
    if srows is None or scols is None:
        return lines
    return GridLines(lines.level, lines.chunk_rows, lines.chunk_cols, placed(srows, a_r, b_r),
                     placed(scols, a_c, b_c), dense)


def chunk_under(lv: LevelView, y_dim: int, x_dim: int, row: float, col: float) -> tuple[int, ...] | None:
    """The grid coordinates of the read chunk holding the element of ``lv``'s array under the
    level-0 point (row, col), its other dimensions at ``lv.indices``; None outside the array."""
    arr = lv.array
    (a_r, b_r), (a_c, b_c) = lv.rows, lv.cols
    index = list(lv.indices)
    index[y_dim] = math.floor((row - b_r) / a_r)
    index[x_dim] = math.floor((col - b_c) / a_c)
    if any(not 0 <= i < n for i, n in zip(index, arr.shape)):
        return None
    grid = arr.meta.read_grid
    if grid is not None:
        return tuple(axis.chunk_of(i) for axis, i in zip(grid.axes, index))
    return tuple(i // c for i, c in zip(index, arr.chunks))


def describe_chunk(arr: Array, coords: tuple[int, ...], stored: ChunkStored | None) -> str:
    """The chunk at ``coords`` in a line: its grid index and key, and once found, what is stored."""
    where = f"chunk [{', '.join(map(str, coords))}]"
    if stored is None:
        return f"{where}: finding what is stored…"
    holder = f" in shard {stored.key}" if arr.shards is not None and stored.key else \
        (f" ({stored.key})" if stored.key else "")
    if stored.error is not None:
        return f"{where}{holder}: cannot be read: {stored.error}"
    if stored.nbytes is None:
        return f"{where}{holder}: not stored, reads as the fill value"
    decoded = math.prod(arr.chunks) * arr.dtype.itemsize
    ratio = f", compression ratio {decoded / stored.nbytes:.3g}" if stored.nbytes else ""
    return f"{where}{holder}: {human_bytes(stored.nbytes)} stored{ratio}"


def stored_boxes_in_plane(state: ViewState, coords: Iterable[tuple[int, ...]]) -> list[tuple[int, int, int, int]]:
    """(r0, r1, c0, c1), in the plane's level-0 coordinates, of each stored object of the array
    shown (a chunk, or a shard where sharded) at grid ``coords`` that holds part of the plane:
    the chunks a version wrote, outlined where the plane shows them. Coordinates of another
    rank, or past the grid, are left out."""
    meta = state.array.meta
    ndim = len(meta.shape)
    y, x = state.y_dim, state.x_dim
    whole = {y, x} | ({state.channel_dim} if state.channel_dim is not None else set())
    grid_shape = meta.grid.grid_shape if meta.grid is not None else \
        tuple(-(-s // n) if n else 0 for s, n in zip(meta.shape, meta.stored_shape))
    out = []
    for c in coords:
        if len(c) != ndim or any(not 0 <= i < n for i, n in zip(c, grid_shape)):
            continue
        box = meta.grid.box(c) if meta.grid is not None else \
            tuple((i * n, min((i + 1) * n, s)) for i, n, s in zip(c, meta.stored_shape, meta.shape))
        if all(box[d][0] <= state.indices[d] < box[d][1] for d in range(ndim) if d not in whole):
            out.append((box[y][0], box[y][1], box[x][0], box[x][1]))
    return out
