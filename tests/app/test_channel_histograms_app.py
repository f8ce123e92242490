"""Each channel's histogram in the window: a 3-channel OME image written by ome-zarr-py shows in
every channel row numpy's histogram of that channel's plane; dragging a handle with the mouse
sets that channel's window in the state, its number field and the composite drawn (checked
against the window applied with numpy), without counting or reading again; a channel's own Auto
and the global Auto contrast set windows by the percentile rule computed here with numpy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from drawn import drawn_item, drawn_rgba

from zarrview.app.window import MainWindow
from zarrview.viewing.image.histograms import HISTOGRAM_BINS

from test_app import _settle, window  # noqa: F401  (the window fixture)

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402

COLOURS = ((255, 0, 0), (0, 255, 0), (0, 0, 255))
OMERO = {"channels": [
    {"label": name, "color": "{:02X}{:02X}{:02X}".format(*rgb), "window": {"start": 0, "end": 3000, "min": 0, "max": 65535}}
    for name, rgb in zip(("red", "green", "blue"), COLOURS)], "rdefs": {"model": "color"}}


def _written(path: Path) -> np.ndarray:
    rng = np.random.default_rng(8)
    data = np.stack([rng.normal(800, 200, (48, 40)), rng.exponential(300, (48, 40)),
                     rng.uniform(0, 4000, (48, 40))]).clip(0).astype("u2")
    ome_zarr_image(path, "0.4", data, "cyx", scale_factors=(), chunks=(1, 48, 40), omero=OMERO)
    return data


#: the composite is drawn in bytes: within half a step of 255 of the exact colour
ROUNDING = 0.5 / 255 + 1e-5


def _drawn(window: MainWindow) -> np.ndarray:
    """The composite on screen, RGB in [0, 1]."""
    return drawn_rgba(window.data)[..., :3] / 255


def _drawn_as(window: MainWindow, rgb: np.ndarray) -> np.ndarray:
    """``rgb`` at the reduction the screen shows it."""
    kr, kc = drawn_item(window.data).rendered.step
    return rgb[::kr, ::kc]


def _composite(data: np.ndarray, windows: list[tuple[float, float]]) -> np.ndarray:
    """The composite of the channels by the rule: each through its window, times its colour, summed and clipped."""
    out = np.zeros((*data.shape[1:], 3))
    for plane, (lo, hi), rgb in zip(data, windows, COLOURS):
        t = np.clip((plane.astype("f8") - lo) / (hi - lo), 0.0, 1.0)
        out += t[..., None] * (np.array(rgb) / 255.0)
    return np.clip(out, 0.0, 1.0)


def _open(qtbot: Any, w: MainWindow, tmp_path: Path) -> np.ndarray:
    data = _written(tmp_path / "hist.zarr")
    w.open_location(str(tmp_path / "hist.zarr"))
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.scene.detail is not None and w.data.channels is not None
                    and all(r.histogram.histogram is not None for r in w.data.channels.rows), timeout=15000)
    return data


def test_histograms_are_numpys_and_a_dragged_handle_sets_the_window(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                     tmp_path: Path) -> None:
    data = _open(qtbot, window, tmp_path)
    panel = window.data.channels
    assert panel is not None
    for c, row in enumerate(panel.rows):
        hist = row.histogram.histogram
        counts, edges = np.histogram(data[c], bins=HISTOGRAM_BINS, range=(data[c].min(), data[c].max()))
        np.testing.assert_array_equal(hist.counts, counts)
        np.testing.assert_allclose(hist.edges, edges)
        assert row.histogram.value_window == (0.0, 3000.0) and row.auto.isEnabled()
    counted, requests = panel.driver.lane.newest, window.data.driver.requests
    # the mouse drags green's upper handle from 3000 to about 1200
    strip = panel.rows[1].histogram
    y = strip.height() // 2
    QTest.mousePress(strip, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(round(strip.x_of(3000.0)), y))
    assert strip.dragging == "hi"
    target = round(strip.x_of(1200.0))
    QTest.mouseMove(strip, QPoint(target, y))
    state = window.data.state
    assert state is not None
    lo, hi = state.channels[1].window  # while the mouse moves, on the axis fixed when it was pressed
    assert lo == 0.0 and hi == strip.value_of(target) and abs(hi - 1200.0) < 100 and hi == int(hi)
    QTest.mouseRelease(strip, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(target, y))
    assert strip.dragging is None and window.data.state.channels[1].window == (0.0, hi)
    assert panel.rows[1].hi.value() == hi and panel.rows[1].histogram.value_window == (0.0, hi)
    # the lower handle of red, by the widget's own call
    panel.rows[0].histogram.drag("lo", 500.0)
    assert window.data.state.channels[0].window == (500.0, 3000.0) and panel.rows[0].lo.value() == 500.0
    _settle(qtbot, window)
    np.testing.assert_allclose(_drawn(window), _drawn_as(window, _composite(data, [(500, 3000), (0, hi), (0, 3000)])),
                               atol=ROUNDING)
    # a lower handle cannot pass the upper one
    panel.rows[0].histogram.drag("lo", 9000.0)
    assert window.data.state.channels[0].window == (3000.0, 3000.0)
    # new windows redraw the values loaded: nothing is read or counted again
    _settle(qtbot, window)
    assert panel.driver.lane.newest == counted and window.data.driver.requests == requests


def test_a_channels_auto_and_auto_contrast_take_windows_from_its_values(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    data = _open(qtbot, window, tmp_path)
    panel = window.data.channels
    assert panel is not None
    rule = [tuple(np.percentile(plane.astype("f8"), (0.5, 99.5))) for plane in data]
    panel.rows[2].auto.click()
    state = window.data.state
    assert state is not None
    np.testing.assert_allclose(state.channels[2].window, rule[2])
    assert [c.window for c in state.channels[:2]] == [(0.0, 3000.0)] * 2  # the others keep theirs
    assert panel.rows[2].hi.value() == pytest.approx(round(rule[2][1]))
    _settle(qtbot, window)
    np.testing.assert_allclose(_drawn(window), _drawn_as(window, _composite(data, [(0, 3000), (0, 3000), rule[2]])),
                               atol=ROUNDING)
    window.data.auto_contrast()  # every channel's window from its values, as before
    for c, row in enumerate(panel.rows):
        np.testing.assert_allclose(window.data.state.channels[c].window, rule[c])
        np.testing.assert_allclose(row.histogram.value_window, rule[c])
