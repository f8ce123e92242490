"""The channel controls of an image with a channel axis: Composite or Single, and a row per
channel (visible, colour, window, inverted) in a scroll area, so forty channels fit as well as
three.

The panel holds no view logic: each change is forwarded as the new values of one channel (or
the new mode), which the data view turns into a new ``ViewState``; what it shows comes back
from the state with every scene (``show_state``), so windows the view model takes from the
data (Auto contrast, a channel without ``window``) appear in the boxes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractSpinBox, QButtonGroup, QCheckBox, QColorDialog, QDoubleSpinBox, QGridLayout,
                               QHBoxLayout, QLabel, QPushButton, QRadioButton, QScrollArea, QToolButton, QWidget)

from ..viewing.image.channels import ChannelSetting
from ..viewing.image.state import ViewState
from .plane_controls import PlaneControls

#: rows of channels shown before the list scrolls
VISIBLE_ROWS = 5
ROW_HEIGHT = 26


@dataclass
class ChannelRow:
    active: QCheckBox
    swatch: QPushButton
    lo: QDoubleSpinBox
    hi: QDoubleSpinBox
    inverted: QToolButton


class ChannelPanel(QWidget):
    """``changed(position, {"window": (lo, hi)} | {"color": rgb} | {"active": b} | {"inverted": b})``
    and ``mode_changed("composite" | "single")`` forward what the user did."""

    def __init__(self, state: ViewState, changed: Callable[[int, dict[str, Any]], None],
                 mode_changed: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.changed = changed
        self.mode_changed = mode_changed
        self.shown: tuple[ChannelSetting, ...] = ()
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
        inner = QWidget()
        grid = QGridLayout(inner)
        grid.setContentsMargins(2, 2, 2, 2)
        grid.setVerticalSpacing(2)
        for pos, ch in enumerate(state.channels):
            self.rows.append(self._row(grid, pos, ch))
        grid.setColumnStretch(5, 1)
        self.list = QScrollArea()
        self.list.setWidget(inner)
        self.list.setWidgetResizable(True)
        self.list.setMaximumHeight(min(len(state.channels), VISIBLE_ROWS) * ROW_HEIGHT + 8)
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
        inverted.toggled.connect(lambda on: self.changed(pos, {"inverted": bool(on)}))
        lo.valueChanged.connect(lambda _: self._window(pos))
        hi.valueChanged.connect(lambda _: self._window(pos))
        swatch.clicked.connect(lambda: self._pick_colour(pos))
        for col, w in enumerate((active, swatch, lo, hi, inverted)):
            grid.addWidget(w, pos, col)
        return ChannelRow(active, swatch, lo, hi, inverted)

    def _window(self, pos: int) -> None:
        row = self.rows[pos]
        self.changed(pos, {"window": (float(row.lo.value()), float(row.hi.value()))})

    def _pick_colour(self, pos: int) -> None:
        ch = self.shown[pos]
        colour = QColorDialog.getColor(QColor(*ch.color), self, f"Colour of {ch.label}")
        if colour.isValid():
            self.changed(pos, {"color": (colour.red(), colour.green(), colour.blue())})

    def show_state(self, state: ViewState) -> None:
        """Show ``state``'s channels and mode, forwarding nothing."""
        single = state.channel_mode != "composite"
        if self.single.isChecked() != single:
            for b in (self.composite, self.single):
                b.blockSignals(True)
            (self.single if single else self.composite).setChecked(True)
            for b in (self.composite, self.single):
                b.blockSignals(False)
        self.list.widget().setEnabled(not single)
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
            for w in widgets:
                w.blockSignals(False)


def add_channel_panel(layout: QGridLayout, state: ViewState, plane: PlaneControls | None,
                      changed: Callable[[int, dict[str, Any]], None],
                      mode_changed: Callable[[str], None]) -> ChannelPanel:
    """The panel in a row under the sliders and level picker; the plane controls' RGB box gives way
    to it (the mode switch says whether the channel axis is colour)."""
    if plane is not None and plane.rgb_box is not None:
        plane.rgb_box.hide()
        plane.rgb_box = None
    panel = ChannelPanel(state, changed, mode_changed)
    layout.addWidget(panel, state.array.ndim + 2, 0, 1, 7)
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
