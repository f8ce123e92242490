"""Orthogonal views: the XZ and YZ sections through a point of the plane shown.

The XY plane on screen is the state's plane; a third dimension, "Z", is one of those on a
slider (:func:`z_choices`; the first by default, one named ``z`` first). Through the point
(row, column) of the plane, the XZ section holds Z along its rows and the plane's columns along
its columns (``array[..., :, row, :]`` with every other index as the sliders say), the YZ
section the plane's rows along its rows and Z along its columns, so that each shares one axis
with the plane and can be drawn beside it, linked.

Sections are read at a bounded resolution: from an OME pyramid, the finest level whose
section extents (rows, columns and Z) are all at most :data:`MAX_SECTION_PX`, else the coarsest
level; then, in that level, every ``k``-th element along an axis longer than
:data:`MAX_SECTION_PX` (so a section is at most about that many pixels along each axis), and
more coarsely where the section would otherwise touch more than a chunk budget (a Z of a
thousand single-plane chunks). They cover the whole extent of their axes, so that panning the
plane never has to read them again; they are drawn through the plane's own levels and colour
map, CF-decoded like the plane (``ViewState.decoding``), and in composite mode as the composite
of the channels.

:func:`request` builds the job (both sections in one read, on a worker); :func:`apply` turns its
answer into :class:`Sections`, each placed in level-0 coordinates of the plane (and in level-0
indices along Z) so that it lines up with the plane whatever the level read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...scheduling import Answer, Context, Job
from ...zarrlib import Array
from .axes import dim_names
from .channels import composite
from .contrast import displayable
from .pixels import rgba
from .planning import coarsening, chunks_between
from .readout import request_label
from .state import ViewState

#: the most pixels a section has along any of its axes (a longer axis is read with a stride)
MAX_SECTION_PX = 1024
#: the most chunks one section may touch; beyond, it is sampled one element every few chunks
SECTION_CHUNK_BUDGET = 1024
#: dimension names taken for Z before any other
Z_NAMES = ("z", "depth", "level", "lev", "plev", "height")


@dataclass(frozen=True)
class Section:
    """What to read of one section and where it lies: element ``(i, j)`` of the image drawn
    covers ``x0 + j * dx`` to ``x0 + (j + 1) * dx`` across and ``y0 + i * dy`` down, in the
    panel's coordinates (level-0 rows or columns of the plane, level-0 indices along Z)."""

    selection: tuple[Any, ...]
    #: the dimension along the image's rows and along its columns
    rows_dim: int
    cols_dim: int
    #: the stride along the rows and along the columns, in elements of the level read
    step_r: int
    step_c: int
    x0: float
    y0: float
    dx: float
    dy: float


@dataclass(frozen=True)
class SectionRequest:
    """Both sections through ``point``: the job that reads them and what drawing them needs."""

    job: Job[Any]
    xz: Section
    yz: Section
    #: (row, column, z) in level-0 indices
    point: tuple[int, int, int]
    z_dim: int
    level: int
    #: what the sections' values depend on: a request with the same key reads nothing new
    key: tuple[Any, ...]
    #: the view they are read for (their readout names its indices)
    state: ViewState

    @property
    def read(self) -> Hashable:
        return self.key


@dataclass(frozen=True, eq=False)
class SectionAsk:
    """The state of the sections: the view, the point (row, column, z in level-0 indices)
    and the dimension on the panels' Z axis."""

    state: ViewState
    point: tuple[int, int, int]
    z_dim: int


@dataclass(frozen=True, eq=False)
class Sections:
    """What the side panels draw: each section's image (displayable numbers, or RGB) with its
    rectangle ``(x, y, width, height)`` in the panel's coordinates, or ``message`` instead."""

    xz: np.ndarray | None = None
    yz: np.ndarray | None = None
    xz_rect: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)
    yz_rect: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)
    status: str = ""
    message: str | None = None
    #: the values read (CF-decoded where the view decodes) of the XZ and YZ sections, for the
    #: readout under the cursor, and the request they answer
    values: tuple[np.ndarray, np.ndarray] | None = None
    request: SectionRequest | None = None
    #: only ``status`` is new (reading, or cancelled): the sections drawn stay
    kept: bool = False


class SectionsModel:
    """The sections' view model, run by a driver (``scheduling.Driver``): an ask whose sections
    are drawn reads nothing; the newest answer becomes what the panels draw."""

    def __init__(self) -> None:
        #: the request whose sections are drawn (None: none, or another array's)
        self.drawn: SectionRequest | None = None

    def forget(self) -> None:
        """Nothing drawn counts any more (another array, other axes, another Z)."""
        self.drawn = None

    def request(self, ask: SectionAsk) -> SectionRequest | None:
        req = request(ask.state, ask.point, ask.z_dim)
        return None if self.drawn is not None and req.key == self.drawn.key else req

    def waiting(self, req: SectionRequest | None) -> Sections | None:
        return None if req is None else Sections(status=f"Reading the {req.job.label}…", kept=True, request=req)

    def apply(self, req: SectionRequest, answer: Answer[Any]) -> Sections:
        got = apply(req, answer)
        if got is None:  # cancelled: what is drawn stays
            return Sections(status="Sections not read (cancelled)", kept=True, request=req)
        self.drawn = req if got.xz is not None else None
        return got


def clipped(state: ViewState, point: tuple[int, int, int], z_dim: int) -> tuple[int, int, int]:
    """``point`` (row, column, z) moved inside the array where it lies outside."""
    shape = state.array.shape
    return (_clip(point[0], shape[state.y_dim]), _clip(point[1], shape[state.x_dim]), _clip(point[2], shape[z_dim]))


def z_choices(state: ViewState) -> list[int]:
    """The dimensions a section can run along: those on a slider (neither displayed nor colour),
    longer ones first in the array's order, so a length-1 dimension is never the default."""
    free = [d for d in range(state.array.ndim) if d not in state.plane_dims]
    return sorted(free, key=lambda d: state.array.shape[d] <= 1)


def default_z(state: ViewState) -> int | None:
    """The Z of the sections: a dimension named like a depth, else the first on a slider (not the
    channel axis while there is another)."""
    choices = z_choices(state)
    if not choices:
        return None
    names = [n.lower() for n in dim_names(state.array, state.axis_names)]
    named = [d for d in choices if names[d] in Z_NAMES and state.array.shape[d] > 1]
    plain = [d for d in choices if d != state.channel_axis]
    return (named or plain or choices)[0]


@dataclass(frozen=True)
class Proportions:
    """The size of a level-0 element along rows, columns and Z, to draw the sections in
    proportion; ``z_unit`` names Z's unit where it is the plane's (a depth in µm beside µm)."""

    rows: float = 1.0
    cols: float = 1.0
    z: float = 1.0
    z_unit: str | None = None


def proportions(state: ViewState, z_dim: int, units: Sequence[str | None] | None = None) -> Proportions:
    """Sizes from the pyramid's level 0 (OME scale, a GeoZarr pyramid's cell sizes). Z is drawn
    in physical proportion only where ``units`` (one per dimension) give it the plane's unit;
    otherwise (a time, a band, units unknown) one Z step is as long as the plane's finer pixel."""
    if not state.pyramid:
        return Proportions()
    scale = state.pyramid[0].scale
    sy, sx, sz = (float(scale[d]) if d < len(scale) else 1.0 for d in (state.y_dim, state.x_dim, z_dim))
    if not all(s > 0 and math.isfinite(s) for s in (sy, sx, sz)):
        return Proportions()
    unit = units[z_dim] if units is not None and len(units) == state.array.ndim else None
    if unit and unit == units[state.y_dim] == units[state.x_dim]:  # type: ignore[index]
        return Proportions(sy, sx, sz, unit)
    return Proportions(sy, sx, min(sy, sx))


def request(state: ViewState, point: tuple[int, int, int], z_dim: int, *, max_px: int = MAX_SECTION_PX,
            budget: int = SECTION_CHUNK_BUDGET) -> SectionRequest:
    """The read of the XZ and YZ sections through ``point`` = (row, column, z) of the plane, in
    level-0 indices (clipped to the plane); ``z_dim`` is a dimension on a slider."""
    if z_dim in state.plane_dims or not 0 <= z_dim < state.array.ndim:
        raise ValueError(f"dimension {z_dim} is not on a slider")
    y, x = state.y_dim, state.x_dim
    level, arr, place = _level(state, (y, x, z_dim), max_px)
    point = clipped(state, point, z_dim)
    indices = list(state.indices)
    indices[y], indices[x], indices[z_dim] = point
    at = [_clip(place.index(d, i), arr.shape[d]) for d, i in enumerate(indices)]
    xz = _section(arr, state, at, (z_dim, x), place, max_px, budget)
    yz = _section(arr, state, at, (y, z_dim), place, max_px, budget)
    decoding = state.decoding
    decode = None if decoding is None else decoding.decode
    display = _display(state)
    label = f"sections {request_label(arr.path, xz.selection, arr.shape)} and {request_label(arr.path, yz.selection, arr.shape)}"

    def work(ctx: Context) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        values = tuple(_oriented(_read(arr, s, ctx, decode), s, state.channel_dim) for s in (xz, yz))
        return (display(values[0]), display(values[1])), (values[0], values[1])

    key = (id(arr), xz.selection, yz.selection, decoding is not None, state.complex_mode, state.composite,
           state.channels if state.composite else ())
    return SectionRequest(Job(work, label), xz, yz, point, z_dim, level, key, state)


def apply(req: SectionRequest, answer: Answer[Any]) -> Sections | None:
    """The sections to draw from the answer to ``req``; None for a stale or cancelled answer (a
    newer point is being read, or the user stopped it: what is drawn stays)."""
    if answer.stale or answer.cancelled:
        return None
    if answer.error is not None:
        return Sections(message=f"Cannot read the {req.job.label}: {answer.error}", status=f"Error: {answer.error}")
    assert answer.value is not None
    (xz, yz), values = answer.value
    status = f"Read the {req.job.label} in {answer.seconds * 1000:.0f} ms"
    if req.level:
        status += f" (pyramid level {req.level})"
    if answer.failures:
        status += f"; {len(answer.failures)} chunks could not be read"
    return Sections(xz, yz, _rect(req.xz, xz), _rect(req.yz, yz), status, values=values, request=req)


# -- planning -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Place:
    """Where the level read lies in level 0: ``level0 = a * level + b`` per dimension (edges)."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    index: Callable[[int, int], int]


def _level(state: ViewState, dims: tuple[int, int, int], max_px: int) -> tuple[int, Array, _Place]:
    """(level index, its array, its placement): the finest level whose extents along ``dims``
    fit ``max_px``, else the coarsest; level 0 of a plain array."""
    ndim = state.array.ndim
    if not state.pyramid:
        return 0, state.array, _Place((1.0,) * ndim, (0.0,) * ndim, lambda d, i: i)
    from ..ome import pyramid as arith  # the OME model is only needed for pyramids

    levels = [lv for lv in state.pyramid if lv.array is not None]
    fits = [lv for lv in levels if all(lv.array.shape[d] <= max_px for d in dims)]
    chosen = fits[0] if fits else max(levels, key=lambda lv: math.prod(lv.scale[d] for d in dims))
    level0 = levels[0]
    edges = arith.map_region(chosen, level0, tuple((0.0, 1.0) for _ in range(ndim)))
    a = tuple(hi - lo for lo, hi in edges)
    b = tuple(lo for lo, _ in edges)
    return chosen.index, chosen.array, _Place(a, b, lambda d, i: arith.map_index(level0, chosen, d, i))


def _section(arr: Array, state: ViewState, at: list[int], dims: tuple[int, int], place: _Place, max_px: int,
             budget: int) -> Section:
    """One section along ``dims`` (rows, columns) through ``at`` (the level's indices), strided to
    ``max_px`` and to ``budget`` chunks."""
    rd, cd = dims
    shape, chunks = arr.shape, arr.typical_chunks
    nr, nc = shape[rd], shape[cd]
    channel = state.channel_dim
    per = 1 if channel is None else chunks_between(0, shape[channel], chunks[channel])
    kr, kc = coarsening(chunks_between(0, nr, chunks[rd]), chunks_between(0, nc, chunks[cd]), max(1, budget // per))
    step_r = max(-(-nr // max_px), kr * chunks[rd] if kr > 1 else 1)
    step_c = max(-(-nc // max_px), kc * chunks[cd] if kc > 1 else 1)
    sel: list[Any] = []
    for d in range(arr.ndim):
        if d == rd:
            sel.append(slice(0, nr, step_r))
        elif d == cd:
            sel.append(slice(0, nc, step_c))
        elif d == channel:
            sel.append(slice(None))
        else:
            sel.append(at[d])
    # the panel's x runs along the columns' dimension, its y along the rows'
    return Section(tuple(sel), rd, cd, step_r, step_c, place.b[cd], place.b[rd], place.a[cd] * step_c,
                   place.a[rd] * step_r)


def _clip(i: int, n: int) -> int:
    return min(max(0, int(i)), max(0, n - 1))


# -- on the worker -------------------------------------------------------------------------------
def _read(arr: Array, s: Section, ctx: Context, decode: Callable[[np.ndarray], np.ndarray] | None) -> np.ndarray:
    data = arr.read(s.selection, cancel=ctx.cancel, cache=ctx.cache, executor=ctx.executor, failures=ctx.failures)
    return data if decode is None else decode(data)


def _oriented(data: np.ndarray, s: Section, channel: int | None) -> np.ndarray:
    """The block read as (rows, columns[, channels]), whatever the order of the dimensions."""
    kept = sorted(d for d in (s.rows_dim, s.cols_dim, channel) if d is not None)
    order = [kept.index(s.rows_dim), kept.index(s.cols_dim)] + ([kept.index(channel)] if channel is not None else [])
    return np.ascontiguousarray(np.transpose(data, order))


def _display(state: ViewState) -> Callable[[np.ndarray], np.ndarray]:
    """How a section's values are drawn: as the plane's are (displayable numbers, or the
    composite of the channels in their colours)."""
    mode, channels, comp = state.complex_mode, state.channels, state.composite

    def show(values: np.ndarray) -> np.ndarray:
        image = displayable(values, mode)
        return composite(image, channels) if comp else np.ascontiguousarray(image)

    return show


def section_pixels(image: np.ndarray, composite_image: bool, levels: tuple[float, float],
                   table: np.ndarray | None) -> np.ndarray:
    """A section's image as (rows, columns, 4) RGBA bytes, drawn as the plane is drawn
    (``pixels.rgba``: the plane's levels and lookup table, NaN in the missing colour), or, for
    the composite of the channels (already in colour, values in [0, 1]), as those colours."""
    if composite_image:
        return rgba(np.round(np.clip(image, 0.0, 1.0) * 255).astype(np.uint8), (0.0, 255.0), None)
    return rgba(image, levels, table)


def _rect(s: Section, image: np.ndarray) -> tuple[float, float, float, float]:
    rows, cols = image.shape[:2]
    return float(s.x0), float(s.y0), float(cols * s.dx), float(rows * s.dy)
