"""An array's CF conventions (``viewing.cf.view``) on screen: they are read off the GUI thread
once the array is shown (a one-off task on a driver: only the newest array's arrive), then put
into the view state (decoding, coordinates, units) and into the widgets: slider labels with
coordinate values and a box to type one, axes ticked in coordinate values with north up, a title
and colour bar with the long name and units, and a check box for the stored values. Everything
here only presents; the view model decides.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QCheckBox, QGridLayout, QLineEdit

from ..scheduling import Done, Driver, Job, Task, Tasks, WorkerPool
from ..viewing.cf.coords import CoordAxis, CoordError
from ..viewing.cf.view import CFView, read_cf
from ..viewing.conventions.georef import array_view
from ..viewing.image.axes import dim_names
from ..zarrlib import Array
from .bridge import post
from .image_view import ImagePane
from .plane_controls import PlaneControls
from .view_host import StateHost

#: the column of a slider's row where the coordinate value can be typed
VALUE_COLUMN = 5
#: the room a tick label needs: a row of text (left axis), characters and a gap (bottom axis)
TICK_ROW_PX = 14
TICK_CHAR_PX = 7
TICK_GAP_PX = 12


class CFPresenter(QObject):
    """The data view's CF part. It is given what it draws on: the ``view`` (whose state it
    reads and extends), the ``image`` pane (axes, title, colour bar) and the
    ``controls`` grid (value boxes, the stored-values box); the plane's controls come with each
    array (``start``). It says ``status(text)`` for the status bar and ``names_changed()`` when
    the CF read named the dimensions, for the axes to be named again."""

    status = Signal(str)
    names_changed = Signal()

    def __init__(self, pool: WorkerPool, view: StateHost, image: ImagePane, controls: QGridLayout,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.driver: Driver[Task[CFView | None], Task[CFView | None], Done[CFView | None]] = Driver(
            Tasks(), pool, self._took, post=lambda fn: post(fn, self), name="CF attributes")
        self.view = view
        self.image = image
        self.controls = controls
        #: the array whose conventions are read or shown, and its plane's controls
        self.array: Array | None = None
        self.plane: PlaneControls | None = None

    def start(self, arr: Array, plane: PlaneControls | None,
              read: Callable[[ThreadPoolExecutor | None], CFView | None] | None = None) -> None:
        """Read ``arr``'s CF conventions on a worker (with its ``spatial:`` coordinates; ``read``,
        where given, reads instead) and apply them if it is still the one shown. ``read`` is
        handed the job's executor, which its coordinate reads decode on."""
        self.clear()
        read = read or (lambda executor: array_view(arr, read_cf(arr, executor=executor)))
        self.array, self.plane = arr, plane
        self.driver.show(Task(Job(lambda ctx: read(ctx.executor), f"CF attributes of {arr.path}"), about=arr))

    def _took(self, done: Done[CFView | None]) -> None:
        arr, answer = done.task.about, done.answer
        if answer.cancelled:
            return
        state = self.view.state
        if self.array is not arr or state is None or state.array is not arr:
            return  # another array is shown now
        if answer.error is not None:
            self.status.emit(f"The CF attributes of {arr.path} could not be read: {answer.error}")
            return
        if answer.value is not None:
            self._apply(answer.value)

    def clear(self) -> None:
        """Nothing shown (the view's controls are going): pyqtgraph's own axes, no title, no
        legend, and the conventions being read are not wanted."""
        self.driver.discard()
        self.array = self.plane = None
        self.present(None)

    def _apply(self, cf: CFView) -> None:
        state = self.view.state
        assert state is not None
        contrast = state.contrast if state.contrast is not None or cf.range is None else cf.range
        names = cf.names if cf.names and state.axis_names is None else state.axis_names
        self.view.set_state(state.with_(cf=cf, contrast=contrast, axis_names=names))
        plane = self.plane
        if cf.crs:  # georeferenced axes are named with their units
            self.names_changed.emit()
        if plane is not None and names != state.axis_names and names:  # NCZarr's names, read with the rest
            for combo in (plane.y_combo, plane.x_combo):
                for d, n in enumerate(names):
                    combo.setItemText(d, f"{n} ({state.array.shape[d]})")
            self.names_changed.emit()
        if plane is not None:
            for dim, axis in cf.axes.items():
                if dim in plane.sliders:
                    self._value_box(plane, dim, axis)
            if cf.coding.active:
                box = QCheckBox("Stored values")
                box.setToolTip("Show the values as stored, without CF masking (_FillValue, missing_value, valid "
                               "range) and unpacking (scale_factor, add_offset)")
                box.setChecked(state.raw)  # a saved view of the stored values opens showing them
                box.toggled.connect(self._stored_values)
                self.controls.addWidget(box, 0, VALUE_COLUMN)
        self.label_sliders()
        self.present(cf)
        if cf.notes:
            self.status.emit(f"CF attributes of {state.array.path}: " + "; ".join(cf.notes))

    def _stored_values(self, raw: bool) -> None:
        state = self.view.state
        if state is not None:
            self.view.set_state(state.with_(raw=bool(raw)))
            self.present(state.cf)  # the title and the colour bar say which values are drawn

    def _value_box(self, plane: PlaneControls, dim: int, axis: CoordAxis) -> None:
        edit = QLineEdit()
        name = axis.name.rsplit("/", 1)[-1]  # "time", not "weather/time"
        edit.setPlaceholderText(f"{name} value")
        edit.setToolTip(f"Type a value of {axis.name}{f' ({axis.units})' if axis.units else ''}: "
                        "the nearest one is shown")

        def typed() -> None:
            text = edit.text().strip()
            if not text or self.plane is None:
                return
            try:
                index = axis.nearest(text)
            except CoordError as e:
                edit.setStyleSheet("color: #c00")
                self.status.emit(str(e))
                return
            edit.setStyleSheet("")
            self.plane.sliders[dim][1].setValue(index)
            self.status.emit(f"{name} = {axis.label(index)} (index {index})")

        edit.editingFinished.connect(typed)
        self.controls.addWidget(edit, dim + 1, VALUE_COLUMN)
        plane.values[dim] = edit
        plane.show_sliders()

    def label_sliders(self) -> bool:
        """Each slider along a coordinate says its value (``time  2001-03-04 06:00``); False where
        the view has no CF coordinates."""
        state, plane = self.view.state, self.plane
        if state is None or state.cf is None or plane is None:
            return False
        names = list(dim_names(state.array, state.axis_names))
        for dim, label in plane.labels.items():
            place = state.cf.place(dim, state.indices[dim])
            label.setText(names[dim] if place is None else f"{names[dim]}  {place}")
        return True

    def present(self, cf: CFView | None) -> None:
        """Axes ticked in coordinate values with north up, the title and the colour bar's label."""
        pane = self.image
        state = self.view.state
        plot = pane.view
        y_axis = x_axis = None
        if cf is not None and state is not None:
            y_axis, x_axis = cf.axes.get(state.y_dim), cf.axes.get(state.x_dim)
        for side, axis in (("left", y_axis), ("bottom", x_axis)):
            item = plot.getAxis(side)
            item.__dict__.pop("tickStrings", None)  # pyqtgraph's own numbers again, unless…
            item.__dict__.pop("tickValues", None)
            if axis is not None:
                if cf is not None and cf.crs:  # the axis label names the CRS's unit; the ticks stay short
                    axis = dataclasses.replace(axis, units=None)
                item.tickStrings = _ticks(axis)
                values = _tick_values(axis, item)
                if values is not None:  # round coordinate values (60 °N, not the value at pixel 50)
                    item.tickValues = values
            item.picture = None
            item.update()
        shown = state.with_(cf=cf) if cf is not None and state is not None else None
        plot.invertY(not (shown is not None and shown.rows_up))
        plot.setTitle(None if cf is None else cf.heading if shown is None else shown.heading)
        bar = pane.ui.histogram.item.axis
        bar.setLabel("" if shown is None else shown.units or "")
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
        levels = [(spacing, [float(np.interp(v, xs, ys)) + 0.5 for v in values if xs[0] <= v <= xs[-1]])
                  for spacing, values in own(item, a, b, size)]
        return _uncrowded(levels, size / (hi - lo), item.orientation in ("left", "right"), axis)

    return tick_values



def _uncrowded(levels: list[tuple[float, list[float]]], px_per_index: float, vertical: bool,
               axis: CoordAxis) -> list[tuple[float, list[float]]]:
    """Tick levels whose labels do not run into each other: an array that covers a narrow part of
    the axis squeezes the ticks pyqtgraph spaced for the whole of it. The first level is thinned
    to every k-th tick where it is too dense; finer levels are dropped."""
    out: list[tuple[float, list[float]]] = []
    for spacing, values in levels:
        if len(values) > 1:
            longest = max(len(axis.format(v)) for v in np.interp(np.asarray(values) - 0.5,
                                                                 np.arange(len(axis)), axis.numeric()))
            room = TICK_ROW_PX if vertical else longest * TICK_CHAR_PX + TICK_GAP_PX
            gap = float(np.min(np.abs(np.diff(values)))) * abs(px_per_index)
            if gap < room:
                if out:
                    break
                values = values[::math.ceil(room / max(gap, 1e-9))]
        out.append((spacing, values))
    return out
