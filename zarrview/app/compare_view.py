"""A second array beside the one shown (View ▸ Compare): B in a data view of its own, its zoom,
pan and plane linked to A's, the value under the cursor read from both, and A − B or A / B drawn
with a diverging colour map, with its statistics for the plane and, on request, for the arrays.

While comparing, the array shown stays A and the node picked in the tree becomes B, or B is A
itself taken another way (``viewing/compare/pairs``): at another channel or time, its stored
values against its decoded ones, another level of its pyramid. Which plane
of B matches A's and how two planes differ are decided without Qt (``viewing/compare``); this
pane shows what those say. The difference of two planes is itself an array (held in memory), so
it is drawn, read under the cursor and exported as any array is.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QSpinBox, QStackedWidget,
                               QVBoxLayout, QWidget)

from ..scheduling import Done, Driver, Task, Tasks, WorkerPool, call_job
from ..viewing.compare import pairs
from ..viewing.compare.difference import PlaneDifference, plane_job
from ..viewing.compare.errors import CompareError
from ..viewing.compare.in_memory import plane_array
from ..viewing.compare.linking import match_plane
from ..viewing.compare.whole import describe, whole_job
from ..viewing.decision import decide
from ..viewing.image.axes import dim_names
from ..viewing.image.colour_maps import DIVERGING
from ..viewing.image.rendering import Frame
from ..viewing.saved_views import ViewLook
from ..viewing.versions import icechunk_store, location_at
from ..zarrlib import Array, ZarrError
from ..zarrlib.icechunk import diff_versions
from .bridge import post
from .data_view import DataView
from .image_view import FrameItem

#: the modes of the pane, as its combo lists them, and the difference each takes
SIDE_BY_SIDE, BLEND, DIFFERENCE, RATIO = "Side by side", "Blend", "A − B", "A / B"
MODES = {DIFFERENCE: "a-b", RATIO: "a/b"}
#: each mode as a saved view names it
MODE_NAMES = {SIDE_BY_SIDE: "side", BLEND: "blend", **MODES}


class ComparePane(QWidget):
    """B beside ``a``; ``status`` says what it shows and how the two were matched."""

    status = Signal(str)

    def __init__(self, pool: WorkerPool, a: DataView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pool, self.a = pool, a
        #: the array compared with (B), shown in a data view of its own
        self.b = DataView(pool)
        #: A − B (or A / B) of the planes shown, as an array held in memory
        self.diff = DataView(pool)
        #: the pane whose zoom and pan go with A's (B's, or the difference's), and a guard against
        #: the range set on one coming back as a change of the other
        self._linked: DataView | None = None
        self._syncing = False
        a.image.view.getViewBox().sigRangeChanged.connect(lambda *_: self._range_from(self.a))
        for view in (self.b, self.diff):
            view.follows_view = True
            view.status.connect(self._b_said)
            view.image.view.getViewBox().sigRangeChangedManually.connect(partial(self._moved_by_hand, view))
        self._link(self.b)
        self.title = QLabel("Compare: select another array in the tree")
        self.title.setWordWrap(True)
        #: what B is: the array picked in the tree, or A itself taken another way, at ``at``
        self.against = pairs.PICKED
        self.source = QComboBox()
        self.source.addItem(pairs.PICKED.label, pairs.PICKED.name)
        self.source.setToolTip("What B is: another array, picked in the tree, or A itself at another channel, time "
                               "or level, or its stored values against its decoded ones")
        self.source.activated.connect(lambda i: self.take(str(self.source.itemData(i))))
        self.at = QSpinBox()
        self.at.setToolTip("Where B is taken: the index along the dimension, or the pyramid level")
        self.at.hide()
        self.at.valueChanged.connect(self._at_changed)
        self.mode = QComboBox()
        self.mode.addItems([SIDE_BY_SIDE, BLEND, DIFFERENCE, RATIO])
        self.mode.setToolTip("B beside A; B drawn over A (Blend: the slider sets how much of B shows); or their "
                             "difference (A − B) or ratio (A / B) drawn centred on equal")
        #: how much of B a blend shows over A, in percent
        self.opacity = QSlider(Qt.Orientation.Horizontal)
        self.opacity.setRange(0, 100)
        self.opacity.setValue(50)
        self.opacity.setFixedWidth(120)
        self.opacity.setToolTip("Blend: 0 shows A alone, 100 B alone")
        self.opacity.hide()
        self.opacity.valueChanged.connect(self._opacity)
        #: B's frames drawn over A's image (Blend), as B's own pane draws them
        self.blend = (FrameItem(), FrameItem())
        for z, item in zip((11, 12), self.blend):
            item.setZValue(z)
            item.setVisible(False)
            a.image.view.addItem(item)
        self.b.image.frame_shown.connect(self._mirror)
        self.mode.currentTextChanged.connect(lambda _: self.follow())
        self.whole = QPushButton("Whole arrays")
        self.whole.setToolTip("The difference statistics over the whole arrays, read chunk by chunk")
        self.whole.clicked.connect(self._whole)
        self.stop = QPushButton("Cancel")
        self.stop.setEnabled(False)
        self.stop.clicked.connect(lambda: self.wholes.cancel())
        self.matched = QLabel()
        self.matched.setWordWrap(True)
        self.stats = QLabel()
        self.stats.setWordWrap(True)
        #: the two planes whose difference is shown or read (A repaints often: read once)
        self._differed_for: tuple[Any, ...] | None = None
        #: the whole arrays' figures, once asked for
        self.whole_stats = QLabel()
        self.whole_stats.setWordWrap(True)
        self.readout = QLabel()
        self.versions_note = QLabel()
        self.versions_note.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.b)
        self.stack.addWidget(self.diff)
        top = QHBoxLayout()
        top.addWidget(QLabel("B:"))
        top.addWidget(self.source)
        top.addWidget(self.at)
        top.addWidget(self.mode)
        top.addWidget(self.opacity)
        top.addStretch(1)
        wholes = QHBoxLayout()
        wholes.addWidget(self.whole_stats, 1)
        wholes.addWidget(self.whole)
        wholes.addWidget(self.stop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(top)
        layout.addWidget(self.matched)
        layout.addWidget(self.stats)
        layout.addLayout(wholes)
        layout.addWidget(self.versions_note)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.readout)
        #: the planes' difference, computed on a worker: the newest only
        self.differences: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._differed, post=lambda fn: post(fn, self), name="plane difference")
        #: the chunks written between two versions of one array, read from the transaction logs
        self.versions: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._versions_read, post=lambda fn: post(fn, self), name="chunks between versions")
        #: the whole arrays' difference statistics, on request, with progress and Cancel
        self.wholes: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._whole_done, post=lambda fn: post(fn, self), name="array difference",
            on_progress=lambda done, total: self.whole_stats.setText(f"Whole arrays: {done}/{total} blocks…"))
        a.plane_moved.connect(self.follow)
        # B's own slider moved (along a dimension it holds): followed once that move is done
        self.b.plane_moved.connect(lambda: QTimer.singleShot(0, self, self.follow))
        a.pixel_hovered.connect(self.hover)
        a.loaded.connect(self.follow)

    def mode_name(self) -> str:
        """How the pair is shown, as a saved view names it (``saved_views.COMPARE_MODES``)."""
        return MODE_NAMES[self.mode.currentText()]

    def set_mode_name(self, name: str) -> None:
        self.mode.setCurrentText(next((text for text, n in MODE_NAMES.items() if n == name), SIDE_BY_SIDE))

    @property
    def array(self) -> Array | None:
        """B, or None before one is picked."""
        return self.b.array

    def compare_with(self, arr: Array) -> None:
        """Show ``arr`` as B, at the plane matching A's; two versions of one array in a
        repository get the chunks written between them outlined on both. A level of A's own
        pyramid is taken as A at that level."""
        a = self.a.state
        level = pairs.level_of(a, arr) if a is not None else None
        if level is not None:  # a level of A's own pyramid: linked and differenced by position
            self.take(pairs.LEVEL, level)
            return
        self._picked_in_tree()
        plane = None
        if a is not None:
            try:
                plane = match_plane(a, arr).plane
            except CompareError as e:
                self.matched.setText(str(e))
        self.title.setText(f"B: {arr.path} ({arr.store.url})" + ("" if a is None else f" · A: {a.array.path}"))
        self.b.show_array(decide(arr, plane, read=False))
        self._outline_versions(arr)
        self.follow()

    def _outline_versions(self, arr: Array) -> None:
        a = self.a.array
        sa = icechunk_store(a) if a is not None else None
        sb = icechunk_store(arr)
        if a is None or sa is None or sb is None or sa.base.url != sb.base.url or a.path != arr.path:
            return
        path = a.path
        location_a, location_b = location_at(sa, str(sa.version)), location_at(sb, str(sb.version))

        def work() -> tuple[tuple[int, ...], ...]:
            diff = diff_versions(location_a, location_b, authorize=sa.policy)
            return tuple(diff.updated_chunks.get(path, ()))

        self.versions.show(Task(call_job(work, label=f"chunks written to {path} between {sa.version} and {sb.version}"),
                                about=(a, arr, f"{sa.version} → {sb.version}")))

    def _versions_read(self, done: Done[Any]) -> None:
        a: Array
        b: Array
        a, b, between = done.task.about
        answer = done.answer
        if answer.cancelled or self.a.array is not a or self.b.array is not b:
            return
        if answer.error is not None:
            self.versions_note.setText(f"Chunks written {between}: {answer.error}")
            return
        chunks: tuple[tuple[int, ...], ...] = answer.value or ()
        for view in (self.a, self.b):
            view.chunk_grid.outline(chunks)
        self.versions_note.setText(f"{len(chunks):,} chunk{'s' if len(chunks) != 1 else ''} of {a.path} written "
                                   f"{between}: outlined where the plane shows them")

    # -- B taken from A ----------------------------------------------------------------------
    def against_spec(self) -> str | None:
        """What B is where it is A taken another way, as a saved view names it (``index:2@5``,
        ``stored``, ``level@1``); None where B is picked in the tree."""
        return pairs.spec(self.against, self.at.value()) if self.against.derived else None

    def take(self, name: str, at: int | None = None) -> None:
        """B is A taken as ``name`` (``Against.name``) says, at ``at`` (by default the next
        index or level after A's); ``tree``: B is the array picked in the tree."""
        a = self.a.state
        self._offer()
        against = pairs.chosen(a, name) if a is not None else pairs.PICKED
        if not against.derived or a is None:
            self.clear()
            return
        self.against = against
        self.source.setCurrentIndex(max(0, self.source.findData(against.name)))
        self.whole.setEnabled(against.kind != pairs.LEVEL)
        self.whole.setToolTip("Two levels differ in shape: their planes are compared" if against.kind == pairs.LEVEL
                              else "The difference statistics over the whole array, read chunk by chunk")
        self.at.blockSignals(True)
        self.at.setRange(0, max(0, against.count - 1))
        self.at.setValue(pairs.default_at(a, against) if at is None else at)
        self.at.setPrefix("level " if against.kind == pairs.LEVEL else "")
        self.at.setVisible(against.kind in (pairs.INDEX, pairs.LEVEL))
        self.at.blockSignals(False)
        self._derive()

    def _picked_in_tree(self) -> None:
        self.against = pairs.PICKED
        self.source.setCurrentIndex(0)
        self.at.hide()
        self.whole.setEnabled(True)
        self.whole.setToolTip("The difference statistics over the whole arrays, read chunk by chunk")

    def _offer(self) -> None:
        """The ways to take B that A offers now, listed where they changed."""
        a = self.a.state
        offered = pairs.choices(a) if a is not None else (pairs.PICKED,)
        wanted = [(c.name, c.label) for c in offered]
        listed = [(str(self.source.itemData(i)), self.source.itemText(i)) for i in range(self.source.count())]
        if wanted == listed:
            return
        self.source.blockSignals(True)
        self.source.clear()
        for name, label in wanted:
            self.source.addItem(label, name)
        self.source.setCurrentIndex(max(0, self.source.findData(self.against.name)))
        self.source.blockSignals(False)

    def _derive(self) -> None:
        """B drawn as A's node taken the chosen way: its own view, with A's colour map."""
        a, shown = self.a.state, self.a.shown
        if a is None or shown is None:
            return
        b = pairs.b_state(a, self.against, self.at.value())
        colours = self.a.colours.choice() if self.a.colours is not None else None
        self.b.pending_look = ViewLook("", indices=b.indices, y_dim=b.y_dim, x_dim=b.x_dim, channel_dim=b.channel_dim,
                                       level=b.level, colormap=colours, complex_mode=b.complex_mode, raw=b.raw)
        self.title.setText(pairs.describe(a, self.against, b))
        self._differed_for = None
        self.b.show_decided(pairs.shown_at(shown, b))
        self.follow()

    def _at_changed(self, value: int) -> None:
        a, b = self.a.state, self.b.state
        if not self.against.derived or a is None:
            return
        if self.against.kind == pairs.INDEX and self.against.dim is not None and b is not None and b.array is a.array:
            self.b.set_index(self.against.dim, value)  # B keeps its zoom; only its plane moves
            self.follow()
        else:
            self._derive()

    def clear(self) -> None:
        self._picked_in_tree()
        self.differences.discard()
        self.wholes.discard()
        self.b.show_message("Compare: select another array in the tree")
        self.diff.show_message("")
        self.title.setText("Compare: select another array in the tree")
        self.versions.discard()
        self._differed_for = None
        for item in self.blend:
            item.show_rendered(None)
            item.setVisible(False)
        self.matched.clear()
        self.stats.clear()
        self.whole_stats.clear()
        self.readout.clear()
        self.versions_note.clear()
        self.a.chunk_grid.outline(())

    # -- following A --------------------------------------------------------------------------
    def follow(self) -> None:
        """A's plane moved (or landed): B moves to the matching plane, and the difference of the
        two planes is read again where it is shown."""
        a, b = self.a.state, self.b.state
        self._offer()
        if a is None or b is None:
            return
        against = self.against
        if against.derived and not pairs.still_derived(a, against, b):
            self.take(against.name, self.at.value())  # A changed what B is taken from (its axes, its node)
            return
        if against.kind == pairs.INDEX and against.dim is not None and self.at.value() != b.indices[against.dim]:
            self.at.blockSignals(True)  # B's own slider moved along the dimension held
            self.at.setValue(b.indices[against.dim])
            self.at.blockSignals(False)
        if against.derived:
            self.title.setText(pairs.describe(a, against, b))  # A's index or level may have moved
        try:
            match = pairs.plane_pair(a, b, against) if against.derived else match_plane(a, b)
        except CompareError as e:
            self.matched.setText(str(e))
            return
        self.matched.setText(match.text)
        for dim, index in match.plane.items():
            if b.indices[dim] != index:
                self.b.set_index(dim, index)
        mode = self.mode.currentText()
        shown = self.diff if mode in MODES else self.b
        if self.stack.currentWidget() is not shown:
            self.stack.setCurrentWidget(shown)
            self._link(shown)
        blending = mode == BLEND and match.same_grid
        self.opacity.setVisible(mode == BLEND)
        for item in self.blend:
            item.setVisible(blending)
        if mode == BLEND and not match.same_grid:
            self.stats.setText("Not blended: the two planes lie on different grids")
        if mode == BLEND and blending:
            self._opacity(self.opacity.value())
            self.stats.setText(f"B over A, {self.opacity.value()} % of B")
        if mode not in MODES:
            self.differences.discard()
            self._differed_for = None
            self.stats.clear()
            return
        key = (id(a.array), a.plane_selection(), a.y_dim, a.x_dim, a.raw, a.level, id(b.array), match.selection(),
               b.raw, b.level, mode)
        if key == self._differed_for:
            return  # the same two planes (A painted again): their difference is shown or being read
        self._differed_for = key
        try:
            if against.kind == pairs.LEVEL:
                job = pairs.level_difference_job(a, b, MODES[mode])
            else:
                job = plane_job(a, b, match, MODES[mode])
        except (ZarrError, CompareError) as e:
            self._not_compared(str(e))
            return
        self.stats.setText("Reading both planes…")
        self.differences.show(Task(job, about=(a, match)))

    def _link(self, shown: DataView) -> None:
        """The pane shown follows A's zoom and pan, and A follows what a person does in it. Not
        pyqtgraph's two-way link: two views of fixed aspect and different sizes each widen the
        other's range to keep their own aspect, and the pair zooms out step by step."""
        self._linked = shown
        self._range_from(self.a)

    def _moved_by_hand(self, view: DataView, *_: Any) -> None:
        """A person zoomed or panned the pane beside A: A follows, if that pane is the linked one."""
        if view is self._linked:
            self._range_from(view)

    def _range_from(self, source: DataView) -> None:
        """Give the other of A and the linked pane ``source``'s visible range (once: the change
        it causes comes back here and stops)."""
        target = self._linked if source is self.a else self.a
        if self._syncing or target is None:
            return
        (x0, x1), (y0, y1) = source.image.view.viewRange()
        target.release_region()  # the pair's range, no longer the region A was opened at
        self._syncing = True
        try:
            target.image.view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
        finally:
            self._syncing = False

    def _mirror(self, frame: Frame) -> None:
        """B's frame, drawn over A where the pane blends them."""
        base, over = self.blend
        base.show_rendered(frame.base)
        over.show_rendered(frame.over)

    def _opacity(self, percent: int) -> None:
        for item in self.blend:
            item.setOpacity(percent / 100)
        if self.mode.currentText() == BLEND and self.blend[0].isVisible():
            self.stats.setText(f"B over A, {percent} % of B")

    def _not_compared(self, why: str) -> None:
        self.differences.discard()
        self.stats.setText(f"Not compared: {why}")
        self.diff.show_problem(f"Not compared: {why}")

    def _differed(self, done: Done[Any]) -> None:
        answer = done.answer
        if answer.cancelled:
            return
        a, match = done.task.about
        if answer.error is not None or not isinstance(answer.value, PlaneDifference):
            self._not_compared(str(answer.error))
            return
        result: PlaneDifference = answer.value
        self.stats.setText(result.stats.text)
        names = dim_names(a.array, a.axis_names)
        arr = plane_array(result.values, a.plane_shape, (result.rows[0], result.columns[0]),
                          name="A / B" if result.ratio else "A − B",
                          dimension_names=(names[a.y_dim], names[a.x_dim]))
        self.diff.show_array(decide(arr, None, read=False))
        if self.diff.colours is not None:
            self.diff.colours.choose(DIVERGING)
        state = self.diff.state
        if state is not None:
            self.diff.set_state(state.with_(contrast=result.stats.display_range))

    # -- the cursor -----------------------------------------------------------------------------
    def hover(self, row: int, col: int) -> None:
        """B's value (and the difference's) at A's pixel under the cursor."""
        parts = []
        if self.b.state is not None:
            parts.append(f"B: {self.b.controller.readout(row, col)}")
        if self.stack.currentWidget() is self.diff and self.diff.state is not None:
            parts.append(f"{self.mode.currentText()}: {self.diff.controller.readout(row, col)}")
        self.readout.setText("   ".join(p for p in parts if p))

    def _b_said(self, text: str) -> None:
        if text:
            self.readout.setText(text)

    # -- whole arrays -------------------------------------------------------------------------
    def _whole(self) -> None:
        a, b = self.a.state, self.b.state
        if a is None or b is None:
            return
        mode = MODES.get(self.mode.currentText(), "a-b")
        try:
            options = pairs.whole_options(a, self.against, b) if self.against.derived else {}
            job = whole_job(a.array, b.array, mode, decoded=a.decoding is not None, a_cf=a.cf, b_cf=b.cf, **options)
        except CompareError as e:
            self.whole_stats.setText(f"Whole arrays not compared: {e}")
            return
        self.stop.setEnabled(True)
        self.whole_stats.setText("Whole arrays: reading…")
        self.wholes.show(Task(job, about=a.array))

    def _whole_done(self, done: Done[Any]) -> None:
        self.stop.setEnabled(False)
        answer = done.answer
        if answer.cancelled:
            self.whole_stats.setText("Whole arrays: cancelled")
        elif answer.error is not None:
            self.whole_stats.setText(f"Whole arrays not compared: {answer.error}")
        elif answer.value is not None:
            self.whole_stats.setText(f"Whole arrays: {describe(answer.value)}")
