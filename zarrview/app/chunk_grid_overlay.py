"""The chunk grid drawn over the image: chunk and shard boundaries of the level shown, chunks
that are not stored tinted red, chunks held decoded in the cache green and chunks being read
amber, and the chunk under the cursor named with what is stored for it.

What to draw comes from ``viewing.image.chunk_grid`` (pure); what the store holds for a chunk
(its shard index entry or its object's size) is asked of a worker, never on the GUI thread,
and remembered per chunk, so moving the cursor over chunks already seen costs nothing. The
overlay talks to its owner through two callables: ``state()`` (the view state shown) and
``say(text)`` (the status bar).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QRectF
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsPathItem

from ..scheduling import Context, Done, Driver, Job, Task, Tasks, WorkerPool
from ..viewing.image.chunk_grid import GridLines, chunk_under, describe_chunk, grid_lines, stored_boxes_in_plane
from ..viewing.image.levels import LevelView, level_view
from ..viewing.image.state import ViewState
from ..zarrlib import ReadCancelled
from ..zarrlib.audit import ChunkStored
from .bridge import post

#: chunks in view whose storage is asked for to tint the missing ones (more: none are tinted)
MOST_TINTED = 4096
#: chunks whose storage is remembered (per array and grid position)
REMEMBERED = 1 << 15
CHUNK_PEN = QColor(0, 220, 255, 150)
SHARD_PEN = QColor(255, 200, 0, 220)
MISSING_FILL = QColor(255, 40, 40, 70)
CACHED_FILL = QColor(40, 220, 80, 45)
READING_FILL = QColor(255, 170, 0, 90)
#: the outline of chunks a version wrote (a comparison of two versions)
CHANGED_PEN = QColor(255, 0, 220, 230)


class ChunkGridOverlay(QObject):
    def __init__(self, pool: WorkerPool, view: pg.PlotItem, state: Callable[[], ViewState | None],
                 say: Callable[[str], None]) -> None:
        super().__init__(view)
        self._view = view
        self._state = state
        self._say = say
        self.enabled = False
        self.chunks = pg.PlotCurveItem(pen=pg.mkPen(CHUNK_PEN, width=1, cosmetic=True), connect="pairs")
        self.shards = pg.PlotCurveItem(pen=pg.mkPen(SHARD_PEN, width=2, cosmetic=True), connect="pairs")
        self.missing = QGraphicsPathItem()
        self.cached = QGraphicsPathItem()
        self.reading = QGraphicsPathItem()
        for item, fill in ((self.missing, MISSING_FILL), (self.cached, CACHED_FILL), (self.reading, READING_FILL)):
            item.setBrush(QBrush(fill))
            item.setPen(QPen(QColor(0, 0, 0, 0)))
        self._cache = pool.cache
        for z, item in ((16, self.reading), (17, self.cached), (18, self.missing), (19, self.chunks), (20, self.shards)):
            item.setZValue(z)
            item.setVisible(False)
            view.addItem(item)
        #: chunks another version wrote, outlined on the plane whether the grid is shown or not
        self.changed = QGraphicsPathItem()
        self.changed.setPen(pg.mkPen(CHANGED_PEN, width=2, cosmetic=True))
        self.changed.setZValue(21)
        view.addItem(self.changed)
        #: the grid coordinates of those chunks, and the boxes outlined for the plane shown
        self.changed_chunks: tuple[tuple[int, ...], ...] = ()
        self.changed_boxes: list[tuple[int, int, int, int]] = []
        #: what was drawn last (tests and the status bar read it)
        self.lines: GridLines | None = None
        #: the chunks in view known not to be stored, and those held decoded in the pool's cache
        self.missing_chunks: frozenset[tuple[int, ...]] = frozenset()
        self.cached_chunks: frozenset[tuple[int, ...]] = frozenset()
        #: the chunks of the read in flight (of the level shown), drawn until its answer lands
        self.reading_chunks: frozenset[tuple[int, ...]] = frozenset()
        self._known: OrderedDict[tuple[int, tuple[int, ...]], ChunkStored] = OrderedDict()
        self._hovered: tuple[int, tuple[int, ...]] | None = None
        self._lookups: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._found, post=lambda fn: post(fn, self), name="chunk storage")
        self._tints: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._tinted, post=lambda fn: post(fn, self), name="missing chunks")
        self._tint_for: tuple[int, tuple[tuple[int, ...], ...]] | None = None
        #: the array and the chunks in view the tint is drawn for
        self._visible: tuple[int, tuple[tuple[int, ...], ...]] = (0, ())

    # -- what the owner calls ------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """Whether a lookup of chunks' storage is still to answer (the tints may change)."""
        return self._lookups.busy() or self._tints.busy()

    def set_enabled(self, on: bool) -> None:
        self.enabled = on
        for item in (self.chunks, self.shards, self.missing, self.cached, self.reading):
            item.setVisible(on)
        if on:
            self.refresh()
        else:
            self._lookups.discard()
            self._tints.discard()

    def outline(self, chunks: tuple[tuple[int, ...], ...]) -> None:
        """Outline the stored objects (chunks, or shards) at grid ``chunks`` where the plane shows
        them, and keep doing so as the plane moves (``refresh_outline``); () outlines none."""
        self.changed_chunks = chunks
        self.refresh_outline()

    def refresh_outline(self) -> None:
        state = self._state()
        boxes = stored_boxes_in_plane(state, self.changed_chunks) if state is not None and self.changed_chunks else []
        path = QPainterPath()
        for r0, r1, c0, c1 in boxes:
            path.addRect(QRectF(c0, r0, c1 - c0, r1 - r0))
        self.changed_boxes = boxes
        self.changed.setPath(path)

    def refresh(self, level: int = 0, region: tuple[float, float, float, float] | None = None,
                reading: frozenset[tuple[int, ...]] = frozenset()) -> None:
        """Draw the grid of level ``level`` of the state shown in ``region`` (level-0 r0, r1, c0,
        c1; None: the whole plane), with ``reading`` (the chunks of that level being read), and
        ask which of its chunks in view are stored."""
        state = self._state()
        if not self.enabled or state is None:
            return
        lv = level_view(state, level)
        self._draw_reading(lv, state, reading)
        rows, cols = state.plane_shape
        r0, r1, c0, c1 = region if region is not None else (0.0, rows, 0.0, cols)
        region = (max(0.0, r0), min(float(rows), r1), max(0.0, c0), min(float(cols), c1))
        self.lines = lines = grid_lines(lv, state.y_dim, state.x_dim, region)
        self.chunks.setData(*_segments(lines.chunk_rows, lines.chunk_cols, region))
        self.shards.setData(*_segments(lines.shard_rows, lines.shard_cols, region))
        self._ask_tint(state, lv, region)

    def hover(self, row: int, col: int) -> str | None:
        """The chunk under level-0 (row, col) in a line, and its storage asked for where not known."""
        state = self._state()
        if not self.enabled or state is None or self.lines is None:
            return None
        lv = level_view(state, self.lines.level)
        coords = chunk_under(lv, state.y_dim, state.x_dim, row + 0.5, col + 0.5)
        if coords is None:
            return None
        key = (id(lv.array), coords)
        known = self._known.get(key)
        if known is None and self._hovered != key:
            self._hovered = key
            arr = lv.array

            def work(ctx: Context) -> Any:
                try:
                    return arr.chunks_stored([coords], ctx.cancel)[0]
                except ReadCancelled:
                    return None

            self._lookups.show(Task(Job(work, f"storage of chunk {list(coords)} of {arr.path}"), about=(key, arr)))
        return describe_chunk(lv.array, coords, known)

    # -- answers ---------------------------------------------------------------------------------
    def _found(self, done: Done[Any]) -> None:
        answer = done.answer
        if answer.cancelled or answer.value is None and answer.error is None:
            return
        key, arr = done.task.about
        if answer.error is not None:
            self._say(f"chunk {list(key[1])}: what is stored cannot be found: {answer.error}")
            return
        stored = answer.value
        if stored is None:
            return
        self._remember(key, stored)
        if self._hovered == key:
            self._say(describe_chunk(arr, key[1], stored))

    def _remember(self, key: tuple[int, tuple[int, ...]], stored: ChunkStored) -> None:
        self._known[key] = stored
        self._known.move_to_end(key)
        while len(self._known) > REMEMBERED:
            self._known.popitem(last=False)

    def _ask_tint(self, state: ViewState, lv: LevelView, region: tuple[float, float, float, float]) -> None:
        """The chunks in view whose storage is not known yet, asked for on a worker."""
        arr = lv.array
        r0, r1, c0, c1 = region
        first = chunk_under(lv, state.y_dim, state.x_dim, max(r0, 0.0) + 0.5, max(c0, 0.0) + 0.5)
        rows, cols = state.plane_shape
        last = chunk_under(lv, state.y_dim, state.x_dim, min(r1, rows) - 0.5, min(c1, cols) - 0.5)
        if first is None or last is None:
            self._draw_missing(lv, state)
            return
        ys = range(first[state.y_dim], last[state.y_dim] + 1)
        xs = range(first[state.x_dim], last[state.x_dim] + 1)
        if len(ys) * len(xs) > MOST_TINTED:
            self.missing_chunks = self.cached_chunks = frozenset()
            self.missing.setPath(QPainterPath())
            self.cached.setPath(QPainterPath())
            return
        coords = []
        for y in ys:
            for x in xs:
                c = list(first)
                c[state.y_dim], c[state.x_dim] = y, x
                coords.append(tuple(c))
        wanted = tuple(c for c in coords if (id(arr), c) not in self._known)
        self._visible = (id(arr), tuple(coords))
        if not wanted:
            self._draw_missing(lv, state)
            return
        if self._tint_for == (id(arr), wanted):
            return
        self._tint_for = (id(arr), wanted)

        def work(ctx: Context) -> Any:
            try:
                return arr.chunks_stored(list(wanted), ctx.cancel)
            except ReadCancelled:
                return None

        self._tints.show(Task(Job(work, f"storage of {len(wanted)} chunks of {arr.path}"), about=(lv, state)))

    def _tinted(self, done: Done[Any]) -> None:
        answer = done.answer
        self._tint_for = None
        if answer.cancelled or answer.value is None:
            return
        lv, state = done.task.about
        for stored in answer.value:
            self._remember((id(lv.array), stored.coords), stored)
        current = self._state()
        # drawn on the state shown now where it shows the same array: a pan that came to rest
        # while the lookup ran made a new state, and an answer dropped for it left chunks untinted
        if self.enabled and current is not None and self._visible[0] == id(lv.array):
            self._draw_missing(lv, current)

    def _draw_reading(self, lv: LevelView, state: ViewState, reading: frozenset[tuple[int, ...]]) -> None:
        path = QPainterPath()
        for c in reading:
            path.addRect(_rect(lv, state, c))
        self.reading_chunks = reading
        self.reading.setPath(path)

    def _draw_missing(self, lv: LevelView, state: ViewState) -> None:
        """Tint the chunks in view known not to be stored, and those in the cache."""
        arr = lv.array
        aid, coords = self._visible
        paths = {"missing": QPainterPath(), "cached": QPainterPath()}
        found: dict[str, set[tuple[int, ...]]] = {"missing": set(), "cached": set()}
        cache_id = arr.reader.cache_id
        for c in coords if aid == id(arr) else ():
            stored = self._known.get((aid, c))
            if stored is not None and stored.nbytes is None and stored.error is None:
                kind = "missing"
            elif (cache_id, c) in self._cache:
                kind = "cached"
            else:
                continue
            found[kind].add(c)
            paths[kind].addRect(_rect(lv, state, c))
        self.missing_chunks, self.cached_chunks = frozenset(found["missing"]), frozenset(found["cached"])
        self.missing.setPath(paths["missing"])
        self.cached.setPath(paths["cached"])


def _segments(rows: tuple[float, ...], cols: tuple[float, ...], region: tuple[float, float, float, float]
              ) -> tuple[np.ndarray, np.ndarray]:
    """Line segments (pairs of points) across the region: horizontal at ``rows``, vertical at
    ``cols``, in plot coordinates (x: columns, y: rows)."""
    r0, r1, c0, c1 = region
    xs: list[float] = []
    ys: list[float] = []
    for r in rows:
        xs += [c0, c1]
        ys += [r, r]
    for c in cols:
        xs += [c, c]
        ys += [r0, r1]
    return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)


def _rect(lv: LevelView, state: ViewState, coords: tuple[int, ...]) -> QRectF:
    """The chunk at ``coords`` of ``lv``'s array as a rectangle in level-0 plane coordinates."""
    box = lv.array.meta.chunk_box(coords)
    (y0, y1), (x0, x1) = box[state.y_dim], box[state.x_dim]
    (a_r, b_r), (a_c, b_c) = lv.rows, lv.cols
    return QRectF(a_c * x0 + b_c, a_r * y0 + b_r, a_c * (x1 - x0), a_r * (y1 - y0))
