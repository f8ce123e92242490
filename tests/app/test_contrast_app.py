"""The contrast of a plane as a person sets it, offscreen: Auto contrast of a zoomed view takes
the values on screen, typed levels draw the plane through them, and Auto per plane gives each
plane stepped to its own levels; each checked against numpy on the same values."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QLineEdit  # noqa: E402

from drawn import drawn_item, drawn_rgba, expected_rgba  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)

from zarrview.app.contrast_controls import ContrastControls  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.image.contrast import PERCENTILES  # noqa: E402

ROWS, COLS = 60, 80
#: plane 0: the left half dim (0 to 10), the right half bright (500 to 1000); plane 1 the same
#: a thousand times larger and a million higher; plane 2 small and negative
DIM = np.linspace(0, 10, ROWS * COLS // 2).reshape(ROWS, COLS // 2)
BRIGHT = np.linspace(500, 1000, ROWS * COLS // 2).reshape(ROWS, COLS // 2)
PLANE = np.concatenate([DIM, BRIGHT], axis=1)
STACK = np.stack([PLANE, PLANE * 1000 + 1e6, -PLANE / 100]).astype("f4")
STACK[0, 25, 12] = np.nan  # in the zoomed area: left out of the percentiles


@pytest.fixture
def stack(tmp_path: Path) -> str:
    g = zarr.open_group(tmp_path / "c.zarr", mode="w")
    g.create_array("stack", shape=STACK.shape, chunks=(1, 32, 32), dtype="f4",
                   dimension_names=["t", "y", "x"])[...] = STACK
    return f"{tmp_path / 'c.zarr'}::/stack"


def _rule(values: np.ndarray) -> np.ndarray:
    """numpy's 0.5 and 99.5 percentiles of the finite values."""
    return np.percentile(values[np.isfinite(values)].astype("f8"), PERCENTILES)


def _contrast(w: MainWindow) -> ContrastControls:
    assert w.data.plane is not None and w.data.plane.contrast is not None
    return w.data.plane.contrast


def _levels(w: MainWindow) -> tuple[float, float]:
    lo, hi = w.data.image.ui.histogram.item.getLevels()
    return float(lo), float(hi)


def _table(w: MainWindow) -> np.ndarray | None:
    gradient = w.data.image.ui.histogram.item.gradient
    return None if gradient.isLookupTrivial() else np.asarray(gradient.getLookupTable(256, alpha=True), np.uint8)


def _assert_drawn(w: MainWindow, plane: np.ndarray, levels: tuple[float, float]) -> None:
    """The pixels on screen are ``plane`` through ``levels`` and the colour map, by numpy."""
    rendered = drawn_item(w.data).rendered
    assert rendered is not None
    kr, kc = rendered.step
    np.testing.assert_array_equal(drawn_rgba(w.data), expected_rgba(plane[::kr, ::kc], levels, _table(w)))


def _type(qtbot: Any, box: QLineEdit, text: str) -> None:
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def test_auto_contrast_of_a_zoomed_view_takes_the_values_on_screen(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                   stack: str) -> None:
    window.open_location(stack)
    _settle(qtbot, window)
    np.testing.assert_allclose(_levels(window), _rule(STACK[0]), rtol=1e-6)
    window.data.image.show_region((20.0, 40.0, 5.0, 30.0))  # into the dim half, as a wheel zoom ends
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.region is not None
                    and window.data.state.region[3] - window.data.state.region[2] < 40, timeout=15000)
    _settle(qtbot, window)
    _contrast(window).auto.click()
    _settle(qtbot, window)
    assert window.data.state is not None and window.data.state.region is not None
    r0, r1, c0, c1 = window.data.state.region  # what the aspect lock made of it: every element on screen
    shown = STACK[0, max(0, math.floor(r0)):min(ROWS, math.ceil(r1)), max(0, math.floor(c0)):min(COLS, math.ceil(c1))]
    assert shown.size < STACK[0].size / 4
    want = _rule(shown)
    assert want[1] < 20 < _rule(STACK[0])[1]  # the dim area's range, not the whole plane's
    np.testing.assert_allclose(_levels(window), want, rtol=1e-6)
    np.testing.assert_allclose(window.data.scene.levels, want, rtol=1e-6)
    assert float(_contrast(window).hi.text()) == pytest.approx(want[1], rel=1e-5)


def test_typed_levels_set_the_levels_and_follow_the_histogram(qtbot: Any, window: MainWindow,  # noqa: F811
                                                              stack: str) -> None:
    window.open_location(stack)
    _settle(qtbot, window)
    contrast = _contrast(window)
    auto = _rule(STACK[0])
    assert float(contrast.lo.text()) == pytest.approx(auto[0], rel=1e-5, abs=1e-9)
    _type(qtbot, contrast.lo, "250")
    assert window.data.state is not None
    assert window.data.state.contrast == (250.0, pytest.approx(auto[1], rel=1e-6))  # the other end as it was
    _settle(qtbot, window)
    levels = (250.0, float(auto[1]))
    np.testing.assert_allclose(_levels(window), levels, rtol=1e-6)
    _assert_drawn(window, STACK[0], window.data.scene.levels)
    np.testing.assert_allclose(window.data.scene.levels, levels, rtol=1e-6)
    _type(qtbot, contrast.hi, "600.5")
    _settle(qtbot, window)
    assert window.data.scene.levels == (250.0, 600.5)
    _assert_drawn(window, STACK[0], (250.0, 600.5))
    # a lower level at or above the upper one is refused: the box shows the levels again
    _type(qtbot, contrast.lo, "700")
    _settle(qtbot, window)
    assert window.data.scene.levels == (250.0, 600.5) and contrast.lo.text() == "250"
    # a histogram drag shows in the boxes
    window.data.image.ui.histogram.item.setLevels(100, 900)
    _settle(qtbot, window)
    assert (contrast.lo.text(), contrast.hi.text()) == ("100", "900")


def test_auto_per_plane_gives_each_plane_stepped_to_its_own_levels(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                   stack: str) -> None:
    window.open_location(stack)
    _settle(qtbot, window)
    contrast = _contrast(window)
    assert contrast.per_plane is not None and not contrast.per_plane.isChecked()
    assert window.data.plane is not None
    slider = window.data.plane.sliders[0][0]
    first = _rule(STACK[0])
    slider.setValue(2)  # off: the levels stay where the first plane set them
    _settle(qtbot, window)
    np.testing.assert_allclose(window.data.scene.levels, first, rtol=1e-6)
    contrast.per_plane.setChecked(True)  # on: the plane shown takes its own at once
    _settle(qtbot, window)
    np.testing.assert_allclose(window.data.scene.levels, _rule(STACK[2]), rtol=1e-6)
    slider.setValue(1)  # a plane a million higher
    want = _rule(STACK[1])
    qtbot.waitUntil(lambda: np.allclose(_levels(window), want, rtol=1e-6), timeout=15000)
    _settle(qtbot, window)
    np.testing.assert_allclose(window.data.scene.levels, want, rtol=1e-6)
    assert float(contrast.lo.text()) == pytest.approx(want[0], rel=1e-5)
    _assert_drawn(window, STACK[1], window.data.scene.levels)
    contrast.per_plane.setChecked(False)  # off again: the next plane keeps them
    slider.setValue(0)
    _settle(qtbot, window)
    np.testing.assert_allclose(window.data.scene.levels, want, rtol=1e-6)
