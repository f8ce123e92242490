"""B taken from A itself: the same array at another channel or time, its stored values against
its decoded ones, or another level of its pyramid.

A second array picked in the tree is one way to get a pair; the others a person asks of one
array are derived here from A's view state, so that the pane beside A shows them through the
same view and the difference takes them through the same plane job:

- **another index** along a dimension that is not displayed (a channel, a time, a depth): B is
  A held at that index there, following A along every other dimension;
- **stored against decoded** values of a CF-packed or masked array: B is A with the other
  choice of ``raw``;
- **another level** of a pyramid: B is A's pyramid read at that level. Both views draw in
  level-0 space, so the side-by-side pair is linked by level-0 position as any zoom of one image
  is. Their difference is taken on A's level's grid (A's picked level, else level 0): each of
  A's pixels is compared with the pixel of B's level whose centre lies nearest its own in
  physical space (the OME transforms, ``physical = scale · i + translation``), and the
  difference is drawn back in level-0 space, each level-0 pixel taking the value of the
  pixel of A's level that holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...scheduling import Context, Job
from ...zarrlib import Array
from ..cf.coords import CoordAxis
from ..decision import Kind, Shown
from ..image.axes import dim_names
from ..image.state import ViewState
from .difference import PLANE_ELEMENTS, PlaneDifference, plane_job
from .errors import CompareError
from .linking import AxisWindow, GridAxis, PlaneMatch, Side, match_dims, match_plane, nearest_indices

#: what B is: the array picked in the tree, or A itself at another index, value choice or level
TREE, INDEX, STORED, LEVEL = "tree", "index", "stored", "level"


@dataclass(frozen=True)
class Against:
    """One way to take B: ``kind`` (``TREE``, ``INDEX``, ``STORED``, ``LEVEL``), the dimension
    held (``INDEX``), how many places B can be taken at (indices, levels) and the words for it."""

    kind: str
    label: str
    dim: int | None = None
    count: int = 0

    @property
    def derived(self) -> bool:
        """Whether B comes from A (else it is picked in the tree)."""
        return self.kind != TREE

    @property
    def name(self) -> str:
        """How a saved view names it: ``tree``, ``stored``, ``level`` or ``index:2``."""
        return f"{INDEX}:{self.dim}" if self.kind == INDEX else self.kind


#: B picked in the tree, the pane's first way
PICKED = Against(TREE, "The array picked in the tree")


def choices(a: ViewState) -> tuple[Against, ...]:
    """The ways to take B that A's view offers: the tree always; A at another index along each
    dimension that is not displayed and has more than one; its other values where it is
    CF-decoded (or shown stored); another level where it is a pyramid of several."""
    out = [PICKED]
    names = dim_names(a.array, a.axis_names)
    shown = {a.y_dim, a.x_dim, a.channel_dim}
    for d, n in enumerate(a.array.shape):
        if d not in shown and n > 1:
            out.append(Against(INDEX, f"A at another {names[d]}", d, n))
    if a.cf is not None and a.cf.coding.active:
        out.append(Against(STORED, "A's decoded values" if a.raw else "A's stored values"))
    levels = readable_levels(a)
    if len(levels) > 1:
        out.append(Against(LEVEL, "A at another level", None, len(levels)))
    return tuple(out)


def chosen(a: ViewState, name: str) -> Against:
    """The way named ``name`` (``Against.name``) among A's ``choices``; ``PICKED`` where A
    offers none of that name."""
    return next((c for c in choices(a) if c.name == name), PICKED)


#: a derived B as a saved view or command line names it: ``stored``, ``level@1``, ``index:2@5``
SPEC = re.compile(r"^(?:(?P<stored>stored)|level@(?P<level>\d+)|index:(?P<dim>\d+)@(?P<index>\d+))$")


def spec(against: Against, at: int) -> str:
    """``against`` at ``at`` in the words of ``SPEC``."""
    if against.kind == STORED:
        return STORED
    if against.kind == LEVEL:
        return f"{LEVEL}@{at}"
    if against.kind == INDEX:
        return f"{INDEX}:{against.dim}@{at}"
    raise CompareError("B is picked in the tree, not taken from A")


def parse_spec(text: str) -> tuple[str, int | None]:
    """``(Against.name, at)`` of a ``SPEC``; CompareError naming what is wrong."""
    m = SPEC.match(text.strip())
    if m is None:
        raise CompareError(f"{text!r} is not a way to take B from A: stored, level@N or index:DIM@N")
    if m["stored"]:
        return STORED, None
    if m["level"] is not None:
        return LEVEL, int(m["level"])
    return f"{INDEX}:{int(m['dim'])}", int(m["index"])


def still_derived(a: ViewState, against: Against, b: ViewState) -> bool:
    """Whether ``b`` is still A taken as ``against`` says (A's node, axes and offer unchanged)."""
    if b.array is not a.array or (b.y_dim, b.x_dim, b.channel_dim) != (a.y_dim, a.x_dim, a.channel_dim):
        return False
    if against.kind == STORED and b.raw == a.raw:
        return False
    return any(c.name == against.name for c in choices(a))


def shown_at(shown: Shown, b: ViewState) -> Shown:
    """A's decision, to draw B from: an image or pyramid at B's level."""
    if b.level is not None and shown.kind in (Kind.IMAGE, Kind.LABEL_IMAGE, Kind.PYRAMID):
        return replace(shown, level=b.level)
    return shown


def level_of(a: ViewState, arr: Array) -> int | None:
    """Which readable level of A's pyramid ``arr`` is (its position, as ``b_state`` takes it),
    or None: a level picked in the tree is compared as that level of A, by position."""
    for k, lv in enumerate(readable_levels(a)):
        if lv.array is arr or (lv.array.store is arr.store and lv.array.path == arr.path):
            return k
    return None


def readable_levels(a: ViewState) -> list[Any]:
    return [lv for lv in a.pyramid or () if lv.array is not None]


def default_at(a: ViewState, against: Against) -> int:
    """Where B is first taken: the next index (or level) after A's, else the one before."""
    if against.kind == INDEX and against.dim is not None:
        i = a.indices[against.dim]
        return i + 1 if i + 1 < against.count else max(0, i - 1)
    if against.kind == LEVEL:
        levels = readable_levels(a)
        mine = next((k for k, lv in enumerate(levels) if lv.index == a.level), 0)
        return mine + 1 if mine + 1 < len(levels) else max(0, mine - 1)
    return 0


def b_state(a: ViewState, against: Against, at: int) -> ViewState:
    """B's view as derived from A's: held at ``at`` along the dimension, the other values, or
    level ``at`` (the ``at``-th readable one) of the pyramid. Its own contrast is found anew."""
    if against.kind == INDEX and against.dim is not None:
        indices = list(a.indices)
        indices[against.dim] = max(0, min(at, a.array.shape[against.dim] - 1))
        return a.with_(indices=tuple(indices), contrast=None)
    if against.kind == STORED:
        return a.with_(raw=not a.raw, contrast=None)
    if against.kind == LEVEL:
        levels = readable_levels(a)
        if not levels:
            raise CompareError(f"{a.array.path} is not a pyramid")
        return a.with_(level=levels[max(0, min(at, len(levels) - 1))].index, contrast=None)
    raise CompareError("B is picked in the tree, not taken from A")


def held(against: Against, b: ViewState) -> dict[int, int] | None:
    """The dimensions B holds at an index of its own while it follows A (``match_plane``)."""
    if against.kind == INDEX and against.dim is not None:
        return {against.dim: b.indices[against.dim]}
    return None


def describe(a: ViewState, against: Against, b: ViewState) -> str:
    """The pane's title: what B is."""
    path = a.array.path
    if against.kind == INDEX and against.dim is not None:
        d = against.dim
        name = dim_names(a.array, a.axis_names)[d]
        return f"B: {path} at {name} {_at(a, d, b.indices[d])} · A: {name} {_at(a, d, a.indices[d])}"
    if against.kind == STORED:
        return f"B: {path}, {'stored' if b.raw else 'decoded'} values · A: {'stored' if a.raw else 'decoded'}"
    if against.kind == LEVEL:
        return f"B: {path} at level {b.level} · A: " + ("level by zoom" if a.level is None else f"level {a.level}")
    return f"B: {b.array.path} · A: {path}"


def whole_options(a: ViewState, against: Against, b: ViewState) -> dict[str, Any]:
    """What ``whole.whole_job`` takes to compare A and B derived from it over the whole array:
    the array at A's index against itself at B's along the dimension held (every other
    dimension whole), or its decoded values against its stored ones. Two levels are not whole
    arrays of one shape: CompareError."""
    if against.kind == INDEX and against.dim is not None:
        d = against.dim
        selection = tuple(a.indices[d] if e == d else slice(None) for e in range(a.array.ndim))
        return {"selection": selection, "b_shift": {d: b.indices[d] - a.indices[d]}}
    if against.kind == STORED:
        return {"b_decoded": b.decoding is not None}
    if against.kind == LEVEL:
        raise CompareError("two levels of a pyramid differ in shape: their planes are compared, not whole arrays")
    return {}


def _at(state: ViewState, dim: int, i: int) -> str:
    """Index ``i`` of ``dim`` in words: its coordinate where it has one (``2020-07-15 [6]``)."""
    axis = state.cf.axes.get(dim) if state.cf is not None else None
    return f"{axis.label(i)} [{i}]" if axis is not None and 0 <= i < len(axis) else f"[{i}]"


# -- two levels of one pyramid -------------------------------------------------------------------
def level_axes(level: Any, names: tuple[str, ...]) -> dict[int, CoordAxis]:
    """Each dimension of ``level`` as a coordinate: the physical position of every pixel's
    centre (``scale · i + translation``), so two levels are matched by position."""
    out = {}
    for d, n in enumerate(level.shape):
        values = level.scale[d] * np.arange(n, dtype=np.float64) + level.translation[d]
        out[d] = CoordAxis(d, names[d], values, None, "other", bool(level.scale[d] < 0), False)
    return out


def footprint(axis: GridAxis, a: Side, b: Side) -> GridAxis:
    """``axis`` with the common window of two levels: A's pixels whose centres lie inside the
    area B's pixels cover (a centre of B ± half its pixel), each taking B's pixel nearest it.
    Centres alone would leave out A's outermost pixels, which B's edge pixels still cover."""
    if axis.same:
        return axis
    aa, ba = a.axis(axis.a_dim), b.axis(axis.b_dim)
    assert aa is not None and ba is not None
    va, vb = aa.values, ba.values
    half = abs(float(vb[1] - vb[0])) / 2 if len(vb) > 1 else 0.5
    lo, hi = float(vb.min()) - half, float(vb.max()) + half
    inside = np.flatnonzero((va >= lo - 1e-9 * half) & (va <= hi + 1e-9 * half))
    if inside.size == 0:
        return replace(axis, window=None, reason="the two levels cover no common part")
    a_range = (int(inside[0]), int(inside[-1]) + 1)
    nearest = nearest_indices(vb, va[a_range[0]:a_range[1]])
    window = AxisWindow(a_range, (int(nearest.min()), int(nearest.max()) + 1), nearest, "coordinates")
    return replace(axis, window=window, reason=None)


def level_difference_job(a: ViewState, b: ViewState, mode: str) -> Job[PlaneDifference]:
    """The difference of A's level (its picked one, else level 0) and B's, on A's level's grid,
    each of A's pixels against B's pixel nearest it in physical space, drawn back in level-0
    space."""
    levels = readable_levels(a)
    if not levels or b.level is None:
        raise CompareError(f"{a.array.path} is not a pyramid read at a level")
    first = levels[0]
    la = next((lv for lv in levels if lv.index == a.level), first)
    lb = next((lv for lv in levels if lv.index == b.level), None)
    if lb is None:
        raise CompareError(f"level {b.level} of {a.array.path} cannot be read")
    names = tuple(dim_names(a.array, a.axis_names))
    mine = level_axes(la, names)
    side_a = Side(la.array, a.cf, names, mine)
    side_b = Side(lb.array, a.cf, names, level_axes(lb, names))
    from ..ome import pyramid as arith

    indices = tuple(i if d in (a.y_dim, a.x_dim) else arith.map_index(first, la, d, i) for d, i in enumerate(a.indices))
    match = match_dims(side_a, indices, a.y_dim, a.x_dim, side_b, channel_dim=a.channel_dim)
    match = replace(match, rows=footprint(match.rows, side_a, side_b), columns=footprint(match.columns, side_a, side_b))
    rows0, cols0 = a.plane_shape
    if rows0 * cols0 > PLANE_ELEMENTS:
        raise CompareError(f"a plane of {rows0:,} × {cols0:,} is too large to draw a difference of")
    a_at = a.with_(array=la.array, pyramid=None, level=None, indices=indices)
    b_at = b.with_(array=lb.array, pyramid=None, level=None, indices=match.indices)
    inner = plane_job(a_at, b_at, match, mode)
    # each level-0 pixel drawn with the value of A's level's pixel nearest it
    first_axes = level_axes(first, names)
    take_rows = nearest_indices(mine[a.y_dim].values, first_axes[a.y_dim].values)
    take_cols = nearest_indices(mine[a.x_dim].values, first_axes[a.x_dim].values)
    same = la is first

    def work(ctx: Context) -> PlaneDifference:
        result = inner.work(ctx)
        if same:
            return result
        plane = np.full(a_at.plane_shape, np.nan)
        (r0, r1), (c0, c1) = result.rows, result.columns
        plane[r0:r1, c0:c1] = result.values
        return PlaneDifference(plane[np.ix_(take_rows, take_cols)], result.stats, (0, rows0), (0, cols0))

    return Job(work, f"difference of levels {la.index} and {lb.index} of {a.array.path}")


def plane_pair(a: ViewState, b: ViewState, against: Against) -> PlaneMatch:
    """B's plane for A's, as the pane beside A shows it (level pairs share A's level-0 space)."""
    return match_plane(a, b, held=held(against, b))
