"""The projection row under an image's sliders: a fixed dimension reduced over a range.

Pick a dimension that is not displayed, an operation and a range (the whole dimension at
first), and "Project": the projection (``viewing.projection``) runs as a job on the window's
pool, its progress on the status bar and the window's Cancel button stopping it; the answer is
drawn as the image is drawn (levels, colour map, readout, File > Export) under a label saying
what it is. Moving the reduced dimension's slider, choosing "None", or displaying the reduced
dimension returns to the plain plane; moving another slider projects the new plane.

A Dask scheduler address set in Preferences (``SCHEDULER_KEY``) sends the slabs to that
cluster, whose workers open the array from its store's location.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSpinBox, QWidget

from ..scheduling import Driver
from ..viewing.export.plane import PlaneSpec
from ..viewing.image.axes import dim_names
from ..viewing.image.state import ViewState
from ..viewing.projection.cluster import Source
from ..viewing.projection.ops import OPS
from ..viewing.projection.shown import projected_export, projected_readout, projected_scene, short_label
from ..viewing.projection.spec import ProjectionSpecError
from ..viewing.projection.view import Engine, ProjectedPlane, ProjectionAsk, ProjectionModel, ProjectionRequest
from .bridge import post
from .plane_controls import INT_MAX, PlaneControls

if TYPE_CHECKING:
    from .view_host import ProjectionHost

#: the QSettings key of the Dask scheduler address projections use ("" or absent: this machine)
SCHEDULER_KEY = "dask_scheduler"


class ProjectionControls(QWidget):
    """The row (deleted with the other controls when another array is shown) and the projection
    shown, if any (``shown``)."""

    def __init__(self, view: ProjectionHost, plane: PlaneControls) -> None:
        super().__init__()
        self.view = view
        self.plane = plane
        self.model = ProjectionModel()
        self.driver: Driver[ProjectionAsk, ProjectionRequest, ProjectedPlane] = Driver(
            self.model, view.pool, self._answered, post=lambda fn: post(fn, self), name="projection",
            on_progress=view.progress.emit)
        #: the projection on screen (None: the plain plane), with the request that made it
        self.shown: ProjectedPlane | None = None
        self.request: ProjectionRequest | None = None
        box = QHBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        self.dim = QComboBox()
        self.dim.setToolTip("The dimension to reduce: one that is not displayed")
        self.op = QComboBox()
        self.op.addItems(list(OPS))
        self.op.setToolTip("max, min, sum, mean or std over the range; NaN is ignored, as numpy's nan-functions do")
        self.start, self.stop = QSpinBox(), QSpinBox()
        self.start.setToolTip("First index of the range")
        self.stop.setToolTip("End of the range (exclusive)")
        self.button = QPushButton("Project")
        self.button.setToolTip("Compute the projection over the range and show it in place of the plane")
        self.label = QLabel()
        self.label.setStyleSheet("font-weight: bold")
        # a long label is cut, not widened into: the window's panes keep their sizes
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        for w in (QLabel("Project"), self.dim, self.op, QLabel("from"), self.start, QLabel("to"), self.stop,
                  self.button, self.label):
            box.addWidget(w)
        box.setStretch(box.count() - 1, 1)
        self._fill_dims()
        self.dim.currentIndexChanged.connect(lambda _: self._dim_picked())
        self.button.clicked.connect(self.project)
        for combo in (plane.y_combo, plane.x_combo):
            combo.currentIndexChanged.connect(lambda _: self._axes_changed())
        if plane.rgb_box is not None:
            plane.rgb_box.toggled.connect(lambda _: self._axes_changed())
        for d, (_, index_box) in plane.sliders.items():
            index_box.valueChanged.connect(lambda _v, d=d: self._moved(d))

    # -- the controls -------------------------------------------------------------------------
    @property
    def state(self) -> ViewState | None:
        return self.view.state

    def _fill_dims(self) -> None:
        """"None" and every dimension that is neither displayed nor colour."""
        state = self.state
        self.dim.blockSignals(True)
        self.dim.clear()
        self.dim.addItem("None", None)
        if state is not None:
            names = dim_names(state.array, state.axis_names)
            for d in range(state.array.ndim):
                if d not in state.plane_dims:
                    self.dim.addItem(f"{names[d]} ({state.array.shape[d]})", d)
        self.dim.blockSignals(False)
        self._dim_picked(plain=False)

    def _dim_picked(self, plain: bool = True) -> None:
        """The range boxes cover the picked dimension, whole; "None" shows the plain plane."""
        d = self.dim.currentData()
        state = self.state
        n = state.array.shape[d] if d is not None and state is not None else 0
        for w in (self.op, self.start, self.stop, self.button):
            w.setEnabled(d is not None)
        self.start.setRange(0, max(0, min(n, INT_MAX) - 1))
        self.stop.setRange(1 if n else 0, min(n, INT_MAX))
        self.start.setValue(0)
        self.stop.setValue(min(n, INT_MAX))
        if plain:
            self.show_plain()

    def _axes_changed(self) -> None:
        picked = self.dim.currentData()
        self._fill_dims()
        self.dim.setCurrentIndex(max(0, self.dim.findData(picked)))
        self.show_plain()

    def _moved(self, d: int) -> None:
        """A slider moved: the reduced dimension's returns to the plain plane, another's projects the new plane."""
        if self.shown is None and self.driver.inflight is None:
            return
        if d == self.dim.currentData():
            self.dim.setCurrentIndex(0)
        else:
            self.project()

    # -- computing and showing ------------------------------------------------------------------
    def engine(self) -> Engine:
        """The cluster set in Preferences, else this machine."""
        address = str(QSettings().value(SCHEDULER_KEY, "") or "").strip()
        state = self.state
        if not address or state is None:
            return Engine()
        arr = state.array
        return Engine(address, Source(arr.store.url, arr.path, {}, arr.hierarchy.widen_ml_types))

    def project(self) -> None:
        """Compute the projection the controls say, on the pool."""
        state, d = self.state, self.dim.currentData()
        if state is None or d is None:
            return
        try:
            req = self.model.request(ProjectionAsk(state, d, self.op.currentText(), self.start.value(),
                                                   self.stop.value(), self.engine()))
        except ProjectionSpecError as e:
            self.view.status.emit(str(e).removeprefix("zarrview: "))
            return
        assert req is not None  # a new ask is always computed
        self.driver.ask(req)
        self.request = req
        self.label.setText(f"computing {short_label(req.projection)}…")
        self.view.status.emit(f"Projecting {req.label}…")
        self.view.progress.emit(0, 1)  # the window's Cancel button applies from now on

    def cancel(self) -> None:
        self.driver.cancel()

    def _answered(self, plane: ProjectedPlane) -> None:
        req, state = self.request, self.state
        if plane.image is None or req is None or state is None:  # cancelled or failed: the plane stays usable
            self.show_plain()
            self.view.status.emit(plane.status)
            return
        self.shown = plane
        self.label.setText(f"showing {short_label(req.projection)}")
        self.view.cover_plane(projected_scene(plane, state), plane.status)

    def show_plain(self) -> None:
        """Back to the plane the sliders say (any projection being computed is dropped)."""
        was = self.shown is not None
        self.driver.discard()
        self.shown = None
        self.label.setText("")
        if was:
            self.view.paint_plane()

    # -- what the view asks while a projection is shown --------------------------------------------
    def readout(self, row: int, col: int) -> str:
        if self.shown is None or self.state is None or self.request is None:
            return ""
        return projected_readout(self.shown, self.state, short_label(self.request.projection), row, col)

    def export_spec(self, spec: PlaneSpec | None) -> PlaneSpec | None:
        """The view's plane ``spec`` as File > Export writes it: the projection where one is shown."""
        req = self.request
        if spec is None or self.shown is None or req is None:
            return spec
        return projected_export(spec, req.projection, req.dims, req.channel_dim, self.engine())


def add_projection_controls(view: ProjectionHost, layout: QGridLayout, plane: PlaneControls,
                            state: ViewState) -> ProjectionControls | None:
    """The projection row under the other controls of ``layout``, where the array has a
    dimension to reduce."""
    if state.array.ndim < 3:
        return None
    controls = ProjectionControls(view, plane)
    layout.addWidget(controls, state.array.ndim + 4, 0, 1, -1)
    return controls
