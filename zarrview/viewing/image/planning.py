"""Which part of a plane to read, and how coarsely, so a view never reads more than a budget
of chunks. Pure arithmetic, so it is tested directly.

A region whose chunks fit the budget is read at full resolution. A larger one is previewed
by sampling one element every ``k`` chunks along each shown dimension: each sample lies in
a different chunk, so the preview touches at most the budget, and zooming in refines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PlaneRead:
    selection: tuple[Any, ...]
    #: the plane rectangle the result covers: rows r0:r1, columns c0:c1
    r0: int
    r1: int
    c0: int
    c1: int
    step_r: int
    step_c: int
    chunks: int

    @property
    def preview(self) -> bool:
        return self.step_r > 1 or self.step_c > 1


def chunks_between(lo: int, hi: int, chunk: int) -> int:
    return 0 if hi <= lo else (hi - 1) // chunk - lo // chunk + 1


def plan_plane(shape: tuple[int, ...], chunks: tuple[int, ...], dims: tuple[int, int], fixed: dict[int, int],
               region: tuple[int, int, int, int] | None, budget: int, channel: int | None = None) -> PlaneRead:
    """``dims`` = (row dim, column dim); ``region`` = (r0, r1, c0, c1) in plane coordinates;
    ``channel``: a dimension read whole (RGB(A) colour channels)."""
    ydim, xdim = dims
    r0, r1, c0, c1 = region if region is not None else (0, shape[ydim], 0, shape[xdim])
    r0, r1 = max(0, r0), min(shape[ydim], r1)
    c0, c1 = max(0, c0), min(shape[xdim], c1)
    r1, c1 = max(r0, r1), max(c0, c1)
    cy, cx = chunks[ydim], chunks[xdim]
    ny, nx = chunks_between(r0, r1, cy), chunks_between(c0, c1, cx)
    nc = 1 if channel is None else chunks_between(0, shape[channel], chunks[channel])
    ky, kx = coarsening(ny, nx, max(1, budget // nc))
    step_r = 1 if ky == 1 else ky * cy
    step_c = 1 if kx == 1 else kx * cx
    count = -(-ny // ky) * -(-nx // kx) * nc
    sel = _selection(len(shape), dims, fixed, (r0, r1, c0, c1), (step_r, step_c), channel)
    return PlaneRead(sel, r0, r1, c0, c1, step_r, step_c, count)


def coarsening(ny: int, nx: int, budget: int) -> tuple[int, int]:
    """(ky, kx): sample one chunk in every ``ky`` along the rows and ``kx`` along the columns,
    so that at most ``budget`` chunks are read, as evenly in both directions as the grid allows.

    Closed form, not a search one step at a time: a declared shape of 2**62 has about 10**18
    chunks per row, and counting up to the right step would hang the GUI thread. The largest
    per-dimension sample count ``m`` that fits is found by bisection (the samples ``m`` allows
    never decrease as ``m`` grows), in Python integers, exact at any size; what that common cap
    leaves of the budget then goes to the longer dimension."""
    if ny * nx <= budget:
        return 1, 1

    def samples(m: int) -> int:
        return -(-ny // -(-ny // m)) * -(-nx // -(-nx // m))

    lo, hi = 1, max(ny, nx)  # samples(1) == 1 fits any budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if samples(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    ky, kx = -(-ny // lo), -(-nx // lo)
    # spend what the common cap left of the budget, on the dimension with more chunks first
    if ny >= nx:
        ky = -(-ny // max(1, budget // -(-nx // kx)))
        kx = -(-nx // max(1, budget // -(-ny // ky)))
    else:
        kx = -(-nx // max(1, budget // -(-ny // ky)))
        ky = -(-ny // max(1, budget // -(-nx // kx)))
    return ky, kx


def plan_view(shape: tuple[int, ...], chunks: tuple[int, ...], dims: tuple[int, int], fixed: dict[int, int],
              region: tuple[float, float, float, float] | None, screen_scale: tuple[float, float], budget: int,
              channel: int | None = None) -> PlaneRead:
    """What to read for a view: the whole plane at full resolution when it fits the budget;
    else the visible ``region`` at full resolution, widened to whole chunks (reading them costs
    the same and makes small pans free) when its chunks fit; else a preview of the visible
    region only, no finer than the screen shows (``screen_scale``: screen pixels per data
    pixel), its samples aligned to the step so that panning does not make them shimmer."""
    ydim, xdim = dims
    whole = plan_plane(shape, chunks, dims, fixed, None, budget, channel)
    if not whole.preview or region is None:
        return whole
    rows, cols = shape[ydim], shape[xdim]
    r0, r1 = max(0, math.floor(region[0])), min(rows, math.ceil(region[1]))
    c0, c1 = max(0, math.floor(region[2])), min(cols, math.ceil(region[3]))
    if r1 <= r0 or c1 <= c0:  # nothing of the plane is visible: keep the whole-plane preview
        return whole
    cy, cx = chunks[ydim], chunks[xdim]
    exact = plan_plane(shape, chunks, dims, fixed, (r0 // cy * cy, -(-r1 // cy) * cy, c0 // cx * cx, -(-c1 // cx) * cx),
                       budget, channel)
    if not exact.preview:
        return exact
    coarse = plan_plane(shape, chunks, dims, fixed, (r0, r1, c0, c1), budget, channel)
    step_r = max(coarse.step_r, _screen_step(screen_scale[0]))
    step_c = max(coarse.step_c, _screen_step(screen_scale[1]))
    aligned = _strided(shape, chunks, dims, fixed, (r0 // step_r * step_r, r1, c0 // step_c * step_c, c1),
                       (step_r, step_c), channel)
    if aligned.chunks <= max(1, budget):
        return aligned
    return _strided(shape, chunks, dims, fixed, (r0, r1, c0, c1), (step_r, step_c), channel)


def _screen_step(scale: float) -> int:
    """Data elements per screen pixel: sampling finer than that shows nothing more."""
    return max(1, math.floor(1.0 / scale)) if scale > 0 else 1


def _strided(shape: tuple[int, ...], chunks: tuple[int, ...], dims: tuple[int, int], fixed: dict[int, int],
             region: tuple[int, int, int, int], steps: tuple[int, int], channel: int | None) -> PlaneRead:
    ydim, xdim = dims
    r0, r1, c0, c1 = region
    step_r, step_c = steps
    sel = _selection(len(shape), dims, fixed, region, steps, channel)
    touched = touched_chunks(r0, r1, step_r, chunks[ydim]) * touched_chunks(c0, c1, step_c, chunks[xdim])
    nc = 1 if channel is None else chunks_between(0, shape[channel], chunks[channel])
    return PlaneRead(sel, r0, r1, c0, c1, step_r, step_c, touched * nc)


def _selection(ndim: int, dims: tuple[int, int], fixed: dict[int, int], region: tuple[int, int, int, int],
               steps: tuple[int, int], channel: int | None) -> tuple[Any, ...]:
    """Rows and columns strided over ``region``, the colour dimension whole, the rest fixed."""
    r0, r1, c0, c1 = region
    out: list[Any] = []
    for d in range(ndim):
        if d == dims[0]:
            out.append(slice(r0, r1, steps[0]))
        elif d == dims[1]:
            out.append(slice(c0, c1, steps[1]))
        elif d == channel:
            out.append(slice(None))
        else:
            out.append(fixed.get(d, 0))
    return tuple(out)


def touched_chunks(lo: int, hi: int, step: int, chunk: int) -> int:
    """Chunks that samples lo, lo + step, ... below hi fall in (each in its own when step >= chunk)."""
    samples = max(0, -(-(hi - lo) // step))
    if step >= chunk:
        return samples
    return chunks_between(lo, hi, chunk)
