"""The window's menus: what each entry does lives in the window; here only which entries exist."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence

from .about import AboutDialog
from .analysis_tools import add_analysis_actions
from .export_actions import ExportActions
from .recent import RecentLocations
from .shortcuts import ShortcutsDialog
from .user_guide import GuideDialog
from .version_actions import pick_version

if TYPE_CHECKING:
    from .window import MainWindow


def build_menus(w: MainWindow) -> None:
    file_menu = w.menuBar().addMenu("&File")
    for text, shortcut, slot in [
        ("Open &Folder…", QKeySequence.StandardKey.Open, w.open_folder),
        ("Open &File (zip)…", None, w.open_file),
        ("Open &References (JSON, Parquet)…", None, w.open_references),
        ("Open &URL…", QKeySequence("Ctrl+L"), w.open_url),
        ("Open &Version…", None, lambda: pick_version(w)),
        ("&Go to Path…", QKeySequence("Ctrl+G"), w.paths.ask),
    ]:
        act = QAction(text, w)
        if shortcut is not None:
            act.setShortcut(shortcut)
        act.triggered.connect(slot)
        file_menu.addAction(act)
    w.recent_menu = file_menu.addMenu("Open &Recent")
    w.recent = RecentLocations(w.settings, w.recent_menu, w.open_location, w)
    file_menu.addSeparator()
    close = QAction("&Close Store", w)
    close.setShortcut(QKeySequence.StandardKey.Close)
    close.triggered.connect(w.close_current_store)
    file_menu.addAction(close)
    quit_ = QAction("&Quit", w)
    quit_.setShortcut(QKeySequence.StandardKey.Quit)
    quit_.triggered.connect(w.close)
    file_menu.addAction(quit_)
    w.exports = ExportActions(w, w.data, w.menuBar().addMenu("&Export"), w.status_label.setText)
    view_menu = w.menuBar().addMenu("&View")
    axes = QAction("Image &Axes", w)
    axes.setCheckable(True)
    axes.setToolTip("Axes with ticks in data coordinates along the image")
    axes.setChecked(w.settings.value("image_axes", "true") == "true")  # shown unless turned off
    axes.toggled.connect(w.show_axes)
    view_menu.addAction(axes)
    w.data.set_axes_shown(axes.isChecked())
    series = QAction("&Series at a Point", w)
    series.setCheckable(True)
    series.setShortcut(QKeySequence("Ctrl+T"))
    series.setToolTip("Plot the values through a pixel along a dimension (time where there is one); click the image to move it")
    series.toggled.connect(w.series.show)
    view_menu.addAction(series)
    w.series_action = series
    ortho = QAction("&Orthogonal Views", w, checkable=True, shortcut=QKeySequence("Ctrl+Shift+O"),
                    toolTip="XZ and YZ sections beside the image of a 3-D or larger array; click to move them")
    ortho.toggled.connect(w.orthogonal.show)
    view_menu.addAction(ortho)
    profile, stats = add_analysis_actions(view_menu, w.data.analysis)
    for action, text in ((ortho, "Sections"), (profile, "Profile"), (stats, "Statistics"), (series, "Series")):
        w.data.tools.add(action, text)
    view_menu.addSeparator()
    for text, button, shown_changed in (("&Metadata Panel", w.meta_fold.button, w.meta_fold.toggled),
                                        ("Image &Controls Column", w.data.side_button, w.data.side_button.toggled)):
        shown = QAction(text, w)  # the panel's own button and this entry say the same
        shown.setCheckable(True)
        shown.setToolTip(button.toolTip())
        shown.setChecked(button.isChecked())
        shown.toggled.connect(button.setChecked)
        shown_changed.connect(shown.setChecked)
        view_menu.addAction(shown)
    view_menu.addSeparator()
    prefs = QAction("&Preferences…", w)
    prefs.setShortcut(QKeySequence.StandardKey.Preferences)
    prefs.triggered.connect(w.edit_preferences)
    view_menu.addAction(prefs)
    help_menu = w.menuBar().addMenu("&Help")
    keys = QAction("&Keyboard Shortcuts", w)
    keys.setShortcut(QKeySequence("F1"))
    keys.triggered.connect(lambda: ShortcutsDialog(w).exec())
    help_menu.addAction(keys)
    guide = QAction("&User Guide", w)
    guide.setToolTip("The README of this installation: opening stores, the views, the command line")
    guide.triggered.connect(lambda: GuideDialog(w).exec())
    help_menu.addAction(guide)
    about = QAction("&About zarrview", w)
    about.setMenuRole(QAction.MenuRole.AboutRole)
    about.triggered.connect(lambda: AboutDialog(w).exec())
    help_menu.addAction(about)
    find = QAction("&Find", w)
    find.setShortcut(QKeySequence.StandardKey.Find)
    find.triggered.connect(lambda: w.filter.setFocus())
    w.addAction(find)

