"""Channels in colour in the window: a 3-channel OME image written by ome-zarr-py shows the
composite's colours at known pixels of the rendered view, a channel switched off or a window
changed is drawn again without a read, Single mode shows one channel with the histogram, and
forty channels open with a scrolling list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QPointF

import zarrview.zarrlib as zl
from zarrview.app.window import MainWindow
from zarrview.viewing.decision import decide
from zarrview.viewing.ome import OmeImage
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore
from test_app import _settle, window  # noqa: F401  (the window fixture)

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402
from drawn import drawn, drawn_rgba

OMERO = {"channels": [
    {"label": "red", "color": "FF0000", "window": {"start": 0, "end": 1000, "min": 0, "max": 65535}},
    {"label": "green", "color": "00FF00", "window": {"start": 0, "end": 1000, "min": 0, "max": 65535}},
    {"label": "blue", "color": "0000FF", "window": {"start": 0, "end": 100, "min": 0, "max": 65535}}],
    "rdefs": {"model": "color"}}


def _three(path: Path) -> Path:
    data = np.zeros((3, 64, 64), "u2")
    data[0, :, :32] = 1000   # red, full, in the left half
    data[1, :32, :] = 500    # green, half, in the top half
    data[2, 32:, 32:] = 100  # blue, full, bottom right
    return ome_zarr_image(path, "0.4", data, "cyx", scale_factors=(), chunks=(1, 64, 64), omero=OMERO)


def _pixel(w: MainWindow, row: int, col: int) -> tuple[int, int, int]:
    """The colour drawn on screen at the centre of data element (row, col)."""
    pane = w.data.image
    view = pane.ui.graphicsView
    where = view.mapFromScene(pane.view.getViewBox().mapViewToScene(QPointF(col + 0.5, row + 0.5)))
    c = view.grab().toImage().pixelColor(where)
    return c.red(), c.green(), c.blue()


def _close(got: tuple[int, int, int], want: tuple[int, int, int]) -> bool:
    return max(abs(a - b) for a, b in zip(got, want)) <= 3


def _shown(qtbot: Any, w: MainWindow) -> None:
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.scene.detail is not None and not w.data.scene.busy, timeout=15000)
    _settle(qtbot, w)


def test_composite_colours_on_screen_and_a_channel_switched_off(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                tmp_path: Path) -> None:
    window.open_location(str(_three(tmp_path / "three.zarr")))
    _shown(qtbot, window)
    state, scene = window.data.state, window.data.scene
    assert state is not None and state.composite and scene.composite
    assert drawn(window.data).shape == (64, 64, 3)
    assert not window.data.image.ui.histogram.isVisible()  # its levels and gradient do not apply
    expected = {(10, 10): (255, 128, 0), (10, 50): (0, 128, 0), (50, 10): (255, 0, 0), (50, 50): (0, 0, 255)}
    for (r, c), want in expected.items():
        got = _pixel(window, r, c)
        assert _close(got, want), ((r, c), got, want)
    panel = window.data.channels
    assert panel is not None and [row.active.text() for row in panel.rows] == ["red", "green", "blue"]
    # the channel slider is hidden in a composite: every channel is shown
    slider, _box = window.data.plane.sliders[0]
    assert not slider.isVisibleTo(window)
    panel.rows[0].active.setChecked(False)  # red off
    qtbot.waitUntil(lambda: _close(_pixel(window, 10, 10), (0, 128, 0)), timeout=5000)
    assert _close(_pixel(window, 50, 10), (0, 0, 0))
    # the readout names every channel
    assert window.data.controller.readout(50, 50).endswith("red 0, green 0, blue 100")


def test_window_and_colour_change_without_a_read_and_single_mode(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                tmp_path: Path, monkeypatch: Any) -> None:
    path = _three(tmp_path / "count.zarr")
    store = CountingStore(LocalStore(str(path)))
    shown = decide(zl.open(store))
    assert isinstance(shown.image, OmeImage)
    window.data.show_image(shown)
    _shown(qtbot, window)
    reads = len(store.chunk_keys())
    requests = window.data.driver.requests
    panel = window.data.channels
    assert panel is not None
    panel.rows[1].hi.setValue(500.0)  # green's window ends at 500: full green at the top
    qtbot.waitUntil(lambda: _close(_pixel(window, 10, 50), (0, 255, 0)), timeout=5000)
    assert _close(_pixel(window, 10, 10), (255, 255, 0))
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QColorDialog

    monkeypatch.setattr(QColorDialog, "getColor", lambda *a, **k: QColor(255, 0, 255))
    panel.rows[2].swatch.click()  # blue becomes magenta
    qtbot.waitUntil(lambda: _close(_pixel(window, 50, 50), (255, 0, 255)), timeout=5000)
    assert window.data.state.channels[2].color == (255, 0, 255)
    assert len(store.chunk_keys()) == reads and window.data.driver.requests == requests
    # Single: one channel on its slider, through the histogram
    panel.single.setChecked(True)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None and not window.data.scene.composite
                    and window.data.scene.detail.image.ndim == 2, timeout=15000)
    _settle(qtbot, window)
    assert window.data.image.ui.histogram.isVisible()
    slider, box = window.data.plane.sliders[0]
    assert slider.isVisibleTo(window)
    box.setValue(2)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None and window.data.scene.detail.values[50, 50] == 100,
                    timeout=15000)
    panel.composite.setChecked(True)
    qtbot.waitUntil(lambda: window.data.scene.composite and window.data.scene.detail is not None, timeout=15000)
    _settle(qtbot, window)
    assert _close(_pixel(window, 50, 50), (255, 0, 255))


def test_forty_channels_open(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    rng = np.random.default_rng(1)
    data = rng.integers(0, 1000, (40, 48, 48), dtype="u2")
    path = ome_zarr_image(tmp_path / "forty.zarr", "0.5", data, "cyx", scale_factors=(), chunks=(8, 48, 48))
    window.open_location(str(path))
    _shown(qtbot, window)
    state = window.data.state
    assert state is not None and state.composite and len(state.channels) == 40
    assert len({c.color for c in state.channels}) == 40 and all(c.window is not None for c in state.channels)
    tile = window.data.scene.detail
    assert tile.values.shape == (48, 48, 40) and tile.image.shape == (48, 48, 40)
    kr, kc = window.data.image.getImageItem().rendered.step  # their composite, at the screen's reduction
    assert drawn_rgba(window.data).shape == (-(-48 // kr), -(-48 // kc), 4)
    np.testing.assert_array_equal(tile.values, np.moveaxis(data, 0, -1))
    panel = window.data.channels
    assert panel is not None and len(panel.rows) == 40
    if not window.data.side.isVisible():  # folded where it does not fit: the user opens it
        window.data.side_button.click()
    qtbot.waitUntil(lambda: window.data.side.isVisible() and panel.list.height() > 0, timeout=5000)
    assert panel.list.verticalScrollBar().maximum() > 0  # the list scrolls instead of growing past the column
    from zarrview.app.channel_controls import ROW_HEIGHT, VISIBLE_ROWS

    assert VISIBLE_ROWS * ROW_HEIGHT <= panel.list.height() <= window.data.side.viewport().height()
    text = window.data.controller.readout(3, 4)
    assert text.count(",") >= 40 and f"channel 39 {data[39, 3, 4]}" in text
