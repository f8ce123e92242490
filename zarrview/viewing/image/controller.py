"""The controller of an image view: states in, jobs out, answers in, scenes out.

The request cycle, on the controller's lane (``scheduling.Lane``):

1. The Qt view (or a test) calls :meth:`ViewController.set_state` on the GUI thread with the
   new :class:`ViewState`. The controller plans what that view needs (``plan_view``: the whole
   plane, the visible region at full resolution, or a preview of it within the chunk budget), at
   the pyramid level the zoom needs (``levels.py``; a plane with nothing on screen yet gets the
   coarsest level first, and its answer triggers the read of the level wanted). A change of how
   loaded values are drawn (complex mode; in composite mode a channel's colour, window,
   visibility or inversion) draws the loaded tiles again from their values and reads nothing.
   If a loaded tile of the same plane already covers it at that resolution, nothing is read
   and the status is cleared. Otherwise :meth:`request` builds a :class:`PlaneRequest` (the
   job, with everything it reads bound, and what placing its answer needs) and submits the job
   to the lane, which numbers it and cancels whatever the view was reading.
2. The lane answers every job exactly once, on a worker of the shared pool: data, an error,
   or cancelled. The answer is posted to the GUI thread (``post``); one that a newer job
   replaced arrives marked stale.
3. :meth:`apply` drops stale answers: that view state is gone. The newest answer becomes a
   tile placed in data coordinates (a preview replaces the
   coarse layer, full resolution the detail layer), levels are chosen from the values on screen
   (``visible.py``: the tile at the level shown cut to the region in view; in composite mode the
   channel axis was read whole, the scene carries the channels' settings with levels (0, 1), and
   windows the metadata lacks are taken from this first tile into the state), and the new
   :class:`Scene` goes to ``on_scene``. Automatic levels are taken when the array, axes or mode
   change, on Auto contrast, and with ``ViewState.auto_per_plane`` for every new plane (from its
   first tile, and again from its first full-resolution one). A cancelled newest answer (the user pressed Cancel)
   leaves the tiles as they were, says so, and forgets the request, so the next pan, zoom or
   slider step reads again instead of waiting for an answer that will not come.
4. After a full-resolution tile lands, one prefetch (the neighbouring planes, or a ring of
   chunks around the region) is offered to ``defer``, which runs it once the frame is
   painted; any newer job makes it void, and any new job stops it.
5. The view turns a scene into pixels on a worker too (``rendering.py``: levels, lookup table
   or composite, at about the screen's resolution): the GUI thread only hands them to Qt.

Label layers (``ViewState.labels``) are read in the same request as the image (``labels.reads``);
a tile carries their planes. Their opacity, visibility and colours redraw; a shown layer a tile
lacks reads. CF masking and unpacking (``ViewState.decoding``) run on the worker with the read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...scheduling import Answer, Job, Lane, Post, Prefetch, WorkerPool
from ..labels.layers import recoloured
from ..labels.reads import has_labels, plane_job, prefetch_labels, split
from .axes import dim_names
from .channels import auto_windows
from .contrast import displayable, summarize
from .levels import LevelView, exact, level_views
from .planning import PlaneRead, plan_view
from .read_ahead import neighbours, ring
from .readout import readout, request_label
from .scene import Scene, Tile, at_level, background
from .state import ViewState
from .visible import visible_values

#: chunks one view may read; about a second of decoding for a local store on a laptop
DEFAULT_CHUNK_BUDGET = 256



@dataclass(frozen=True)
class PlaneRequest:
    """A read the controller asked for: its job, and what placing the answer needs."""

    job: Job[Any]
    plan: PlaneRead
    plane_key: tuple[Any, ...]
    level: LevelView
    #: "detail" (full resolution of the level wanted) or "coarse" (a preview or a coarser level)
    layer: str
    #: the visible label layers read with it
    labels: tuple[str, ...]

    @property
    def label(self) -> str:
        return self.job.label

    def same_read(self, other: PlaneRequest | None) -> bool:
        return other is not None and (self.plan, self.plane_key, self.level.index, self.labels) == (
            other.plan, other.plane_key, other.level.index, other.labels)


class ViewController:
    def __init__(self, pool: WorkerPool, post: Post, on_scene: Callable[[Scene], None], *,
                 on_progress: Callable[[int, int], None] | None = None,
                 defer: Callable[[Callable[[], None]], None] | None = None,
                 budget: int = DEFAULT_CHUNK_BUDGET) -> None:
        self.lane: Lane[Any] = Lane(pool, post, "image")
        self.prefetch = Prefetch(pool)
        self.on_scene = on_scene
        self.on_progress = on_progress
        self.defer = defer
        self.budget = budget
        self.state: ViewState | None = None
        self.scene = Scene()
        self._inflight: PlaneRequest | None = None
        #: what the automatic levels were taken for; a change (array, axes, complex mode,
        #: Auto contrast) takes them again from the next tile
        self._levels_for: tuple[Any, ...] | None = None
        #: the plane the automatic levels were last taken for, and whether from a full-resolution
        #: tile: with ``auto_per_plane`` a new plane takes them again, and once more at full resolution
        self._levels_plane: tuple[tuple[Any, ...], bool] | None = None
        self.requests = 0  # submitted jobs, for tests and benchmarks

    # -- input ------------------------------------------------------------------------------
    def set_state(self, state: ViewState) -> None:
        old, self.state = self.state, state
        scene = self.scene
        if old is None or state.array is not old.array:
            scene = Scene(channel_dim=state.channel_dim)  # another array: nothing of the old one stays
            self._levels_for = None
            self._levels_plane = None
        elif state.complex_mode != old.complex_mode:
            # the same values drawn otherwise: the loaded tiles are drawn again, nothing is read
            # (new channel settings only change the scene's ``channels``: the rendering follows)
            scene = self._redisplay(scene, state)
        scene = recoloured(scene, state.labels) if old is not None and state.labels != old.labels else scene
        scene = replace(scene, channel_dim=state.channel_dim, composite=state.composite, labels=state.labels,
                        channels=state.channels if state.composite else ())
        if state.level is not None and old is not None and state.level != old.level:
            # a level picked by hand is shown as it is: other levels' tiles would hide or blur it
            scene = replace(scene, coarse=at_level(scene.coarse, state.level), detail=at_level(scene.detail, state.level))
        if state.composite:
            scene = replace(scene, levels=(0.0, 1.0))
            current = self._plane_tiles(scene, state)
            if current and any(c.window is None for c in state.channels):
                state = self._windows(state, current[-1], only_missing=True)
                scene = self._redisplay(scene, state)
        elif state.auto_per_plane and not (old is not None and old.auto_per_plane) and self._plane_tiles(scene, state):
            state = self.state = state.with_(contrast=None)  # turned on: the plane shown takes its own levels now
            scene = self._auto_levels(scene, state)
        elif state.contrast is not None:
            if old is None or state.contrast != old.contrast:  # set by hand: they stay for this plane
                self._levels_plane = (state.plane_key(), True)
            scene = replace(scene, levels=state.contrast)
        elif self._levels_key(state) != self._levels_for and self._plane_tiles(scene, state):
            scene = self._auto_levels(scene, state)
        empty = self._empty(state)
        if empty is not None:
            self._forget()  # any answer still coming is stale
            self._publish(Scene(message=empty, status=empty, channel_dim=state.channel_dim))
            return
        self.scene = scene
        self._read_if_needed(state)

    def clear(self) -> None:
        """Nothing is viewed any more: answers still coming are stale and the scene is empty."""
        self._forget()
        self.state = None
        self.scene = Scene()
        self._levels_for = None
        self._levels_plane = None

    def auto_contrast(self) -> None:
        """Levels from the values on screen again (``visible.py``: the loaded tile at the level
        shown, cut to the region in view); in a composite, each channel's window from its values."""
        if self.state is None:
            return
        self.state = self.state.with_(contrast=None)
        current = self._plane_tiles(self.scene, self.state)
        if current and self.state.composite:  # each channel's window from its own values
            state = self._windows(self.state, current[-1], only_missing=False)
            self._publish(self._redisplay(self.scene, state))
        elif current:
            self._publish(self._auto_levels(self.scene, self.state))

    def cancel(self) -> None:
        """Stop the read in flight: its answer says it was cancelled."""
        self.lane.cancel()
        self.prefetch.stop()

    def _forget(self) -> None:
        """The read in flight is no longer wanted: its answer will be stale."""
        self._inflight = None
        self.lane.discard()
        self.prefetch.stop()

    def readout(self, row: int, col: int) -> str:
        return "" if self.state is None else readout(self.state, self.scene, row, col)

    # -- planning and requests --------------------------------------------------------------
    def plan(self, state: ViewState) -> PlaneRead:
        """What the view needs read, in the coordinates of the level it needs."""
        return self._plan_level(state, level_views(state)[0])

    def _plan_level(self, state: ViewState, lv: LevelView) -> PlaneRead:
        arr = lv.array
        shown = state.plane_dims
        fixed = {d: i for d, i in enumerate(lv.indices) if d not in shown}
        return plan_view(arr.shape, arr.typical_chunks, (state.y_dim, state.x_dim), fixed, lv.region, lv.screen_scale,
                         self.budget, state.channel_dim)

    def request(self, state: ViewState) -> PlaneRequest | None:
        """What ``state`` needs read, or None where a loaded tile of its plane covers it."""
        wanted, coarsest = level_views(state)
        plan = self._plan_level(state, wanted)
        key = state.plane_key()
        if self._covered(plan, wanted, key, state):
            return None
        target, layer = wanted, "detail" if not plan.preview else "coarse"
        if wanted.index != coarsest.index and not any(t.plane_key == key for t in self.scene.tiles()):
            # nothing of this plane on screen: the coarsest level first, at once, then the level wanted
            target, layer = coarsest, "coarse"
            plan = self._plan_level(state, coarsest)
        names = tuple(layer.name for layer in state.visible_labels())
        arr = target.array
        label = request_label(arr.path, plan.selection, arr.shape)
        job = plane_job(arr, plan.selection, label, state, target, plan, self.budget)
        return PlaneRequest(job, plan, key, target, layer, names)

    def _read_if_needed(self, state: ViewState) -> None:
        req = self.request(state)
        if req is None:
            status = self.scene.status
            if self._inflight is not None:  # a read for an older view is no longer wanted
                self._forget()
                status = ""  # it said "Reading …" of a view that is gone
            self._publish(replace(self.scene, status=status, busy=False))
            return
        if req.same_read(self._inflight):
            self._publish(self.scene)
            return
        self._inflight = req
        self.requests += 1
        self.prefetch.stop()  # reading ahead never delays what is on screen
        self._publish(replace(self.scene, status=f"Reading {req.label}…", busy=True, message=None))
        self.lane.submit(req.job, lambda answer: self.apply(req, answer), on_progress=self._progress)

    def _covered(self, plan: PlaneRead, lv: LevelView, key: tuple[Any, ...], state: ViewState) -> bool:
        """Whether a loaded tile of this plane covers what ``plan`` would read, at least as finely."""
        rows, cols = state.plane_shape
        a_r, a_c = lv.rows[0], lv.cols[0]
        level_rows, level_cols = lv.array.shape[state.y_dim], lv.array.shape[state.x_dim]
        if state.region is None or not plan.preview and (plan.r0, plan.r1, plan.c0, plan.c1) == (0, level_rows, 0, level_cols):
            visible = (0.0, float(rows), 0.0, float(cols))
        else:
            r0, r1, c0, c1 = state.region
            visible = (max(0.0, np.floor(r0)), min(float(rows), np.ceil(r1)),
                       max(0.0, np.floor(c0)), min(float(cols), np.ceil(c1)))
        need_r, need_c = a_r * plan.step_r * (1 + 1e-9), a_c * plan.step_c * (1 + 1e-9)
        for tile in (self.scene.detail, self.scene.coarse):
            if (tile is not None and tile.plane_key == key and tile.covers(*visible)
                    and tile.step_r <= need_r and tile.step_c <= need_c and has_labels(tile, state)
                    and (state.level is None or tile.level == lv.index)):  # a picked level is shown as it is
                return True
        return False

    def _progress(self, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(done, total)

    # -- answers ----------------------------------------------------------------------------
    def apply(self, request: PlaneRequest, answer: Answer[Any]) -> None:
        """Place the answer to ``request`` in the scene (nothing for a stale one: that view is gone)."""
        if answer.stale or self.state is None:
            return
        self._inflight = None
        state = self.state
        if answer.cancelled:
            self._publish(replace(self.scene, busy=False, status=f"Cancelled reading {request.label}"))
            return
        if answer.error is not None:
            text = f"Cannot show {request.label}:\n{answer.error}"
            self._publish(Scene(message=text, status=f"Error: {answer.error}", channel_dim=state.channel_dim,
                                problem=text))
            return
        assert answer.value is not None
        plan, key, lv = request.plan, request.plane_key, request.level
        data, planes = split(answer.value, state.labels)  # recoloured where colours were edited meanwhile
        values = self._oriented(data, state)
        if state.composite and any(c.window is None for c in state.channels):
            # windows not given by the metadata: from the first values of this image shown
            state = self.state = state.with_(channels=auto_windows(displayable(values, state.complex_mode),
                                                                   state.channels, only_missing=True))
        (a_r, b_r), (a_c, b_c) = lv.rows, lv.cols
        tile = Tile(values, _display(values, state), exact(a_r * plan.r0 + b_r),
                    exact(a_c * plan.c0 + b_c), exact(a_r * plan.step_r), exact(a_c * plan.step_c), key,
                    answer.failures, plan.chunks, lv.index, planes)
        scene = self.scene
        coarse = scene.coarse if scene.coarse is not None and scene.coarse.plane_key == key else None
        detail = scene.detail if scene.detail is not None and scene.detail.plane_key == key else None
        if request.layer == "detail":
            # the detail it replaces may be the better background (a whole plane of a coarser level)
            scene = replace(scene, detail=tile, coarse=background(coarse, detail, tile), message=None, busy=False)
        else:
            scene = replace(scene, coarse=tile, detail=detail, message=None, busy=False)
        if state.composite:
            scene = replace(scene, levels=(0.0, 1.0), composite=True, channels=state.channels)
        elif self._plane_levels_due(state, request.layer):
            state = self.state = state.with_(contrast=None)  # this plane's own levels replace any set by hand
            scene = self._auto_levels(scene, state)
        elif state.contrast is not None:
            scene = replace(scene, levels=state.contrast)
        elif self._levels_key(state) != self._levels_for:
            scene = self._auto_levels(scene, state)
        scene = replace(scene, status=self._status(tile, plan, request.label, answer.seconds, scene))
        self._publish(scene)
        if state.pyramid and request.layer == "coarse":
            self._read_if_needed(state)  # the coarsest level is on screen: now the level the zoom needs
        else:
            self._offer_prefetch(plan, state, lv)

    def _status(self, tile: Tile, plan: PlaneRead, label: str, seconds: float, scene: Scene) -> str:
        if plan.preview:
            text = (f"Preview of {label}: one sample every {plan.step_r}x{plan.step_c} elements "
                    f"({plan.chunks} chunks); zoom in for full resolution")
        else:
            text = f"Read {label} in {seconds * 1000:.0f} ms"
        note = scene.extra.get("note", "")
        if note:
            text += f"; {note}"
        if tile.failures:
            n = len(tile.failures)
            text = (f"{n} chunk{'s' if n > 1 else ''} of {label} could not be read (hatched): "
                    f"{tile.failures[0].message}")
        return text

    def _auto_levels(self, scene: Scene, state: ViewState) -> Scene:
        """``scene`` with levels from its values on screen (the tiles of ``state``'s plane cut to
        its region), remembered as taken for this array, mode and plane."""
        found = visible_values(self._plane_tiles(scene, state), state.region, state.plane_shape)
        if found is None:
            return scene
        tile, values = found
        summary = summarize(values)
        self._levels_for = self._levels_key(state)
        self._levels_plane = (state.plane_key(), tile is scene.detail)
        return replace(scene, levels=summary.levels, extra={**scene.extra, "note": summary.note})

    def _plane_levels_due(self, state: ViewState, layer: str) -> bool:
        """Whether a tile of ``layer`` landing now sets the levels by ``auto_per_plane``: the first
        of a plane, or its first at full resolution after a preview or a coarser level."""
        if not state.auto_per_plane:
            return False
        taken = self._levels_plane
        return taken is None or taken[0] != state.plane_key() or (layer == "detail" and not taken[1])

    @staticmethod
    def _plane_tiles(scene: Scene, state: ViewState) -> list[Tile]:
        """The loaded tiles of the plane ``state`` shows, coarsest first."""
        key = state.plane_key()
        return [t for t in scene.tiles() if t.plane_key == key]

    @staticmethod
    def _levels_key(state: ViewState) -> tuple[Any, ...]:
        return (id(state.array), state.y_dim, state.x_dim, state.channel_dim, state.complex_mode, state.composite,
                state.decoding is not None)

    def _windows(self, state: ViewState, tile: Tile, *, only_missing: bool) -> ViewState:
        """``state`` with channel windows from the 0.5/99.5 percentiles of ``tile``'s values; it
        becomes the controller's state (the channel controls show it with the next scene)."""
        values = displayable(tile.values, state.complex_mode)
        self.state = state.with_(channels=auto_windows(values, state.channels, only_missing=only_missing))
        return self.state

    @staticmethod
    def _redisplay(scene: Scene, state: ViewState) -> Scene:
        """The tiles of the plane drawn again from their values (tiles of another plane stay as
        they are until the new plane lands); a composite is drawn in the channels' new settings."""
        key = state.plane_key()
        redo = lambda t: t.with_image(_display(t.values, state)) if t is not None and t.plane_key == key else t  # noqa: E731
        return replace(scene, coarse=redo(scene.coarse), detail=redo(scene.detail),
                       channels=state.channels if state.composite else ())

    @staticmethod
    def _oriented(data: np.ndarray, state: ViewState) -> np.ndarray:
        """The read block as (rows, columns[, channels]), whatever the order of the dimensions."""
        kept = list(state.plane_dims)
        order = [kept.index(state.y_dim), kept.index(state.x_dim)]
        if state.channel_dim is not None:
            order.append(kept.index(state.channel_dim))
        return np.transpose(data, order)

    @staticmethod
    def _empty(state: ViewState) -> str | None:
        arr = state.array
        names = dim_names(arr, state.axis_names)
        for d, n in enumerate(arr.shape):
            if n == 0:
                return f"{arr.path} is empty: {names[d]} has length 0 (shape {list(arr.shape)})"
        return None

    def _publish(self, scene: Scene) -> None:
        self.scene = scene
        self.on_scene(scene)

    # -- prefetch ---------------------------------------------------------------------------
    def _offer_prefetch(self, plan: PlaneRead, state: ViewState, lv: LevelView) -> None:
        if self.defer is None or plan.preview:
            return
        number = self.lane.newest
        rows, cols = lv.array.shape[state.y_dim], lv.array.shape[state.x_dim]
        whole = (plan.r0, plan.r1, plan.c0, plan.c1) == (0, rows, 0, cols)

        def run() -> None:
            # still wanted while no newer read was asked for and the plane is the same (a pan
            # that the loaded tiles cover changes the state, not what is worth reading ahead)
            if (number == self.lane.newest and self._inflight is None and self.state is not None
                    and self.state.plane_key() == state.plane_key()):
                ahead = neighbours(plan, state, lv, self._last_moved) if whole else ring(plan, state, lv, self.budget)
                self.prefetch.warm(prefetch_labels(ahead, state, lv, self.budget))

        self.defer(run)

    _last_moved: int | None = None

    def moved(self, dim: int) -> None:
        """The user moved the slider of ``dim``: neighbours along it are prefetched first."""
        self._last_moved = dim


def _display(values: np.ndarray, state: ViewState) -> np.ndarray:
    """The image of a tile's values: the values as displayable numbers (a composite is made
    from them, channels last, where the tile is rendered for the screen)."""
    return np.ascontiguousarray(displayable(values, state.complex_mode))
