"""What is not an image: a line plot for 1-D arrays, the value of a 0-d array, and tables for
strings, bytes and records of any rank (every field a column; a slider for every dimension
past those the table shows).

Reads run on a lane of their own on the shared pool: a newer page or value replaces the one in
flight, whose answer arrives stale and is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QGridLayout, QLabel, QTableView, QWidget

from ..scheduling import Answer, Job, Lane, WorkerPool, read_job
from ..viewing.image.axes import dim_names
from ..viewing.image.readout import format_value, request_label
from ..viewing.line.array import LineModel, LinePlot
from ..zarrlib import Array
from ..zarrlib.storage.access import AccessDeniedError
from .bridge import post
from .line_view import LineView
from .plane_controls import index_controls
from .table_model import ArrayTable

TABLE_PAGE = 2_000
TABLE_COLUMNS = 100


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
        self.line_model = LineModel(pool, lambda fn: post(fn, owner), self._plotted,
                                    on_progress=owner.progress.emit)
        self.line.range_changed = self.line_model.set_range
        self.value = QLabel()
        self.value.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.value.font()
        font.setPointSize(font.pointSize() + 6)
        self.value.setFont(font)
        self.table = QTableView()
        self.table_model: ArrayTable | None = None
        self.array: Array | None = None
        self.fixed: dict[int, int] = {}

    def widgets(self) -> list[QWidget]:
        return [self.line, self.value, self.table]

    def clear(self) -> None:
        self.array = None
        self.lane.discard()  # answers still coming are stale
        self.line_model.clear()
        self.line.reset()

    def cancel(self) -> None:
        """Stop the value, page or line being read: its answer says it was cancelled."""
        self.lane.cancel()
        self.line_model.lane.cancel()

    def follow_palette(self, pal: QPalette) -> None:
        self.line.follow_palette(pal)

    def show(self, arr: Array, as_table: bool) -> None:
        self.array = arr
        self.fixed = {}
        if arr.dtype.names or arr.dtype.kind in "OSUV" or as_table:
            self._sliders(arr)
            self._start_table(arr)
        elif arr.ndim == 0:
            self._request(())
        else:
            self.owner.stack.setCurrentWidget(self.line)
            self.line_model.show(arr)

    # -- tables -----------------------------------------------------------------------------
    def _shown_dims(self, arr: Array) -> int:
        return 1 if arr.dtype.names else min(2, arr.ndim)

    def _sliders(self, arr: Array) -> None:
        """A slider for each dimension the table does not show (records: past the first; other
        arrays: past the second), so a record array of any rank shows every record."""
        layout: QGridLayout = self.owner.controls_layout
        names = dim_names(arr)
        for dim in range(self._shown_dims(arr), arr.ndim):
            slider, box = index_controls(arr.shape[dim], 0)
            box.valueChanged.connect(lambda v, d=dim: self._moved(d, int(v)))
            layout.addWidget(QLabel(names[dim]), dim, 0)
            layout.addWidget(slider, dim, 1, 1, 3)
            layout.addWidget(box, dim, 4)

    def _moved(self, dim: int, value: int) -> None:
        if self.array is not None:
            self.fixed[dim] = value
            self._start_table(self.array)

    def _start_table(self, arr: Array) -> None:
        rows = arr.shape[0] if arr.ndim else 1
        columns = min(arr.shape[1], TABLE_COLUMNS) if arr.ndim >= 2 and not arr.dtype.names else 1
        old = self.table.model()
        self.table_model = ArrayTable(rows, columns, list(arr.dtype.names or ()), self._page, self.table)
        self.table.setModel(self.table_model)
        if old is not None:
            old.deleteLater()
        self.owner.stack.setCurrentWidget(self.table)
        self._page(0)

    def selection(self, arr: Array, start: int) -> tuple[Any, ...]:
        if arr.ndim == 0:
            return ()
        shown = self._shown_dims(arr)
        rest = tuple(slice(0, min(n, TABLE_COLUMNS)) if d < shown else self.fixed.get(d, 0)
                     for d, n in enumerate(arr.shape) if d > 0)
        return (slice(start, min(arr.shape[0], start + TABLE_PAGE)), *rest)

    def _page(self, start: int) -> None:
        if self.array is not None:
            self._request(self.selection(self.array, start), self.table_model)

    # -- reads ------------------------------------------------------------------------------
    def request(self, arr: Array, selection: tuple[Any, ...], model: ArrayTable | None = None) -> ValuesRequest:
        label = request_label(arr.path, selection, arr.shape)
        return ValuesRequest(read_job(arr, selection, label=label), model)

    def _request(self, selection: tuple[Any, ...], model: ArrayTable | None = None) -> None:
        assert self.array is not None
        req = self.request(self.array, selection, model)
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
            owner.stack.setCurrentWidget(owner.message)
            owner.loaded.emit()
            return
        data = result.value
        assert data is not None
        if request.model is None:
            self.value.setText(format_value(data[()]))
            owner.stack.setCurrentWidget(self.value)
        else:
            model = request.model
            if model is self.table.model():
                model.append(data if data.ndim else data.reshape(1), result.failures)
            owner.stack.setCurrentWidget(self.table)
        owner.status.emit(f"Read {request.job.label} in {result.seconds * 1000:.0f} ms")
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
