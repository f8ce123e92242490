"""Every view shows the values the image shows, on a dataset written by xarray: "Show as table"
on a packed field shows its decoded values on the image's plane (the time the slider is on, lat
as rows, lon as columns, headed by their coordinates), a 1-D packed variable is a line against its
time coordinate (dates on the x axis, units, title, the readout under the mouse), and ``time``
itself is a line of dates. The truth is ``xr.open_zarr`` of the same store."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QSpinBox

from zarrview.app.window import MainWindow
from zarrview.viewing.export.plane import export_plane

from test_app import _settle, window  # noqa: F401  (the window fixture)

xr = pytest.importorskip("xarray")

TIMES = np.array(["2001-03-04T00", "2001-03-04T06", "2001-03-04T12", "2001-03-05T00"], dtype="datetime64[ns]")
LATS = np.linspace(60.0, -60.0, 5)
LONS = np.arange(0.0, 40.0, 10.0)


def _store(path: Path) -> Path:
    rng = np.random.default_rng(5)
    precip = rng.uniform(0.0, 30.0, (len(TIMES), len(LATS), len(LONS)))
    precip[2, 1, 3] = np.nan
    ds = xr.Dataset(
        {"precip": (("time", "lat", "lon"), precip, {"long_name": "precipitation", "units": "mm/day"}),
         "station_temp": (("time",), np.array([1.5, np.nan, 3.25, 4.0]),
                          {"long_name": "station temperature", "units": "degC"})},
        coords={"time": TIMES, "lat": ("lat", LATS, {"units": "degrees_north"}),
                "lon": ("lon", LONS, {"units": "degrees_east"})})
    enc = {"precip": {"dtype": "int16", "scale_factor": 0.001, "add_offset": 10.0, "_FillValue": -32767},
           "station_temp": {"dtype": "int16", "scale_factor": 0.01, "_FillValue": -32767}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, zarr_format=3, consolidated=True, mode="w", encoding=enc)
    return path


def _cells(model: Any) -> np.ndarray:
    return np.array([[float(model.data(model.index(r, c))) for c in range(model.columnCount())]
                     for r in range(model.rowCount())])


def _headers(model: Any, orientation: Qt.Orientation, n: int) -> list[str]:
    return [model.headerData(i, orientation) for i in range(n)]


def test_a_table_of_a_packed_field_is_the_images_plane_decoded(qtbot: Any, window: MainWindow,  # noqa: F811
                                                               tmp_path: Path) -> None:
    path = _store(tmp_path / "era.zarr")
    data = window.data
    window.open_location(f"{path}::/precip")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: data.state is not None and data.state.cf is not None and data.plane is not None,
                    timeout=15000)
    data.plane.sliders[0][1].setValue(2)  # the image at 2001-03-04 12:00
    qtbot.waitUntil(lambda: data.state.indices[0] == 2, timeout=5000)
    data.as_table.setChecked(True)
    _settle(qtbot, window)
    model = data.table.model()
    qtbot.waitUntil(lambda: model.rowCount() == len(LATS), timeout=15000)
    ds = xr.open_zarr(path)
    want = ds["precip"].isel(time=2).values  # lat x lon, as the image
    np.testing.assert_allclose(_cells(model), want, rtol=0, atol=1e-12)  # to the packing's 3 decimals
    assert all(len(model.data(model.index(r, c)).partition(".")[2]) <= 3 for r in range(len(LATS)) for c in range(2))
    assert _headers(model, Qt.Orientation.Horizontal, len(LONS)) == ["0 °E", "10 °E", "20 °E", "30 °E"]
    assert _headers(model, Qt.Orientation.Vertical, 2) == ["60 °N", "30 °N"]
    assert "precipitation (mm/day)" in window.status_label.text()
    export_plane(data.plane_spec(), tmp_path / "table.npy")  # Export > Data writes what the table shows
    np.testing.assert_array_equal(np.load(tmp_path / "table.npy"), want)
    spin = next(b for b in data.findChildren(QSpinBox) if b.isVisible())  # the table's time slider
    spin.setValue(3)
    qtbot.waitUntil(lambda: data.table.model() is not model and data.table.model().rowCount() == len(LATS),
                    timeout=15000)
    model = data.table.model()
    np.testing.assert_allclose(_cells(model), ds["precip"].isel(time=3).values, rtol=0, atol=1e-12)
    assert any(label.text() == "time  2001-03-05 00:00" for label in data.findChildren(QLabel))
    box = next(b for b in data.findChildren(QCheckBox) if b.text() == "Stored values" and b.isVisible())
    box.setChecked(True)
    qtbot.waitUntil(lambda: data.table.model() is not model and data.table.model().rowCount() == len(LATS),
                    timeout=15000)
    stored = xr.open_zarr(path, mask_and_scale=False)["precip"].isel(time=3).values
    np.testing.assert_array_equal(_cells(data.table.model()), stored)
    data.as_table.setChecked(False)  # back to the image, at the table's time
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: data.state is not None and data.scene.detail is not None and not data.scene.busy
                    and data.scene.detail.plane_key == data.state.plane_key(), timeout=15000)
    assert data.state.indices[0] == 3 and (data.state.y_dim, data.state.x_dim) == (1, 2)


def test_a_table_opened_first_shows_the_images_first_plane(qtbot: Any, window: MainWindow,  # noqa: F811
                                                           tmp_path: Path) -> None:
    path = _store(tmp_path / "era.zarr")
    window.data.as_table.setChecked(True)
    window.open_location(f"{path}::/precip")
    _settle(qtbot, window)
    model = window.data.table.model()
    qtbot.waitUntil(lambda: model is not None and model.rowCount() == len(LATS), timeout=15000)
    np.testing.assert_allclose(_cells(model), xr.open_zarr(path)["precip"].isel(time=0).values, rtol=0, atol=1e-12)
    window.open_location(f"{path}::/time")
    _settle(qtbot, window)
    model = window.data.table.model()
    qtbot.waitUntil(lambda: model is not None and model.rowCount() == len(TIMES), timeout=15000)
    assert [model.data(model.index(r, 0)) for r in range(len(TIMES))] == \
        [str(t)[:16].replace("T", " ") for t in xr.open_zarr(path)["time"].values]


def _line(qtbot: Any, window: MainWindow, location: str) -> Any:
    window.open_location(location)
    _settle(qtbot, window)
    model = window.data.others.line_model
    qtbot.waitUntil(lambda: model.plot.y is not None and not model.plot.busy, timeout=15000)
    return model.plot


def test_a_1d_variable_is_a_line_against_its_time_coordinate(qtbot: Any, window: MainWindow,  # noqa: F811
                                                             tmp_path: Path) -> None:
    path = _store(tmp_path / "era.zarr")
    ds = xr.open_zarr(path)
    plot = _line(qtbot, window, f"{path}::/station_temp")
    np.testing.assert_array_equal(plot.y, ds["station_temp"].values)
    days = (ds["time"].values - TIMES[0]) / np.timedelta64(1, "D")  # the x axis: days since the units' date
    np.testing.assert_allclose(plot.x, days)
    assert [plot.x_format(x) for x in plot.x] == [str(t)[:16].replace("T", " ") for t in ds["time"].values]
    item = window.data.plot.getPlotItem()
    assert item.titleLabel.text == "station temperature"
    assert item.getAxis("left").labelText == "degC" and item.getAxis("bottom").labelText == "time"
    assert item.getAxis("bottom").tickStrings([days[2]], 1.0, 0.25) == ["2001-03-04 12:00"]
    box = window.data.plot.getViewBox()
    window.data.others.line._moved(box.mapViewToScene(QPointF(days[2] + 0.01, 3.0)))
    assert window.status_label.text() == "time 2001-03-04 12:00: 3.25 degC"
    assert plot.readout(days[1]) == "time 2001-03-04 06:00: missing"


def test_time_itself_is_a_line_of_dates(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = _store(tmp_path / "era.zarr")
    plot = _line(qtbot, window, f"{path}::/time")
    want = [str(t)[:16].replace("T", " ") for t in xr.open_zarr(path)["time"].values]
    np.testing.assert_array_equal(plot.x, np.arange(len(TIMES)))
    assert plot.y_format is not None and [plot.y_format(y) for y in plot.y] == want
    left = window.data.plot.getPlotItem().getAxis("left")
    assert left.tickStrings([float(plot.y[3])], 1.0, 1.0) == [want[3]]
    assert plot.readout(2.2) == f"time (index) 2: {want[2]}"
    assert window.data.plot.getPlotItem().getAxis("bottom").labelText == "time (index)"  # x counts, y holds the times


def test_a_station_variable_is_drawn_by_station(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    ds = xr.Dataset({"temp": (("station",), np.array([2.5, 7.25, -1.0]), {"units": "degC"}),
                     "rain": (("id",), np.array([0.5, 1.0, 3.0]), {"units": "mm"})},
                    coords={"station": ("station", ["Oslo", "Bergen", "Tromsø"]), "id": ("id", [105, 101, 110])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(tmp_path / "st.zarr", zarr_format=2, mode="w",
                   encoding={"temp": {"dtype": "int16", "scale_factor": 0.25}})
    plot = _line(qtbot, window, f"{tmp_path / 'st.zarr'}::/temp")
    want = xr.open_zarr(tmp_path / "st.zarr")
    np.testing.assert_array_equal(plot.y, want["temp"].values)
    assert [plot.x_format(x) for x in plot.x] == list(want["station"].values)
    assert plot.readout(1.1) == "station Bergen: 7.25 degC"
    plot = _line(qtbot, window, f"{tmp_path / 'st.zarr'}::/rain")  # unordered ids: by index, named by id
    np.testing.assert_array_equal(plot.x, np.arange(3))
    assert [plot.x_format(x) for x in plot.x] == [str(i) for i in want["id"].values]
    assert plot.readout(2.0) == "id 110: 3.0 mm"
