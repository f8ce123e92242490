"""Reading a plate's wells on a worker of the shared pool: one thumbnail per well, or why there is none.

Each well is drawn from the lowest-resolution level of its first field, one 2-D plane (t = 0, the
middle z, channel 0), strided within the per-well chunk budget and to its cell, then resampled to
fill the cell with the physical aspect of its pixels. ``read_batch`` is the work of the job
of a batch of wells; ``mosaic.PlateModel`` chains the batches and assembles the mosaic.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field as dataclass_field
from typing import Any

import numpy as np

from ...scheduling import Context
from ...zarrlib import CancelToken, ChunkCache, ChunkFailure, Group, NodeNotFoundError, ReadCancelled, ZarrError
from ..image.contrast import displayable
from ..image.planning import plan_plane, touched_chunks
from ..ome import OmeImage, OmeWell, PlateWell, detect

Missing = tuple[int, int, str]  # (row index, column index, why the well is missing from the mosaic)


@dataclass(frozen=True)
class Thumb:
    """One well drawn: what was read (``values``, raw, as the array stores them) and where it sits."""

    row: int
    column: int
    well: str                       # "B/3"
    field: str                      # the field's path in the well ("0")
    level: int                      # the level read, of ``levels``
    levels: int
    shape: tuple[int, ...]          # that level's shape
    selection: tuple[Any, ...]      # what was read of it
    step: tuple[int, int]           # rows and columns between samples
    dims: tuple[int, int]           # (row dim, column dim) of the level
    chunks: int                     # chunks the read touched (at most the budget)
    values: np.ndarray              # (h, w)
    tile: np.ndarray = dataclass_field(repr=False)   # float32, resampled to fit the cell
    offset: tuple[int, int] = (0, 0)       # the tile's top-left within its cell

    @property
    def path(self) -> str:
        return f"{self.well}/{self.field}"


@dataclass(frozen=True)
class Batch:
    """What a batch request answers: a thumbnail or a (row, column, reason) per well read, and
    whether a cancel stopped it before its last well."""

    wells: list[Thumb | Missing]
    cancelled: bool = False


def _plane_dims(image: OmeImage, ndim: int) -> tuple[int, int, int | None]:
    """(row dim, column dim, z dim or None) from the axes: the last two spatial axes."""
    axes = image.first.axes
    if len(axes) == ndim:
        space = [i for i, a in enumerate(axes) if a.type == "space" or (a.type is None and a.name in ("x", "y", "z"))]
        if len(space) >= 2:
            return space[-2], space[-1], space[-3] if len(space) >= 3 else None
    return ndim - 2, ndim - 1, None


def _fit(values: np.ndarray, cell: int, pixel: tuple[float, float]) -> tuple[np.ndarray, tuple[int, int]]:
    """``values`` resampled (nearest) to fill a cell, keeping the physical aspect of its pixels."""
    h, w = values.shape
    ph, pw = ((p if math.isfinite(p) and p > 0 else 1.0) for p in pixel)
    extent_h, extent_w = h * ph, w * pw
    f = cell / max(extent_h, extent_w)
    out_h, out_w = max(1, min(cell, round(extent_h * f))), max(1, min(cell, round(extent_w * f)))
    rows = np.minimum(h - 1, ((np.arange(out_h) + 0.5) * h / out_h).astype(np.intp))
    cols = np.minimum(w - 1, ((np.arange(out_w) + 0.5) * w / out_w).astype(np.intp))
    tile = np.asarray(displayable(values), dtype=np.float32)[np.ix_(rows, cols)]
    return tile, ((cell - out_h) // 2, (cell - out_w) // 2)


def read_well(group: Group, well: PlateWell, budget: int, cell: int, cancel: CancelToken | None = None,
              cache: ChunkCache | None = None, executor: ThreadPoolExecutor | None = None) -> Thumb | str:
    """The thumbnail of one well, or why there is none, decoded on ``executor`` (the job's).
    Cancellation propagates."""
    try:
        return _read_well(group, well, budget, cell, cancel, cache, executor)
    except ReadCancelled:
        raise
    except ZarrError as e:
        return str(e)
    except Exception as e:  # noqa: BLE001  (a bug in one well must not lose the plate)
        return f"{type(e).__name__}: {e}"


def _read_well(group: Group, well: PlateWell, budget: int, cell: int, cancel: CancelToken | None,
               cache: ChunkCache | None, executor: ThreadPoolExecutor | None) -> Thumb | str:
    try:
        node = group[well.path]
    except NodeNotFoundError:
        return f"no group at {well.path}"
    if not isinstance(node, Group):
        return f"{well.path} is not a group"
    found = detect(node, labels=False)
    if not isinstance(found, OmeWell):
        return f"{well.path} has no well metadata"
    if not found.images:
        return f"the well {well.path} lists no fields"
    fld = found.images[0].path
    try:
        image_group = node[fld]
    except NodeNotFoundError:
        return f"its first field {well.path}/{fld} does not exist"
    image = detect(image_group, labels=False) if isinstance(image_group, Group) else None
    if not isinstance(image, OmeImage) or not image.multiscales:
        return f"its first field {well.path}/{fld} is not an OME image"
    levels = image.first.levels
    readable = [lv for lv in levels if lv.array is not None and len(lv.shape) >= 2]
    if not readable:
        why = "; ".join(lv.error for lv in levels if lv.error) or "it has no 2-D level"
        return f"no level of {well.path}/{fld} can be read: {why}"
    level = min(reversed(readable), key=lambda lv: math.prod(lv.shape))  # the coarsest; the last on ties
    arr = level.array
    assert arr is not None
    ydim, xdim, zdim = _plane_dims(image, arr.ndim)
    fixed = {d: 0 for d in range(arr.ndim) if d not in (ydim, xdim)}
    if zdim is not None:
        fixed[zdim] = arr.shape[zdim] // 2
    if any(arr.shape[d] == 0 for d in range(arr.ndim)):
        return f"{well.path}/{fld} level {level.index} is empty: shape {arr.shape}"
    chunks = arr.typical_chunks
    plan = plan_plane(arr.shape, chunks, (ydim, xdim), fixed, None, budget)
    h, w = arr.shape[ydim], arr.shape[xdim]
    step = (max(plan.step_r, -(-h // cell)), max(plan.step_c, -(-w // cell)))
    sel = tuple(slice(0, h, step[0]) if d == ydim else slice(0, w, step[1]) if d == xdim else fixed[d]
                for d in range(arr.ndim))
    failures: list[ChunkFailure] = []
    values = np.asarray(arr.read(sel, cancel=cancel, cache=cache, executor=executor, failures=failures))
    if failures:
        n = len(failures)
        return f"{n} chunk{'s' if n > 1 else ''} of {well.path}/{fld} level {level.index} could not be read: " \
               f"{failures[0].message}"
    if ydim > xdim:
        values = values.T
    scale = level.scale if len(level.scale) == arr.ndim else (1.0,) * arr.ndim
    tile, offset = _fit(values, cell, (abs(scale[ydim]) * step[0], abs(scale[xdim]) * step[1]))
    touched = touched_chunks(0, h, step[0], chunks[ydim]) * touched_chunks(0, w, step[1], chunks[xdim])
    return Thumb(well.row, well.column, well.path, fld, level.index, len(levels), tuple(arr.shape), sel, step,
                 (ydim, xdim), touched, values, tile, offset)


def read_batch(group: Group, wells: tuple[PlateWell, ...], budget: int, cell: int, before: int, total: int,
               ctx: Context) -> Batch:
    """The work of a job for a batch of wells: progress in wells of the whole plate
    (``before`` of ``total`` done already), the cancel token checked before every well."""
    out: list[Thumb | Missing] = []
    try:
        for i, well in enumerate(wells):
            ctx.cancel.raise_if_cancelled()
            got = read_well(group, well, budget, cell, ctx.cancel, ctx.cache, ctx.executor)
            out.append((well.row, well.column, got) if isinstance(got, str) else got)
            if ctx.progress is not None:
                ctx.progress(before + i + 1, total)
    except ReadCancelled:
        if not out:
            raise
        return Batch(out, cancelled=True)  # the wells read so far are kept
    return Batch(out)
