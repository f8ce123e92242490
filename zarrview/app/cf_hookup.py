"""What the window does with an array's CF conventions (``viewing.cf.view``): they are read off
the GUI thread once the array is shown, then put into the view state (decoding, coordinates,
units) and into the widgets: slider labels with coordinate values and a box to type one, axes
ticked in coordinate values with north up, a title and colour bar with the long name and units,
and a check box for the stored values. Everything here only presents; the view model decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtWidgets import QCheckBox, QLineEdit

from ..viewing.cf.coords import CoordAxis, CoordError
from ..viewing.cf.view import CFView, read_cf
from ..scheduling import Answer, call_job
from ..zarrlib import Array

if TYPE_CHECKING:
    from .data_view import DataView

#: the column of a slider's row where the coordinate value can be typed
VALUE_COLUMN = 5


def start(view: DataView, arr: Array) -> None:
    """Read ``arr``'s CF conventions on a worker and apply them if it is still the one shown."""
    present(view, None)

    def done(answer: Answer[CFView | None]) -> None:
        if answer.stale or answer.cancelled:
            return  # another array shown meanwhile
        cf, error = answer.value, answer.error
        if view.array is not arr or view.state is None or view.state.array is not arr:
            return  # another array is shown now
        if error is not None:
            view.status.emit(f"The CF attributes of {arr.path} could not be read: {error}")
            return
        if cf is not None:
            apply(view, cf)

    view.cf_lane.submit(call_job(lambda: read_cf(arr), label=f"CF attributes of {arr.path}"), done)


def apply(view: DataView, cf: CFView) -> None:
    state = view.state
    assert state is not None
    contrast = state.contrast if state.contrast is not None or cf.range is None else cf.range
    names = cf.names if cf.names and state.axis_names is None else state.axis_names
    view.controller.set_state(state.with_(cf=cf, contrast=contrast, axis_names=names))
    plane = view.plane
    if plane is not None and names != state.axis_names and names:  # NCZarr's names, read with the rest
        for combo in (plane.y_combo, plane.x_combo):
            for d, n in enumerate(names):
                combo.setItemText(d, f"{n} ({state.array.shape[d]})")
        view.label_axes()
    if plane is not None:
        for dim, axis in cf.axes.items():
            if dim in plane.sliders:
                _value_box(view, dim, axis)
        if cf.coding.active:
            box = QCheckBox("Stored values")
            box.setToolTip("Show the values as stored, without CF masking (_FillValue, missing_value, valid range) "
                           "and unpacking (scale_factor, add_offset)")
            box.toggled.connect(lambda raw: view.state is not None
                                and view.controller.set_state(view.state.with_(raw=bool(raw))))
            view.controls_layout.addWidget(box, 0, VALUE_COLUMN)
    label_sliders(view)
    present(view, cf)
    if cf.notes:
        view.status.emit(f"CF attributes of {state.array.path}: " + "; ".join(cf.notes))


def _value_box(view: DataView, dim: int, axis: CoordAxis) -> None:
    edit = QLineEdit()
    name = axis.name.rsplit("/", 1)[-1]  # "time", not "weather/time"
    edit.setPlaceholderText(f"{name} value")
    edit.setToolTip(f"Type a value of {axis.name}{f' ({axis.units})' if axis.units else ''}: "
                    "the nearest one is shown")

    def typed() -> None:
        text = edit.text().strip()
        if not text or view.plane is None:
            return
        try:
            index = axis.nearest(text)
        except CoordError as e:
            edit.setStyleSheet("color: #c00")
            view.status.emit(str(e))
            return
        edit.setStyleSheet("")
        view.plane.sliders[dim][1].setValue(index)
        view.status.emit(f"{name} = {axis.label(index)} (index {index})")

    edit.editingFinished.connect(typed)
    view.controls_layout.addWidget(edit, dim + 1, VALUE_COLUMN)
    if view.plane is not None:
        view.plane.values[dim] = edit
        view.plane.show_sliders()


def label_sliders(view: DataView) -> bool:
    """Each slider along a coordinate says its value (``time  2001-03-04 06:00``); False where the
    view has no CF coordinates."""
    state, plane = view.state, view.plane
    if state is None or state.cf is None or plane is None:
        return False
    names = _names(view)
    for dim, label in plane.labels.items():
        place = state.cf.place(dim, state.indices[dim])
        label.setText(names[dim] if place is None else f"{names[dim]}  {place}")
    return True


def present(view: DataView, cf: CFView | None) -> None:
    """Axes ticked in coordinate values with north up, the title and the colour bar's label."""
    pane = view.image
    state = view.state
    plot = pane.view
    y_axis = x_axis = None
    if cf is not None and state is not None:
        y_axis, x_axis = cf.axes.get(state.y_dim), cf.axes.get(state.x_dim)
    for side, axis in (("left", y_axis), ("bottom", x_axis)):
        item = plot.getAxis(side)
        item.__dict__.pop("tickStrings", None)  # pyqtgraph's own numbers again, unless…
        item.__dict__.pop("tickValues", None)
        if axis is not None:
            item.tickStrings = _ticks(axis)  # type: ignore[method-assign]
            values = _tick_values(axis, item)
            if values is not None:  # round coordinate values (60 °N, not the value at pixel 50)
                item.tickValues = values  # type: ignore[method-assign]
        item.picture = None
        item.update()
    plot.invertY(not (cf is not None and state is not None and cf.flipped(state.y_dim)))
    plot.setTitle(None if cf is None else cf.heading)
    bar = pane.ui.histogram.item.axis
    bar.setLabel("" if cf is None or not cf.units else cf.units)
    # flag values: the colour bar is their legend, each value ticked with its meaning
    flags = None if cf is None else cf.flags
    bar.setTicks(None if flags is None or flags.values is None else
                 [[(float(v), f"{v} {m}") for v, m in zip(flags.values, flags.meanings)]])


def _ticks(axis: CoordAxis) -> Any:
    positions = axis.numeric()
    index = np.arange(len(positions), dtype=np.float64)

    def tick_strings(values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for v in values:
            i = v - 0.5  # element i covers [i, i + 1): its value sits at its centre
            out.append(axis.format(float(np.interp(i, index, positions))) if -0.5 <= i <= len(index) - 0.5 else "")
        return out

    return tick_strings


def _tick_values(axis: CoordAxis, item: Any) -> Any:
    """Ticks where the coordinate takes round values, for a coordinate that runs one way: the
    shown pixel range becomes a coordinate range, pyqtgraph picks round values in it, and each is
    placed at the pixel where the coordinate takes it. None where the coordinate turns back."""
    positions = np.asarray(axis.numeric(), dtype=np.float64)
    if len(positions) < 2 or not np.isfinite(positions).all():
        return None
    steps = np.diff(positions)
    if not (np.all(steps > 0) or np.all(steps < 0)):
        return None
    index = np.arange(len(positions), dtype=np.float64)
    xs, ys = (positions, index) if steps[0] > 0 else (positions[::-1], index[::-1])
    own = type(item).tickValues

    def tick_values(lo: float, hi: float, size: float) -> list[tuple[float, list[float]]]:
        a, b = sorted(float(np.interp(p - 0.5, index, positions)) for p in (lo, hi))
        if not b > a:
            return own(item, lo, hi, size)
        return [(spacing, [float(np.interp(v, xs, ys)) + 0.5 for v in values if xs[0] <= v <= xs[-1]])
                for spacing, values in own(item, a, b, size)]

    return tick_values


def _names(view: DataView) -> list[str]:
    from ..viewing.image.axes import dim_names

    state = view.state
    assert state is not None
    return list(dim_names(state.array, state.axis_names))
