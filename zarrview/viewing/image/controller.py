"""The model of an image view: states in, requests out, answers in, scenes out.

It owns no lane and calls nobody back: the one driver every view model has
(``scheduling.Driver``) runs it, and the view draws what it returns.

1. ``request(state)`` takes a new :class:`ViewState` (once per state given) and says what it
   needs read. Taking it, the model plans what that view needs (``plan_view``: the whole
   plane, the visible region at full resolution, or a preview of it within the chunk budget), at
   the pyramid level the zoom needs (``levels.py``; a plane with nothing on screen yet gets the
   coarsest level first, and once that is drawn the driver asks again and gets the level
   wanted). A change of how loaded values are drawn (complex mode; in composite mode a
   channel's colour, window, visibility or inversion) draws the loaded tiles again from their
   values and reads nothing. If a loaded tile of the same plane already covers it at that
   resolution, the request is None. Otherwise it is a :class:`PlaneRequest`: the job, with
   everything it reads bound, and what placing its answer needs.
2. ``waiting(request)`` is the scene drawn at once: the loaded tiles, saying what is read.
3. ``apply(request, answer)`` is given only the newest answer (the driver drops stale ones).
   It becomes a tile placed in data coordinates (a preview replaces the coarse layer, full
   resolution the detail layer), levels are chosen from the values on screen (``visible.py``:
   the tile at the level shown cut to the region in view; in composite mode the channel axis
   was read whole, the scene carries the channels' settings with levels (0, 1), and windows the
   metadata lacks are taken from this first tile into the state), and the new :class:`Scene`
   is returned. Automatic levels are taken when the array, axes or mode change, on Auto
   contrast, and with ``ViewState.auto_per_plane`` for every new plane (from its first tile,
   and again from its first full-resolution one). A cancelled answer (the user pressed Cancel)
   leaves the tiles as they were and says so; the next pan, zoom or slider step reads again.
4. ``ahead(request)``, asked by the driver once a full-resolution tile is drawn and nothing
   newer was asked, names the neighbouring planes (or a ring of chunks around the region) to
   warm into the cache.
5. The view turns a scene into pixels on a worker too (``rendering.py``: levels, lookup table
   or composite, at about the screen's resolution): the GUI thread only hands them to Qt.

Label layers (``ViewState.labels``) are read in the same request as the image (``labels.reads``);
a tile carries their planes. Their opacity, visibility and colours redraw; a shown layer a tile
lacks reads. CF masking and unpacking (``ViewState.decoding``) run on the worker with the read.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...scheduling import Answer, Job, Warm
from ..labels.layers import recoloured
from ..labels.reads import has_labels, plane_job, prefetch_labels, split
from .axes import dim_names
from .channels import auto_windows
from .contrast import displayable, summarize
from .levels import LevelView, coarser_views, exact, level_views
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

    @property
    def read(self) -> Hashable:
        """What it reads: a request for the same read waits for this one's answer."""
        return (self.plan, self.plane_key, self.level.index, self.labels)


class ViewController:
    def __init__(self, budget: int = DEFAULT_CHUNK_BUDGET) -> None:
        self.budget = budget
        #: the state shown, as the model completed it (channel windows, levels taken)
        self.state: ViewState | None = None
        #: the state last given to ``request``: given again (the driver asking for more of the
        #: same view), it is not taken a second time
        self._given: ViewState | None = None
        #: the state given whose full-resolution read was applied: asked again for it (the driver
        #: asking whether the same state wants more), nothing is planned, it needs nothing
        self._done: ViewState | None = None
        self.scene = Scene()
        #: the request being read: what ``waiting`` says, and what a view that needs no read ends
        self._inflight: PlaneRequest | None = None
        #: what the automatic levels were taken for; a change (array, axes, complex mode,
        #: Auto contrast) takes them again from the next tile
        self._levels_for: tuple[Any, ...] | None = None
        #: the plane the automatic levels were last taken for, and whether from a full-resolution
        #: tile: with ``auto_per_plane`` a new plane takes them again, and once more at full resolution
        self._levels_plane: tuple[tuple[Any, ...], bool] | None = None

    # -- input ------------------------------------------------------------------------------
    def request(self, state: ViewState) -> PlaneRequest | None:
        """What ``state`` needs read, or None where a loaded tile of its plane covers it (or the
        array is empty: ``waiting`` says so). A state not given before is taken first."""
        if state is not self._given:
            self._given = state
            self._take(state)
        elif state is self._done:
            return None  # its detail is drawn: no plan to make between the answer and its paint
        if self.state is None or self._empty(self.state) is not None:
            return None
        return self.needed(self.state)

    def _take(self, state: ViewState) -> None:
        """``state`` becomes the one shown: the loaded tiles are drawn for it (redisplayed,
        recoloured, levels), and anything of another array is dropped."""
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
        self.scene = scene

    def waiting(self, request: PlaneRequest | None) -> Scene:
        """The scene drawn at once for the state taken: what is loaded, saying what is read."""
        state = self.state
        if state is None:
            return self.scene
        empty = self._empty(state)
        if empty is not None:
            self._inflight = None
            return self._keep(Scene(message=empty, status=empty, channel_dim=state.channel_dim))
        if request is None:
            status = self.scene.status
            if self._inflight is not None:  # it said "Reading …" of a view that is gone
                self._inflight = None
                status = ""
            return self._keep(replace(self.scene, status=status, busy=False))
        if request is self._inflight:  # the same read still under way
            return self.scene
        self._inflight = request
        return self._keep(replace(self.scene, status=f"Reading {request.label}…", busy=True, message=None))

    def again(self) -> None:
        """The next state given is taken as new: the loaded tiles are dropped and read again
        (after the chunk budget changed, or a refused prefix was allowed)."""
        self.state = None
        self._given = self._done = None

    def clear(self) -> None:
        """Nothing is viewed any more: the scene is empty (the driver drops what is still coming)."""
        self._inflight = None
        self.state = None
        self._given = self._done = None
        self.scene = Scene()
        self._levels_for = None
        self._levels_plane = None

    def auto_contrast(self) -> Scene | None:
        """Levels from the values on screen again (``visible.py``: the loaded tile at the level
        shown, cut to the region in view); in a composite, each channel's window from its values
        on screen.
        The scene to draw, or None where nothing is loaded."""
        if self.state is None:
            return None
        self.state = self.state.with_(contrast=None)
        current = self._plane_tiles(self.scene, self.state)
        if current and self.state.composite:  # each channel's window from its own values on screen
            found = visible_values(current, self.state.region, self.state.plane_shape)
            values = found[1] if found is not None else displayable(current[-1].values, self.state.complex_mode)
            self.state = self.state.with_(channels=auto_windows(values, self.state.channels, only_missing=False))
            return self._keep(self._redisplay(self.scene, self.state))
        if current:
            return self._keep(self._auto_levels(self.scene, self.state))
        return None

    def readout(self, row: int, col: int) -> str:
        return "" if self.state is None else readout(self.state, self.scene, row, col)

    # -- planning and requests --------------------------------------------------------------
    def plan(self, state: ViewState) -> PlaneRead:
        """What the view needs read, in the coordinates of the level it needs."""
        return self._wanted(state)[1]

    def _wanted(self, state: ViewState) -> tuple[LevelView, PlaneRead]:
        """The level the view needs and its read. Where the level the zoom asks for has more
        chunks in view than the budget (a preview: one pixel of each chunk it may read), the
        finest coarser level whose view fits the budget is read whole instead: its every pixel
        shows more than the preview, and zooming in reaches the finer level within the budget.
        A level picked by hand is read as it is."""
        wanted = level_views(state)[0]
        plan = self._plan_level(state, wanted)
        if plan.preview and state.level is None:
            for lv in coarser_views(state, wanted.index):
                fits = self._plan_level(state, lv)
                if not fits.preview:
                    return lv, fits
        return wanted, plan

    def _plan_level(self, state: ViewState, lv: LevelView) -> PlaneRead:
        arr = lv.array
        shown = state.plane_dims
        fixed = {d: i for d, i in enumerate(lv.indices) if d not in shown}
        return plan_view(arr.shape, arr.typical_chunks, (state.y_dim, state.x_dim), fixed, lv.region, lv.screen_scale,
                         self.budget, state.channel_dim)

    def needed(self, state: ViewState) -> PlaneRequest | None:
        """What ``state`` needs read, or None where a loaded tile of its plane covers it."""
        coarsest = level_views(state)[1]
        wanted, plan = self._wanted(state)
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

    # -- answers ----------------------------------------------------------------------------
    def apply(self, request: PlaneRequest, answer: Answer[Any]) -> Scene | None:
        """The scene with the answer to ``request`` placed in it (None where nothing is viewed)."""
        if self.state is None:
            return None
        self._inflight = None
        state = self.state
        if answer.cancelled:
            return self._keep(replace(self.scene, busy=False, status=f"Cancelled reading {request.label}"))
        if answer.error is not None:
            text = f"Cannot show {request.label}:\n{answer.error}"
            return self._keep(Scene(message=text, status=f"Error: {answer.error}", channel_dim=state.channel_dim,
                                    problem=text))
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
        if request.layer == "detail":  # what the state asked for, at the resolution it wants
            self._done = self._given
        return self._keep(replace(scene, status=self._status(tile, plan, request.label, answer.seconds, scene)))

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

    def _keep(self, scene: Scene) -> Scene:
        self.scene = scene
        return scene

    # -- reading ahead ----------------------------------------------------------------------
    def ahead(self, request: PlaneRequest) -> list[Warm]:
        """The reads worth warming after ``request``'s tile was drawn: the neighbouring planes of
        a whole plane, else a ring of chunks around the region; none after a preview or once
        another plane is shown (a pan the loaded tiles cover keeps the plane, and the offer)."""
        state, plan, lv = self.state, request.plan, request.level
        if state is None or plan.preview or request.layer != "detail" or state.plane_key() != request.plane_key:
            return []
        rows, cols = lv.array.shape[state.y_dim], lv.array.shape[state.x_dim]
        whole = (plan.r0, plan.r1, plan.c0, plan.c1) == (0, rows, 0, cols)
        ahead = neighbours(plan, state, lv, self._last_moved) if whole else ring(plan, state, lv, self.budget)
        return prefetch_labels(ahead, state, lv, self.budget)

    _last_moved: int | None = None

    def moved(self, dim: int) -> None:
        """The user moved the slider of ``dim``: neighbours along it are prefetched first."""
        self._last_moved = dim


def _display(values: np.ndarray, state: ViewState) -> np.ndarray:
    """The image of a tile's values: the values as displayable numbers (a composite is made
    from them, channels last, where the tile is rendered for the screen)."""
    return np.ascontiguousarray(displayable(values, state.complex_mode))
