"""The controls above an image: which dimensions are rows and columns, complex and colour
modes, the contrast (``contrast_controls.py``), and a slider with an index box for every other
dimension.

Zarr allows dimensions of any length (a sparse array of shape [2**62, 2**62] is valid), but
QSlider and QSpinBox hold a C int: setting a range past 2**31 - 1 raises OverflowError in the
middle of building the view. Dimensions that long get an index box that holds a Python int and
a slider that moves in proportional steps instead; shorter ones keep the plain spin box.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import cast

from PySide6.QtCore import QRegularExpression, Qt, Signal
from PySide6.QtGui import QKeyEvent, QRegularExpressionValidator
from PySide6.QtWidgets import QCheckBox, QComboBox, QGridLayout, QLabel, QLineEdit, QSlider, QSpinBox, QWidget

from ..viewing.image.axes import colour_axis, dim_names
from ..viewing.ome.model import Multiscale, OmeImage
from ..viewing.ome.view import level_label
from ..viewing.image.state import COMPLEX_MODES, ViewState
from .contrast_controls import ContrastControls

#: the largest value a QSlider or QSpinBox can hold
INT_MAX = 2**31 - 1
#: positions of the slider of a dimension longer than ``INT_MAX``
LONG_SLIDER_STEPS = 1 << 20


class LongIndexBox(QLineEdit):
    """An index into a dimension longer than a C int, with QSpinBox's ``value``/``setValue``/
    ``valueChanged`` (Up and Down step by one), so the data view treats both alike."""

    valueChanged = Signal(object)  # noqa: N815 - QSpinBox's name; object: a Python int of any size

    def __init__(self, maximum: int) -> None:
        super().__init__()
        self._maximum = maximum
        self._value = 0
        self.setValidator(QRegularExpressionValidator(QRegularExpression(rf"\d{{1,{len(str(maximum))}}}"), self))
        self.setText("0")
        self.setToolTip(f"index, 0 to {maximum:,}")
        self.editingFinished.connect(lambda: self.setValue(int(self.text() or 0)))

    def value(self) -> int:
        return self._value

    def setValue(self, value: int) -> None:  # noqa: N802 - QSpinBox's name
        value = min(max(0, int(value)), self._maximum)
        self.setText(str(value))
        if value != self._value:
            self._value = value
            self.valueChanged.emit(value)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        step = {Qt.Key.Key_Up: 1, Qt.Key.Key_Down: -1}.get(Qt.Key(event.key()))
        if step is None:
            super().keyPressEvent(event)
        else:
            self.setValue(self._value + step)


IndexBox = QSpinBox | LongIndexBox


def index_controls(length: int, start: int) -> tuple[QSlider, IndexBox]:
    """A slider and an index box for a dimension of ``length`` elements, kept in step, at ``start``."""
    last = max(0, length - 1)
    slider = QSlider(Qt.Orientation.Horizontal)
    if last <= INT_MAX:
        spin = QSpinBox()
        for w in (slider, spin):
            w.setRange(0, last)
            w.setValue(min(start, last))
        slider.valueChanged.connect(spin.setValue)
        spin.valueChanged.connect(slider.setValue)
        return slider, spin
    box = LongIndexBox(last)
    box.setValue(start)
    slider.setRange(0, LONG_SLIDER_STEPS)

    dragging = [False]

    def follow(value: int) -> None:
        """The box moved: move the slider, without its signal setting the box back to a rounded index."""
        if not dragging[0]:
            slider.blockSignals(True)
            slider.setValue(value * LONG_SLIDER_STEPS // last)
            slider.blockSignals(False)

    def lead(position: int) -> None:
        """The slider moved: set the box, which must not nudge the slider by its rounding."""
        dragging[0] = True
        try:
            box.setValue(position * last // LONG_SLIDER_STEPS)
        finally:
            dragging[0] = False

    follow(box.value())
    box.valueChanged.connect(follow)
    slider.valueChanged.connect(lead)
    return slider, box


@dataclass
class PlaneControls:
    y_combo: QComboBox
    x_combo: QComboBox
    complex_combo: QComboBox | None = None
    rgb_box: QCheckBox | None = None
    rgb_dim: int | None = None
    sliders: dict[int, tuple[QSlider, IndexBox]] = field(default_factory=dict)
    labels: dict[int, QLabel] = field(default_factory=dict)
    #: a box to type a coordinate value in, per dimension that has coordinates (``CFPresenter``)
    values: dict[int, QWidget] = field(default_factory=dict)
    #: Auto contrast, the levels typed, Auto per plane
    contrast: ContrastControls | None = None

    def shown(self) -> tuple[int, int, int | None]:
        """(rows, columns, colour dimension or None) as the controls say now."""
        y, x = self.y_combo.currentIndex(), self.x_combo.currentIndex()
        colour = self.rgb_dim if self.rgb_box is not None and self.rgb_box.isChecked() else None
        return y, x, None if colour in (y, x) else colour

    def show_sliders(self) -> None:
        """Only the dimensions that are neither displayed nor colour have a visible slider."""
        shown = self.shown()
        for dim, (slider, box) in self.sliders.items():
            visible = dim not in shown
            for w in (slider, box, self.labels[dim], self.values.get(dim)):
                if w is not None:
                    w.setVisible(visible)


def build_plane_controls(layout: QGridLayout, state: ViewState, *, index_changed: Callable[[int, int], None],
                         axes_changed: Callable[[int, int, int | None], None],
                         complex_changed: Callable[[str], None], auto_contrast: Callable[[], None],
                         levels_typed: Callable[[tuple[float, float]], None],
                         per_plane: Callable[[bool], None]) -> PlaneControls:
    """Fill ``layout`` (row 0: axes and modes; row ``d + 1``: dimension ``d``) from ``state``
    and forward each change: the callbacks get the new values, never the widgets."""
    arr = state.array
    names = dim_names(arr, state.axis_names)
    c = PlaneControls(QComboBox(), QComboBox())
    for combo, default in ((c.y_combo, state.y_dim), (c.x_combo, state.x_dim)):
        combo.addItems([f"{n} ({s})" for n, s in zip(names, arr.shape)])
        combo.setCurrentIndex(default)
    layout.addWidget(QLabel("Rows"), 0, 0)
    layout.addWidget(c.y_combo, 0, 1)
    layout.addWidget(QLabel("Columns"), 0, 2)
    layout.addWidget(c.x_combo, 0, 3)
    if arr.dtype.kind == "c":
        c.complex_combo = QComboBox()
        c.complex_combo.addItems(COMPLEX_MODES)
        c.complex_combo.setCurrentText(state.complex_mode)
        c.complex_combo.currentTextChanged.connect(complex_changed)
        layout.addWidget(c.complex_combo, 0, 4)
    c.contrast = ContrastControls(auto_contrast, levels_typed, per_plane, planes=arr.ndim > 2,
                                  per_plane_on=state.auto_per_plane)
    layout.addWidget(c.contrast.first, 0, 6)
    if c.contrast.second is not None:
        layout.addWidget(c.contrast.second, 1, 6)
    c.rgb_dim = colour_axis(arr)
    if c.rgb_dim is not None:
        c.rgb_box = QCheckBox(f"{names[c.rgb_dim]} as {'RGBA' if arr.shape[c.rgb_dim] == 4 else 'RGB'}")
        c.rgb_box.setChecked(state.channel_dim == c.rgb_dim)
        layout.addWidget(c.rgb_box, 0, 5)
    for dim in range(arr.ndim):
        slider, box = index_controls(arr.shape[dim], state.indices[dim])
        box.valueChanged.connect(lambda v, d=dim: index_changed(d, int(v)))
        c.sliders[dim] = (slider, box)
        c.labels[dim] = QLabel(names[dim])
        layout.addWidget(c.labels[dim], dim + 1, 0)
        layout.addWidget(slider, dim + 1, 1, 1, 3)
        layout.addWidget(box, dim + 1, 4)

    def axes(sender: QComboBox | None) -> None:
        y, x = c.y_combo.currentIndex(), c.x_combo.currentIndex()
        if y == x:  # keep two distinct dimensions: move the other combo out of the way
            other = c.x_combo if sender is c.y_combo else c.y_combo
            other.blockSignals(True)
            other.setCurrentIndex(next(d for d in reversed(range(arr.ndim)) if d != y and d != c.rgb_dim))
            other.blockSignals(False)
        c.show_sliders()
        axes_changed(*c.shown())

    c.y_combo.currentIndexChanged.connect(lambda _: axes(c.y_combo))
    c.x_combo.currentIndexChanged.connect(lambda _: axes(c.x_combo))
    if c.rgb_box is not None:
        c.rgb_box.toggled.connect(lambda _: axes(None))
    c.show_sliders()
    return c


def add_level_picker(layout: QGridLayout, ms: Multiscale, state: ViewState,
                     picked: Callable[[int | None], None]) -> QComboBox:
    """A row under the sliders: "auto" (the level chosen by zoom) or one level, each described
    by its size, pixel size and chunks a plane."""
    combo = QComboBox()
    combo.addItem("auto: the coarsest level as fine as the screen", None)
    for level in ms.readable_levels:
        combo.addItem(level_label(ms, level, state.y_dim, state.x_dim), level.index)
    combo.currentIndexChanged.connect(lambda i: picked(combo.itemData(i)))
    row = state.array.ndim + 1
    layout.addWidget(QLabel("Level"), row, 0)
    layout.addWidget(combo, row, 1, 1, 4)
    return combo


def add_multiscale_picker(level_picker: QComboBox, image: OmeImage, chosen: Callable[[OmeImage], None]) -> QComboBox:
    """Beside the level picker, when a group holds several multiscales: each by its name and
    levels; choosing one shows the image with that pyramid first (``OmeImage.first``)."""
    combo = QComboBox()
    order = image.multiscales
    for i, ms in enumerate(order):
        combo.addItem(f"{ms.name or f'multiscale {i}'} ({len(ms.levels)} levels)", i)
    combo.setToolTip("This group holds several multiscale pyramids")

    def pick(i: int) -> None:
        first = order[i]
        chosen(replace(image, multiscales=(first, *(m for m in order if m is not first))))

    combo.currentIndexChanged.connect(pick)
    return _beside(level_picker, combo)


def add_variable_picker(level_picker: QComboBox, variables: tuple[str, ...], shown: str | None,
                        chosen: Callable[[str], None]) -> QComboBox:
    """Beside the level picker, when a pyramid's level groups hold several arrays (a band each):
    choosing one shows that array's pyramid."""
    combo = QComboBox()
    for name in variables:
        combo.addItem(name, name)
    combo.setCurrentIndex(max(0, combo.findData(shown)))
    combo.setToolTip("Each level group holds these arrays; each has a pyramid of its own")
    combo.currentIndexChanged.connect(lambda i: chosen(combo.itemData(i)))
    return _beside(level_picker, combo)


def _beside(level_picker: QComboBox, combo: QComboBox) -> QComboBox:
    parent = level_picker.parentWidget()
    layout = parent.layout() if parent is not None else None
    assert isinstance(layout, QGridLayout)
    index = layout.indexOf(level_picker)
    # (row, column, row span, column span): the bindings' stubs say only "object"
    row, _, _, _ = cast(tuple[int, int, int, int], layout.getItemPosition(index))
    layout.addWidget(combo, row, 5, 1, 2)
    return combo
