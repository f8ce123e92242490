"""A GeoZarr pyramid in the window (attributes by zarr-cm, arrays by zarr-python): the root opens
as a pyramid with the level picker, the axes are ticked in the CRS's coordinates, the readout
under the cursor gives them with the CRS's name, and the metadata panel names the CRS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtWidgets import QComboBox

import geozarr_stores as gs
from zarrview.app.window import MainWindow

from test_app import _settle, window  # noqa: F401  (the window fixture)


def test_a_geozarr_root_opens_as_a_georeferenced_pyramid(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    written = gs.zarr_cm_pyramid(tmp_path / "pyramid.zarr")
    window.open_location(str(written.root))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.cf is not None, timeout=15000)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    state = window.data.state
    assert state is not None and state.pyramid is not None and len(state.pyramid) == 3
    assert window.meta.fields()["CRS"] == "EPSG:32633"
    assert window.data.scene.detail is not None
    level = window.data.scene.detail.level  # type: ignore[attr-defined]
    np.testing.assert_array_equal(window.data.scene.detail.values, written.levels[str(level)][0])
    a, _, c, _, e, f = gs.BASE
    from zarrview.viewing.image.readout import readout

    text = readout(state, window.data.scene, 5, 8)
    assert text.startswith(f"y {f + e * 5.5:.0f} m, x {c + a * 8.5:.0f} m [EPSG:32633]")  # pixel centres
    ticks = window.data.image.view.getAxis("bottom").tickStrings([8.5], 1.0, 1.0)  # the centre of column 8
    assert ticks == [f"{c + a * 8.5:.0f}"]
    picker = next(c for c in window.data.findChildren(QComboBox) if c.findData(2) >= 0)
    labels = [picker.itemText(i) for i in range(1, picker.count())]  # after "auto"
    assert [t.split(",")[:2] for t in labels] == [  # each level's size and its pixels in the CRS's unit
        [f"level {i}: {lv.shape[1]:,} × {lv.shape[2]:,}", f" {-w[4]:g} × {w[0]:g} m/px"]
        for i, (lv, w) in enumerate(zip(written.levels.values(), written.transforms.values()))]
    window.show_axes(True)
    assert window.data.image.view.getAxis("bottom").labelText == "x (m)"
    assert window.data.image.view.getAxis("left").labelText == "y (m)"


def _hostile(root: Path, attrs: dict[str, Any]) -> Path:
    import zarr

    group = zarr.open_group(str(root), mode="w", zarr_format=3, attributes=attrs)
    group.create_array("0", shape=(20, 30), dtype="u1", chunks=(10, 10), dimension_names=("y", "x"))[...] = 7
    return root


def test_broken_multiscales_in_the_window_are_said_not_raised(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """What used to raise IndexError when the root was opened: an OME-NGFF list without a pyramid,
    a declared multiscales convention without a layout. Each shows a sentence; a GeoZarr layout
    whose second level is broken still shows its first."""
    ms = {"uuid": "d35379db-88df-4056-af3a-620245f8e347"}
    window.open_location(str(_hostile(tmp_path / "ome.zarr", {"multiscales": [{"datasets": "0"}]})))
    _settle(qtbot, window)
    assert "names no pyramid that can be read" in window.data.message.text()
    window.open_location(str(_hostile(tmp_path / "nolayout.zarr", {"zarr_conventions": [ms], "multiscales": {}})))
    _settle(qtbot, window)
    assert "No level of the pyramid / can be read" in window.data.message.text()
    assert '"layout" is required' in window.meta.fields()["Problems"]
    window.open_location(str(_hostile(tmp_path / "half.zarr", {"zarr_conventions": [ms], "multiscales": {"layout": [
        {"asset": "0"}, {"asset": "gone", "derived_from": "0", "transform": {"scale": [2, "x"]}}]}})))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    np.testing.assert_array_equal(window.data.scene.detail.values, np.full((20, 30), 7, "u1"))
    problems = window.meta.fields()["Problems"]
    assert problems.startswith("2: ") and "level 'gone' cannot be opened" in problems and "positive numbers" in problems


def test_the_band_picker_shows_another_bands_pyramid(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    written = gs.toolkit_pyramid(tmp_path / "store.zarr")
    window.open_location(str(written.root))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    picker = next(c for c in window.data.findChildren(QComboBox) if c.findData("b03") >= 0)
    assert [picker.itemData(i) for i in range(picker.count())] == ["b02", "b03"]
    picker.setCurrentIndex(picker.findData("b03"))
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.array.path == "/r10m/b03",
                    timeout=15000)
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    detail = window.data.scene.detail
    state = window.data.state
    assert detail is not None and state is not None and state.pyramid is not None
    path = state.pyramid[detail.level].path  # type: ignore[attr-defined]
    assert written.other is not None
    np.testing.assert_array_equal(detail.values, written.other[path])


def test_non_square_pixels_keep_their_proportions(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """Pixels 10 m wide and 25 m tall are drawn two and a half times as tall as wide."""
    written = gs.zarr_cm_pyramid(tmp_path / "tall.zarr", base=(10.0, 0.0, 500000.0, 0.0, -25.0, 5000000.0))
    window.open_location(str(written.root))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    vb = window.data.image.view.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    rect = vb.sceneBoundingRect()
    assert (rect.height() / (y1 - y0)) / (rect.width() / (x1 - x0)) == pytest.approx(2.5, rel=1e-3)
    # the narrow image covers little of the bottom axis: its tick labels (6 digits) still do not touch
    bottom = window.data.image.view.getAxis("bottom")
    px = rect.width() / (x1 - x0)
    ticks = [v for _, values in bottom.tickValues(x0, x1, rect.width()) for v in values]
    assert len(ticks) >= 2
    assert min(np.diff(sorted(ticks))) * px >= 6 * 7
