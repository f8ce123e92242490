"""What is not an image: a line plot for 1-D arrays, the value of a 0-d array, and tables for
strings, bytes and records of any rank (every field a column) or any array on request (the
image's plane; a slider for every dimension the table does not show). Each shows the values
as the image does: CF-decoded, with coordinates on the line's axis and the table's headers.

Reads run on a lane of their own on the shared pool: a newer page or value replaces the one in
flight, whose answer arrives stale and is dropped.
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

from ..scheduling import Answer, Driver, Job, Lane, WorkerPool, call_job, read_job
from ..viewing import ViewState, initial_state
from ..viewing.cf.table_plane import TABLE_COLUMNS, TablePlane
from ..viewing.cf.view import CFView, read_cf
from ..viewing.conventions.georef import array_view, spatial_plane
from ..viewing.export.plane import PlaneSpec, table_selection
from ..viewing.image.axes import dim_names
from ..viewing.image.readout import format_value, request_label
from ..viewing.line.array import LineModel, LinePlot, LineRange, LineRequest
from ..zarrlib import Array
from ..zarrlib.storage.access import AccessDeniedError
from .bridge import post
from .line_view import LineView
from .plane_controls import index_controls
from .table_model import ArrayTable

TABLE_PAGE = 2_000
__all__ = ["TABLE_COLUMNS", "TABLE_PAGE", "OtherViews", "ValuesRequest"]


@dataclass(frozen=True)
class ValuesRequest:
    """A read of a 0-d array's value (``model`` None) or of a page of ``model``'s table."""

    job: Job[Any]
    model: ArrayTable | None = None


class OtherViews:
    def __init__(self, pool: WorkerPool, owner: Any) -> None:
        self.owner = owner  # the DataView: status, loaded, stack, controls_layout
        self.lane: Lane[Any] = Lane(pool, lambda fn: post(fn, owner), "values")
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
        self.lane.discard()  # answers still coming are stale
        self.line_driver.clear()
        self.line_model.clear()
        self.line.reset()

    def cancel(self) -> None:
        """Stop the value, page or line being read: its answer says it was cancelled."""
        self.lane.cancel()
        self.line_driver.cancel()

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
        if arr.dtype.names or arr.dtype.kind in "OSUV":
            self._show_table(arr, self._table_plane(arr, None, None, plane))
            return

        def done(answer: Answer[CFView | None]) -> None:
            if answer.stale or answer.cancelled or self.array is not arr:
                return
            if answer.error is not None:
                self.owner.status.emit(f"The CF attributes of {arr.path} could not be read: {answer.error}")
            self.cf = answer.value
            if self.cf is not None and self.cf.notes:
                self.owner.status.emit(f"CF attributes of {arr.path}: " + "; ".join(self.cf.notes))
            if as_table:
                self._show_table(arr, self._table_plane(arr, self.cf, shown, plane))
            elif arr.ndim == 0:
                self._request(())
            else:
                self.owner.stack.setCurrentWidget(self.line)
                self.line_driver.show(self.line_model.show(arr, self.cf))

        self.lane.submit(call_job(lambda: array_view(arr, read_cf(arr)), label=f"CF attributes of {arr.path}"), done)

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
            stop = min(plane.row_count, start + TABLE_PAGE) if plane.rows is not None else 1
            sel = plane.selection(start, stop) if plane.rows is not None else ()
            label = request_label(plane.array.path, sel, plane.array.shape)
            self._submit(ValuesRequest(read_job(plane.array, sel, label=label, decode=plane.page_values),
                                       self.table_model))

    # -- reads ------------------------------------------------------------------------------
    def _request(self, selection: tuple[Any, ...]) -> None:
        assert self.array is not None
        dec = None if self.cf is None else self.cf.decoding
        label = request_label(self.array.path, selection, self.array.shape)
        decode = dec.values if dec is not None and dec.active else None
        self._submit(ValuesRequest(read_job(self.array, selection, label=label, decode=decode)))

    def _submit(self, req: ValuesRequest) -> None:
        self.owner.status.emit(f"Reading {req.job.label}…")
        self.lane.submit(req.job, lambda answer: self.apply(req, answer), on_progress=self.owner.progress.emit)

    def apply(self, request: ValuesRequest, result: Answer[Any]) -> None:
        """Show the value or append the page (nothing for a stale answer)."""
        if result.stale or self.array is None:
            return
        owner = self.owner
        if result.cancelled:
            owner.status.emit(f"Cancelled reading {request.job.label}")
            owner.loaded.emit()
            return
        if result.error is not None:
            owner.status.emit(f"Error: {result.error}")
            owner.message.setText(f"Cannot show {request.job.label}:\n{result.error}")
            owner.problem = f"Cannot show {request.job.label}: {result.error}"
            owner.stack.setCurrentWidget(owner.message)
            owner.loaded.emit()
            return
        data = result.value
        assert data is not None
        heading = ""
        if request.model is None:
            value = data[()]
            text = value if isinstance(value, str) else format_value(value)
            self.value.setText(text if self.cf is None else self.cf.value_text(value, text))
            owner.stack.setCurrentWidget(self.value)
        else:
            model = request.model
            if model is self.table.model():
                model.append(data if data.ndim else data.reshape(1), result.failures)
            owner.stack.setCurrentWidget(self.table)
            heading = self.table_plane.heading if self.table_plane is not None else ""
        owner.status.emit(f"Read {request.job.label} in {result.seconds * 1000:.0f} ms"
                          + (f": {heading}" if heading else ""))
        if result.failures:
            n = len(result.failures)
            owner.status.emit(f"{n} chunk{'s' if n > 1 else ''} of {request.job.label} could not be read: "
                              f"{result.failures[0].message}")
            refused = next((f.error for f in result.failures if isinstance(f.error, AccessDeniedError)), None)
            if refused is not None:  # the window asks, and reads again if allowed
                owner.access_denied.emit(refused)
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
