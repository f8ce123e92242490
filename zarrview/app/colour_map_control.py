"""The colour map control beside a plane: a visible choice (not a menu inside the histogram),
remembered per array, applied to the histogram, which the image and image exports follow."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QCheckBox, QComboBox, QGridLayout, QHBoxLayout, QLabel, QWidget

from ..viewing.image.colour_maps import AUTO, CHOICES, GREY, default_map, lookup_table

#: arrays whose colour map is remembered, at most
REMEMBERED = 500
KEY = "colour_maps"


class ColourMapControl(QWidget):
    def __init__(self, settings: QSettings, array_key: str, histogram: Any, scalar_field: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings, self.key, self.histogram, self.scalar_field = settings, array_key, histogram, scalar_field
        self.combo = QComboBox()
        self.combo.addItems([AUTO, *CHOICES])
        self.combo.setToolTip("Colour map: by the data, diverging for data symmetric around 0, viridis for a "
                              "physical field, grey otherwise")
        self.reverse = QCheckBox("reversed")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Colours"))
        layout.addWidget(self.combo, 1)
        layout.addWidget(self.reverse)
        saved = self._saved().get(self.key)
        if isinstance(saved, list) and len(saved) == 2 and saved[0] in CHOICES:
            self.combo.setCurrentText(saved[0])
            self.reverse.setChecked(bool(saved[1]))
        #: the map "auto" chose (after the first levels), None until then
        self.chosen: str | None = None
        self.combo.currentTextChanged.connect(lambda _: self._changed())
        self.reverse.toggled.connect(lambda _: self._changed())
        if not self._auto():
            self.apply()
        else:  # grey until the first levels decide: never the previous array's map
            self._show(GREY, False)

    @property
    def name(self) -> str | None:
        """The map shown (None: auto, not decided yet)."""
        return self.chosen if self._auto() else self.combo.currentText()

    def choice(self) -> str | None:
        """The map chosen by name, with "_r" when reversed; None where it is left to the data
        (auto): what a saved view keeps, so that auto decides again from the same values."""
        if self._auto():
            return None
        return self.combo.currentText() + ("_r" if self.reverse.isChecked() else "")

    def choose(self, choice: str | None) -> None:
        """Show the map ``choice`` names (``choice``'s form; None: auto), as a person would pick it."""
        name, reverse = (AUTO, False) if choice is None else (choice.removesuffix("_r"), choice.endswith("_r"))
        if name != AUTO and name not in CHOICES:
            return
        self.reverse.setChecked(reverse)
        self.combo.setCurrentIndex(0 if name == AUTO else self.combo.findText(name))

    def levels_known(self, levels: tuple[float, float] | None) -> None:
        """The first display levels: what auto decides by."""
        if self._auto() and self.chosen is None and levels is not None:
            self.chosen = default_map(levels, self.scalar_field)
            self.combo.blockSignals(True)  # the item's new words are no choice: the map is built once, below
            self.combo.setItemText(0, f"{AUTO}: {self.chosen}")  # what auto took, said
            self.combo.blockSignals(False)
            self.apply()

    def _auto(self) -> bool:
        return self.combo.currentIndex() == 0

    def apply(self) -> None:
        name = self.name
        if name is None:
            return
        self._show(name, self.reverse.isChecked())

    def _show(self, name: str, reverse: bool) -> None:
        """Grey as the gradient's own two-stop ramp (a millisecond); another map as its 256
        colours, which the gradient editor takes ~20 ms to build: once, when it is chosen."""
        if name == GREY and not reverse:
            self.histogram.gradient.loadPreset("grey")
            return
        table = lookup_table(name, reverse)
        self.histogram.gradient.setColorMap(pg.ColorMap(np.linspace(0.0, 1.0, len(table)), table))

    def _changed(self) -> None:
        saved = self._saved()
        saved.pop(self.key, None)
        if not self._auto():
            saved[self.key] = [self.combo.currentText(), self.reverse.isChecked()]
        self.settings.setValue(KEY, json.dumps(dict(list(saved.items())[-REMEMBERED:])))
        self.apply()

    def _saved(self) -> dict[str, Any]:
        try:
            saved = json.loads(str(self.settings.value(KEY, "{}")))
        except json.JSONDecodeError:
            return {}
        return saved if isinstance(saved, dict) else {}


def colour_control(layout: QGridLayout, state: Any, histogram: Any) -> ColourMapControl | None:
    """The control for a plane drawn through one colour map (not a composite, not RGB), placed
    at the end of the controls' first row; None for the others."""
    if state.composite or state.channel_dim is not None:
        return None
    arr = state.array
    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    scalar_field = bool(attrs.get("units") or attrs.get("standard_name"))
    control = ColourMapControl(QSettings(), f"{arr.store.url}::{arr.path}", histogram, scalar_field)
    layout.addWidget(control, 0, 7)
    return control
