"""A plane's pixels made by the worker that read it, in the same job.

Reading a plane and rendering it were two jobs: the read answered to the GUI thread, which
placed the tile and asked a worker for its pixels, which answered again. Where the look is known
when the read is asked (the levels are kept from an earlier plane of the array or set by hand, a
composite's windows are set), the read's job also places the tile and renders it, at the screen
scale and with the lookup table the image pane had then (a :class:`Recipe`), and counts its
histogram. The scene carries that :class:`Prepared` answer, and the pane shows it at once
(:func:`ready_frame`) if it still draws alike; else it renders as before. A slider step then
costs one hand-over between the threads instead of three.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...scheduling import Context, Job
from .rendering import Frame, FrameOrder, Look, Rendered, histogram, reduction, render_tile
from .scene import Tile


@dataclass(frozen=True, eq=False)
class Recipe:
    """How the image pane draws, taken on the GUI thread when a read is asked: its lookup table
    (None: grey) and its device pixels per data pixel along rows and columns."""

    table: np.ndarray | None
    scale: tuple[float, float]


@dataclass(frozen=True, eq=False)
class Prepared:
    """A read's answer (``data``) with the tile it places, its pixels and its histogram (None for
    a composite, which has none)."""

    data: Any
    tile: Tile
    rendered: Rendered
    histogram: tuple[np.ndarray, np.ndarray] | None
    #: what of the view the tile depends on, when it was placed (the caller's key)
    key: Any = None


def prepared_job(job: Job[Any], place: Callable[[Any, tuple[Any, ...]], Tile], look: Look,
                 recipe: Recipe, key: Any = None) -> Job[Prepared]:
    """``job`` followed, on its worker, by placing its answer (``place(data, failures)``) and
    rendering the tile in ``look`` at ``recipe``'s scale."""
    def work(ctx: Context) -> Prepared:
        data = job.work(ctx)
        tile = place(data, tuple(ctx.failures))
        rendered = render_tile(tile, look, reduction(tile, recipe.scale))
        return Prepared(data, tile, rendered, None if look.channels else histogram(tile.image), key)

    return Job(work, job.label)


def ready_frame(order: FrameOrder, prepared: Sequence[Prepared]) -> Frame | None:
    """The frame ``order`` asks for where every tile of it is rendered already as it asks (shown
    now, or prepared with its read) and a new base tile's histogram is counted; else None."""
    out: list[Rendered | None] = []
    made = {id(p.tile): p for p in prepared}
    for tile, step, shown in zip((order.base, order.over), order.steps, order.shown, strict=True):
        if tile is None:
            out.append(None)
        elif shown is not None and shown.shows(tile, order.look, step):
            out.append(shown)
        elif id(tile) in made and made[id(tile)].rendered.shows(tile, order.look, step):
            out.append(made[id(tile)].rendered)
        else:
            return None
    base = order.base
    if base is None or base is order.histogram_of or order.look.channels:
        return Frame(out[0], out[1])
    counted = made.get(id(base))
    if counted is None or counted.histogram is None:
        return None
    return Frame(out[0], out[1], counted.histogram, base)
