"""The main window: hierarchy tree on the left, metadata and data on the right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QSettings, Qt
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from .. import zarrlib as zl
from ..scheduling import Done, Driver, Task, Tasks, WorkerPool, call_job
from ..viewing.ome import OmePlate
from ..zarrlib.storage import split_node_path, store_identity, store_url
from .access_prompt import AccessPrompt
from .icons import app_icon
from .bridge import post
from .data_view import OPEN_HINT, DataView
from .slider_keys import PageKeys, slider_step
from .dialogs import OpenUrlDialog, PreferencesDialog
from .projection_controls import SCHEDULER_KEY
from .fold_panels import MetadataFold
from .metadata_panel import MetadataPanel
from .plate_view import show_plate
from .io_dock import IoDock
from .menus import build_menus
from .node_display import NodeDisplay
from .path_navigator import PathNavigator, path_chain
from .orthogonal_view import OrthogonalViews
from .series_panel import SeriesPanel
from .version_actions import pick_version
from .view_sharing import ViewSharing
from .compare_view import ComparePane
from ..viewing.compare.pairs import parse_spec
from ..viewing.saved_views import TOOLS, SavedView, is_view, look_of
from .tree.columns import NAME_COLUMN, RATIO_COLUMN, SHAPE_COLUMN, STORED_COLUMN, TYPE_COLUMN
from .tree.filter import FilterProxy, TreeFilter
from .tree.model import HierarchyModel
from .tree.paging import HierarchyTree

class MainWindow(QMainWindow):
    def __init__(self, pool: WorkerPool) -> None:
        super().__init__()
        self.setWindowTitle("zarrview")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        #: every background job of this window runs on this pool; closing the window closes it
        self.pool = pool
        #: which store a location names; each location asked for is located
        self.locates: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), self.pool, self._located, post=lambda fn: post(fn, self), name="locate")
        #: stores opened, keyed by location: side by side, the newest of each location
        self.opens: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), self.pool, self._opened, post=lambda fn: post(fn, self), name="open")
        self.settings = QSettings()
        #: whether closing saves the window's geometry, splitter and open panels (not for a --screenshot run)
        self.remembers_layout = True
        #: asks to allow reads that a store's access policy refused (reference sets)
        self.access = AccessPrompt(self, self.settings)

        self.model = HierarchyModel(self.pool, self)
        self.proxy = FilterProxy(self.model, self)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by name or path (Ctrl+F)")
        self.filter.setClearButtonEnabled(True)
        self.tree = HierarchyTree(self.proxy, self.model)  # further pages of a group when scrolled to
        # Type ("image (4 levels)", "uint16 · level 1") takes the rest beside them
        self.tree.setColumnWidth(NAME_COLUMN, 150)
        self.tree.setColumnWidth(SHAPE_COLUMN, 95)
        for column in (STORED_COLUMN, RATIO_COLUMN):  # on request (View ▸ Storage Columns)
            self.tree.setColumnHidden(column, True)
            self.tree.setColumnWidth(column, 70)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        #: Page Up/Down in the tree (where the focus is after a node is picked) step the image's slider
        self.page_keys = PageKeys(self.tree, lambda delta: self.data.step_slider(delta))
        #: opening nodes by path (Go to Path, a location's ::/path, a plate's well)
        self.paths = PathNavigator(self)
        left = QWidget()
        lay = QVBoxLayout(left)
        lay.setContentsMargins(4, 4, 0, 4)
        self.tree_filter = TreeFilter(self.model, self.proxy, self.tree, self.filter, self.pool, self)
        lay.addWidget(self.filter)
        lay.addWidget(self.tree_filter.bar)
        lay.addWidget(self.tree)

        self.meta = MetadataPanel(self.pool)
        #: the last File ▸ Validate Store dialog opened (closed ones delete themselves)
        self.validation: QDialog | None = None
        self.data = DataView(self.pool)
        self.data.access_denied.connect(self._access_denied)
        self.right = QSplitter(Qt.Orientation.Vertical)
        #: the metadata folded to a line above the data (View menu): the image takes the height
        self.meta_fold = MetadataFold(self.meta)
        self.right.addWidget(self.meta_fold)
        #: a second array beside the one shown (View ▸ Compare): the tree picks it meanwhile
        self.compare = ComparePane(self.pool, self.data)
        self.compare.hide()
        self.pair = QSplitter(Qt.Orientation.Horizontal)
        self.pair.addWidget(self.data)
        self.pair.addWidget(self.compare)
        self.right.addWidget(self.pair)
        self.right.setSizes([250, 570])
        for i in (0, 1):  # dragged to an end, the fold keeps its line and the data view its controls
            self.right.setCollapsible(i, False)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(left)
        self.split.addWidget(self.right)
        self.split.setSizes([330, 950])  # the tree as wide as its three columns need, the data the rest
        self.setCentralWidget(self.split)
        #: the tree's width before View ▸ Storage Columns widened it, given back when they are hidden
        self._tree_width: int | None = None

        self.status_label = QLabel("Ready")
        self.progress_label = QLabel()
        # a fixed width: a count that changes as chunks land re-lays out nothing else in the bar
        self.progress_label.setFixedWidth(self.progress_label.fontMetrics().horizontalAdvance(" 000000/000000 "))
        self.progress_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self._cancel)
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress_label)
        self.statusBar().addPermanentWidget(self.cancel_button)
        self._data_said = ""
        self.data.status.connect(self._data_status)
        self.data.stale.connect(lambda: self.status_label.setText("") if self.status_label.text() == self._data_said else None)
        self.data.progress.connect(self._progress)
        self.data.loaded.connect(self._loaded)

        #: what the data area shows for the selected node, and the presenters it hands nodes to
        self.display = NodeDisplay(self)
        self.ome_groups = self.display.ome_groups
        self.ome_groups.metadata_found.connect(self.meta.show_ome)
        self.ome_groups.labels_read.connect(self.meta.show_ome_labels)
        self.ome_groups.labels_found.connect(self.data.show_labels)
        self.ome_groups.plate_found.connect(self._show_plate)
        self.ome_groups.message.connect(self.data.show_message)
        self.anndata = self.display.anndata
        self.anndata.frame_found.connect(self.data.set_frame)
        self.anndata.sparse_found.connect(self.data.set_sparse)
        self.anndata.embedding_found.connect(self.data.set_embedding)
        self.anndata.message.connect(self.data.show_message)
        self.spatial = self.display.spatial
        self.ome_groups.spatial_found.connect(self.spatial.show_spatial)
        self.series = SeriesPanel(self.pool, self, lambda: self.data.state, lambda: self.data.ome)
        self.data.pixel_clicked.connect(self.series.point_clicked)
        self.data.plane_moved.connect(self.series.plane_moved)
        self.data.channels_shown.connect(self.series.plane_moved)  # the lines follow the channels shown
        self.series.shown_changed.connect(self._series_shown)
        self.orthogonal = OrthogonalViews(self.pool, self.data)
        #: what each view costs as it happens (View ▸ I/O); the pool records only while it is shown
        self.io_dock = IoDock(self.pool, self)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.io_dock)
        self.io_dock.hide()
        #: the newest view's cost in one line, at the status bar's right while the dock is shown
        self.io_label = QLabel()
        self.io_label.setMaximumWidth(560)
        self.io_label.hide()
        self.statusBar().insertPermanentWidget(0, self.io_label)
        self.io_dock.summary.connect(self.io_label.setText)
        self.io_dock.visibilityChanged.connect(self.io_label.setVisible)
        #: a saved view's compared array (and how it is shown), opened once its first array is shown
        self._pending_compare: SavedView | None = None
        #: saved views and view links: read, written and copied for this window
        self.sharing = ViewSharing(self.pool, self.open_view, self.say, self._view_refused,
                                   lambda location: self.recent.remember(location), self)
        menus = build_menus(self, self)
        self.recent, self.exports, self.series_action = menus.recent, menus.exports, menus.series_action
        self.recent_menu = self.recent.menu  # File ▸ Open Recent
        self.apply_settings()
        geometry = self.settings.value("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 820)
        state = self.settings.value("splitter")
        if state is not None:
            self.split.restoreState(state)
        self.meta_fold.set_open(self.settings.value("metadata_shown", "false") == "true")  # folded at first
        side = self.settings.value("side_panel", "")  # no choice saved: open where the image keeps its share
        if side in ("true", "false"):
            self.data.side.choose(side == "true")

    # -- menus ------------------------------------------------------------------------------
    def _data_status(self, text: str) -> None:
        self._data_said = text
        self.status_label.setText(text)

    def _series_shown(self, visible: bool) -> None:
        """The series dock shown or closed (by its own button too): its menu entry says so."""
        if not isValid(self):  # the window is going away
            return
        action = getattr(self, "series_action", None)
        if action is not None and action.isChecked() != visible and not self.isMinimized():
            action.setChecked(visible)

    def show_axes(self, shown: bool) -> None:
        """Image axes on or off (View menu), remembered for the next session."""
        self.settings.setValue("image_axes", "true" if shown else "false")
        self.data.set_axes_shown(shown)

    def _compares(self, node: zl.Node | None) -> bool:
        """Whether ``node`` goes to the compare pane as B: it is open, an image is shown as A,
        and ``node`` is another array."""
        a = self.data.array
        return self.compare.isVisible() and isinstance(node, zl.Array) and self.data.state is not None \
            and a is not None and not (node.store is a.store and node.path == a.path)  # A's own row, found again

    def show_compare(self, shown: bool) -> None:
        """View ▸ Compare: a second array beside the one shown, picked in the tree; the pane
        takes half the data area while it is open."""
        self.compare.clear()
        self.compare.setVisible(shown)
        if shown:
            total = sum(self.pair.sizes())
            self.pair.setSizes([total // 2, total - total // 2])
            what = self.data.array.path if self.data.array is not None and self.data.state is not None else None
            self.say(f"Comparing {what}: select another array in the tree, or take B from {what} itself (B: …)"
                     if what is not None
                     else "Show an array's image first, then select another array in the tree to compare")

    def show_storage_columns(self, shown: bool) -> None:
        """The tree's Stored and Ratio columns on or off (View menu): shown, each row reads what
        its node stores as it comes into view."""
        self.model.set_storage_shown(shown)
        for column in (STORED_COLUMN, RATIO_COLUMN):
            self.tree.setColumnHidden(column, not shown)
        left, right = self.split.sizes()[:2]
        if shown:  # the tree widened until its columns fit (rows off to the right are never drawn, so never read)
            # by the columns' set widths, not the stretched last one's: the same whatever is listed yet,
            # so a saved view with these columns opens with the image the size it had
            self.tree.setColumnWidth(TYPE_COLUMN, 110)
            needed = sum(self.tree.columnWidth(c) for c in (NAME_COLUMN, SHAPE_COLUMN, TYPE_COLUMN, STORED_COLUMN,
                                                               RATIO_COLUMN)) \
                + self.tree.verticalScrollBar().sizeHint().width() + 12
            self._tree_width = left
            grow = max(0, min(needed - left, right - 300))
            self.split.setSizes([left + grow, right - grow])
        elif self._tree_width is not None and self._tree_width < left:
            self.split.setSizes([self._tree_width, right + left - self._tree_width])
            self._tree_width = None

    def open_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open Zarr folder")
        if path:
            self.open_location(path)

    def open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open zipped Zarr store", "", "Zarr archives (*.zip *.ozx);;All files (*)")
        if path:
            self.open_location(path)

    def open_references(self) -> None:
        """A reference set: a JSON file, or a Parquet reference folder (chosen as a folder)."""
        path, _ = QFileDialog.getOpenFileName(self, "Open reference set", "",
                                              "Reference sets (*.json *.json.gz *.parq *.parquet);;All files (*)")
        if path:  # a Parquet set's .zmetadata stands for its folder
            self.open_location(f"reference::{str(Path(path).parent) if Path(path).name == '.zmetadata' else path}")

    def _access_denied(self, error: Any) -> None:
        """What is shown was read in part from where its store may not read: ask, then read again."""
        array = self.data.array
        if array is not None:
            self.access.denied(error, array.store, self.data.read_again)

    def open_url(self) -> None:
        dialog = OpenUrlDialog(self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            url, options = dialog.values()
            if url:
                self.open_location(url, **options)

    def open_version(self) -> None:
        """Another version of the current store's Icechunk repository, opened beside it."""
        pick_version(self)

    def go_to_path(self) -> None:
        """A node of the current store, asked for by its path."""
        self.paths.ask()

    def say(self, text: str) -> None:
        """``text`` on the status bar."""
        self.status_label.setText(text)

    # -- views as values ------------------------------------------------------------------------
    def current_view(self) -> SavedView | None:
        """The view shown, as a value a file, a link or a command line holds (None: no store is
        selected). While comparing, A is the array shown and B the one beside it, whatever the
        tree selects."""
        data = self.data
        comparing = self.compare.isVisible() and data.array is not None
        top = self._store_row(data.array) if comparing else self._current_top()
        opened = self._opened_as(top)
        if opened is None:
            return None
        location, options = opened
        # comparing, the tree selects B: A is the node the data view shows (an image's group, not its level 0)
        node = data.shown_node if comparing else self.model.node(self.proxy.mapToSource(self.tree.currentIndex()))
        state = data.state if data.stack.currentWidget() is data.image else None
        if state is not None:  # the region on screen now (the state hears of a pan once the view rests)
            state = state.with_(region=data.image.visible()[0])
        colours = data.colours.choice() if data.colours is not None else None
        look = look_of(state, location, node.path if node is not None else "/", options, colours)
        tools = tuple(a.objectName() for a in self.findChildren(QAction) if a.objectName() in TOOLS and a.isChecked())
        against = self.compare.against_spec() if comparing else None
        if against is not None:  # B is A itself, taken another way
            return SavedView(look, tools, None, self.compare.mode_name(), against)
        b = self.compare.array if comparing else None
        b_opened = self._opened_as(self._store_row(b)) if b is not None else None
        if b is None or b_opened is None:
            return SavedView(look, tools)
        return SavedView(look, tools, look_of(None, b_opened[0], b.path, b_opened[1]), self.compare.mode_name())

    def _store_row(self, node: zl.Node | None) -> QModelIndex:
        """The top row of the store ``node`` is read from (invalid: none is open)."""
        for row in range(self.model.rowCount()):
            top = self.model.index(row, 0)
            root = self.model.node(top)
            if node is not None and root is not None and root.store is node.store:
                return top
        return QModelIndex()

    def _opened_as(self, top: QModelIndex) -> tuple[str, dict[str, Any]] | None:
        """The location and options the store at ``top`` was opened with (None: no store)."""
        root = self.model.node(top) if top.isValid() else None
        if root is None:
            return None
        return self.model.item(top).opened or (root.url, {})

    def open_view(self, saved: SavedView, plane: dict[int, int] | None = None) -> None:
        """Open the store and node ``saved`` names and show them as it has them: the plane
        (``plane``, else the view's own indices), level, region, colours, contrast, channels
        and tools."""
        look = saved.view
        if plane is None and look.indices is not None and look.y_dim is not None and look.x_dim is not None:
            shown = {look.y_dim, look.x_dim, look.channel_dim}
            plane = {d: i for d, i in enumerate(look.indices) if d not in shown}
        self._pending_compare = saved if saved.compares else None
        # the compare pane takes its half of the data area before A is drawn, so A's region is
        # placed in the pane it was saved from
        self._action("compare").setChecked(saved.compares)
        self.data.pending_look = look
        self.data.pending_region = look.region
        self.data.pending_level = look.level
        for action in self.findChildren(QAction):
            # triggered, not only checked: a dock's own toggle action shows it on ``triggered``
            if action.objectName() in TOOLS and action.isCheckable() \
                    and action.isChecked() != (action.objectName() in saved.tools):
                action.trigger()
        self.open_location(look.target, plane=plane, **dict(look.options))

    def copy_snippet(self, kind: str) -> None:
        """File ▸ Copy as Python: code that reads the plane shown with ``kind``'s library."""
        opened = self._opened_as(self._store_row(self.data.array))  # the array shown, whatever the tree selects
        if opened is None:
            self.say("Open a store and show an array's plane to copy the Python that reads it.")
            return
        self.sharing.copy_snippet(self.data.plane_spec(), opened[0], opened[1], kind)

    def _view_refused(self, message: str) -> None:
        """A saved view or link that cannot be read: said where the data and the status would be."""
        self.data.show_problem(message)
        self.status_label.setText(message)

    def save_view(self) -> None:
        """File ▸ Save View…: the view shown, to a ``.zarrview`` file (written on a worker)."""
        self.sharing.save(self.current_view())

    def copy_view_command(self) -> None:
        """File ▸ Copy View as Command: the shell command that reopens the view shown."""
        self.sharing.copy(self.current_view(), command=True)

    def copy_view_link(self) -> None:
        """File ▸ Copy View Link: the ``zarrview://`` link that reopens the view shown."""
        self.sharing.copy(self.current_view(), command=False)

    # -- opening ----------------------------------------------------------------------------
    def open_location(self, location: str, plane: dict[int, int] | None = None, **options: Any) -> None:
        """Open a store in the background; ``location`` may end in ``::/node/path``. Which store
        it names is found on a worker too (a folder's path resolved, its ``.zmetadata`` read for
        a Parquet reference set): a folder on a slow mount must not stall the window. A saved
        view (``.zarrview``) or a ``zarrview://`` link opens the view it holds."""
        if is_view(location):
            self.sharing.open(location)
            return
        store_loc, node_path = split_node_path(location)
        self.status_label.setText(f"Opening {store_loc}…")
        job = call_job(lambda: (store_identity(store_loc, options), store_label(store_loc, options)),
                       label=f"locate {store_loc}")
        # each runs (a key of its own); asked, not shown: nothing is kept once it is answered
        self.locates.ask(Task(job, about=(location, store_loc, node_path, plane, options)), key=object())

    def _located(self, done: Done[tuple[str, str]]) -> None:
        location, store_loc, node_path, plane, options = done.task.about
        answer = done.answer
        if answer.cancelled:
            return  # the window closing
        if answer.error is not None or answer.value is None:
            self._open_failed(store_loc, store_loc, answer.error)
            return
        identity, label = answer.value
        self._open_located(location, store_loc, node_path, identity, label, plane, options)

    def _open_located(self, location: str, store_loc: str, node_path: str, identity: str, label: str,
                      plane: dict[int, int] | None, options: dict[str, Any]) -> None:
        open_already = self.model.find_store(identity)
        if open_already.isValid():  # the same store again: go to it (and to the node named)
            self.status_label.setText(f"{store_loc} is open already")
            if node_path == "/":
                self.tree.setCurrentIndex(self.proxy.mapFromSource(open_already))
            else:
                self.paths.go_to(open_already, node_path)
            return
        read_options = dict(options)
        if "authorize" not in options:  # reference sets and Icechunk repositories: the prefixes allowed before
            read_options["authorize"] = self.access.policy()
        self.status_label.setText(f"Opening {store_loc}…")
        self.display.initial_plane = plane if plane is not None else {}

        def work() -> tuple[zl.Node, zl.Node | zl.ZarrError, list[zl.Node]]:
            root = zl.open(store_loc, **read_options)
            root.hierarchy.widen_ml_types = True  # bfloat16, float8, int4...: shown as float32
            if node_path == "/" or not isinstance(root, zl.Group):
                return root, root, []
            try:
                if root.can_list_members:
                    return root, root[node_path.strip("/")], []
                chain = path_chain(root, node_path)
                return root, chain[-1], chain
            except zl.ZarrError as e:  # a broken node in a good store: open the store, name the node's error
                return root, e, []

        # keyed by location: another location opens beside it, the same one again replaces it
        self.opens.show(Task(call_job(work, label=f"open {store_loc}"),
                             about=(location, store_loc, node_path, identity, label, options)),
                        key=(identity, node_path))

    def _opened(self, done: Done[Any]) -> None:
        """A store opened (the newest open of its location): its top row, and the node the
        location names selected or shown."""
        location, store_loc, node_path, identity, label, options = done.task.about
        answer = done.answer
        if answer.cancelled:
            return  # the window closing
        result, error = answer.value, answer.error
        if error is not None:
            self._open_failed(store_loc, label or store_loc, error)
            return
        assert result is not None
        root, target, chain = result
        index = self.model.add_store(root, label or store_loc, identity, opened=(store_loc, options))
        self.recent.remember(location, options)
        self.status_label.setText(f"Opened {store_loc}")
        proxy_index = self.proxy.mapFromSource(index)
        self.tree.expand(proxy_index)
        bad_plane = self.display.plane_problem(target, self.display.initial_plane) if isinstance(target, zl.Array) else None
        if isinstance(target, zl.ZarrError):
            self._node_failed(index.row(), node_path, f"{store_loc}::{node_path}", str(target))
        elif bad_plane is not None and target is not root:  # not selected: that would show a plane anyway
            self.display.initial_plane = {}
            self.meta.show_node(target)
            self.display.refuse_plane(bad_plane)
        elif target is root:
            self.tree.setCurrentIndex(proxy_index)
        elif chain:  # the store cannot list: place the node by its path
            self.meta.show_node(target)
            self.display.show(target)
            self.tree.setCurrentIndex(self.proxy.mapFromSource(self.model.insert_path(index.row(), chain)))
        elif self._compares(target):  # comparing: the array opened is B, A stays
            self.meta.show_node(target)
            self.compare.compare_with(target)
            self.paths.select(index.row(), node_path)
        else:
            self.meta.show_node(target)
            self.display.show(target)
            self.paths.select(index.row(), node_path)

    def _open_failed(self, store_loc: str, label: str, error: BaseException | None) -> None:
        """A store that cannot be opened: an error row in the tree, and the message where the
        data, the metadata and the status bar would be."""
        message = str(error) if isinstance(error, zl.ZarrError) else f"{type(error).__name__}: {error}"
        self.model.add_error(label, message)
        self.meta.show_node(None, message)
        self.data.show_problem(f"Cannot open {store_loc}:\n{message}")
        self.status_label.setText(f"Cannot open {store_loc}: {message}")

    def _node_failed(self, row: int, node_path: str, where: str, message: str) -> None:
        """The node a location names cannot be opened, its store can: the store stays open to
        browse, and the error shows where the node would (status bar, metadata, data view)."""
        self.meta.show_node(None, message, path=node_path)
        self.data.show_problem(f"Cannot open {node_path}:\n{message}")
        self.status_label.setText(f"Cannot open {where}: {message}")
        self.paths.select(row, node_path)  # a listed error row, if any

    def current_store(self) -> zl.Node | None:
        """The root node of the store whose node is selected (None: nothing is)."""
        index = self._current_top()
        return self.model.node(index) if index.isValid() else None

    def _current_top(self) -> QModelIndex:
        """The model's top row of the store whose node is selected (invalid: nothing is)."""
        index = self.proxy.mapToSource(self.tree.currentIndex())
        while index.isValid() and index.parent().isValid():
            index = index.parent()
        return index

    def validate_store(self) -> None:
        """The current store checked against its specifications, on a worker, in a dialog."""
        root = self.current_store()
        if root is None:
            self.say("Open a store and select a node of it to validate it.")
            return
        from .validation_dialog import ValidationDialog

        dialog = ValidationDialog(self.pool, root, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.validation = dialog
        dialog.show()

    def close_current_store(self) -> None:
        index = self._current_top()
        if not index.isValid():
            return
        self.model.remove_top(index.row())
        self.data.show_message("Select an array to see its data." if self.model.rowCount() else OPEN_HINT)
        self.meta.show_node(None)

    # -- selection --------------------------------------------------------------------------
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        item = self.model.item(self.proxy.mapToSource(current))
        if item.placeholder:
            return
        if self._compares(item.node):  # comparing: the array picked is B, A stays
            assert isinstance(item.node, zl.Array)
            self.meta.show_node(item.node, item.error)
            if item.node is not self.compare.array:
                self.compare.compare_with(item.node)
            return
        if item.error and item.node is None:
            self.display.looking_at = None
            self.meta.show_node(None, item.error)
            self.data.show_problem(item.error)
            return
        self.meta.show_node(item.node, item.error)
        shown = self.data.array
        if isinstance(item.node, zl.Array) and shown is not None and (shown.url, shown.path) == (item.node.url, item.node.path):
            return  # already on screen (opened by path): keep its plane
        if item.node is not None:
            self.display.show(item.node)

    def _show_plate(self, plate: OmePlate, group: zl.Group) -> None:
        show_plate(self, plate, group)

    # -- preferences ------------------------------------------------------------------------
    def apply_settings(self) -> None:
        cache_mib = int_setting(self.settings, "cache_mib", 1024)
        budget = int_setting(self.settings, "chunk_budget", self.data.budget_chunks)
        self.pool.cache.max_bytes = cache_mib << 20
        self.data.budget_chunks = budget

    def edit_preferences(self) -> None:
        dialog = PreferencesDialog(int(self.pool.cache.max_bytes >> 20), self.data.budget_chunks, self,
                                   str(self.settings.value(SCHEDULER_KEY, "") or ""))
        if dialog.exec() == QDialog.DialogCode.Accepted:
            cache_mib, budget = dialog.values()
            self.settings.setValue(SCHEDULER_KEY, dialog.scheduler.text().strip())
            self.settings.setValue("cache_mib", cache_mib)
            self.settings.setValue("chunk_budget", budget)
            self.apply_settings()
            self.data.request_plane()

    # -- status -----------------------------------------------------------------------------
    def _progress(self, done: int, total: int) -> None:
        self.progress_label.setText(f"{done}/{total}")  # chunks of a plane, wells of a plate
        self.cancel_button.setEnabled(done < total)

    def _loaded(self) -> None:
        self.cancel_button.setEnabled(False)
        pending, self._pending_compare = self._pending_compare, None
        if pending is not None and self.data.state is not None:  # a saved view's A is shown: now its B
            self.compare.set_mode_name(pending.compare_mode)
            if pending.compare_against is not None:
                name, at = parse_spec(pending.compare_against)
                self.compare.take(name, at)
            elif pending.compare is not None:
                self.open_location(pending.compare.target, **dict(pending.compare.options))

    def _action(self, name: str) -> QAction:
        return next(a for a in self.findChildren(QAction) if a.objectName() == name)

    def _cancel(self) -> None:
        self.data.cancel()
        self.status_label.setText("Read cancelled")
        self.cancel_button.setEnabled(False)

    # -- drag and drop ----------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if event.mimeData().hasUrls() or event.mimeData().hasText():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        mime = event.mimeData()
        locations = [u.toLocalFile() if u.isLocalFile() else u.toString() for u in mime.urls()]
        if not locations and mime.hasText():
            locations = [t.strip() for t in mime.text().splitlines() if t.strip()]
        for loc in locations:
            self.open_location(loc)
        event.acceptProposedAction()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        """Left/Right and Page Up/Down that no widget used step the image's slider (``slider_keys``)."""
        delta = slider_step(event)
        if delta is not None and self.data.step_slider(delta):
            event.accept()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if self.remembers_layout:  # a --screenshot run is 1280x820 whatever the user's window was
            self.settings.setValue("geometry", self.saveGeometry())
            self.settings.setValue("splitter", self.split.saveState())
            self.settings.setValue("metadata_shown", "true" if self.meta_fold.is_open() else "false")
            chosen = self.data.side.chosen
            if chosen is not None:  # the user's choice, not where the column fitted
                self.settings.setValue("side_panel", "true" if chosen else "false")
        self.pool.close()
        super().closeEvent(event)

    @property
    def pending_opens(self) -> int:
        """Opening under way (stores located, stores opened, a node opened by path) and image
        groups whose metadata is being read: what a test or ``--screenshot`` waits for before
        looking (0: none)."""
        return int(self.locates.busy()) + int(self.opens.busy()) + self.paths.reading + self.display.reading

    def is_settled(self) -> bool:
        """Nothing opening, listing or reading (for ``--screenshot`` and tests)."""
        return self.pending_opens == 0 and self.ome_groups.reading == 0 and self.anndata.reading == 0 \
            and self.data.anndata.settled() and self.pool.idle() and not self.data.image.rendering \
            and not self.model.root.listing() \
            and not self.tree_filter.searching


def int_setting(settings: QSettings, key: str, default: int) -> int:
    """A whole number the preferences saved: QSettings hands it back as an int, or as text where
    its file stores text; ``default`` where there is neither."""
    value = settings.value(key, default)
    return int(value) if isinstance(value, int | str) else default


def store_label(location: str, options: dict[str, Any]) -> str:
    """The tree row's name: a folder's or file's name (a reference set's file), else the URL."""
    url = store_url(location, **options)
    if url.startswith("reference::"):
        return url.removeprefix("reference::").rstrip("/").rsplit("/", 1)[-1]
    return Path(location).name if "://" not in location else location
