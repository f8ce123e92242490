"""The window's menus: what each entry does lives in the window; here only which entries exist."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from .about import AboutDialog
from .analysis_tools import add_analysis_actions
from .export_actions import ExportActions
from .recent import RecentLocations
from .shortcuts import ShortcutsDialog
from .user_guide import GuideDialog

if TYPE_CHECKING:
    from .window_host import MenuHost


@dataclass(frozen=True)
class Menus:
    """The parts of the menus the window keeps: recent locations (it remembers each store it
    opens), the Export menu's actions, and the series entry (the series dock, closed by its own
    button, unchecks it)."""

    recent: RecentLocations
    exports: ExportActions
    series_action: QAction


def build_menus(window: QMainWindow, host: MenuHost) -> Menus:
    """The menu bar of ``window`` (which owns the actions and dialogs), its entries calling ``host``."""
    file_menu = window.menuBar().addMenu("&File")
    for text, shortcut, slot in [
        ("Open &Folder…", QKeySequence.StandardKey.Open, host.open_folder),
        ("Open &File (zip)…", None, host.open_file),
        ("Open &References (JSON, Parquet)…", None, host.open_references),
        ("Open &URL…", QKeySequence("Ctrl+L"), host.open_url),
        ("Open &Version…", None, host.open_version),
        ("&Go to Path…", QKeySequence("Ctrl+G"), host.go_to_path),
        ("&Validate Store…", None, host.validate_store),
    ]:
        act = QAction(text, window)
        if shortcut is not None:
            act.setShortcut(shortcut)
        act.triggered.connect(slot)
        file_menu.addAction(act)
    recent = RecentLocations(host.settings, file_menu.addMenu("Open &Recent"), host.open_location, window)
    file_menu.addSeparator()
    for text, shortcut, tip, slot in [
        ("&Save View…", QKeySequence.StandardKey.Save, "The view shown (node, plane, level, region, colours, contrast, "
         "channels, tools) to a .zarrview file that reopens it; credentials are never written", host.save_view),
        ("Copy View as &Command", None, "The zarrview command line that reopens the view shown", host.copy_view_command),
        ("Copy View &Link", None, "The zarrview:// link that reopens the view shown", host.copy_view_link),
    ]:
        act = QAction(text, window, toolTip=tip)
        if shortcut is not None:
            act.setShortcut(shortcut)
        act.triggered.connect(slot)
        file_menu.addAction(act)
    snippets = file_menu.addMenu("Copy as &Python")
    for kind, text in (("zarr", "&zarr-python"), ("xarray", "&xarray"), ("tensorstore", "&TensorStore"),
                       ("zarrlib", "zarrview.zarr&lib")):
        act = QAction(text, window, toolTip=f"Python that reads the plane shown with {text.replace('&', '')}, "
                                            "leaving it in a variable named data; credentials are not written")
        act.setObjectName(f"snippet-{kind}")
        act.triggered.connect(lambda _=False, kind=kind: host.copy_snippet(kind))
        snippets.addAction(act)
    file_menu.addSeparator()
    close = QAction("&Close Store", window)
    close.setShortcut(QKeySequence.StandardKey.Close)
    close.triggered.connect(host.close_current_store)
    file_menu.addAction(close)
    quit_ = QAction("&Quit", window)
    quit_.setShortcut(QKeySequence.StandardKey.Quit)
    quit_.triggered.connect(window.close)
    file_menu.addAction(quit_)
    exports = ExportActions(window, host.data, window.menuBar().addMenu("&Export"), host.say)
    view_menu = window.menuBar().addMenu("&View")
    axes = QAction("Image &Axes", window)
    axes.setCheckable(True)
    axes.setToolTip("Axes with ticks in data coordinates along the image")
    axes.setChecked(host.settings.value("image_axes", "true") == "true")  # shown unless turned off
    axes.toggled.connect(host.show_axes)
    view_menu.addAction(axes)
    host.data.set_axes_shown(axes.isChecked())
    series = QAction("&Series at a Point", window)
    series.setCheckable(True)
    series.setShortcut(QKeySequence("Ctrl+T"))
    series.setToolTip("Plot the values through a pixel along a dimension (time, else z; a line per channel); click the image to move it")
    series.setObjectName("series")
    series.toggled.connect(host.series.show)
    view_menu.addAction(series)
    ortho = QAction("&Orthogonal Views", window, checkable=True, shortcut=QKeySequence("Ctrl+Shift+O"),
                    toolTip="XZ and YZ sections beside the image of a 3-D or larger array; click to move them")
    ortho.setObjectName("sections")  # the names saved views give the tools open (``saved_views.TOOLS``)
    ortho.toggled.connect(host.orthogonal.show)
    view_menu.addAction(ortho)
    grid = QAction("Chunk &Grid", window, checkable=True, shortcut=QKeySequence("Ctrl+Shift+G"),
                   toolTip="Chunk and shard boundaries of the level shown; chunks not stored tinted; "
                           "the chunk under the cursor named with what is stored for it")
    grid.setObjectName("grid")
    grid.toggled.connect(host.data.show_chunk_grid)
    view_menu.addAction(grid)
    compare = QAction("&Compare", window, checkable=True, shortcut=QKeySequence("Ctrl+Shift+D"),
                      toolTip="A second array beside the one shown, picked in the tree: zoom, pan and planes linked "
                              "(by coordinate value where both have coordinates), both values under the cursor, "
                              "and their difference or ratio with its statistics")
    compare.setObjectName("compare")
    compare.toggled.connect(host.show_compare)
    view_menu.addAction(compare)
    storage = QAction("&Storage Columns", window, checkable=True, shortcut=QKeySequence("Ctrl+Shift+B"),
                      toolTip="What each array and group of the tree holds in its store, and each array's compression "
                              "ratio, read from listings and shard indexes as the rows come into view")
    storage.setObjectName("storage-columns")
    storage.toggled.connect(host.show_storage_columns)
    view_menu.addAction(storage)
    io = host.io_dock.toggleViewAction()
    io.setText("&I/O")
    io.setObjectName("io")
    io.setShortcut(QKeySequence("Ctrl+Shift+I"))
    io.setToolTip("What each view costs as it happens: its requests, bytes, cache hits, decoding and timings")
    view_menu.addAction(io)
    profile, stats = add_analysis_actions(view_menu, host.data.analysis)
    profile.setObjectName("profile")
    stats.setObjectName("statistics")
    reset = QAction("&Reset View", window, shortcut=QKeySequence("Ctrl+0"),
                    toolTip="The whole plane fitted to the view again, after zooming and panning")
    reset.triggered.connect(host.data.reset_view)
    view_menu.addAction(reset)
    for action, text in ((ortho, "Sections"), (profile, "Profile"), (stats, "Statistics"), (series, "Series"),
                         (grid, "Grid"), (compare, "Compare")):
        host.data.tools.add(action, text)
    view_menu.addSeparator()
    for text, button, shown_changed in (("&Metadata Panel", host.meta_fold.button, host.meta_fold.toggled),
                                        ("Image &Controls Column", host.data.side_button, host.data.side_button.toggled)):
        shown = QAction(text, window)  # the panel's own button and this entry say the same
        shown.setCheckable(True)
        shown.setToolTip(button.toolTip())
        shown.setChecked(button.isChecked())
        shown.toggled.connect(button.setChecked)
        shown_changed.connect(shown.setChecked)
        view_menu.addAction(shown)
    view_menu.addSeparator()
    prefs = QAction("&Preferences…", window)
    prefs.setShortcut(QKeySequence.StandardKey.Preferences)
    prefs.triggered.connect(host.edit_preferences)
    view_menu.addAction(prefs)
    help_menu = window.menuBar().addMenu("&Help")
    keys = QAction("&Keyboard Shortcuts", window)
    keys.setShortcut(QKeySequence("F1"))
    keys.triggered.connect(lambda: ShortcutsDialog(window).exec())
    help_menu.addAction(keys)
    guide = QAction("&User Guide", window)
    guide.setToolTip("The README of this installation: opening stores, the views, the command line")
    guide.triggered.connect(lambda: GuideDialog(window).exec())
    help_menu.addAction(guide)
    about = QAction("&About zarrview", window)
    about.setMenuRole(QAction.MenuRole.AboutRole)
    about.triggered.connect(lambda: AboutDialog(window).exec())
    help_menu.addAction(about)
    find = QAction("&Find", window)
    find.setShortcut(QKeySequence.StandardKey.Find)
    find.triggered.connect(lambda: host.filter.setFocus())
    window.addAction(find)
    return Menus(recent, exports, series)

