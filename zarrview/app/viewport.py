"""Which part of a plane to read, and how coarsely, so a view never reads more than a budget
of chunks. Pure arithmetic (no Qt), so it is tested directly.

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
    budget = max(1, budget // nc)
    ky = kx = 1
    while math.ceil(ny / ky) * math.ceil(nx / kx) > max(1, budget):
        # coarsen the dimension with more chunks per sample first, keeping samples square-ish
        if math.ceil(ny / ky) >= math.ceil(nx / kx):
            ky += 1
        else:
            kx += 1
    step_r = 1 if ky == 1 else ky * cy
    step_c = 1 if kx == 1 else kx * cx
    sel: list[Any] = []
    for d in range(len(shape)):
        if d == ydim:
            sel.append(slice(r0, r1, step_r))
        elif d == xdim:
            sel.append(slice(c0, c1, step_c))
        elif d == channel:
            sel.append(slice(None))
        else:
            sel.append(fixed.get(d, 0))
    count = math.ceil(ny / ky) * math.ceil(nx / kx) * nc
    return PlaneRead(tuple(sel), r0, r1, c0, c1, step_r, step_c, count)
