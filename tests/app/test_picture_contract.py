"""A picture is a claim: for every kind of view, the PNG that Export ▸ Image writes is the
window's own rendering of the same plane at full resolution, pixel for pixel, in the window's
orientation (north up whichever way latitude is stored), colour map, contrast, channels and
missing colour. Stores come from the tools people use (xarray, zarr-python, ome-zarr-py)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.export.plane import export_plane  # noqa: E402

from drawn import drawn_item, drawn_rgba  # noqa: E402
from png_decode import decode_png  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)

RNG = np.random.default_rng(38)


def _cf(path: Path, lat: np.ndarray, lon: np.ndarray, values: np.ndarray, units: str = "K",
        fill: bool = False) -> str:
    xr = pytest.importorskip("xarray")
    dims = ("time", "lat", "lon")[3 - values.ndim:]
    coords: dict[str, Any] = {"lat": ("lat", lat, {"units": "degrees_north"}),
                              "lon": ("lon", lon, {"units": "degrees_east"})}
    if values.ndim == 3:
        coords["time"] = np.array(["2001-01-01", "2001-02-01"], dtype="datetime64[ns]")[: values.shape[0]]
    ds = xr.Dataset({"v": (dims, values, {"units": units})}, coords=coords)
    enc = {"v": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32767}} if fill else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, zarr_format=2, consolidated=True, encoding=enc)
    return f"{path}::/v"


def lat_descending(tmp: Path) -> str:
    values = RNG.normal(280, 10, (18, 36)).astype("f4")
    values[3:6, 10:20] = np.nan  # missing: the missing colour
    return _cf(tmp / "d.zarr", np.linspace(85, -85, 18), np.arange(0, 360, 10.0), values)


def lat_ascending_lon_180(tmp: Path) -> str:
    values = RNG.normal(280, 10, (2, 18, 36)).astype("f4")
    values[:, 2:4, :] = np.nan
    return _cf(tmp / "a.zarr", np.linspace(-85, 85, 18), np.arange(-180, 180, 10.0), values)


def packed_with_fill(tmp: Path) -> str:
    values = RNG.normal(280, 10, (18, 36))
    values[10:12, 5:9] = np.nan  # written as _FillValue, read back masked
    return _cf(tmp / "p.zarr", np.linspace(-85, 85, 18), np.arange(0, 360, 10.0), values, fill=True)


def anomaly_diverging(tmp: Path) -> str:
    y, x = np.mgrid[0:30, 0:40]
    a = zarr.create_array(tmp / "an.zarr", shape=(30, 40), chunks=(15, 20), dtype="f4")
    a[...] = np.sin(x / 6.0) * 3
    return str(tmp / "an.zarr")


def five_d_grey(tmp: Path) -> str:
    a = zarr.create_array(tmp / "five.zarr", shape=(2, 2, 3, 24, 28), chunks=(1, 1, 1, 24, 28), dtype="u2",
                          dimension_names=["t", "c", "z", "y", "x"])
    a[...] = RNG.integers(0, 4000, a.shape, dtype="u2")
    return str(tmp / "five.zarr")


def ome_three_channels(tmp: Path) -> str:
    pytest.importorskip("ome_zarr")
    from ome_stores import ome_zarr_image

    data = RNG.integers(0, 4000, (3, 2, 32, 40), dtype="u2")
    return str(ome_zarr_image(tmp / "ome.zarr", "0.4", data, "czyx", scale_factors=(),
                              scale={"z": 2.0, "y": 0.5, "x": 0.5}, units={"z": "micrometer", "y": "micrometer",
                                                                          "x": "micrometer"}))


def geozarr_utm(tmp: Path) -> str:
    """A GeoZarr product in UTM zone 33N (EPSG:32633; rows run north to south, the spatial
    transform's y step is negative), a three-level pyramid written with zarr-cm's conventions,
    shown at level 0 (``--level 0``: the picture is compared at full resolution)."""
    pytest.importorskip("zarr_cm")
    from geozarr_stores import zarr_cm_pyramid

    return str(zarr_cm_pyramid(tmp / "utm.zarr").root)


#: the pyramid level a case is shown at, as ``--level`` gives it
LEVELS = {"GeoZarr in UTM": 0}


CASES: dict[str, Callable[[Path], str]] = {
    "latitude north to south": lat_descending, "latitude south to north, longitude -180..180": lat_ascending_lon_180,
    "packed with a fill value": packed_with_fill, "anomaly (diverging map)": anomaly_diverging,
    "5-D intensity (grey)": five_d_grey, "OME-Zarr, 3 channels in µm": ome_three_channels,
    "GeoZarr in UTM": geozarr_utm,
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_exported_png_is_the_windows_rendering(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                                   case: str) -> None:
    location = CASES[case](tmp_path)
    window.data.pending_level = LEVELS.get(case)
    window.open_location(location)
    data = window.data
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: data.state is not None and data.scene.detail is not None and not data.scene.busy
                    and drawn_item(data).rendered is not None, timeout=20000)
    _settle(qtbot, window)
    state = data.state
    assert state is not None
    rendered = drawn_item(data).rendered
    assert rendered is not None and rendered.step == (1, 1) and rendered.pixels.shape == state.plane_shape
    on_screen = drawn_rgba(data)[..., :3]  # row 0 of the plane first, as the item holds it
    spec = data.plane_spec()
    assert spec is not None and spec.rows_up == state.rows_up
    export_plane(spec, tmp_path / "shown.png")
    png = decode_png((tmp_path / "shown.png").read_bytes())[..., :3]
    box = data.image.view.getViewBox()
    assert box.yInverted() == (not state.rows_up)  # the window draws row 0 at the top unless north is up
    np.testing.assert_array_equal(png, on_screen[::-1] if state.rows_up else on_screen)
    assert len(np.unique(png.reshape(-1, 3), axis=0)) > 8  # a picture, not a blank
    if case in LEVELS:  # a pyramid: the level asked for, in its CRS
        assert state.level == LEVELS[case] and state.cf is not None and state.cf.crs
