"""The channel controls of an image with a channel axis: Composite or Single, and a row per
channel (visible, colour, window as two numbers around the channel's histogram with a handle for
each, inverted, Auto) in a scroll area, so forty channels fit as well as three.

The panel holds no view logic: each change is forwarded as the new values of one channel (or
the new mode), which the data view turns into a new ``ViewState``; what it shows comes back
from the state with every scene (``show_state``), so windows the view model takes from the
data (Auto contrast, a channel without ``window``) appear in the boxes and on the histograms.
The histograms are counted on a worker from the values of each scene (``histograms.py``), once
for each tile of values: a change of window or colour redraws and counts nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractSpinBox, QButtonGroup, QCheckBox, QColorDialog, QDoubleSpinBox, QGridLayout,
                               QHBoxLayout, QLabel, QPushButton, QRadioButton, QScrollArea, QToolButton, QWidget)

from ..scheduling import Driver, WorkerPool
from ..viewing.image.channels import ChannelSetting
from ..viewing.image.histograms import ChannelHistogram, HistogramAsk, HistogramRequest, HistogramsModel
from ..viewing.image.scene import Scene
from ..viewing.image.state import ViewState
from .bridge import post
from .channel_histogram import HEIGHT, WindowHistogram
from .plane_controls import PlaneControls

if TYPE_CHECKING:
    from .fold_panels import SideColumn

#: rows of channels shown before the list scrolls (the side column scrolls past its height)
VISIBLE_ROWS = 12
ROW_HEIGHT = HEIGHT + 4


@dataclass
class ChannelRow:
    active: QCheckBox
    swatch: QPushButton
    lo: QDoubleSpinBox
    hi: QDoubleSpinBox
    inverted: QToolButton
    histogram: WindowHistogram
    auto: QToolButton


class ChannelPanel(QWidget):
    """``changed(position, {"window": (lo, hi)} | {"color": rgb} | {"active": b} | {"inverted": b})``
    and ``mode_changed("composite" | "single")`` forward what the user did."""

    def __init__(self, state: ViewState, changed: Callable[[int, dict[str, Any]], None],
                 mode_changed: Callable[[str], None], pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.changed = changed
        self.mode_changed = mode_changed
        self.shown: tuple[ChannelSetting, ...] = ()
        self.driver: Driver[HistogramAsk, HistogramRequest, tuple[ChannelHistogram, ...]] = Driver(
            HistogramsModel(), pool, self._counted, post=lambda fn: post(fn, self), name="channel histograms")
        #: the histograms shown, by channel index
        self.histograms: dict[int, ChannelHistogram] = {}
        kind = state.array.dtype.kind
        self.decimals = 0 if kind in "biu" else 4
        if kind in "biu":
            info = np.iinfo(state.array.dtype) if kind != "b" else np.iinfo(np.uint8)
            self.bounds = (float(info.min), float(info.max))
        else:
            self.bounds = (-1e12, 1e12)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel(f"Channels ({len(state.channels)})"))
        self.composite = QRadioButton("Composite")
        self.composite.setToolTip("The active channels added, each in its colour through its window")
        self.single = QRadioButton("Single")
        self.single.setToolTip("One channel at a time on its slider, through the histogram's levels and colours")
        group = QButtonGroup(self)
        for b in (self.composite, self.single):
            group.addButton(b)
            top.addWidget(b)
        top.addStretch(1)
        (self.composite if state.channel_mode == "composite" else self.single).setChecked(True)
        self.composite.toggled.connect(lambda on: self.mode_changed("composite" if on else "single"))
        self.rows: list[ChannelRow] = []
        inner = self.list_content = QWidget()
        grid = QGridLayout(inner)
        grid.setContentsMargins(2, 2, 2, 2)
        grid.setVerticalSpacing(2)
        for pos, ch in enumerate(state.channels):
            self.rows.append(self._row(grid, pos, ch))
        grid.setColumnStretch(3, 1)
        self.list = QScrollArea()
        self.list.setWidget(inner)
        self.list.setWidgetResizable(True)
        # every row up to VISIBLE_ROWS, with room for the scroll bar across where the rows are wider
        # than the column: the list never scrolls a few rows above empty space
        rows_height = min(len(state.channels), VISIBLE_ROWS) * ROW_HEIGHT + 8
        self.list.setMinimumHeight(rows_height + self.list.horizontalScrollBar().sizeHint().height())
        self.list.setMaximumHeight(rows_height + self.list.horizontalScrollBar().sizeHint().height())
        outer = QGridLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(top, 0, 0)
        outer.addWidget(self.list, 1, 0)
        self.show_state(state)

    def _row(self, grid: QGridLayout, pos: int, ch: ChannelSetting) -> ChannelRow:
        active = QCheckBox(ch.label)
        active.setToolTip(f"Show {ch.label} in the composite")
        swatch = QPushButton()
        swatch.setFixedSize(28, 18)
        swatch.setToolTip(f"The colour of {ch.label}")
        lo, hi = QDoubleSpinBox(), QDoubleSpinBox()
        for box, end in ((lo, "black"), (hi, "full colour")):
            box.setDecimals(self.decimals)
            box.setKeyboardTracking(False)  # a typed number counts once it is complete
            box.setButtonSymbols(QAbstractSpinBox.ButtonSymbols.NoButtons)
            box.setMaximumWidth(90)
            box.setToolTip(f"The value of {ch.label} drawn {end}")
        inverted = QToolButton()
        inverted.setText("inv")
        inverted.setCheckable(True)
        inverted.setToolTip(f"Invert {ch.label}: low values bright")
        active.toggled.connect(lambda on: self.changed(pos, {"active": bool(on)}))
        histogram = WindowHistogram(lambda window: self.changed(pos, {"window": window}), self.decimals)
        histogram.setToolTip(f"The values of {ch.label} on screen; drag a handle to set its window")
        auto = QToolButton()
        auto.setText("auto")
        auto.setEnabled(False)  # until the histogram is counted
        auto.setToolTip(f"The window of {ch.label} from its values on screen (0.5 and 99.5 percentiles)")
        auto.clicked.connect(lambda: self._auto(pos))
        inverted.toggled.connect(lambda on: self.changed(pos, {"inverted": bool(on)}))
        lo.valueChanged.connect(lambda _: self._window(pos))
        hi.valueChanged.connect(lambda _: self._window(pos))
        swatch.clicked.connect(lambda: self._pick_colour(pos))
        for col, w in enumerate((active, swatch, lo, histogram, hi, inverted, auto)):
            grid.addWidget(w, pos, col)
        return ChannelRow(active, swatch, lo, hi, inverted, histogram, auto)

    def _window(self, pos: int) -> None:
        row = self.rows[pos]
        self.changed(pos, {"window": (float(row.lo.value()), float(row.hi.value()))})

    def _pick_colour(self, pos: int) -> None:
        ch = self.shown[pos]
        colour = QColorDialog.getColor(QColor(*ch.color), self, f"Colour of {ch.label}")
        if colour.isValid():
            self.changed(pos, {"color": (colour.red(), colour.green(), colour.blue())})

    def _auto(self, pos: int) -> None:
        hist = self.histograms.get(self.shown[pos].index) if pos < len(self.shown) else None
        if hist is not None:
            self.changed(pos, {"window": hist.auto})

    def show_scene(self, scene: Scene, state: ViewState) -> None:
        """Show ``state`` and the histograms of ``scene``'s values: counted on a worker when
        they are new values (another plane, region or resolution), kept otherwise."""
        self.show_state(state)
        self.driver.show(HistogramAsk(scene, state))

    def _counted(self, histograms: tuple[ChannelHistogram, ...]) -> None:
        self.histograms = {h.index: h for h in histograms}
        for row, ch in zip(self.rows, self.shown):
            hist = self.histograms.get(ch.index)
            row.histogram.set_histogram(hist)
            row.auto.setEnabled(hist is not None)

    def show_state(self, state: ViewState) -> None:
        """Show ``state``'s channels and mode, forwarding nothing."""
        single = state.channel_mode != "composite"
        if self.single.isChecked() != single:
            for b in (self.composite, self.single):
                b.blockSignals(True)
            (self.single if single else self.composite).setChecked(True)
            for b in (self.composite, self.single):
                b.blockSignals(False)
        self.list_content.setEnabled(not single)
        if state.channels == self.shown:
            return
        old = self.shown
        self.shown = state.channels
        for pos, (row, ch) in enumerate(zip(self.rows, state.channels)):
            if pos < len(old) and old[pos] == ch:
                continue
            widgets = (row.active, row.lo, row.hi, row.inverted)
            for w in widgets:
                w.blockSignals(True)
            row.active.setChecked(ch.active)
            row.inverted.setChecked(ch.inverted)
            row.swatch.setStyleSheet(f"background-color: #{ch.hex}; border: 1px solid palette(mid);")
            lo, hi = ch.window if ch.window is not None else (ch.limits or self.bounds)
            bottom, top = ch.limits or self.bounds
            for box in (row.lo, row.hi):
                box.setRange(min(bottom, lo, hi), max(top, lo, hi))
            row.lo.setValue(lo)
            row.hi.setValue(hi)
            row.histogram.set_window((lo, hi))
            row.histogram.set_colour(ch.color)
            for w in widgets:
                w.blockSignals(False)


def add_channel_panel(side: SideColumn, state: ViewState, plane: PlaneControls | None,
                      changed: Callable[[int, dict[str, Any]], None],
                      mode_changed: Callable[[str], None], pool: WorkerPool) -> ChannelPanel:
    """The panel in the column beside the image; the plane controls' RGB box gives way
    to it (the mode switch says whether the channel axis is colour)."""
    if plane is not None and plane.rgb_box is not None:
        plane.rgb_box.hide()
        plane.rgb_box = None
    panel = ChannelPanel(state, changed, mode_changed, pool)
    side.add(panel)
    sync_channel_slider(plane, state)
    return panel


def sync_channel_slider(plane: PlaneControls | None, state: ViewState) -> None:
    """The channel axis has a slider in single mode only (a composite shows all channels)."""
    c = state.channel_axis
    if plane is None or c is None or c not in plane.sliders:
        return
    visible = state.channel_dim != c and c not in (state.y_dim, state.x_dim)
    for w in (*plane.sliders[c], plane.labels[c]):
        w.setVisible(visible)
