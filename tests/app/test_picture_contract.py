"""A picture is a claim: for every kind of view, the PNG that Export ▸ Image writes is the
window's own rendering of the same plane at full resolution, pixel for pixel, in the window's
orientation (north up whichever way latitude is stored), colour map, contrast, channels and
missing colour. Stores come from the tools people use (xarray, zarr-python, ome-zarr-py)."""

from __future__ import annotations

import math
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


def _truth(location: str, state: Any) -> np.ndarray:
    """The array the window shows, as the tools that wrote it read it back: decoded by xarray
    where the window decodes CF, else as zarr-python stores it."""
    root = location.split("::")[0]
    path = state.array.path.strip("/")
    if state.decoding is not None:
        xr = pytest.importorskip("xarray")
        return np.asarray(xr.open_zarr(root, consolidated=None)[path].values)
    return np.asarray(zarr.open_array(root, path=path, mode="r")[...])


def _block(full: np.ndarray, fixed: tuple[int, ...], dims: tuple[int, ...], cut: dict[int, slice]) -> np.ndarray:
    """``full`` at the indices ``fixed`` except along ``dims`` (cut by ``cut``), those in the order given."""
    index = tuple(cut.get(d, slice(None)) if d in dims else fixed[d] for d in range(full.ndim))
    kept = sorted(dims)
    return np.transpose(full[index], [kept.index(d) for d in dims])


@pytest.mark.parametrize("case", list(CASES))
def test_auto_contrast_and_sections_are_numpys_of_what_is_shown(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                                                case: str) -> None:
    """Auto contrast of a zoomed view gives the 0.5 and 99.5 percentiles of the values in view
    (each channel's window in a composite), and the sections through a point hold the values
    numpy finds there, for every view of the matrix."""
    from zarrview.viewing.image import orthogonal as ortho

    location = CASES[case](tmp_path)
    window.data.pending_level = LEVELS.get(case)
    window.open_location(location)
    data = window.data
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: data.state is not None and data.scene.detail is not None and not data.scene.busy,
                    timeout=20000)
    state = data.state
    assert state is not None
    full = _truth(location, state)
    assert full.shape == state.array.shape
    rows, cols = state.plane_shape
    data.image.show_region((rows / 4, rows * 3 / 4, cols / 4, cols * 3 / 4))  # a zoom into the middle
    qtbot.waitUntil(lambda: data.state is not None and data.state.region is not None
                    and data.state.region[1] - data.state.region[0] < rows * 0.9, timeout=15000)
    _settle(qtbot, window)
    data.auto_contrast()
    _settle(qtbot, window)
    state = data.state
    assert state is not None and state.region is not None
    r0, r1, c0, c1 = state.region
    cut = {state.y_dim: slice(max(0, math.floor(r0)), min(rows, math.ceil(r1))),
           state.x_dim: slice(max(0, math.floor(c0)), min(cols, math.ceil(c1)))}
    if state.composite:
        c = state.channel_dim
        assert c is not None
        shown = _block(full, state.indices, (state.y_dim, state.x_dim, c), cut).astype("f8")
        for ch in state.channels:
            values = shown[..., ch.index]
            assert ch.window is not None
            np.testing.assert_allclose(ch.window, np.percentile(values[np.isfinite(values)], (0.5, 99.5)), rtol=1e-6)
    else:
        shown = _block(full, state.indices, (state.y_dim, state.x_dim), cut).astype("f8")
        assert shown.size < full[..., :, :].size or full.ndim == 2
        want = np.percentile(shown[np.isfinite(shown)], (0.5, 99.5))
        np.testing.assert_allclose(data.scene.levels, want, rtol=1e-5)
    if not ortho.z_choices(state):
        return  # a plane is all there is: no sections
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    next(a for a in view.actions() if a.text() == "&Orthogonal Views").trigger()
    o = window.orthogonal
    qtbot.waitUntil(lambda: o.pending is None and o.sections is not None and o.sections.values is not None,
                    timeout=15000)
    got, req = o.sections, o.sections.request
    assert got is not None and req is not None and req.level == 0 and got.values is not None
    row, col, z = req.point
    at = list(state.indices)
    at[state.y_dim], at[state.x_dim], at[req.z_dim] = row, col, z
    extra = (state.channel_dim,) if state.composite and state.channel_dim is not None else ()
    for values, dims in ((got.values[0], (req.z_dim, state.x_dim, *extra)),
                         (got.values[1], (state.y_dim, req.z_dim, *extra))):
        np.testing.assert_allclose(values, _block(full, tuple(at), dims, {}), rtol=1e-6, equal_nan=True)


#: a map of each kind the menu offers: grey, perceptual, cyclic, geoscience, diverging (reversed too)
MAP_KINDS = (("grey", False), ("magma", False), ("twilight", False), ("cmocean:haline", False),
             ("colorbrewer:RdBu", True))


@pytest.mark.parametrize(("name", "reverse"), MAP_KINDS)
def test_every_colour_map_kind_is_drawn_and_exported_by_its_table(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                  tmp_path: Path, name: str, reverse: bool) -> None:
    """Picked in the window, each kind of colour map draws every value as ``cmap``'s table
    says at the window's levels (NaN in the missing colour), and the PNG exported is that picture."""
    cmap = pytest.importorskip("cmap")
    from zarrview.viewing.image.contrast import NAN_RGBA

    values = np.add.outer(np.linspace(-3, 5, 40), np.linspace(0, 2, 50)).astype("f4")
    values[5:9, 10:20] = np.nan
    zarr.create_array(tmp_path / "f.zarr", shape=values.shape, chunks=(20, 25), dtype="f4")[...] = values
    window.open_location(str(tmp_path / "f.zarr"))
    data = window.data
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: data.colours is not None and data.scene.detail is not None and not data.scene.busy,
                    timeout=20000)
    assert data.colours is not None
    data.colours.combo.setCurrentText(name)
    data.colours.reverse.setChecked(reverse)
    lo, hi = data.scene.levels
    # an entry of 256 for each value, truncated (the 256 greys: 255 steps, the grey being the entry)
    if name == "grey":
        table, top = np.arange(256, dtype="u1")[:, None].repeat(3, axis=1), 255
    else:
        table, top = (np.asarray(cmap.Colormap(name).lut(256))[:, :3] * 255).round().clip(0, 255).astype("u1"), 256
    table = table[::-1] if reverse else table
    index = np.clip((values.astype("f8") - lo) * top / (hi - lo), 0, 255)
    want = table[np.nan_to_num(index, nan=0).astype(int)].astype(int)
    want[np.isnan(values)] = NAN_RGBA[:3]

    def drawn() -> bool:
        # the window's table is the gradient's, resampled from the map's 256 colours: within one step
        rendered = drawn_item(data).rendered
        return rendered is not None and rendered.step == (1, 1) and \
            int(np.abs(drawn_rgba(data)[..., :3].astype(int) - want).max()) <= (0 if name == "grey" else 1)

    qtbot.waitUntil(drawn, timeout=15000)  # the window draws the table's colours
    spec = data.plane_spec()
    assert spec is not None
    export_plane(spec, tmp_path / "shown.png")
    png = decode_png((tmp_path / "shown.png").read_bytes())[..., :3]
    np.testing.assert_array_equal(png, drawn_rgba(data)[..., :3])  # and the PNG is that picture
