"""Physical space in the window: an anisotropic OME-Zarr stack (0.2 µm pixels, 2 µm planes,
written by ome-zarr-py) shows in its true proportions in XY and XZ, with axes ticked in µm and a
scale bar of a round length."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarrview.app.physical_view import nice_length
from zarrview.app.window import MainWindow

from ome_stores import ome_zarr_image
from test_app import _settle, window  # noqa: F401  (the window fixture)


def _pixels_per_unit(w: MainWindow) -> tuple[float, float]:
    vb = w.data.image.view.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    rect = vb.sceneBoundingRect()
    return rect.height() / (y1 - y0), rect.width() / (x1 - x0)


def test_an_anisotropic_stack_keeps_its_proportions(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    data = np.random.default_rng(2).integers(0, 1000, (20, 128, 128), dtype="u2")
    path = ome_zarr_image(tmp_path / "aniso.zarr", "0.4", data, "zyx", scale_factors=(2,), chunks=(1, 64, 64),
                          scale={"z": 2.0, "y": 0.2, "x": 0.2},
                          units={"z": "micrometer", "y": "micrometer", "x": "micrometer"})
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    per_y, per_x = _pixels_per_unit(window)
    assert per_y == pytest.approx(per_x, rel=1e-3)  # square pixels in XY
    bar = window.data.physical.bar
    (x0, x1), _ = window.data.image.view.getViewBox().viewRange()
    length = nice_length((x1 - x0) * 0.2 * 0.2)
    assert bar.isVisible() and bar.text.textItem.toPlainText() == f"{length:g} µm"
    assert bar.size == pytest.approx(length / 0.2)
    assert window.data.image.view.getAxis("bottom").scale == pytest.approx(0.2)
    window.data.plane.y_combo.setCurrentIndex(0)  # rows: z, columns: x (an XZ view)
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None and window.data.scene.detail.values.shape[0] == 20,
                    timeout=15000)
    per_y, per_x = _pixels_per_unit(window)
    assert per_y / per_x == pytest.approx(10.0, rel=1e-3)  # a 2 µm plane is ten 0.2 µm pixels tall
    assert window.data.image.view.getAxis("left").scale == pytest.approx(2.0)


def test_a_plain_array_keeps_square_pixels_and_no_scale_bar(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    import zarr

    import zarrview.zarrlib as zl

    zarr.create_array(tmp_path / "plain", shape=(50, 80), chunks=(25, 40), dtype="u1")[...] = 1
    window.data.set_array(zl.open(tmp_path / "plain"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    per_y, per_x = _pixels_per_unit(window)
    assert per_y == pytest.approx(per_x, rel=1e-3) and not window.data.physical.bar.isVisible()


@pytest.mark.parametrize(("x", "expected"), [(7.3, 5), (10, 10), (0.0042, 0.002), (199, 100), (250, 200),
                                             (math.nextafter(1e-6, 0.0), 5e-7)])
def test_nice_lengths(x: float, expected: float) -> None:
    assert nice_length(x) == pytest.approx(expected)


def test_sliders_say_where_their_plane_lies(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    data = np.zeros((2, 10, 64, 64), dtype="u2")
    path = ome_zarr_image(tmp_path / "tz.zarr", "0.4", data, "tzyx", scale_factors=(), chunks=(1, 1, 64, 64),
                          scale={"t": 30.0, "z": 2.0, "y": 0.5, "x": 0.5},
                          units={"t": "second", "z": "micrometer", "y": "micrometer", "x": "micrometer"})
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    labels = window.data.plane.labels
    assert labels[0].text() == "t  0 s" and labels[1].text() == "z  0 µm"
    window.data.set_index(1, 7)
    window.data.set_index(0, 1)
    assert labels[1].text() == "z  14 µm" and labels[0].text() == "t  30 s"
