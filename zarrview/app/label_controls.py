"""The label layers' panel: a row per label image of the shown image, a check box with its name
(shown or not), an opacity slider and a colours menu (a label's colour, shuffling the generated
palette, back to the metadata's colours). It only forwards the user's choices; the view model's
state (``ViewState.labels``) says what is drawn."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QCheckBox, QColorDialog, QGridLayout, QGroupBox, QInputDialog, QLabel, QMenu,
                               QSlider, QToolButton, QWidget)

from ..viewing.labels.layers import RGBA, LabelLayer
from ..zarrlib import Group

if TYPE_CHECKING:
    from .fold_panels import SideColumn
    from .view_host import LabelHost

Changed = Callable[[str, dict[str, Any]], None]


class LabelPanel(QGroupBox):
    """``changed(name, {"visible": bool} | {"opacity": float} | {"colors": ..., "seed": int})`` on
    every user change; ``current(name)`` is the layer as the view has it now."""

    def __init__(self, layers: tuple[LabelLayer, ...], changed: Changed, parent: QWidget | None = None,
                 current: Callable[[str], LabelLayer | None] | None = None) -> None:
        super().__init__("Labels", parent)
        self.changed = changed
        self.original = {layer.name: layer for layer in layers}
        self.current = current or self.original.get
        self.boxes: dict[str, QCheckBox] = {}
        self.sliders: dict[str, QSlider] = {}
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 2, 6, 2)
        for row, layer in enumerate(layers):
            box = QCheckBox(layer.name)
            box.setChecked(layer.visible)
            box.setToolTip(f"Overlay the label image labels/{layer.name}")
            box.toggled.connect(lambda on, n=layer.name: self.changed(n, {"visible": bool(on)}))
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(0, 100)
            slider.setValue(round(layer.opacity * 100))
            slider.setMinimumWidth(80)
            slider.setToolTip(f"Opacity of {layer.name}")
            slider.valueChanged.connect(lambda v, n=layer.name: self.changed(n, {"opacity": v / 100}))
            grid.addWidget(box, row, 0)
            grid.addWidget(QLabel("Opacity"), row, 1)
            grid.addWidget(slider, row, 2)
            grid.addWidget(self._colours_button(layer.name), row, 3)
            self.boxes[layer.name], self.sliders[layer.name] = box, slider
        grid.setColumnStretch(2, 1)

    def _colours_button(self, name: str) -> QToolButton:
        button = QToolButton()
        button.setText("Colours")
        button.setToolTip(f"Colours of {name}")
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(button)
        menu.addAction("Colour of a label…", lambda: self.ask_colour(name))
        menu.addAction("Shuffle the generated colours", lambda: self.shuffle(name))
        menu.addAction("Colours from the metadata", lambda: self.reset(name))
        button.setMenu(menu)
        return button

    def ask_colour(self, name: str) -> None:
        layer = self.current(name)
        if layer is None:
            return
        value, ok = QInputDialog.getInt(self, f"Colour of a label of {name}", "Label value:", 1, -(1 << 31), (1 << 31) - 1)
        if not ok:
            return
        colour = QColorDialog.getColor(QColor(*layer.color_of(value)), self, f"{name} {value}",
                                       QColorDialog.ColorDialogOption.ShowAlphaChannel)
        if colour.isValid():
            self.set_colour(name, value, (colour.red(), colour.green(), colour.blue(), colour.alpha()))

    def set_colour(self, name: str, value: int, rgba: RGBA | None) -> None:
        """Label ``value`` of layer ``name`` drawn in ``rgba`` (None: the generated colour)."""
        layer = self.current(name)
        if layer is not None:
            self.changed(name, {"colors": layer.with_color(value, rgba).colors})

    def shuffle(self, name: str) -> None:
        layer = self.current(name)
        if layer is not None:
            self.changed(name, {"seed": layer.seed + 1})

    def reset(self, name: str) -> None:
        original = self.original[name]
        self.changed(name, {"colors": original.colors, "seed": original.seed})


def add_label_panel(side: SideColumn, layers: tuple[LabelLayer, ...], changed: Changed,
                    current: Callable[[str], LabelLayer | None] | None = None) -> LabelPanel:
    """The panel in the column beside the image, under the channels."""
    panel = LabelPanel(layers, changed, current=current)
    side.add(panel)
    return panel


def show_labels(view: LabelHost, image: Group, layers: tuple[LabelLayer, ...]) -> LabelPanel | None:
    """The label layers of ``image`` (read after it, off the GUI thread) into the view's state,
    and their panel, for the view to keep; None where the view shows another image or has the
    layers already."""
    state = view.state
    if not layers or state is None or view.ome is None or view.ome.group is not image:
        return None
    if state.labels and state.labels is not layers:
        return None  # the image's layers are there already
    if state.labels is not layers:
        view.set_state(state.with_(labels=layers))

    def changed(name: str, changes: dict[str, Any]) -> None:  # shown, hidden, faded: redrawn, read if never read
        if view.state is not None:
            view.set_state(view.state.with_label(name, **changes))

    def current(name: str) -> LabelLayer | None:
        return next((lay for lay in view.state.labels if lay.name == name), None) if view.state is not None else None

    return add_label_panel(view.side, layers, changed, current)
