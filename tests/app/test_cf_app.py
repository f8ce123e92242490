"""CF datasets in the window, as a user meets them: a packed field written by xarray is drawn as
xarray decodes it (the stored values on request), the sliders say their coordinate values and
take a typed one (the nearest, as xarray's ``sel(method="nearest")`` finds it), the axes are
ticked in coordinate values with north up, and a click plots the series at that pixel along
time, following the sliders."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarrview.app.window import MainWindow

from test_app import _settle, window  # noqa: F401  (the window fixture)

xr = pytest.importorskip("xarray")

LATS = np.linspace(60.0, -60.0, 25)
LONS = np.arange(0.0, 360.0, 10.0)
LEVELS = np.array([1000.0, 850.0, 500.0])
TIMES = np.array(["2001-03-04T00", "2001-03-04T06", "2001-03-04T12", "2001-03-04T18"], dtype="datetime64[ns]")


def _store(path: Path, ascending: bool = False) -> Path:
    lats = LATS[::-1] if ascending else LATS
    shape = (len(TIMES), len(LEVELS), len(lats), len(LONS))
    t2m = 250.0 + (np.arange(np.prod(shape), dtype=np.float64).reshape(shape) % 89) * 0.5
    t2m[:, :, 3, 4] = np.nan
    ds = xr.Dataset({"t2m": (("time", "level", "lat", "lon"), t2m, {"units": "K", "long_name": "2 metre temperature"})},
                    coords={"time": TIMES, "level": ("level", LEVELS, {"units": "hPa", "positive": "down"}),
                            "lat": ("lat", lats, {"units": "degrees_north"}),
                            "lon": ("lon", LONS, {"units": "degrees_east"})})
    enc = {"t2m": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32767,
                   "chunks": (1, 1, 13, 18)}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, zarr_format=3, consolidated=True, mode="w", encoding=enc)
    return path


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_location(f"{path}::/t2m")
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.state is not None and w.data.state.cf is not None and w.data.scene.detail is not None
                    and w.data.scene.detail.plane_key == w.data.state.plane_key() and not w.data.scene.busy,
                    timeout=15000)


def test_decoded_image_sliders_typed_values_axes(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = _store(tmp_path / "era.zarr")
    _open(qtbot, window, path)
    data = window.data
    ds = xr.open_zarr(path, chunks=None)
    np.testing.assert_allclose(data.scene.detail.values, ds["t2m"].isel(time=0, level=0).values, atol=1e-9)
    plane = data.plane
    assert plane is not None
    assert plane.labels[0].text() == "time  2001-03-04 00:00" and plane.labels[1].text() == "level  1000 hPa"
    assert set(plane.values) == {0, 1, 2, 3}
    assert not plane.values[2].isVisible() and plane.values[0].isVisible()  # lat, lon are on screen
    box = plane.values[0]
    box.setText("2001-03-04 13:00")
    box.editingFinished.emit()
    want = int(np.argmin(np.abs(TIMES - np.datetime64("2001-03-04T13:00"))))
    assert plane.sliders[0][1].value() == want == 2
    qtbot.waitUntil(lambda: plane.labels[0].text() == "time  2001-03-04 12:00", timeout=5000)
    plane.values[1].setText("600")
    plane.values[1].editingFinished.emit()
    level = int(np.argmin(np.abs(LEVELS - 600)))
    assert plane.sliders[1][1].value() == level
    qtbot.waitUntil(lambda: not data.scene.busy and data.scene.detail is not None
                    and data.scene.detail.plane_key == data.state.plane_key(), timeout=15000)
    np.testing.assert_allclose(data.scene.detail.values, ds["t2m"].isel(time=2, level=level).values, atol=1e-9)
    assert "lat 60 °N, lon 0 °E (time 2001-03-04 12:00, level 500 hPa)" in data.controller.readout(0, 0)
    left, bottom = data.image.view.getAxis("left"), data.image.view.getAxis("bottom")
    assert bottom.tickStrings([1.5], 1.0, 1.0) == ["10 °E"] and left.tickStrings([0.5], 1.0, 1.0) == ["60 °N"]
    for spacing, positions in left.tickValues(0.0, float(len(LATS)), 300.0):  # ticks at round latitudes
        assert positions
        for label in left.tickStrings(positions, 1.0, spacing):
            degrees = float(label.split()[0])
            assert degrees % spacing == pytest.approx(0.0, abs=1e-6) or degrees % spacing == pytest.approx(spacing)
    assert data.image.view.getViewBox().yInverted()  # latitude descends: row 0 (north) at the top
    assert data.image.view.titleLabel.text == "2 metre temperature (K)"
    from PySide6.QtWidgets import QCheckBox

    from zarrview.viewing.export.plane import export_plane

    export_plane(data.plane_spec(), tmp_path / "shown.npy")  # Export > Data writes what is shown: decoded
    np.testing.assert_allclose(np.load(tmp_path / "shown.npy"), ds["t2m"].isel(time=2, level=level).values, atol=1e-9)
    raw_box = next(b for b in data.findChildren(QCheckBox) if b.text() == "Stored values")
    raw_box.setChecked(True)
    qtbot.waitUntil(lambda: data.scene.detail is not None and data.scene.detail.values.dtype == np.int16
                    and not data.scene.busy, timeout=15000)
    stored_values = xr.open_zarr(path, chunks=None, mask_and_scale=False)["t2m"].isel(time=2, level=level).values
    np.testing.assert_array_equal(data.scene.detail.values, stored_values)
    export_plane(data.plane_spec(), tmp_path / "stored.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "stored.npy"), stored_values)
    # packed integers are in no unit: the title and the colour bar say what is drawn
    assert data.image.view.titleLabel.text == "2 metre temperature (stored values)"
    assert data.image.ui.histogram.item.axis.labelText == ""
    raw_box.setChecked(False)
    qtbot.waitUntil(lambda: data.image.view.titleLabel.text == "2 metre temperature (K)", timeout=15000)
    assert data.image.ui.histogram.item.axis.labelText == "K"


def test_ascending_latitude_is_drawn_north_up(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = _store(tmp_path / "up.zarr", ascending=True)
    _open(qtbot, window, path)
    assert not window.data.image.view.getViewBox().yInverted()  # row 0 (south) at the bottom
    from png_decode import decode_png
    from zarrview.viewing.export.plane import export_plane

    data = window.data
    spec = data.plane_spec()
    assert spec is not None and spec.rows_up
    export_plane(spec, tmp_path / "up.png")  # Export > Image draws it as the window does: north at the top
    png = decode_png((tmp_path / "up.png").read_bytes()).astype(int)
    shape = xr.open_zarr(path, chunks=None)["t2m"].shape[2:]
    drawn = next(r for r in (data.image.getImageItem().rendered, data.image.detail.rendered)
                 if r is not None and r.pixels.shape == shape and r.step == (1, 1))
    words = drawn.pixels.astype(np.uint32)  # the window's pixels: row 0 of the array, drawn at the bottom
    window_rgb = np.stack([(words >> 16) & 255, (words >> 8) & 255, words & 255], axis=-1).astype(int)
    np.testing.assert_array_equal(png, window_rgb[::-1])
    assert (png != window_rgb).any()  # south up would be another picture


def test_a_csv_export_is_labelled_by_the_coordinates(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """File > Export of the plane to .csv: each row starts with its latitude and the header holds
    the longitudes, read on the export's worker as the window reads them."""
    path = _store(tmp_path / "era.zarr")
    _open(qtbot, window, path)
    spec = window.data.plane_spec()
    assert spec is not None
    out = tmp_path / "p.csv"
    assert window.exports.start(spec, str(out))
    qtbot.waitUntil(lambda: window.exports.job is None, timeout=20000)
    assert "Exported" in window.status_label.text()
    with open(out, encoding="utf-8", newline="") as f:
        head, *rows = list(csv.reader(f))
    assert head == ["lat \\ lon", *(repr(float(v)) for v in LONS)]
    assert [r[0] for r in rows] == [repr(float(v)) for v in LATS]
    np.testing.assert_allclose(np.array([r[1:] for r in rows], dtype=float),
                               xr.open_zarr(path, chunks=None)["t2m"].isel(time=0, level=0).values, atol=1e-9)


def test_series_at_a_clicked_point_follows_the_sliders(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = _store(tmp_path / "era.zarr")
    _open(qtbot, window, path)
    window.series_action.setChecked(True)
    panel = window.series
    assert panel.view is not None and panel.shown
    assert panel.show_at(5, 7)
    series = lambda: panel.view.series  # noqa: E731
    qtbot.waitUntil(lambda: series().total > 0 and series().done == series().total and not series().busy, timeout=15000)
    ds = xr.open_zarr(path, chunks=None)
    np.testing.assert_allclose(series().y, ds["t2m"].isel(level=0, lat=5, lon=7).values, atol=1e-9)
    assert series().x_label == "time" and series().y_label == "2 metre temperature (K)"
    assert "level=1000 hPa" in series().title and f"lat={LATS[5]:g} °N, lon={LONS[7]:g} °E" in series().title
    window.data.set_index(1, 2)  # another pressure level: the line follows
    qtbot.waitUntil(lambda: "level=500 hPa" in series().title and series().done == series().total
                    and not series().busy, timeout=15000)
    np.testing.assert_allclose(series().y, ds["t2m"].isel(level=2, lat=5, lon=7).values, atol=1e-9)
    window.series_action.setChecked(False)
    assert not panel.shown


def test_nczarr_names_and_flag_legend(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """An NCZarr array gets its dimension names (xarray reads the same ones) and coordinates; a
    flag variable's colour bar is its legend and the readout names the flag."""
    from cf_coord_stores import nczarr_48

    path = nczarr_48(tmp_path / "nc.zarr")
    window.open_location(f"{path}::/v")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.cf is not None, timeout=15000)
    plane = window.data.plane
    dims = xr.open_zarr(path, chunks=None, consolidated=False)["v"].dims
    assert [plane.y_combo.itemText(i).split(" ")[0] for i in range(2)] == list(dims) == ["lat", "lon"]
    qtbot.waitUntil(lambda: not window.data.scene.busy and window.data.scene.detail is not None, timeout=15000)
    assert window.data.controller.readout(1, 2).startswith("lat 20.5 °N, lon 10 °E: ")

    flags = np.array([[0, 1], [2, 4]], dtype="u1")
    ds = xr.Dataset({"q": (("y", "x"), flags, {"flag_values": np.array([0, 1, 2, 4], "u1"),
                                                "flag_meanings": "clear cloudy rain snow"})})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(tmp_path / "flags.zarr", zarr_format=2, mode="w")
    window.open_location(f"{tmp_path / 'flags.zarr'}::/q")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.cf is not None
                    and not window.data.scene.busy and window.data.scene.detail is not None, timeout=15000)
    bar = window.data.image.ui.histogram.item.axis
    assert bar._tickLevels == [[(0.0, "0 clear"), (1.0, "1 cloudy"), (2.0, "2 rain"), (4.0, "4 snow")]]
    assert window.data.controller.readout(1, 0).endswith(": 2 (rain)")


def test_bad_attributes_are_named_and_the_values_shown_raw(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    import zarr

    a = zarr.create_array(tmp_path / "bad.zarr", shape=(4, 5), chunks=(4, 5), dtype="i2",
                          dimension_names=["y", "x"], attributes={"scale_factor": "abc", "units": "K"})
    a[...] = np.arange(20, dtype="i2").reshape(4, 5)
    said: list[str] = []
    window.data.status.connect(said.append)
    window.open_location(str(tmp_path / "bad.zarr"))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.cf is not None
                    and not window.data.scene.busy and window.data.scene.detail is not None, timeout=15000)
    assert any("scale_factor 'abc'" in text for text in said), said
    np.testing.assert_array_equal(window.data.scene.detail.values, a[...])
