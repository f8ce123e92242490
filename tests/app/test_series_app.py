"""Series at a point in the window, on a three-channel z stack written by ome-zarr-py: a click
plots the stack through that pixel along z, one line per channel in the channel's colour and
named by its label, over z in µm; the plot is tall enough to read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

from zarrview.app.series_view import readable
from zarrview.app.window import MainWindow

from test_app import _settle, window  # noqa: F401  (the window fixture)

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402

CHANNELS = (("DAPI", "0000FF"), ("GFP", "00FF00"), ("mCherry", "FF0000"))
OMERO = {"channels": [{"label": label, "color": color, "window": {"start": 0, "end": 4000, "min": 0, "max": 65535},
                       "active": True} for label, color in CHANNELS],
         "rdefs": {"model": "color"}}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[0:2], 16), int(hex_colour[2:4], 16), int(hex_colour[4:6], 16)


def test_a_click_on_a_stack_plots_each_channel_along_z_in_microns(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                   tmp_path: Path) -> None:
    data = np.random.default_rng(11).integers(1, 4000, (3, 6, 64, 64)).astype("u2")
    path = ome_zarr_image(tmp_path / "cells.zarr", "0.4", data, "czyx", scale_factors=(2,), chunks=(1, 2, 32, 32),
                          scale={"z": 2.0, "y": 0.5, "x": 0.5},
                          units={"z": "micrometer", "y": "micrometer", "x": "micrometer"}, omero=OMERO)
    attrs: dict[str, Any] = dict(zarr.open_group(str(path), mode="r").attrs)
    transforms: dict[str, list[float]] = {t["type"]: t[t["type"]] for t in attrs["multiscales"][0]["datasets"][0]["coordinateTransformations"]}
    z_scale, z_shift = transforms["scale"][1], transforms.get("translation", [0.0] * 4)[1]
    assert z_scale == 2.0
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.ome is not None, timeout=15000)
    window.series_action.setChecked(True)
    panel = window.series
    view = panel.view
    assert view is not None and panel.shown
    row, col = 37, 21
    window.data.pixel_clicked.emit(row, col)  # what a click on the image says

    def read(dim: int) -> bool:
        s = view.series
        return s.dim == dim and panel.point is not None and (row, col) == panel.point[1:] and s.total > 0 and s.done == s.total \
            and not s.busy and s.title.endswith(f"y={row * 0.5:g} µm, x={col * 0.5:g} µm")

    qtbot.waitUntil(lambda: read(1), timeout=15000)
    s = view.series
    assert view.along.currentText() == "z" and s.x_label == "z (µm)"
    assert view.plot.getAxis("bottom").labelText == "z (µm)"
    drawn = [c for c in view.curves if c.yData is not None and len(c.yData) > 0]
    assert len(drawn) == 3 and view.legend_labels() == [label for label, _ in CHANNELS]
    background = view.plot.backgroundBrush().color()
    for c, curve in enumerate(drawn):
        np.testing.assert_array_equal(curve.yData, data[c, :, row, col])
        np.testing.assert_array_equal(curve.xData, z_scale * np.arange(6) + z_shift)
        pen = curve.opts["pen"].color()
        want = readable(_rgb(CHANNELS[c][1]), (background.red(), background.green(), background.blue()))
        assert (pen.red(), pen.green(), pen.blue()) == want
    assert view.plot.height() >= 180 and panel.dock is not None and panel.dock.height() >= view.minimumSizeHint().height()
    # a dimension picked in the dock stays picked for the next click
    view.along.setCurrentIndex(0)
    qtbot.waitUntil(lambda: read(0), timeout=15000)
    row, col = 9, 50
    window.data.pixel_clicked.emit(row, col)
    qtbot.waitUntil(lambda: read(0), timeout=15000)
    np.testing.assert_array_equal(view.curve.yData, data[:, 0, row, col])
    assert view.legend_labels() == [] and view.bottom.tickStrings([0.0, 1.0, 2.0], 1, 1) == ["DAPI", "GFP", "mCherry"]


def test_the_lines_follow_the_channels_ticked(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    data = np.random.default_rng(12).integers(1, 4000, (3, 6, 32, 32)).astype("u2")
    path = ome_zarr_image(tmp_path / "cells.zarr", "0.4", data, "czyx", scale_factors=(), chunks=(1, 2, 32, 32),
                          omero=OMERO)
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.channels is not None, timeout=15000)
    window.series_action.setChecked(True)
    view = window.series.view
    assert view is not None
    window.data.pixel_clicked.emit(5, 9)

    def lines(labels: list[str]) -> bool:
        s = view.series
        return not s.busy and s.total > 0 and s.done == s.total and view.legend_labels() == labels

    qtbot.waitUntil(lambda: lines(["DAPI", "GFP", "mCherry"]), timeout=15000)
    panel = window.data.channels
    assert panel is not None
    panel.rows[1].active.setChecked(False)  # GFP off: the plot drops its line, no click needed
    qtbot.waitUntil(lambda: lines(["DAPI", "mCherry"]), timeout=15000)
    drawn = [c for c in view.curves if c.yData is not None and len(c.yData) > 0]
    for curve, c in zip(drawn, (0, 2)):
        np.testing.assert_array_equal(curve.yData, data[c, :, 5, 9])
