"""The selected array on screen: a 2-D slice as an image (sliders for the other dimensions), a
line plot for 1-D, the value of a 0-d array, a table for strings and records.

This widget holds no view logic: input becomes a new ``ViewState`` shown through the image
model's driver (``viewing.ViewController`` run by ``scheduling.Driver``), whose scenes it paints. Plots, values and tables go
through ``OtherViews``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QHBoxLayout, QLabel, QStackedWidget, QVBoxLayout,
                               QWidget)

from ..scheduling import Done, Driver, Task, Tasks, WorkerPool, call_job
from ..viewing import Scene, ViewController, ViewState
from ..viewing.image.axes import dim_names
from ..viewing.image.controller import PlaneRequest
from ..viewing.cf.view import read_cf
from ..viewing.conventions.geozarr import GeoMultiscale, detect_geozarr
from ..viewing.conventions.georef import pyramid_view
from ..viewing.decision import Kind, Shown, decide
from ..viewing.export.plane import PlaneSpec
from ..viewing.labels.export import overlays
from ..viewing.labels.layers import LabelLayer
from ..viewing.ome import Multiscale, OmeImage, OmePlate
from ..viewing.image.memory import ViewMemory
from ..viewing.saved_views import ViewLook, applied
from ..viewing.image.state import Region
from ..zarrlib import Array, Group, Node
from ..zarrlib.storage.access import AccessDeniedError
from .bridge import post
from .channel_controls import ChannelPanel, add_channel_panel, sync_channel_slider
from .colour_map_control import ColourMapControl, colour_control
from .fold_panels import SideColumn
from .sideways import SidewaysScroll
from .chunk_grid_overlay import ChunkGridOverlay
from .image_view import ImagePane
from .label_controls import LabelPanel, show_labels
from .analysis_tools import AnalysisTools
from .anndata_views import AnnDataViews
from .other_views import OtherViews
from .cf_presenter import CFPresenter
from .physical_view import PhysicalSpace, slider_text
from .plate_view import PlateView
from .projection_controls import ProjectionControls, add_projection_controls
from .tool_row import ToolRow
from .plane_controls import (PlaneControls, add_level_picker, add_multiscale_picker, add_variable_picker,
                             build_plane_controls)

#: milliseconds after a frame before its prefetch starts, so it never competes with painting
PREFETCH_DELAY_MS = 150
#: milliseconds a read runs before the status bar says it is under way: a cached plane lands sooner,
#: and saying so and then its result would repaint the status bar twice per slider step
BUSY_DELAY_MS = 150


#: what the data area says while nothing is open: how to open data
OPEN_HINT = ("Open a Zarr store to browse it:\n\n"
             "drop a .zarr folder, a .zip or an .ozx file on this window,\n"
             "File ▸ Open Folder… (Ctrl+O), or\n"
             "File ▸ Open URL… (Ctrl+L) for https://, s3:// or gs://")


class DataView(QWidget):
    status = Signal(str)
    #: what the status bar says about the previous view is no longer true (a message or another
    #: array is shown): the window clears it unless it has said something of its own since
    stale = Signal()
    progress = Signal(int, int)
    loaded = Signal()
    #: (row, column) of the plane's pixel under a single left click on the image (Python ints:
    #: a plane may be wider than a C int)
    pixel_clicked = Signal(object, object)
    #: a slider or index box moved the plane shown along a dimension (after the state has it)
    plane_moved = Signal()
    #: (row, column) of the plane's pixel under the mouse: what else reads a value there (a
    #: compared array) follows the cursor
    pixel_hovered = Signal(object, object)
    #: the channels drawn changed (one ticked or unticked, its colour, single or composite): what
    #: follows the channels shown (the series at a point) draws them again
    channels_shown = Signal()
    #: a read of the array shown was refused by its store's access policy (the AccessDeniedError):
    #: the window may ask to allow the prefix and call ``request_plane``
    access_denied = Signal(object)

    def __init__(self, pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pool = pool
        self.array: Array | None = None
        self.controls = QWidget()
        self.controls_layout = QGridLayout(self.controls)
        self.controls_layout.setContentsMargins(0, 0, 0, 0)
        self.controls_layout.setVerticalSpacing(2)  # a line a slider: the image keeps the height
        #: the channels, labels and overlays of an image: a column at its right, with its toggle
        self.side = SideColumn()
        self.side_button = self.side.toggle
        self.plane: PlaneControls | None = None
        self.channels: ChannelPanel | None = None
        self.colours: ColourMapControl | None = None
        self.label_panel: LabelPanel | None = None
        #: the projection row (``app/projection_controls.py``) of an image of 3 or more dimensions
        self.projection: ProjectionControls | None = None
        self.image = ImagePane(pool)
        self.image.region_changed = self._region_changed
        self.image.levels_changed = lambda levels: self._update(contrast=levels)
        self.image.hovered = self._hovered
        self.image.clicked = self.pixel_clicked.emit
        #: chunk and shard boundaries over the image, missing chunks tinted (View ▸ Chunk Grid)
        self.chunk_grid = ChunkGridOverlay(pool, self.image.view, lambda: self.state, self.status.emit)
        #: what went wrong with what is shown (a store, node, plane or read that failed), or None:
        #: ``--screenshot`` exits non-zero with it instead of saving a picture of an error
        self.problem: str | None = None
        #: each array's view as it was left (channels, contrast, sliders), for when it is shown again
        self.memory = ViewMemory()
        #: the dimension whose slider moved last (the one the keyboard steps), or None
        self._stepped: int | None = None
        self.message = QLabel(OPEN_HINT)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.others = OtherViews(pool, self)
        self.stack = QStackedWidget()
        #: AnnData dataframes, sparse matrices and embeddings (``app/anndata_views.py``)
        self.anndata = AnnDataViews(pool, self)
        shown: list[QWidget] = [self.message, self.image, *self.others.widgets(), *self.anndata.widgets()]
        for w in shown:
            self.stack.addWidget(w)
        self.stack.currentChanged.connect(lambda _: self.tools.setVisible(self.stack.currentWidget() is self.image))
        self.as_table = QCheckBox("Show as table")
        self.as_table.setToolTip("Show the values of any array as a table, rows paged in as you scroll")
        self.as_table.toggled.connect(lambda _: self.set_array(self.array) if self.array is not None else None)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 4)
        layout.setSpacing(2)
        top = QHBoxLayout()
        top.addWidget(self.as_table)
        #: the image's tools, as buttons (the window adds its View menu's actions)
        self.tools: ToolRow = ToolRow()
        self.tools.hide()  # until an image is shown
        top.addWidget(self.tools)
        top.addStretch(1)
        top.addWidget(self.side_button)
        layout.addLayout(top)
        layout.addWidget(SidewaysScroll(self.controls))
        body = QHBoxLayout()
        body.setSpacing(4)
        body.addWidget(self.stack, 1)
        body.addWidget(self.side)
        self.side.beside(self)
        layout.addLayout(body, 1)
        self._prefetch: Any = None
        self._prefetch_timer = QTimer(self)  # owned by the widget: it cannot fire on a deleted view
        self._prefetch_timer.setSingleShot(True)
        self._prefetch_timer.setInterval(PREFETCH_DELAY_MS)
        self._prefetch_timer.timeout.connect(self._run_prefetch)
        self.physical = PhysicalSpace(self.image)
        #: line profiles and region statistics, in a panel under the image (``app/analysis_tools.py``)
        self.analysis = AnalysisTools(pool, self.image, lambda: self.state, self._pixel_size, self)
        layout.addWidget(self.analysis.holder)
        #: another band of a GeoZarr pyramid, read on a worker: the newest asked for only
        self._variables: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._variable_read, post=lambda fn: post(fn, self), name="pyramid variable")
        self._pyramid: Shown | None = None  # the GeoZarr pyramid shown, for its band picker
        self._ome: OmeImage | None = None  # the OME image shown, for its pixel sizes
        self.plate_view: PlateView | None = None  # built on the first plate (set_plate)
        #: the image's model, and the driver that reads what it asks and hands its scenes to ``_paint``
        self.controller = ViewController()
        self.driver: Driver[ViewState, PlaneRequest, Scene] = Driver(
            self.controller, pool, self._paint, post=lambda fn: post(fn, self), name="image",
            on_progress=self.progress.emit, defer=self._defer)
        #: the CF conventions of the array shown, read off the GUI thread
        self.cf = CFPresenter(pool, self, self.image, self.controls_layout, self)
        self.cf.status.connect(self.status)
        self.cf.names_changed.connect(self.label_axes)
        #: (r0, r1, c0, c1) to show first (``--region``)
        self.pending_region: tuple[float, float, float, float] | None = None
        #: the pyramid level the next OME-Zarr image starts at (``--level``), not the zoom's
        self.pending_level: int | None = None
        #: how the next array or image shown looks (a saved view or a view link being opened),
        #: instead of how it was left this session
        self.pending_look: ViewLook | None = None
        #: the decision last shown (an array, an OME image, a pyramid): what a view of the same
        #: node taken another way (compared with itself) is shown from
        self.shown: Shown | None = None
        self._colormap_next: str | None = None
        self._fit_on_paint = False
        #: a region asked for (a saved view, ``--region``) stays framed while the pane around it
        #: takes its final size (a tool opening beside it), until a person zooms or pans
        self._held_region: tuple[float, float, float, float] | None = None
        box = self.image.view.getViewBox()
        box.sigResized.connect(lambda *_: self.reframe())
        box.sigRangeChangedManually.connect(lambda *_: self.release_region())
        #: the view's zoom and pan are linked to another's (a compared array): its first plane
        #: takes that view's region instead of fitting itself, which would move the other too
        self.follows_view = False
        self._said = ""
        self._busy_text = ""
        self._busy_timer = QTimer(self)
        self._busy_timer.setSingleShot(True)
        self._busy_timer.setInterval(BUSY_DELAY_MS)
        self._busy_timer.timeout.connect(lambda: self._say(self._busy_text))
        self.axes_shown = False

    # -- what the window uses ----------------------------------------------------------------
    def cancel(self) -> None:
        """Stop what the view is reading (the Cancel button); each read says it was cancelled."""
        self.driver.cancel()
        self.others.cancel()
        if self.projection is not None:
            self.projection.cancel()
        if self.plate_view is not None:
            self.plate_view.driver.cancel()

    @property
    def state(self) -> ViewState | None:
        return self.controller.state

    @property
    def shown_node(self) -> Node | None:
        """The node whose plane is shown: an OME image's or a pyramid's group, else the array."""
        shown, state = self.shown, self.state
        if shown is not None and state is not None and shown.state is not None and shown.state.array is state.array:
            return shown.node
        return self.array

    @property
    def scene(self) -> Scene:
        return self.controller.scene

    @property
    def budget_chunks(self) -> int:
        return self.controller.budget

    @budget_chunks.setter
    def budget_chunks(self, value: int) -> None:
        self.controller.budget = value

    @property
    def table(self) -> Any:
        return self.others.table

    @property
    def plot(self) -> Any:
        return self.others.plot

    @property
    def ome(self) -> OmeImage | None:
        """The OME image shown (None for a plain array): what arrives after it is read (its label
        layers) checks it still belongs to the image on screen."""
        return self._ome

    def show_message(self, text: str) -> None:
        """``text`` instead of data; the status bar, which spoke of the previous view, is cleared."""
        self._reset(None)
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def show_problem(self, text: str) -> None:
        """``text``, saying what went wrong, instead of data (kept as ``problem``)."""
        self.show_message(text)
        self.problem = text

    def set_frame(self, frame: Any) -> None:
        """An AnnData dataframe (``viewing.anndata.Frame``) as one table, paged."""
        self._reset(None)
        self.anndata.show_frame(frame)

    def set_sparse(self, matrix: Any) -> None:
        """An AnnData sparse matrix: the block in view as an image, its stored entries as a table."""
        self._reset(None)
        self.anndata.show_sparse(matrix)

    def set_embedding(self, array: Array, frame: Any) -> None:
        """An embedding of cells as a scatter plot, coloured by a column of ``frame`` (or None)."""
        self._reset(None)
        self.anndata.show_embedding(array, frame)

    def set_array(self, arr: Array, plane: dict[int, int] | None = None) -> None:
        """``arr`` as decided without reading (``plane``: the indices asked for, else the table's)."""
        plane = plane if plane is not None else self.others.indices(arr)  # and the image the table's
        self.show_array(decide(arr, plane, read=False))

    def show_array(self, shown: Shown) -> None:
        """An array as ``shown`` decides: its first view (or a table, a line, a value), or why its
        plane cannot be shown."""
        arr = shown.node
        assert isinstance(arr, Array)
        self.shown = shown
        kept = self.state if self.state is not None and self.state.array is arr else None  # a table shows its plane
        plane = dict(shown.plane)
        self._reset(arr)
        self.pending_level = None  # --level names a level of an image, not of an array (the window says so)
        self._ome = None
        self.physical.apply(None, None)
        if arr.dtype.names or arr.dtype.kind in "OSUV" or self.as_table.isChecked() or shown.state is None:
            if shown.refused is not None:
                self.show_problem(shown.refused.window)
                return
            self.others.show(arr, as_table=self.as_table.isChecked(), shown=kept, plane=plane)
            return
        self._start(self._first(shown.state, plane_given=bool(plane)))  # a plane asked for, or the table's
        self.cf.start(arr, self.plane)  # coordinates, units and decoding: read on a worker, then applied

    def show_decided(self, shown: Shown) -> None:
        """``shown`` as what it is: an OME-Zarr image, a pyramid or an array."""
        if shown.kind is Kind.PYRAMID:
            self.show_pyramid(shown)
        elif shown.image is not None and shown.kind in (Kind.IMAGE, Kind.LABEL_IMAGE):
            self.show_image(shown)
        else:
            self.show_array(shown)

    def show_image(self, shown: Shown) -> None:
        """An OME-Zarr image as ``shown`` decides: its pyramid (the level chosen by zoom, or
        picked), axis names and the planes its rendering settings ask for."""
        image, state, level, self.pending_level = shown.image, shown.state, shown.level, None
        self.shown = shown
        if shown.refused is not None or state is None or image is None:
            self.show_problem(shown.refused.window if shown.refused is not None else f"{shown.node.path} is not an OME-Zarr image")
            return
        same = self.state is not None and self._ome is not None and self._ome.group is image.group
        kept = self.state.labels if same and self.state is not None else ()
        self._reset(state.array)
        state = self._first(state, plane_given=bool(shown.plane))  # its channels as they were left
        self._ome = image
        self._start(state.with_(level=level, labels=kept))
        self._apply_physical()
        picker = self._level_picker(image.first, state, level)
        if len(image.multiscales) > 1:  # several pyramids in one group: the first by default, any on request
            add_multiscale_picker(picker, image, lambda chosen: self.show_image(shown.with_found(chosen)))
        if state.channels:
            self.channels = add_channel_panel(self.side, state, self.plane, self._channel_changed,
                                              self._channel_mode, self.pool)
        self.show_labels(image.group, kept)  # another pyramid of the image keeps its label layers

    def show_pyramid(self, shown: Shown) -> None:
        """A multiscales convention pyramid (GeoZarr) as ``shown`` decides: the level picker and
        level-by-zoom of an OME-Zarr image, and axes in the CRS's coordinates once level 0's CF
        read adds them."""
        found, state, level, self.pending_level = shown.pyramid, shown.state, shown.level, None
        self.shown = shown
        if shown.refused is not None or state is None or found is None:
            self.show_problem(shown.refused.window if shown.refused is not None else f"{shown.node.path} is not a multiscales pyramid")
            return
        ms = found.multiscale
        self._reset(state.array)
        self._ome = None
        self._pyramid = shown
        self._start(self._first(state, plane_given=bool(shown.plane)).with_(level=level))
        self._apply_physical()
        picker = self._level_picker(ms, state, level)
        if len(found.variables) > 1:  # level groups holding several bands: any band's pyramid on request
            add_variable_picker(picker, found.variables, found.variable, lambda name: self._variable(found, name))
        arr = state.array
        self.cf.start(arr, self.plane, read=lambda executor: pyramid_view(found, read_cf(arr, executor=executor)))

    def _variable(self, found: GeoMultiscale, name: str) -> None:
        """The pyramid of another array of the level groups, read on a worker (it opens each level)."""
        self._variables.show(Task(call_job(lambda: detect_geozarr(found.group, name),
                                           label=f"pyramid of {name} in {found.path}"), about=(found, name)))

    def _variable_read(self, done: Done[GeoMultiscale | None]) -> None:
        """The band's pyramid, shown while the pyramid it was picked in is still on screen."""
        (found, name), answer = done.task.about, done.answer
        shown = self._pyramid
        if not answer.cancelled and isinstance(answer.value, GeoMultiscale) \
                and shown is not None and shown.node is found.group:  # still this pyramid on screen
            self.show_pyramid(shown.with_found(answer.value))
        elif answer.error is not None:
            self.status.emit(f"The pyramid of {name} cannot be read: {answer.error}")

    def _level_picker(self, ms: Multiscale, state: ViewState, level: int | None) -> QComboBox:
        picker = add_level_picker(self.controls_layout, ms, state, lambda level: self._update(level=level))
        picker.blockSignals(True)  # --level: the picker says so, without a second state
        picker.setCurrentIndex(max(0, picker.findData(level)))
        picker.blockSignals(False)
        return picker

    def show_labels(self, image: Group, layers: tuple[LabelLayer, ...]) -> None:
        """The label layers of ``image``, read after it: drawn over it with their panel, while
        ``image`` is the one shown."""
        panel = show_labels(self, image, layers)
        if panel is not None:
            self.label_panel = panel

    def set_state(self, state: ViewState) -> None:
        """Show ``state``: the loaded tiles drawn for it at once, what it lacks read."""
        self.driver.show(state)

    def set_plate(self, plate: OmePlate, group: Group) -> PlateView:
        """An OME-Zarr plate: a grid of its wells' thumbnails (``app/plate_view.py``), read until
        another view replaces it (``stale``); the view, for the window to connect ``open_path``."""
        self.show_message(f"Reading the wells of the plate {plate.path}…")
        if self.plate_view is None:
            self.plate_view = PlateView(self.pool, self)
            self.stack.addWidget(self.plate_view)
            self.stale.connect(self.plate_view.clear)
        self.stack.setCurrentWidget(self.plate_view)
        self.plate_view.show_plate(plate, group)
        return self.plate_view

    def _first(self, state: ViewState, plane_given: bool) -> ViewState:
        """The first view of a node: as a saved view or link being opened has it, else as it
        was left this session."""
        look, self.pending_look = self.pending_look, None
        if look is None:
            self._colormap_next = None
            return self.memory.restore(state, plane_given=plane_given)
        self._colormap_next = look.colormap
        return applied(state, look)

    def _start(self, state: ViewState) -> None:
        region = self.pending_region
        self.pending_region = None
        if region is not None:
            r0, r1, c0, c1 = region
            state = state.with_(region=(r0, r1, c0, c1), screen_scale=self._scale_for(region))
        elif state.pyramid:
            # a pyramid opens fitted to the view: its first read is the level that fit needs, not
            # a preview of level 0 sized for a 1:1 view that is never shown
            rows, cols = state.plane_shape
            sy, sx = self._scale_for((0, rows, 0, cols))
            state = state.with_(region=(0.0, float(rows), 0.0, float(cols)), screen_scale=(min(sy, sx), min(sy, sx)))
        self.plane = build_plane_controls(self.controls_layout, state, index_changed=self._index_changed,
                                          axes_changed=self._axes_changed, complex_changed=self._complex_changed,
                                          auto_contrast=self.auto_contrast,
                                          levels_typed=lambda levels: self._update(contrast=levels),
                                          per_plane=lambda on: self._update(auto_per_plane=on))
        label_image = self.ome is not None and self.ome.label is not None
        # a label image is drawn in its labels' own colours: no colour map, no colour bar claims otherwise
        self.image.colour_bar = not label_image
        self.image.ui.histogram.setVisible(not label_image and not state.composite)
        self.colours = None if label_image else colour_control(self.controls_layout, state, self.image.ui.histogram.item)
        colormap, self._colormap_next = self._colormap_next, None
        if self.colours is not None and colormap is not None:
            self.colours.choose(colormap)
        if label_image:
            self.controls_layout.addWidget(QLabel("Colours: each label its own"), 0, 7)
        self._fit_on_paint = not self.follows_view
        self._region_shown = region
        self.release_region()
        self.set_state(state)
        self.projection = add_projection_controls(self, self.controls_layout, self.plane, state)
        self.label_axes()

    def read_again(self) -> None:
        """Read again what is shown, image or table (after a refused prefix was allowed)."""
        if self.state is not None:
            self.request_plane()
        elif self.array is not None:
            self.others.show(self.array, as_table=self.as_table.isChecked())

    def request_plane(self) -> None:
        """Read again what the view needs (after the chunk budget changed)."""
        if self.state is not None:
            state = self.state
            self.controller.again()
            self.set_state(state)

    def set_index(self, dim: int, value: int) -> None:
        if self.plane is not None:
            self.plane.sliders[dim][1].setValue(value)

    def release_region(self) -> None:
        """The region asked for is no longer held: the view's range is another's to set now."""
        self._held_region = None

    def reframe(self) -> None:
        """The region asked for, framed again where it is still held: the pane around it (or a
        panel linked to its axes) changed its size or place."""
        if self._held_region is not None:
            self.image.show_region(self._held_region)

    def reset_view(self) -> None:
        """The whole plane fitted to the view again (View ▸ Reset View)."""
        self.release_region()
        if self.state is not None and self.stack.currentWidget() is self.image:
            self.image.show_plane(*self.state.plane_shape)

    def step_slider(self, delta: int) -> bool:
        """The slider last moved (else the first one shown) moved by ``delta``, clamped to its
        range (the keyboard's steps); False where no slider is shown."""
        state, plane = self.state, self.plane
        if state is None or plane is None or self.stack.currentWidget() is not self.image:
            return False
        shown = [d for d, (slider, _box) in plane.sliders.items() if not slider.isHidden()]
        if not shown:
            return False
        dim = self._stepped if self._stepped in shown else shown[0]
        value = min(max(0, state.indices[dim] + delta), state.array.shape[dim] - 1)
        self.set_index(dim, value)
        return True

    def auto_contrast(self) -> None:
        scene = self.controller.auto_contrast()
        if scene is not None:
            self._paint(scene)

    def plane_selection(self) -> tuple[Any, ...]:
        assert self.state is not None
        return self.state.plane_selection()

    def shown_dims(self) -> tuple[int, int]:
        assert self.state is not None
        return self.state.y_dim, self.state.x_dim

    def colour_dim(self) -> int | None:
        return None if self.state is None else self.state.channel_dim

    def set_axes_shown(self, shown: bool) -> None:
        """Image axes with ticks in data coordinates (View menu)."""
        self.axes_shown = shown
        self.label_axes()

    def label_axes(self) -> None:
        """The image's axes named after the shown dimensions, when axes are on; called again
        whenever the names or the shown dimensions change (NCZarr's names arrive with the CF read)."""
        state = self.state
        names = dim_names(state.array, state.axis_names) if state is not None else ["", ""]
        y, x = (state.y_dim, state.x_dim) if state is not None else (0, 1)
        if state is not None and state.cf is not None and state.cf.crs:  # georeferenced: the CRS's units
            names = [f"{n} ({a.units})" if a is not None and a.units else n
                     for n, a in ((n, state.cf.axes.get(d)) for d, n in enumerate(names))]
        self.image.show_axes(self.axes_shown, self.physical.axis_label(names[y]), self.physical.axis_label(names[x]))

    # -- input -> state ---------------------------------------------------------------------
    def _update(self, **changes: Any) -> None:
        if self.state is not None:
            self.set_state(self.state.with_(**changes))

    def _index_changed(self, dim: int, value: int) -> None:
        if self.state is None:
            return
        self._stepped = dim  # the keys step the slider last moved
        self.controller.moved(dim)
        indices = list(self.state.indices)
        indices[dim] = value
        self._update(indices=tuple(indices))
        self._label_sliders()
        self.plane_moved.emit()

    def _label_sliders(self) -> None:
        """Each slider of an OME image says where its plane lies, in the axis's unit (µm, s)."""
        state, image = self.state, self._ome
        if self.cf.label_sliders() or state is None or image is None or not state.pyramid or self.plane is None:
            return
        level0, axes = state.pyramid[0], image.first.axes
        for dim, label in self.plane.labels.items():
            if dim < len(axes) and axes[dim].type in ("space", "time"):
                label.setText(slider_text(axes[dim].name, state.indices[dim], level0.scale[dim],
                                          level0.translation[dim], axes[dim].unit))

    def _apply_physical(self) -> None:
        """Pixel sizes of the image's level 0 along the displayed dimensions: an OME-Zarr image's
        axes and scale bar; a GeoZarr pyramid's proportions (its axes are coordinates)."""
        state, image = self.state, self._ome
        if state is None or image is None or not state.pyramid:
            self.physical.apply(None, None)
            if state is not None and state.pyramid:
                self.physical.proportions((state.pyramid[0].scale[state.y_dim], state.pyramid[0].scale[state.x_dim]))
            return
        scale = state.pyramid[0].scale
        axes = image.first.axes
        units = {axes[d].unit for d in (state.y_dim, state.x_dim) if d < len(axes)}
        unit = units.pop() if len(units) == 1 else None  # rows in µm and columns in s share no unit
        self.physical.apply((scale[state.y_dim], scale[state.x_dim]), unit)
        self.label_axes()
        self._label_sliders()

    def _axes_changed(self, y: int, x: int, channel: int | None) -> None:
        if self.state is not None and self.state.channels:  # the channel panel's mode decides
            channel = self.state.composite_dim(y, x)
        self._fit_on_paint = True
        self._region_shown = None
        self.release_region()
        self._update(y_dim=y, x_dim=x, channel_dim=channel, region=None, contrast=None)
        if self.state is not None:
            sync_channel_slider(self.plane, self.state)
        self._apply_physical()
        self.label_axes()
        if self.state is not None and self.state.cf is not None:
            self.cf.present(self.state.cf)

    def _channel_changed(self, position: int, changes: dict[str, Any]) -> None:
        if self.state is not None:
            self.set_state(self.state.with_channel(position, **changes))
            if {"active", "color", "label"} & changes.keys():  # not a window dragged
                self.channels_shown.emit()

    def _channel_mode(self, mode: str) -> None:
        if self.state is not None:
            self.set_state(self.state.with_channel_mode(mode))
            sync_channel_slider(self.plane, self.state)
            self.channels_shown.emit()

    def _complex_changed(self, mode: str) -> None:
        self._update(complex_mode=mode, contrast=None)

    def _region_changed(self, region: Region, scale: tuple[float, float]) -> None:
        self._update(region=region, screen_scale=scale)
        self._draw_grid()

    def _scale_for(self, region: tuple[float, float, float, float]) -> tuple[float, float]:
        size = self.image.view.getViewBox().sceneBoundingRect()
        h, w = max(size.height(), 400.0), max(size.width(), 600.0)
        r0, r1, c0, c1 = region
        return h / max(1, r1 - r0), w / max(1, c1 - c0)

    def _pixel_size(self) -> tuple[tuple[float, float], str] | None:
        """Level 0's pixel size along rows and columns with its unit, where the image gives both."""
        size, unit = self.physical.size, self.physical.unit
        return (size, unit) if size is not None and unit else None

    def _hovered(self, row: int, col: int) -> None:
        self.pixel_hovered.emit(row, col)
        text = (self.projection.readout(row, col) if self.projection is not None else "") \
            or self.controller.readout(row, col)
        chunk = self.chunk_grid.hover(row, col)
        text = " · ".join(t for t in (text, chunk) if t)
        if text:
            self.status.emit(text)

    # -- scenes -> screen -------------------------------------------------------------------
    def paint_plane(self) -> None:
        """Draw the plane's scene again (after a projection covered it)."""
        self._paint(self.scene)

    def cover_plane(self, scene: Scene, status: str) -> None:
        """Draw ``scene`` (a projection's) where the plane is drawn; ``paint_plane`` draws the plane again."""
        state = self.state
        if state is None:
            return
        self.image.paint(scene, state.y_dim, state.x_dim)
        self.stack.setCurrentWidget(self.image)
        self.status.emit(status)
        self.loaded.emit()

    def _paint(self, scene: Scene) -> None:
        if self.projection is not None and self.projection.shown is not None:
            return  # a projection covers the plane until the plane is asked for again
        state = self.state
        if scene.busy:
            self._busy_text = scene.status
            if scene.status != self._said and not self._busy_timer.isActive():
                self._busy_timer.start()
        else:
            self._busy_timer.stop()
            if scene.status != self._said:  # a repeated scene must not overwrite what the window said since
                self._say(scene.status)
        if state is None:
            return
        if self.channels is not None:
            self.channels.show_scene(scene, state)
        self.problem = scene.problem
        if scene.message is not None:
            self.image.paint(Scene(), state.y_dim, state.x_dim)
            self.message.setText(scene.message)
            self.stack.setCurrentWidget(self.message)
            if not scene.busy:
                self.loaded.emit()
            return
        if not scene.tiles():
            return  # the first read is under way: what was there stays until it lands
        refused = next((f.error for t in scene.tiles() for f in t.failures if isinstance(f.error, AccessDeniedError)), None)
        if refused is not None:
            self.access_denied.emit(refused)
        if self.colours is not None:
            self.colours.levels_known(scene.levels)
        if self.plane is not None and self.plane.contrast is not None:
            self.plane.contrast.show_levels(scene.levels, applies=not scene.composite and self.image.colour_bar)
        self.stack.setCurrentWidget(self.image)
        self.analysis.follow(state)
        if self._fit_on_paint:  # first, so that the plane is rendered for the zoom it is shown at
            self._fit_on_paint = False
            if self._region_shown is not None:
                self._held_region = self._region_shown
                self.image.show_region(self._region_shown)
            else:
                self.image.show_plane(*state.plane_shape)
        self.image.paint(scene, state.y_dim, state.x_dim)
        self._draw_grid()
        if not scene.busy:
            self.image.when_drawn(self.loaded.emit)

    def show_chunk_grid(self, shown: bool) -> None:
        """Chunk and shard boundaries of the level shown over the image, missing chunks tinted."""
        self.chunk_grid.set_enabled(shown)
        self._draw_grid()

    def _draw_grid(self) -> None:
        """The chunk grid of the level the scene shows, in the region in view, and the chunks
        another version wrote outlined on the plane."""
        if self.chunk_grid.changed_chunks:
            self.chunk_grid.refresh_outline()
        if not self.chunk_grid.enabled or self.state is None:
            return
        tiles = self.scene.tiles()
        level = (self.scene.detail or self.scene.coarse or tiles[0]).level if tiles else 0
        inflight = self.driver.inflight
        reading: frozenset[tuple[int, ...]] = frozenset()
        if inflight is not None and inflight.level.index == level:
            reading = frozenset(inflight.level.array.reader.chunk_coords(inflight.plan.selection))
        self.chunk_grid.refresh(level, self.image.visible()[0], reading)

    def _forget_status(self) -> None:
        self._said = ""
        self._busy_timer.stop()
        self.stale.emit()

    def _say(self, text: str) -> None:
        self._said = text
        self.status.emit(text)

    def _defer(self, job: Any) -> None:
        self._prefetch = job
        self._prefetch_timer.start()

    def _run_prefetch(self) -> None:
        job, self._prefetch = self._prefetch, None
        if job is not None:
            job()

    def _reset(self, arr: Array | None) -> None:
        if self.state is not None:
            self.memory.keep(self.state)  # as it was left: shown so again when the array comes back
        self._forget_status()
        self.problem = None
        self.array = arr
        self._pyramid = None
        self.chunk_grid.outline(())  # another version's chunks are outlined for the array they were found for
        self.driver.clear()
        self.controller.clear()
        self.analysis.clear()
        self.others.clear()
        self.anndata.clear()
        self._clear_controls()

    def _clear_controls(self) -> None:
        while self.controls_layout.count():
            item = self.controls_layout.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()
        self.side.clear()
        self.plane = None
        self.channels = None
        self.colours = None
        self.label_panel = None
        if self.projection is not None:
            self.projection.cancel()
        self.projection = None
        self.cf.clear()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.others.follow_palette(self.palette())
        super().changeEvent(event)

    # -- export -----------------------------------------------------------------------------
    def plane_spec(self) -> PlaneSpec | None:
        """The plane shown, as export needs it: the whole plane at full resolution (whatever
        preview or region is on screen), with the histogram's levels and lookup table; None
        when no array is shown."""
        arr = self.array
        if arr is None or self.stack.currentWidget() is self.message:
            return None
        state = self.state
        if state is None:  # a plot, a value or a table
            return self.others.plane_spec(arr)
        hist = self.image.ui.histogram.item
        gradient = hist.gradient
        lut = None if gradient.isLookupTrivial() else gradient.getLookupTable(256, alpha=gradient.usesAlpha())
        lo, hi = hist.getLevels()
        spec = PlaneSpec(arr, state.plane_selection(), (state.y_dim, state.x_dim), state.channel_dim,
                         state.complex_mode, (float(lo), float(hi)), None if lut is None else np.asarray(lut, np.uint8),
                         channels=state.channels if state.composite else (), labels=overlays(state, 0),
                         decode=state.decoding is not None, rows_up=state.rows_up)
        return spec if self.projection is None else self.projection.export_spec(spec)
