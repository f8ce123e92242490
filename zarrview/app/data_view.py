"""The selected array: a 2-D slice as an image (sliders for the other dimensions), a line plot
for 1-D, the value of a 0-d array, a table for strings and records.

Every change of the view state builds a ``ReadRequest`` and submits it; the scheduler
cancels the stale read and results of older generations are dropped here on arrival.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QLabel,
    QSlider,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..scheduling import ReadRequest, ReadResult, ReadScheduler
from ..viewing.export import PlaneSpec, table_selection
from ..zarrlib import Array
from .bridge import post
from .display import displayable, image_axes, percentile_levels, selection_text
from .failure_boxes import FailureBoxes
from .plane_controls import IndexBox, build_plane_controls
from .table_model import ArrayTable
from ..viewing.planning import PlaneRead, plan_plane

pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)

TABLE_PAGE = 2_000
TABLE_COLUMNS = 100
#: chunks one view may read; about a second of decoding for a local store on a laptop
DEFAULT_CHUNK_BUDGET = 256


class DataView(QWidget):
    status = Signal(str)
    progress = Signal(int, int)
    loaded = Signal()

    def __init__(self, scheduler: ReadScheduler, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scheduler = scheduler
        self.array: Array | None = None
        self.current_generation = 0
        self.shown_generation = 0
        self.last_data: np.ndarray | None = None
        self._auto_levels = True
        self._building = False
        self.budget_chunks = DEFAULT_CHUNK_BUDGET
        self._last_dim: int | None = None
        self._keep_view = False  # re-levelling must not reset pan and zoom
        self.base_plan: PlaneRead | None = None
        self.detail_plan: PlaneRead | None = None
        self.detail_data: np.ndarray | None = None
        #: (r0, r1, c0, c1) to show once the first plane lands (``--region``)
        self.pending_region: tuple[int, int, int, int] | None = None

        self.controls = QWidget()
        self.controls_layout = QGridLayout(self.controls)
        self.controls_layout.setContentsMargins(0, 0, 0, 0)
        self.image = pg.ImageView()
        self.image.ui.roiBtn.hide()
        self.image.ui.menuBtn.hide()
        self.image.view.invertY(True)
        self.image.getImageItem().scene().sigMouseMoved.connect(self._mouse_moved)
        self.detail = pg.ImageItem()  # full-resolution region drawn over a coarse preview
        self.detail.setZValue(10)
        self.image.view.addItem(self.detail)
        self.failures = FailureBoxes(self.image.view)
        self.image.ui.histogram.item.sigLevelsChanged.connect(self._sync_detail_levels)
        self.image.ui.histogram.item.sigLookupTableChanged.connect(self._sync_detail_levels)
        self._view_timer = QTimer(self)
        self._view_timer.setSingleShot(True)
        self._view_timer.setInterval(120)
        self._view_timer.timeout.connect(self.request_visible)
        self.image.view.sigRangeChanged.connect(lambda *_: self._view_timer.start())
        self._pending_prefetch: Any = None
        self._prefetch_timer = QTimer(self)
        self._prefetch_timer.setSingleShot(True)
        self._prefetch_timer.setInterval(150)
        self._prefetch_timer.timeout.connect(self._run_prefetch)
        self.plot = pg.PlotWidget()
        self.value = QLabel()
        self.value.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.value.font()
        font.setPointSize(font.pointSize() + 6)
        self.value.setFont(font)
        self.table = QTableView()
        self.message = QLabel("Select an array to see its data.")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.stack = QStackedWidget()
        for w in (self.message, self.image, self.plot, self.value, self.table):
            self.stack.addWidget(w)
        self.as_table = QCheckBox("Show as table")
        self.as_table.setToolTip("Show the values of any array as a table, rows paged in as you scroll")
        self.as_table.toggled.connect(lambda _: self.set_array(self.array) if self.array is not None else None)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.as_table)
        layout.addWidget(self.controls)
        layout.addWidget(self.stack, 1)
        self._follow_palette()
        self.y_combo: QComboBox | None = None
        self.x_combo: QComboBox | None = None
        self.complex_combo: QComboBox | None = None
        self.rgb_box: QCheckBox | None = None
        self.rgb_dim: int | None = None
        self.sliders: dict[int, tuple[QSlider, IndexBox]] = {}

    def _follow_palette(self) -> None:
        """Plots follow the light or dark colour scheme; images keep a dark surround."""
        pal = self.palette()
        self.plot.setBackground(pal.color(QPalette.ColorRole.Base))
        pen = pg.mkPen(pal.color(QPalette.ColorRole.Text))
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pen)
            axis.setTextPen(pen)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._follow_palette()
        super().changeEvent(event)

    # -- choosing what to show ------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.array = None
        self._clear_controls()
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def set_array(self, arr: Array, plane: dict[int, int] | None = None) -> None:
        self.array = arr
        self.failures.clear()
        self._auto_levels = True
        self._clear_controls()
        kind = arr.dtype.kind
        if arr.dtype.names or kind in "OSUV" or self.as_table.isChecked():
            self._start_table(arr)
            return
        if arr.ndim == 0:
            self._request((), mode="value")
            return
        if arr.ndim == 1:
            self._request((slice(None),), mode="plot")
            return
        self._build_image_controls(arr, plane or {})
        self.request_plane()

    def _start_table(self, arr: Array) -> None:
        """Records, strings and bytes as a table: rows paged in as the user scrolls."""
        rows = arr.shape[0] if arr.ndim else 1
        columns = min(arr.shape[1], TABLE_COLUMNS) if arr.ndim >= 2 and not arr.dtype.names else 1
        old = self.table.model()
        self.table_model = ArrayTable(rows, columns, list(arr.dtype.names or ()), self._table_page, self.table)
        self.table.setModel(self.table_model)
        if old is not None:
            old.deleteLater()
        self.stack.setCurrentWidget(self.table)
        self._table_page(0)

    def _table_selection(self, arr: Array, start: int) -> tuple[Any, ...]:
        if arr.ndim == 0:
            return ()
        records = bool(arr.dtype.names)  # one record per row: the first of any further dimensions
        rest = tuple(slice(0, min(n, TABLE_COLUMNS)) if i == 0 and not records else 0 for i, n in enumerate(arr.shape[1:]))
        return (slice(start, min(arr.shape[0], start + TABLE_PAGE)), *rest)

    def _table_page(self, start: int) -> None:
        if self.array is not None:
            self._request(self._table_selection(self.array, start), mode="table", model=self.table_model)

    def auto_contrast(self) -> None:
        self._auto_levels = True
        self._keep_view = True
        self._redraw()

    def _clear_controls(self) -> None:
        while self.controls_layout.count():
            w = self.controls_layout.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        self.sliders = {}
        self.y_combo = self.x_combo = self.complex_combo = None
        self.rgb_box = None
        self.rgb_dim = None

    def _build_image_controls(self, arr: Array, plane: dict[int, int]) -> None:
        self._building = True
        c = build_plane_controls(self.controls_layout, arr, plane, axes_changed=self._axes_changed,
                                 index_changed=self._slider_moved, redraw=self._redraw, auto_contrast=self.auto_contrast)
        self.y_combo, self.x_combo, self.complex_combo = c.y_combo, c.x_combo, c.complex_combo
        self.rgb_box, self.rgb_dim, self.sliders = c.rgb_box, c.rgb_dim, c.sliders
        self._building = False
        self._update_slider_visibility()

    def colour_dim(self) -> int | None:
        """The dimension shown as RGB(A) channels, when that box is ticked and it is not a shown axis."""
        if self.rgb_box is None or not self.rgb_box.isChecked() or self.rgb_dim in self.shown_dims():
            return None
        return self.rgb_dim

    def _update_slider_visibility(self) -> None:
        shown = (*self.shown_dims(), self.colour_dim())
        for dim, (slider, spin) in self.sliders.items():
            visible = dim not in shown
            slider.setVisible(visible)
            spin.setVisible(visible)
            item = self.controls_layout.itemAtPosition(dim + 1, 0)
            if item is not None and item.widget() is not None:
                item.widget().setVisible(visible)

    def shown_dims(self) -> tuple[int, int]:
        assert self.y_combo is not None and self.x_combo is not None
        return self.y_combo.currentIndex(), self.x_combo.currentIndex()

    def _axes_changed(self) -> None:
        if self._building or self.array is None:
            return
        y, x = self.shown_dims()
        if y == x:  # keep two distinct dimensions: move the other combo out of the way
            other = self.x_combo if self.sender() is self.y_combo else self.y_combo
            assert other is not None and self.array is not None
            other.blockSignals(True)
            other.setCurrentIndex(next(d for d in reversed(range(self.array.ndim)) if d != y))
            other.blockSignals(False)
        self._auto_levels = True
        self._update_slider_visibility()
        self.request_plane()

    def _slider_moved(self, dim: int) -> None:
        self._last_dim = dim
        if not self._building:
            self.request_plane()

    def _prefetch_later(self, fn: Any, plan: PlaneRead) -> None:
        """Prefetch after this frame is painted, not competing with it, unless the view moved on.

        A timer owned by this widget (never a bare singleShot): it dies with the widget, so it
        cannot fire on a deleted view (which crashed Qt in tests)."""
        gen = self.current_generation
        self._pending_prefetch = lambda: fn(plan) if gen == self.current_generation else None
        self._prefetch_timer.start()

    def _run_prefetch(self) -> None:
        job, self._pending_prefetch = self._pending_prefetch, None
        if job is not None:
            job()

    def _prefetch_ring(self, plan: PlaneRead) -> None:
        """Warm the cache with one ring of chunks around the visible region, so panning is instant."""
        arr = self.array
        if arr is None or plan.preview or self.y_combo is None:
            return
        y, x = self.shown_dims()
        cy, cx = arr.chunks[y], arr.chunks[x]
        ring = (plan.r0 - cy, plan.r1 + cy, plan.c0 - cx, plan.c1 + cx)
        # a one-chunk ring around a region within budget stays within 4x the budget
        wider = plan_plane(arr.shape, arr.chunks, (y, x), self._fixed(), ring, 4 * self.budget_chunks, self.colour_dim())
        if not wider.preview:
            self.scheduler.prefetch([ReadRequest(arr, wider.selection, self.current_generation, label=f"{arr.path} ring")])

    def _prefetch_neighbours(self, plan: PlaneRead) -> None:
        """Warm the cache with the planes on either side along the slider last moved."""
        arr = self.array
        if arr is None or plan.preview:
            return
        hidden = [d for d in self.sliders if d not in (*self.shown_dims(), self.colour_dim())]
        dim = self._last_dim if self._last_dim in hidden else (hidden[0] if hidden else None)
        if dim is None:
            return
        requests = []
        for delta in (1, -1):
            index = plan.selection[dim] + delta
            if 0 <= index < arr.shape[dim]:
                sel = tuple(index if d == dim else s for d, s in enumerate(plan.selection))
                requests.append(ReadRequest(arr, sel, self.current_generation, label=f"{arr.path} plane {index}"))
        self.scheduler.prefetch(requests)

    def plane_selection(self) -> tuple[Any, ...]:
        assert self.array is not None
        shown = self.shown_dims()
        shown = (*shown, self.colour_dim())
        return tuple(slice(None) if d in shown else self.sliders[d][1].value() for d in range(self.array.ndim))

    def set_index(self, dim: int, value: int) -> None:
        self.sliders[dim][1].setValue(value)

    def _fixed(self) -> dict[int, int]:
        return {d: spin.value() for d, (_, spin) in self.sliders.items()}

    def request_plane(self) -> None:
        """The whole plane: at full resolution if it fits the chunk budget, else a preview."""
        if self.array is None or self.y_combo is None:
            return
        self.detail.clear()
        self.detail_plan = None
        self.detail_data = None
        self.failures.clear()
        plan = plan_plane(self.array.shape, self.array.chunks, self.shown_dims(), self._fixed(), None,
                          self.budget_chunks, self.colour_dim())
        self._request(plan.selection, mode="image", plan=plan, layer="base")

    def visible_region(self) -> tuple[int, int, int, int]:
        (x0, x1), (y0, y1) = self.image.view.viewRange()
        return int(np.floor(y0)), int(np.ceil(y1)), int(np.floor(x0)), int(np.ceil(x1))

    def request_visible(self) -> None:
        """After pan or zoom over a preview: read what is visible, as finely as the budget allows."""
        base = self.base_plan
        if self.array is None or self.y_combo is None or base is None or not base.preview:
            return
        if self.current_generation != self.shown_generation:
            return  # the base is still loading; it triggers this again when it lands
        plan = plan_plane(self.array.shape, self.array.chunks, self.shown_dims(), self._fixed(),
                          self.visible_region(), self.budget_chunks, self.colour_dim())
        if self.detail_plan is not None and plan == self.detail_plan:
            return
        if plan.r1 <= plan.r0 or plan.c1 <= plan.c0:
            return
        self._request(plan.selection, mode="image", plan=plan, layer="detail")

    # -- requests and results -------------------------------------------------------------
    def _request(self, selection: tuple[Any, ...], mode: str, **extra: Any) -> None:
        arr = self.array
        assert arr is not None
        gen = self.scheduler.next_generation()
        self.current_generation = gen
        label = f"{arr.path}[{', '.join(selection_text(s) for s in selection)}]"
        plan = extra.get("plan")
        req = ReadRequest(arr, selection, gen, label=label, preview=bool(plan and plan.preview),
                          extra={"mode": mode, **extra})
        self.status.emit(f"Reading {label}…")
        self.scheduler.submit(req, lambda r: post(lambda: self._deliver(r), self),
                              lambda rq, d, t: post(lambda: self._progress(rq, d, t), self))

    def _progress(self, req: ReadRequest, done: int, total: int) -> None:
        if req.generation == self.current_generation:
            self.progress.emit(done, total)

    def _deliver(self, result: ReadResult) -> None:
        if result.request.generation != self.current_generation:
            return  # a newer view state superseded this read
        self.shown_generation = result.request.generation
        if result.error is not None:
            self.status.emit(f"Error: {result.error}")
            self.message.setText(f"Cannot show {result.request.label}:\n{result.error}")
            self.stack.setCurrentWidget(self.message)
            self.loaded.emit()
            return
        data = result.data
        assert data is not None
        self.last_data = data
        mode = result.request.extra.get("mode")
        if mode == "image" and result.request.extra.get("layer") == "detail":
            self.detail_plan = result.request.extra["plan"]
            self.detail_data = data
            self._draw_detail()
            self._prefetch_later(self._prefetch_ring, self.detail_plan)
        elif mode == "image":
            self.base_plan = result.request.extra.get("plan")
            self._redraw()
            if self.base_plan is not None:
                self._prefetch_later(self._prefetch_neighbours, self.base_plan)
        elif mode == "plot":
            self.plot.clear()
            self.plot.plot(displayable(data), pen=pg.mkPen(self.palette().color(QPalette.ColorRole.Highlight), width=1.5))
            self.stack.setCurrentWidget(self.plot)
        elif mode == "value":
            self.value.setText(repr(data[()].item() if isinstance(data[()], np.generic) else data[()]))
            self.stack.setCurrentWidget(self.value)
        else:
            model = result.request.extra.get("model")
            if model is self.table.model():
                model.append(data if data.ndim else data.reshape(1), result.failures)
            self.stack.setCurrentWidget(self.table)
        plan = result.request.extra.get("plan")
        if plan is not None and plan.preview:
            self.status.emit(f"Preview of {result.request.label}: one sample every "
                             f"{plan.step_r}x{plan.step_c} elements ({plan.chunks} chunks); zoom in for full resolution")
        else:
            self.status.emit(f"Read {result.request.label} in {result.seconds * 1000:.0f} ms")
        if result.failures:
            if mode == "image":
                self.failures.mark(result.failures, *self.shown_dims())
            n = len(result.failures)
            self.status.emit(f"{n} chunk{'s' if n > 1 else ''} of {result.request.label} could not be read"
                             f"{' (hatched)' if mode == 'image' else ''}: {result.failures[0].message}")
        self.loaded.emit()
        if mode == "image" and result.request.extra.get("layer") == "base" and plan is not None and plan.preview:
            self._view_timer.start()

    def oriented(self, data: np.ndarray) -> np.ndarray:
        """The read block as (rows, columns[, channels]), whatever the order of the dimensions."""
        y, x = self.shown_dims()
        c = self.colour_dim() if data.ndim == 3 else None
        kept = sorted(d for d in (y, x, c) if d is not None)
        order = [kept.index(y), kept.index(x)] + ([kept.index(c)] if c is not None else [])
        mode = self.complex_combo.currentText() if self.complex_combo is not None else "magnitude"
        return np.ascontiguousarray(displayable(np.transpose(data, order), mode))

    def _redraw(self) -> None:
        data = self.last_data
        if data is None or self.y_combo is None:
            return
        img = self.oriented(data)
        first = self._auto_levels
        if first:
            self.image.setImage(img, autoRange=False, autoLevels=False, axes=image_axes(img),
                                levels=percentile_levels(img))
            self._auto_levels = False
        else:
            self.image.setImage(img, autoRange=False, autoLevels=False, axes=image_axes(img))
        plan = self.base_plan
        if plan is not None:  # place the (possibly coarse) image over the plane it samples
            self.image.getImageItem().setRect(QRectF(plan.c0, plan.r0, img.shape[1] * plan.step_c, img.shape[0] * plan.step_r))
        if first and self.pending_region is not None:
            r0, r1, c0, c1 = self.pending_region
            self.pending_region = None
            self.image.view.setRange(xRange=(c0, c1), yRange=(r0, r1), padding=0)
        elif first and not self._keep_view:
            self.image.view.autoRange(padding=0.02)
        self._keep_view = False
        self.stack.setCurrentWidget(self.image)
        self._draw_detail()

    def _draw_detail(self) -> None:
        plan, data = self.detail_plan, self.detail_data
        if plan is None or data is None or self.y_combo is None:
            self.detail.clear()
            return
        img = self.oriented(data)
        self.detail.setImage(img, autoLevels=False)
        self.detail.setRect(QRectF(plan.c0, plan.r0, img.shape[1] * plan.step_c, img.shape[0] * plan.step_r))
        self._sync_detail_levels()

    def _sync_detail_levels(self, *_: Any) -> None:
        base = self.image.getImageItem()
        if base.levels is not None:
            self.detail.setLevels(base.levels)
        self.detail.setLookupTable(base.lut)

    def _mouse_moved(self, pos: Any) -> None:
        data = self.image.image
        if data is None or self.stack.currentWidget() is not self.image:
            return
        p = self.image.getImageItem().mapFromScene(pos)
        r, c = int(p.y()), int(p.x())
        if 0 <= r < data.shape[0] and 0 <= c < data.shape[1]:
            self.status.emit(f"row {r}, column {c}: {data[r, c]!r}")

    def plane_spec(self) -> PlaneSpec | None:
        """The plane shown, as export needs it: the whole plane at full resolution (whatever
        preview or region is on screen), with the histogram's levels and lookup table; None
        when no array is shown."""
        arr = self.array
        if arr is None or self.stack.currentWidget() is self.message:
            return None
        if self.y_combo is None:  # a plot, a value or a table
            return PlaneSpec(arr, table_selection(arr))
        hist = self.image.ui.histogram.item
        gradient = hist.gradient
        lut = None if gradient.isLookupTrivial() else gradient.getLookupTable(256, alpha=gradient.usesAlpha())
        lo, hi = hist.getLevels()
        mode = self.complex_combo.currentText() if self.complex_combo is not None else "magnitude"
        return PlaneSpec(arr, self.plane_selection(), self.shown_dims(), self.colour_dim(), mode,
                         (float(lo), float(hi)), None if lut is None else np.asarray(lut, dtype=np.uint8))
