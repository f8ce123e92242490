"""Line profiles and region statistics in the window: the tool is placed programmatically, and
the numbers in its panel are numpy's of the same array (level 0 of a pyramid whose coarse level
is on screen); another array removes the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.app.window import MainWindow
from zarrview.viewing.analysis.plane import Block

from ome_stores import ome_zarr_image
from test_app import _settle, window  # noqa: F401  (the window fixture)


def _rois(w: MainWindow) -> list[Any]:
    return [i for i in w.data.image.view.items if isinstance(i, (pg.LineSegmentROI, pg.RectROI))]


def test_region_statistics_show_numpys_numbers_and_go_with_the_array(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                      tmp_path: Path) -> None:
    data = np.random.default_rng(8).normal(20.0, 3.0, (3, 60, 70)).astype("f4")
    data[:, ::6, ::5] = np.nan
    data[:, 2::11, 1::4] = -1.0
    arr = zarr.create_array(tmp_path / "f", shape=data.shape, chunks=(1, 16, 16), dtype="f4", fill_value=-1.0)
    arr[...] = data
    arr.attrs["units"] = "degC"
    window.data.set_array(zl.open(tmp_path / "f"), {0: 2})  # type: ignore[arg-type]
    _settle(qtbot, window)
    tools = window.data.analysis
    stats_action = next(a for a in window.menuBar().actions()[2].menu().actions() if a.text() == "Region &Statistics")
    stats_action.trigger()  # from the View menu: a rectangle over the middle of the view
    assert tools.tool == "stats" and len(_rois(window)) == 1 and tools.panel.isVisible()
    tools.place_box(Block(5, 50, 3, 61))
    _settle(qtbot, window)
    part = data[2, 5:50, 3:61]
    shown = tools.panel.values
    assert shown["min"] == f"{np.nanmin(part):.6g} degC" and shown["max"] == f"{np.nanmax(part):.6g} degC"
    assert shown["mean"] == f"{np.nanmean(part.astype('f8')):.6g} degC"
    assert shown["std"] == f"{np.nanstd(part.astype('f8')):.6g} degC"
    assert shown["NaN"] == f"{int(np.isnan(part).sum()):,}" and shown["fill"] == f"{int((part == -1).sum()):,}"
    assert shown["values"] == f"{int((~np.isnan(part)).sum()):,}"
    window.data.set_index(0, 0)  # another plane: the same rectangle measured again
    _settle(qtbot, window)
    assert tools.panel.values["max"] == f"{np.nanmax(data[0, 5:50, 3:61]):.6g} degC"
    window.data.set_array(zl.open(tmp_path / "f"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert tools.tool is None and not _rois(window) and not tools.panel.isVisible() and not stats_action.isChecked()


def test_a_profile_reads_level_0_whatever_level_is_shown(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    y, x = np.mgrid[0:256, 0:320]
    data = ((x * 7 + y * 13) % 1000).astype("u2")  # every pixel differs from its neighbours
    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", data, "yx", scale_factors=(2, 4), chunks=(64, 64),
                          scale={"y": 0.5, "x": 0.5}, units={"y": "micrometer", "x": "micrometer"})
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None or window.data.scene.coarse is not None, timeout=15000)
    window.data.controller.set_state(window.data.state.with_(level=2))  # the coarsest level on screen
    _settle(qtbot, window)
    assert window.data.image.getImageItem().image.shape == (64, 80)
    tools = window.data.analysis
    tools.use("profile")
    tools.place_line(((10.2, 5.7), (200.9, 301.3)))
    _settle(qtbot, window)
    got = tools.result
    n = int(np.ceil(np.hypot(200.9 - 10.2, 301.3 - 5.7))) + 1
    t = np.linspace(0, 1, n)
    rows, cols = np.floor(10.2 + t * 190.7).astype(int), np.floor(5.7 + t * 295.6).astype(int)
    np.testing.assert_array_equal(got.values, data[rows, cols])
    assert got.distance_unit == "µm" and got.distance[-1] == pytest.approx(np.hypot(190.7, 295.6) * 0.5)
    curve = tools.panel.plot.getPlotItem().listDataItems()[0]
    np.testing.assert_array_equal(curve.yData, data[rows, cols])
    assert tools.panel.plot.getAxis("bottom").labelText == "distance (µm)"
    tools.use(None)
    assert not _rois(window) and not tools.panel.isVisible()
