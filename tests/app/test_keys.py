"""The keyboard as a person uses it: Left/Right and Page Up/Down step the image's slider
wherever the focus is (the image, the tree for Page Up/Down, a check box), but never inside a
text field; every tool has a shortcut Help lists; the tool buttons keep their
names when pressed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from zarrview.app.shortcuts import shortcut_rows  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402

from drawn import drawn  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)

DATA = np.arange(24 * 16 * 20, dtype="u2").reshape(24, 16, 20)


def _volume(path: Path) -> str:
    zarr.create_array(path, shape=DATA.shape, chunks=(1, 16, 20), dtype="u2", dimension_names=["z", "y", "x"])[...] = DATA
    return str(path)


def _index(w: MainWindow) -> int:
    assert w.data.state is not None
    return w.data.state.indices[0]


def _key(qtbot: Any, w: MainWindow, widget: Any, key: Qt.Key, want: int) -> None:
    widget.setFocus()
    qtbot.keyClick(widget, key)
    qtbot.waitUntil(lambda: _index(w) == want, timeout=5000)
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: (got := drawn(w.data)) is not None and got.shape == DATA.shape[1:]
                    and (got == DATA[want]).all(), timeout=10000)


def test_keys_step_the_slider_wherever_the_focus_is(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    window.open_location(_volume(tmp_path / "v.zarr"))
    _settle(qtbot, window)
    assert _index(window) == 0
    canvas = window.data.image.ui.graphicsView
    _key(qtbot, window, canvas, Qt.Key.Key_Right, 1)
    _key(qtbot, window, canvas, Qt.Key.Key_PageDown, 11)
    _key(qtbot, window, window.data.as_table, Qt.Key.Key_PageUp, 1)
    _key(qtbot, window, window.tree, Qt.Key.Key_PageDown, 11)  # where the focus is after picking a node
    _key(qtbot, window, canvas, Qt.Key.Key_PageDown, 21)
    _key(qtbot, window, canvas, Qt.Key.Key_PageDown, 23)  # clamped to the last plane
    window.tree.setFocus()
    qtbot.keyClick(window.tree, Qt.Key.Key_Left)  # the tree keeps Left and Right: they close and open groups
    window.filter.setFocus()
    qtbot.keyClick(window.filter, Qt.Key.Key_Left)  # a text field keeps every key
    qtbot.keyClick(window.filter, Qt.Key.Key_PageUp)
    _settle(qtbot, window)
    assert _index(window) == 23


def test_every_tool_has_a_shortcut_and_keeps_its_name(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    rows = dict(shortcut_rows(window))
    for entry in ("View ▸ Orthogonal Views", "View ▸ Line Profile", "View ▸ Region Statistics",
                  "View ▸ Series at a Point", "View ▸ Reset View"):
        assert rows.get(entry), (entry, rows)
    assert len(set(rows.values())) == len(rows)  # no two entries share keys
    window.open_location(_volume(tmp_path / "v.zarr"))
    _settle(qtbot, window)
    for name, button in window.data.tools.buttons.items():
        button.click()
        _settle(qtbot, window)
        assert button.text() == name and button.isChecked()
        button.click()
        assert button.text() == name


def test_reset_view_fits_the_plane_again(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    window.open_location(_volume(tmp_path / "v.zarr"))
    _settle(qtbot, window)
    view = window.data.image.view
    view.setRange(xRange=(3, 6), yRange=(4, 7), padding=0)
    reset = next(a for a in window.menuBar().actions()[2].menu().actions() if a.text() == "&Reset View")
    reset.trigger()
    (x0, x1), (y0, y1) = view.viewRange()
    assert x0 <= 0 and x1 >= DATA.shape[2] and y0 <= 0 and y1 >= DATA.shape[1]
