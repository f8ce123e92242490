"""What is not an image: a line plot for 1-D arrays, the value of a 0-d array, and tables for
strings, bytes and records of any rank (every field a column) or any array on request (the
image's plane; a slider for every dimension the table does not show). Each shows the values
as the image does: CF-decoded, with coordinates on the line's axis and the table's headers.

The CF attributes are a one-off task on a driver; the value and the table's pages are read by
their view model (``viewing.cf.value_reads.ValuesModel``) on another: a newer page or value
replaces the one in flight, whose answer is dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QCheckBox, QGridLayout, QLabel, QTableView, QWidget

from ..scheduling import Done, Driver, Job, Task, Tasks, WorkerPool
from ..viewing import ViewState, initial_state
from ..viewing.cf.table_plane import TABLE_COLUMNS, TablePlane
from ..viewing.cf.value_reads import TABLE_PAGE, PageAsk, ValueAsk, ValuesModel, ValuesRequest, ValuesShown
from ..viewing.cf.view import CFView, read_cf
from ..viewing.conventions.georef import array_view, spatial_plane
from ..viewing.export.plane import PlaneSpec, table_selection
from ..viewing.image.axes import dim_names
from ..viewing.line.array import LineModel, LinePlot, LineRange, LineRequest
from ..zarrlib import Array
from .bridge import post
from .line_view import LineView
from .plane_controls import index_controls
from .table_model import ArrayTable

__all__ = ["TABLE_COLUMNS", "TABLE_PAGE", "OtherViews"]


@dataclass(frozen=True)
class _Shown:
    """How an array is to be shown once its CF attributes are read."""

    array: Array
    as_table: bool
    shown: ViewState | None
    plane: Mapping[int, int] | None


class OtherViews:
    def __init__(self, pool: WorkerPool, owner: Any) -> None:
        self.owner = owner  # the DataView: status, loaded, stack, controls_layout
        self.cf_reads: Driver[Task[CFView | None], Task[CFView | None], Done[CFView | None]] = Driver(
            Tasks(), pool, self._cf_read, post=lambda fn: post(fn, owner), name="CF attributes")
        self.values_model = ValuesModel()
        self.values: Driver[ValueAsk | PageAsk, ValuesRequest, ValuesShown] = Driver(
            self.values_model, pool, self._values_shown, post=lambda fn: post(fn, owner), name="values",
            on_progress=owner.progress.emit)
        self.line = LineView()
        self.plot = self.line.plot
        self.line_model = LineModel()
        self.line_driver: Driver[LineRange, LineRequest, LinePlot] = Driver(
            self.line_model, pool, self._plotted, post=lambda fn: post(fn, owner), name="line",
            on_progress=owner.progress.emit)
        self.line.range_changed = lambda x0, x1, columns: self.line_driver.show(
            self.line_model.range_of(x0, x1, columns))
        self.value = QLabel()
        self.value.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.value.font()
        font.setPointSize(font.pointSize() + 6)
        self.value.setFont(font)
        self.table = QTableView()
        self.table_model: ArrayTable | None = None
        self.table_plane: TablePlane | None = None
        self.array: Array | None = None
        self.cf: CFView | None = None
        self.fixed: dict[int, int] = {}
        self.labels: dict[int, QLabel] = {}
        self.line.hovered = owner.status.emit

    def widgets(self) -> list[QWidget]:
        return [self.line, self.value, self.table]

    def clear(self) -> None:
        self.array = None
        self.cf = self.table_plane = None
        self.labels = {}
        self._forget()  # answers still coming are dropped
        self.line_driver.clear()
        self.line_model.clear()
        self.line.reset()

    def cancel(self) -> None:
        """Stop the value, page or line being read: its answer says it was cancelled."""
        self.cf_reads.cancel()
        self.values.cancel()
        self.line_driver.cancel()

    def _forget(self) -> None:
        """Nothing being read is wanted any more."""
        self.cf_reads.discard()
        self.values.discard()
        self.values_model.clear()

    def follow_palette(self, pal: QPalette) -> None:
        self.line.follow_palette(pal)

    def show(self, arr: Array, as_table: bool, shown: ViewState | None = None,
             plane: Mapping[int, int] | None = None) -> None:
        """``arr`` as a table, a value or a line, decoded as the image decodes it: its CF view
        is read on a worker first (coordinates, units, decoding), then the values. A table of a
        plane shows the image's: ``shown`` (the image's state when switching from it), else the
        plane the image would show first (``plane``: ``--slice`` indices)."""
        self.array = arr
        self.fixed = {}
        self.cf = None
        self._forget()  # what was read for the array before is not shown
        if arr.dtype.names or arr.dtype.kind in "OSUV":
            self._show_table(arr, self._table_plane(arr, None, None, plane))
            return
        self.cf_reads.show(Task(Job(lambda ctx: array_view(arr, read_cf(arr, executor=ctx.executor)),
                                    f"CF attributes of {arr.path}"), about=_Shown(arr, as_table, shown, plane)))

    def _cf_read(self, done: Done[CFView | None]) -> None:
        """The CF attributes read: the array is shown, decoded as they say."""
        ask: _Shown = done.task.about
        answer, arr = done.answer, ask.array
        if answer.cancelled or self.array is not arr:
            return
        if answer.error is not None:
            self.owner.status.emit(f"The CF attributes of {arr.path} could not be read: {answer.error}")
        self.cf = answer.value
        if self.cf is not None and self.cf.notes:
            self.owner.status.emit(f"CF attributes of {arr.path}: " + "; ".join(self.cf.notes))
        if ask.as_table:
            self._show_table(arr, self._table_plane(arr, self.cf, ask.shown, ask.plane))
        elif arr.ndim == 0:
            self.values.show(ValueAsk(arr, self.cf))
        else:
            self.owner.stack.setCurrentWidget(self.line)
            self.line_driver.show(self.line_model.show(arr, self.cf))

    def indices(self, arr: Array) -> dict[int, int] | None:
        """The indices of the dimensions a table of ``arr``'s plane does not show (for the image
        that replaces it), or None where no such table is shown."""
        plane = self.table_plane
        if plane is None or plane.array is not arr or plane.rows is None or plane.columns is None:
            return None
        return dict(self.fixed)

    def plane_spec(self, arr: Array) -> PlaneSpec:
        """What export writes of the table, line or value shown: its plane, decoded as shown."""
        plane = self.table_plane
        if plane is not None and plane.array is arr and self.table_model is not None:
            return PlaneSpec(arr, plane.whole(), decode=not plane.raw)
        return PlaneSpec(arr, table_selection(arr), decode=True)

    # -- tables -----------------------------------------------------------------------------
    @staticmethod
    def _table_plane(arr: Array, cf: CFView | None, shown: ViewState | None,
                     plane: Mapping[int, int] | None) -> TablePlane:
        """Rows by columns as the image shows them (``shown``, else its first plane: Y as rows and
        X as columns where the array says which they are); records and 1-D arrays as rows."""
        if arr.ndim == 0:
            return TablePlane(arr, None, None, cf=cf)
        if arr.ndim == 1 or arr.dtype.names or arr.dtype.kind in "OSUV":
            columns = 1 if arr.ndim >= 2 and not arr.dtype.names else None
            fixed = {d: i for d, i in (plane or {}).items() if d not in (0, columns)}
            return TablePlane(arr, 0, columns, MappingProxyType(fixed), cf=cf)
        state = shown if shown is not None and shown.array is arr else \
            spatial_plane(initial_state(arr, plane or {}), plane=plane)
        rows, columns = state.y_dim, state.x_dim
        fixed = {d: int(i) for d, i in enumerate(state.indices) if d not in (rows, columns)}
        return TablePlane(arr, rows, columns, MappingProxyType(fixed), cf=cf, raw=shown is not None and shown.raw)

    def _show_table(self, arr: Array, plane: TablePlane) -> None:
        self.table_plane = plane
        self.fixed = dict(plane.fixed)
        self._sliders(plane)
        self._start_table(plane)

    def _sliders(self, plane: TablePlane) -> None:
        """A slider for each dimension the table does not show (each labelled with its
        coordinate value), and a box for the stored values where they are decoded."""
        layout: QGridLayout = self.owner.controls_layout
        arr = plane.array
        names = dim_names(arr, plane.cf.names if plane.cf is not None and plane.cf.names else None)
        self.labels = {}
        for dim in range(arr.ndim):
            if dim in (plane.rows, plane.columns):
                continue
            slider, box = index_controls(arr.shape[dim], plane.index(dim))
            box.valueChanged.connect(lambda v, d=dim: self._moved(d, int(v)))
            self.labels[dim] = QLabel(names[dim])
            layout.addWidget(self.labels[dim], dim, 0)
            layout.addWidget(slider, dim, 1, 1, 3)
            layout.addWidget(box, dim, 4)
        self._label_sliders()
        if plane.cf is not None and plane.cf.decoding is not None and plane.cf.decoding.active:
            stored = QCheckBox("Stored values")
            stored.setChecked(plane.raw)
            stored.setToolTip("Show the values as stored, without CF decoding (fill values, packing, times)")
            stored.toggled.connect(self._stored)
            layout.addWidget(stored, 0, 5)

    def _label_sliders(self) -> None:
        plane = self.table_plane
        if plane is None:
            return
        names = dim_names(plane.array, plane.cf.names if plane.cf is not None and plane.cf.names else None)
        for dim, label in self.labels.items():
            place = None if plane.cf is None else plane.cf.place(dim, self.fixed.get(dim, 0))
            label.setText(names[dim] if place is None else f"{names[dim]}  {place}")

    def _stored(self, raw: bool) -> None:
        plane = self.table_plane
        if plane is not None and self.array is plane.array:
            self._start_table(dataclasses.replace(plane, raw=bool(raw)))

    def _moved(self, dim: int, value: int) -> None:
        plane = self.table_plane
        if self.array is not None and plane is not None:
            self.fixed[dim] = value
            self._label_sliders()
            self._start_table(dataclasses.replace(plane, fixed=MappingProxyType(dict(self.fixed))))

    def _start_table(self, plane: TablePlane) -> None:
        self.table_plane = plane
        arr = plane.array
        old = self.table.model()
        dims = (plane.rows or 0, plane.columns if plane.columns is not None else 1)
        self.table_model = ArrayTable(plane.row_count, plane.column_count, list(arr.dtype.names or ()), self._page,
                                      self.table, dims=dims, labels=(plane.row_label, plane.column_label),
                                      text=None if plane.decoding is None else plane.decoding.text)
        self.table.setModel(self.table_model)
        if old is not None:
            old.deleteLater()
        self.owner.stack.setCurrentWidget(self.table)
        self._page(0)

    def _page(self, start: int) -> None:
        plane = self.table_plane
        if self.array is not None and plane is not None and plane.array is self.array:
            self.values.show(PageAsk(plane, start, self.table_model))

    # -- reads ------------------------------------------------------------------------------
    def _values_shown(self, shown: ValuesShown) -> None:
        """Show the value or append the page, and say so."""
        owner = self.owner
        for said in shown.said:
            owner.status.emit(said)
        if not shown.answered:
            return
        label = shown.request.job.label
        if shown.error is not None:
            owner.message.setText(f"Cannot show {label}:\n{shown.error}")
            owner.problem = f"Cannot show {label}: {shown.error}"
            owner.stack.setCurrentWidget(owner.message)
        elif shown.text is not None:
            self.value.setText(shown.text)
            owner.stack.setCurrentWidget(self.value)
        elif shown.page is not None:
            table = shown.request.ask.table if isinstance(shown.request.ask, PageAsk) else None
            if isinstance(table, ArrayTable) and table is self.table.model():
                table.append(shown.page, shown.failures)
            owner.stack.setCurrentWidget(self.table)
        if shown.refused is not None:  # the window asks, and reads again if allowed
            owner.access_denied.emit(shown.refused)
        owner.loaded.emit()

    def _plotted(self, plot: LinePlot) -> None:
        self.line.draw(plot)
        owner = self.owner
        if plot.message is not None:
            owner.message.setText(plot.message)
            owner.stack.setCurrentWidget(owner.message)
        elif self.array is not None:
            owner.stack.setCurrentWidget(self.line)
        owner.status.emit(plot.status)
        if not plot.busy:
            owner.loaded.emit()
