"""CF in the view model (no Qt): a packed field written by xarray is shown as xarray decodes
it (masked where the fill value is, unpacked), decoded on the worker; the stored values on
request; the readout names the place by its coordinates and the value with its units; the
first contrast comes from ``actual_range``; the vertical axis is flipped for ascending latitude."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.image.state import initial_state

from view_harness import Harness

xr = pytest.importorskip("xarray")

LATS = np.array([60.0, 45.25, 30.5, 15.0, 0.0, -15.0])
LONS = np.arange(0.0, 360.0, 45.0)
LEVELS = np.array([1000.0, 500.0])
TIMES = np.array(["2001-03-04T00", "2001-03-04T06", "2001-03-04T12"], dtype="datetime64[ns]")


def _dataset(ascending: bool = False) -> xr.Dataset:
    lats = LATS[::-1] if ascending else LATS
    shape = (len(TIMES), len(LEVELS), len(lats), len(LONS))
    t2m = 250.0 + np.arange(np.prod(shape), dtype=np.float64).reshape(shape) % 97 * 0.5
    t2m[:, :, 1, 2] = np.nan  # written as the fill value
    ds = xr.Dataset(
        {"t2m": (("time", "level", "lat", "lon"), t2m,
                 {"units": "K", "long_name": "2 metre temperature", "actual_range": [250.0, 298.0]})},
        coords={"time": TIMES, "level": ("level", LEVELS, {"units": "hPa", "positive": "down"}),
                "lat": ("lat", lats, {"units": "degrees_north"}), "lon": ("lon", LONS, {"units": "degrees_east"})})
    return ds


def _write(path: Path, zarr_format: int, ascending: bool = False) -> Path:
    enc = {"t2m": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32767,
                   "chunks": (1, 1, 3, 4)}}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _dataset(ascending).to_zarr(path, zarr_format=zarr_format, consolidated=False, mode="w", encoding=enc)
    return path


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.close()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_plane_decoded_as_xarray_decodes_it_and_stored_on_request(tmp_path: Path, h: Harness, zarr_format: int) -> None:
    path = _write(tmp_path / "era.zarr", zarr_format)
    arr = zl.open(f"{path}::/t2m")
    cf = read_cf(arr)
    assert cf is not None and cf.coding.active and set(cf.axes) == {0, 1, 2, 3}
    state = initial_state(arr, {0: 1, 1: 1}).with_(cf=cf)
    assert (state.y_dim, state.x_dim) == (2, 3)
    tile = h.show(state).detail
    assert tile is not None
    expected = xr.open_zarr(path)["t2m"].isel(time=1, level=1).values
    assert tile.values.dtype == expected.dtype
    np.testing.assert_allclose(tile.values, expected, rtol=0, atol=1e-9)
    assert np.isnan(tile.values[1, 2]) and np.isnan(expected[1, 2])
    raw = h.show(state.with_(raw=True)).detail
    assert raw is not None and raw.values.dtype == np.int16
    stored = xr.open_zarr(path, mask_and_scale=False)["t2m"].isel(time=1, level=1).values
    np.testing.assert_array_equal(raw.values, stored)
    assert raw.values[1, 2] == -32767


def test_readout_names_coordinates_units_and_missing(tmp_path: Path, h: Harness) -> None:
    path = _write(tmp_path / "era.zarr", 3)
    arr = zl.open(f"{path}::/t2m")
    cf = read_cf(arr)
    assert cf is not None
    state = initial_state(arr, {0: 1, 1: 1}).with_(cf=cf)
    h.show(state)
    expected = float(xr.open_zarr(path)["t2m"].isel(time=1, level=1, lat=0, lon=1).values)
    text = h.ctl.readout(0, 1)
    assert text.startswith("lat 60 °N, lon 45 °E (time 2001-03-04 06:00, level 500 hPa): "), text
    assert text.endswith(" K") and float(text.split(": ")[1].split()[0]) == pytest.approx(expected, abs=1e-9)
    assert h.ctl.readout(1, 2).endswith("nan (missing)")
    h.show(state.with_(raw=True))
    assert h.ctl.readout(1, 2).endswith(": -32767 (stored)")
    assert cf.heading == "2 metre temperature (K)" and cf.range == (250.0, 298.0)


def test_flip_for_ascending_latitude(tmp_path: Path) -> None:
    down = read_cf(zl.open(f"{_write(tmp_path / 'a.zarr', 2)}::/t2m"))
    up = read_cf(zl.open(f"{_write(tmp_path / 'b.zarr', 2, ascending=True)}::/t2m"))
    assert down is not None and up is not None
    assert not down.flipped(2) and up.flipped(2)  # north up either way
    assert not up.flipped(3)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_plain_array_has_no_cf(tmp_path: Path, h: Harness, zarr_format: int) -> None:
    """zarr-python gives a v2 array fill value 0: data there (xarray would mask it, but only
    opens arrays with _ARRAY_DIMENSIONS), so zeros stay zeros."""
    import zarr

    a = zarr.create_array(tmp_path / "a.zarr", shape=(4, 4), chunks=(2, 2), dtype="u1", zarr_format=zarr_format)
    a[...] = np.arange(16).reshape(4, 4) % 3
    arr = zl.open(tmp_path / "a.zarr")
    assert arr.fill_value == 0 and read_cf(arr) is None
    tile = h.show(initial_state(arr)).detail
    assert tile is not None
    np.testing.assert_array_equal(tile.values, a[...])
