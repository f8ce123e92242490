"""The label layers' panel: a row per label image of the shown image, a check box with its name
(shown or not) and an opacity slider. It only forwards the user's choices; the view model's state
(``ViewState.labels``) says what is drawn."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QGridLayout, QGroupBox, QLabel, QSlider, QWidget

from ..viewing.labels import LabelLayer
from ..zarrlib import Group

if TYPE_CHECKING:
    from .data_view import DataView

Changed = Callable[[str, dict[str, Any]], None]


class LabelPanel(QGroupBox):
    """``changed(name, {"visible": bool} | {"opacity": float})`` on every user change."""

    def __init__(self, layers: tuple[LabelLayer, ...], changed: Changed, parent: QWidget | None = None) -> None:
        super().__init__("Labels", parent)
        self.changed = changed
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
            slider.setToolTip(f"Opacity of {layer.name}")
            slider.valueChanged.connect(lambda v, n=layer.name: self.changed(n, {"opacity": v / 100}))
            grid.addWidget(box, row, 0)
            grid.addWidget(QLabel("Opacity"), row, 1)
            grid.addWidget(slider, row, 2)
            self.boxes[layer.name], self.sliders[layer.name] = box, slider
        grid.setColumnStretch(2, 1)


def add_label_panel(layout: QGridLayout, layers: tuple[LabelLayer, ...], row: int, changed: Changed) -> LabelPanel:
    """The panel in a row of its own under the other controls."""
    panel = LabelPanel(layers, changed)
    layout.addWidget(panel, row, 0, 1, 7)
    return panel


def show_labels(view: DataView, image: Group, layers: tuple[LabelLayer, ...]) -> None:
    """The label layers of ``image`` (read after it, off the GUI thread) into the data view's
    state, with their panel; nothing where the view shows another image or has them already."""
    state = view.state
    if not layers or state is None or view._ome is None or view._ome.group is not image:  # noqa: SLF001
        return
    if state.labels and state.labels is not layers:
        return  # the image's layers are there already
    if state.labels is not layers:
        view.controller.set_state(state.with_(labels=layers))

    def changed(name: str, changes: dict[str, Any]) -> None:  # shown, hidden, faded: redrawn, read if never read
        if view.state is not None:
            view.controller.set_state(view.state.with_label(name, **changes))

    view.label_panel = add_label_panel(view.controls_layout, layers, state.array.ndim + 3, changed)
