"""What an image view reads ahead once its plane is shown: the planes on either side of a whole
plane, or a ring of chunks around a region, so the next slider step or pan finds them cached."""

from __future__ import annotations

from ...scheduling import Warm
from .levels import LevelView
from .planning import PlaneRead, plan_plane
from .state import ViewState


def ring(plan: PlaneRead, state: ViewState, lv: LevelView, budget: int) -> list[Warm]:
    """One ring of chunks around the visible region, within four times the view's chunk budget."""
    arr = lv.array
    chunks = arr.typical_chunks
    cy, cx = chunks[state.y_dim], chunks[state.x_dim]
    around = (plan.r0 - cy, plan.r1 + cy, plan.c0 - cx, plan.c1 + cx)
    fixed = {d: i for d, i in enumerate(lv.indices) if d not in state.plane_dims}
    wider = plan_plane(arr.shape, chunks, (state.y_dim, state.x_dim), fixed, around, 4 * budget, state.channel_dim)
    return [] if wider.preview else [Warm(arr, wider.selection, label=f"{arr.path} ring")]


def neighbours(plan: PlaneRead, state: ViewState, lv: LevelView, last_moved: int | None) -> list[Warm]:
    """The planes on either side along the dimension last moved, else the first one not shown."""
    arr = lv.array
    hidden = sorted(state.fixed())
    if not hidden:
        return []
    dim = last_moved if last_moved in hidden else hidden[0]
    out = []
    for delta in (1, -1):
        index = lv.indices[dim] + delta
        if 0 <= index < arr.shape[dim]:
            sel = tuple(index if d == dim else s for d, s in enumerate(plan.selection))
            out.append(Warm(arr, sel, label=f"{arr.path} plane {index}"))
    return out
