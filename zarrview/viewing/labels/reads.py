"""Reading the label layers with the image: one request, one answer.

For a read of the image at some level, each visible :class:`~.layers.LabelLayer` is read at the
label level whose pixels match that level's in physical space (the coarsest as fine as it:
a label pyramid with fewer levels than the image is read at its coarsest, finer than the image),
over the same region, at the same slider positions carried through physical space
(``ome.pyramid``). Label axes are matched to the image's by name (else by position from the
right), so a ``zyx`` label over a ``czyx`` image works; a label axis of length 1 broadcasts.
Like the image, a label plane touches at most the view's chunk budget: where its pyramid is too
short for the zoom, it is sampled one element every few chunks (``image.planning.coarsening``).

The planning (pure arithmetic) is done on the GUI thread by :func:`plane_job`, which builds a
job that reads the image's selection, then each label plane, and colours them
(:func:`~.layers.colorize`) on the worker; :func:`split` takes the answer apart. Every visible
layer gets a plane in the answer (empty where its level cannot be read or does not reach the
region), so a tile always says which layers it was read with.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...scheduling import Context, Job, Warm, read_job
from ...zarrlib import Array, ReadCancelled, ZarrError
from ..image.levels import LevelView, exact
from ..image.planning import PlaneRead, chunks_between, coarsening, touched_chunks
from ..image.scene import LabelPlane, Tile
from ..image.state import ViewState
from ..ome import pyramid as arith
from ..ome.model import Level
from .layers import LabelLayer, colorize, recolour


@dataclass(frozen=True)
class LabelRead:
    """What to read of one layer: its level and selection, and where element 0 of the answer
    lies in level-0 coordinates of the image with its steps."""

    layer: LabelLayer
    level: Level | None
    selection: tuple[Any, ...] | None  # None: nothing to read (an empty plane)
    transpose: bool = False
    r0: float = 0.0
    c0: float = 0.0
    step_r: float = 1.0
    step_c: float = 1.0


@dataclass(frozen=True, eq=False)
class WithLabels:
    """The answer of a request with labels: the image's block and the label planes."""

    image: np.ndarray
    labels: tuple[LabelPlane, ...]


def plane_job(array: Array, selection: tuple[Any, ...], label: str, state: ViewState, target: LevelView,
              plan: PlaneRead, budget: int = 256) -> Job[Any]:
    """The job reading ``selection`` of the image (decoded as the state says) and the visible
    label layers over it (a plain read where none is shown); each layer's plane touches at most
    ``budget`` chunks (sampled more coarsely where it would not)."""
    decode = None if state.decoding is None else state.decoding.decode
    layers = state.visible_labels()
    if not layers:
        return read_job(array, selection, label=label, decode=decode)
    reads = tuple(plan_label(layer, state, target.index, plan, budget) for layer in layers)
    return Job(functools.partial(read_with_labels, array, selection, reads, decode), label)


def prefetch_labels(reads: list[Warm], state: ViewState, target: LevelView, budget: int) -> list[Warm]:
    """The prefetch of the image (``reads``) and, for each block of the plane shown (the ring
    around the view), the label planes over it: a pan into the ring finds the labels cached too."""
    out = list(reads)
    for warm in reads:
        sel = warm.selection
        ys, xs = sel[state.y_dim], sel[state.x_dim]
        same_plane = all(sel[d] == i for d, i in enumerate(target.indices) if d not in state.plane_dims)
        if not (same_plane and isinstance(ys, slice) and isinstance(xs, slice)):
            continue  # another plane (a neighbour): its labels are read when it is shown
        plan = PlaneRead(sel, ys.start or 0, ys.stop, xs.start or 0, xs.stop, ys.step or 1, xs.step or 1, 0)
        for layer in state.visible_labels():
            r = plan_label(layer, state, target.index, plan, budget)
            if r.selection is not None and r.level is not None and r.level.array is not None:
                out.append(Warm(r.level.array, r.selection, label=f"{layer.name} ring"))
    return out


def has_labels(tile: Tile, state: ViewState) -> bool:
    """Whether ``tile`` was read with every label layer the state shows."""
    return all(tile.label(layer.name) is not None for layer in state.visible_labels())


def split(data: Any, layers: tuple[LabelLayer, ...] = ()) -> tuple[Any, tuple[LabelPlane, ...]]:
    """(the image's values, the label planes in the colours of ``layers``) of an answer."""
    return (data.image, recolour(data.labels, layers)) if isinstance(data, WithLabels) else (data, ())


# -- planning (GUI thread) ------------------------------------------------------------------------
def plan_label(layer: LabelLayer, state: ViewState, level_index: int, plan: PlaneRead, budget: int = 256) -> LabelRead:
    dims = dim_map(layer, state)
    if dims is None:
        return LabelRead(layer, None, None)
    levels = state.pyramid or (Level(0, "", state.array, (1.0,) * state.array.ndim, (0.0,) * state.array.ndim),)
    img = next((lv for lv in levels if lv.index == level_index), levels[0])
    img0 = levels[0]
    y, x = state.y_dim, state.x_dim
    ly, lx = dims.index(y), dims.index(x)
    base = layer.levels[0]
    chosen = arith.choose_level(layer.levels, {ly: img.scale[y] / base.scale[ly], lx: img.scale[x] / base.scale[lx]})
    lab = next(lv for lv in layer.levels if lv.index == chosen)
    arr = lab.array
    assert arr is not None
    lab = replace(lab, shape=arr.shape)
    nd = arr.ndim
    region = [(0.0, 1.0)] * nd
    region[ly], region[lx] = (plan.r0, plan.r1), (plan.c0, plan.c1)
    (k0, k1), (j0, j1) = (arith.covering(lab, arith.map_region(_aligned(img, lab, dims), lab, tuple(region)))[a]
                          for a in (ly, lx))
    if k1 <= k0 or j1 <= j0:
        return LabelRead(layer, lab, None)
    step_r = max(1, round(plan.step_r * img.scale[y] / lab.scale[ly]))
    step_c = max(1, round(plan.step_c * img.scale[x] / lab.scale[lx]))
    cy, cx = arr.typical_chunks[ly], arr.typical_chunks[lx]
    if touched_chunks(k0, k1, step_r, cy) * touched_chunks(j0, j1, step_c, cx) > budget:  # a label pyramid too short:
        ky, kx = coarsening(chunks_between(k0, k1, cy), chunks_between(j0, j1, cx), max(1, budget))  # sampled
        step_r, step_c = max(step_r, ky * cy if ky > 1 else 1), max(step_c, kx * cx if kx > 1 else 1)
    selection: list[Any] = []
    for a, d in enumerate(dims):
        if a == ly:
            selection.append(slice(k0, k1, step_r))
        elif a == lx:
            selection.append(slice(j0, j1, step_c))
        elif d is None or d == state.channel_dim:
            selection.append(0)
        else:
            selection.append(arith.map_index(_aligned(img0, lab, dims), lab, a, state.indices[d]))
    edges = arith.map_region(lab, _aligned(img0, lab, dims), ((0.0, 1.0),) * nd)  # label pixel 0 in level 0
    (lo_r, hi_r), (lo_c, hi_c) = edges[ly], edges[lx]
    a_r, a_c = hi_r - lo_r, hi_c - lo_c
    return LabelRead(layer, lab, tuple(selection), ly > lx, exact(lo_r + a_r * k0), exact(lo_c + a_c * j0),
                     exact(a_r * step_r), exact(a_c * step_c))


def dim_map(layer: LabelLayer, state: ViewState) -> list[int | None] | None:
    """For each axis of the label image, the image's dimension it is (None: its own, read at
    index 0); None where the displayed dimensions have no label axis."""
    arr = layer.levels[0].array
    if arr is None:
        return None
    names = state.axis_names or state.array.dimension_names
    dims: list[int | None]
    if layer.axes and names and set(layer.axes) & set(names):
        dims = [names.index(n) if n in names else None for n in layer.axes]
    else:  # by position, from the right (a yx label over a cyx image)
        offset = state.array.ndim - arr.ndim
        dims = [a + offset if a + offset >= 0 else None for a in range(arr.ndim)]
    return dims if state.y_dim in dims and state.x_dim in dims else None


def _aligned(image: Level, label: Level, dims: list[int | None]) -> Level:
    """The image level ``image`` described along the label's axes (its own where unmatched)."""
    shape = image.array.shape if image.array is not None else image.shape
    return Level(image.index, image.path, None,
                 tuple(image.scale[d] if d is not None else s for d, s in zip(dims, label.scale)),
                 tuple(image.translation[d] if d is not None else t for d, t in zip(dims, label.translation)),
                 tuple(shape[d] if d is not None and d < len(shape) else n for d, n in zip(dims, label.shape)))


# -- reading (on a worker) -------------------------------------------------------------
def read_with_labels(array: Array, selection: tuple[Any, ...], reads: tuple[LabelRead, ...],
                     decode: Callable[[np.ndarray], np.ndarray] | None, ctx: Context) -> WithLabels:
    """The job's work: the image's selection (its progress and failures), then each
    label plane, coloured. A label that cannot be read gives an empty plane that says why (chunks
    that fail are background and counted); a cancel stops all."""
    image = array.read(selection, cancel=ctx.cancel, cache=ctx.cache, progress=ctx.progress, executor=ctx.executor,
                       failures=ctx.failures)
    if decode is not None:
        image = decode(image)
    planes = []
    for r in reads:
        values = np.zeros((0, 0), dtype=np.int64)
        error = None
        if r.selection is not None and r.level is not None and r.level.array is not None:
            lost: list[Any] = []
            try:
                values = np.asarray(r.level.array.read(r.selection, cancel=ctx.cancel, cache=ctx.cache,
                                                       executor=ctx.executor, failures=lost))
            except ReadCancelled:
                raise
            except ZarrError as e:  # the image shows without this layer
                error = str(e)
            if lost:
                error = f"{len(lost)} chunk{'s' if len(lost) > 1 else ''} could not be read: {lost[0].message}"
            if values.ndim != 2:
                values = np.zeros((0, 0), dtype=np.int64)
            elif r.transpose:
                values = values.T
        planes.append(LabelPlane(r.layer.name, values, colorize(values, r.layer), r.r0, r.c0, r.step_r, r.step_c,
                                 r.level.index if r.level is not None else 0, error, r.layer))
    return WithLabels(image, tuple(planes))
