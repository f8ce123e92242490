"""The window's identity: icons per node kind, the window icon, the About dialog."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from test_app import _settle, store, window  # noqa: E402,F401  (fixtures)
from zarrview import __version__  # noqa: E402
from zarrview.app.about import AboutDialog  # noqa: E402
from zarrview.app.icons import app_icon, node_icon  # noqa: E402
from zarrview.app.resources import demo_path  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402


def _rows(window: MainWindow, parent):  # type: ignore[no-untyped-def]
    return {window.model.data(window.model.index(r, 0, parent)): window.model.index(r, 0, parent)
            for r in range(window.model.rowCount(parent))}


def test_tree_icons_follow_the_node_kind(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(str(demo_path()))
    _settle(qtbot, window)
    rows = _rows(window, window.model.index(0, 0))

    def icon_of(name: str) -> int:
        return window.model.data(rows[name], Qt.ItemDataRole.DecorationRole).cacheKey()

    assert icon_of("cells") == node_icon("sharded").cacheKey()  # the demo image is sharded
    assert icon_of("labels") == node_icon("array").cacheKey()
    assert icon_of("weather") == node_icon("group").cacheKey()
    window.open_location(str(store))
    _settle(qtbot, window)
    broken = _rows(window, window.model.index(1, 0))["broken"]
    assert window.model.data(broken, Qt.ItemDataRole.DecorationRole).cacheKey() == node_icon("error").cacheKey()
    for kind in ("sharded", "array", "group", "error"):
        assert not node_icon(kind).pixmap(16, 16).isNull(), kind


def test_window_icon_and_about_dialog(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    assert not window.windowIcon().isNull()
    assert window.windowIcon().cacheKey() == app_icon().cacheKey()
    assert sorted(s.width() for s in app_icon().availableSizes()) == [16, 24, 32, 48, 64, 128, 256, 512]
    dialog = AboutDialog(window)
    qtbot.addWidget(dialog)
    text = dialog.text.text()
    assert f"zarrview {__version__}" in text and "Zarr v3" in text and "Zarr v2" in text and "sharding" in text
    assert "https://zarr-specs.readthedocs.io" in text
    assert "github.com/zarrview" not in text  # no link to a home that does not exist
    from numcodecs.blosc import VERSION_STRING

    assert f"Native decoders: c-blosc {VERSION_STRING} (BloscLZ " in text  # what SECURITY.md asks a report to name
    assert [a.text() for a in window.menuBar().actions()][-1] == "&Help"


def test_open_url_dialog_is_wide_enough_for_a_url(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from zarrview.app.dialogs import TYPICAL_URL, OpenUrlDialog

    dialog = OpenUrlDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.url.setText(TYPICAL_URL)
    assert dialog.url.width() >= dialog.url.fontMetrics().horizontalAdvance(TYPICAL_URL)


def test_open_url_dialog_asks_each_cloud_for_anonymous_access(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Checked, the box adds the option each client reads as anonymous; options typed win."""
    from zarrview.app.dialogs import OpenUrlDialog
    from zarrview.zarrlib.storage.obstore_options import map_options

    dialog = OpenUrlDialog(window)
    qtbot.addWidget(dialog)
    for url, scheme in (("s3://b/x.zarr", "s3"), ("gs://b/x.zarr", "gs"), ("az://c/x.zarr", "az")):
        dialog.url.setText(url)
        dialog.options.setText('{"account_name": "a"}' if scheme == "az" else "")
        url_given, options = dialog.values()
        assert map_options(scheme, url_given, options).config["skip_signature"] is True, (url, options)
    dialog.url.setText("s3://b/x.zarr")
    dialog.options.setText('{"anon": false}')
    assert dialog.values()[1] == {"anon": False}
    dialog.anonymous.setChecked(False)
    dialog.options.setText("")
    assert dialog.values()[1] == {}


def test_v2_json_tab_shows_zattrs_beside_zarray(qtbot, tmp_path, worker_pool) -> None:  # type: ignore[no-untyped-def]
    import json

    import zarr

    import zarrview.zarrlib as zl
    from zarrview.app.metadata_panel import MetadataPanel

    a = zarr.create_array(tmp_path / "v2.zarr", shape=(3,), chunks=(3,), dtype="<i2", zarr_format=2)
    a.attrs["units"] = "kelvin"
    panel = MetadataPanel(worker_pool)
    qtbot.addWidget(panel)
    panel.show_node(zl.open(tmp_path / "v2.zarr"))
    qtbot.waitUntil(lambda: panel.json.toPlainText().startswith("{"), timeout=5000)  # written on a worker
    shown = json.loads(panel.json.toPlainText())
    assert shown[".zattrs"] == {"units": "kelvin"}
    assert shown[".zarray"] == json.loads((tmp_path / "v2.zarr" / ".zarray").read_text())


def test_help_lists_the_keyboard_shortcuts_from_the_menus(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QKeySequence

    from zarrview.app.shortcuts import ShortcutsDialog, shortcut_rows

    rows = dict(shortcut_rows(window))
    native = QKeySequence.SequenceFormat.NativeText
    assert rows["File ▸ Open URL"] == QKeySequence("Ctrl+L").toString(native)
    assert rows["File ▸ Go to Path"] == QKeySequence("Ctrl+G").toString(native)
    assert rows["View ▸ Series at a Point"] == QKeySequence("Ctrl+T").toString(native)
    assert rows["Help ▸ Keyboard Shortcuts"] == "F1" and "Find" in rows
    every = [a for m in window.menuBar().actions() if m.menu() for a in m.menu().actions() if not a.shortcut().isEmpty()]
    assert len(rows) == len(every) + sum(not a.shortcut().isEmpty() for a in window.actions())
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == len(rows) and dialog.table.item(0, 1).text()


def test_help_shows_the_user_guide_with_its_screenshot(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from PySide6.QtGui import QTextDocument

    from zarrview.app.user_guide import GuideDialog

    help_menu = next(m.menu() for m in window.menuBar().actions() if m.text().replace("&", "") == "Help")
    assert "User Guide" in [a.text().replace("&", "") for a in help_menu.actions()]
    dialog = GuideDialog(window)
    qtbot.addWidget(dialog)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("## ")]
    shown = dialog.browser.toPlainText()
    assert headings and all(h.replace("`", "") in shown for h in headings)
    image = dialog.browser.document().resource(QTextDocument.ResourceType.ImageResource,
                                               "resources/screenshots/main.png")
    assert image is not None and not image.isNull() and image.width() > 200  # the screenshot resolved
