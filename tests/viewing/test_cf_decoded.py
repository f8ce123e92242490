"""One decoding for every view: a CF time variable exported as its dates, ``info`` naming a 1-D
variable named like its dimension as that dimension's coordinate variable, and a table's plane
read and decoded as the image's.

The truth is xarray's decoding of the same store (written by xarray at test time, Zarr v2 and
v3): ``decode_times`` (datetime64 in the standard calendar, cftime dates in noleap) and
``mask_and_scale`` for the packed values.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.cli import main
from zarrview.viewing.cf.decoded import decoding_of
from zarrview.viewing.cf.table_plane import TablePlane
from zarrview.viewing.cf.view import read_cf

xr = pytest.importorskip("xarray")

TIMES = np.array(["2001-03-04T00", "2001-03-04T06", "2001-03-04T12", "2001-03-05T00"], dtype="datetime64[ns]")
LATS = np.array([50.0, 40.5, 30.0])


def _store(path: Path, zarr_format: int, noleap: bool = False) -> Path:
    rng = np.random.default_rng(3)
    precip = rng.uniform(0.0, 30.0, (len(TIMES), len(LATS), 2))
    precip[1, 2, 0] = np.nan
    times: Any = TIMES
    if noleap:
        times = xr.date_range("2004-02-28", periods=len(TIMES), freq="18h", calendar="noleap", use_cftime=True)
    ds = xr.Dataset(
        {"precip": (("time", "lat", "lon"), precip, {"long_name": "precipitation", "units": "mm/day"}),
         "station_temp": (("time",), np.array([1.5, np.nan, 3.25, 4.0]), {"units": "degC"})},
        coords={"time": times, "lat": ("lat", LATS, {"units": "degrees_north"}),
                "lon": ("lon", [0.0, 10.0], {"units": "degrees_east"})})
    enc: dict[str, Any] = {"precip": {"dtype": "int16", "scale_factor": 0.001, "add_offset": 10.0, "_FillValue": -32767},
                           "station_temp": {"dtype": "int16", "scale_factor": 0.01, "_FillValue": -32767}}
    if noleap:
        enc["time"] = {"units": "hours since 2004-01-01", "calendar": "noleap"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, zarr_format=zarr_format, mode="w", encoding=enc)
    return path


@pytest.fixture(scope="module", params=[2, 3], ids=lambda f: f"v{f}")
def store(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _store(tmp_path_factory.mktemp("cfdec") / "s.zarr", request.param)


def test_time_exports_as_its_dates(store: Path, tmp_path: Path, capsys: Any) -> None:
    want = xr.open_zarr(store)["time"].values
    assert main(["export", f"{store}::/time", "-o", str(tmp_path / "t.npy")]) == 0
    got = np.load(tmp_path / "t.npy")
    assert got.dtype.kind == "M"
    np.testing.assert_array_equal(got, want)
    assert main(["export", f"{store}::/time", "-o", str(tmp_path / "t.csv")]) == 0
    with open(tmp_path / "t.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["time", "value"]
    np.testing.assert_array_equal(np.array([r[1] for r in rows[1:]], dtype="datetime64[ns]"), want)
    assert main(["export", f"{store}::/time", "--raw", "-o", str(tmp_path / "raw.npy")]) == 0
    stored = xr.open_zarr(store, decode_times=False)["time"].values
    np.testing.assert_array_equal(np.load(tmp_path / "raw.npy"), stored)


def test_noleap_times_export_as_their_calendar_dates(tmp_path: Path) -> None:
    path = _store(tmp_path / "noleap.zarr", 3, noleap=True)
    want = [t.strftime("%Y-%m-%d %H:%M") for t in xr.open_zarr(path)["time"].values]
    assert main(["export", f"{path}::/time", "-o", str(tmp_path / "t.npy")]) == 0
    assert np.load(tmp_path / "t.npy").tolist() == want  # numpy has no noleap dates: their labels
    assert main(["export", f"{path}::/time", "-o", str(tmp_path / "t.csv")]) == 0
    with open(tmp_path / "t.csv", newline="") as f:
        assert [r[1] for r in list(csv.reader(f))[1:]] == want


def test_info_names_a_variable_its_dimensions_coordinate(store: Path, capsys: Any) -> None:
    assert main(["info", f"{store}::/time"]) == 0
    out = capsys.readouterr().out
    dates = [str(t).replace("T", " ")[:16] for t in xr.open_zarr(store)["time"].values[[0, -1]]]
    line = next(x for x in out.splitlines() if x.strip().startswith("Dimension time"))
    assert "no coordinate variable" not in line and "this array is its coordinate variable" in line
    assert f"{dates[0]} … {dates[1]}" in line and "calendar proleptic_gregorian" in line
    assert "times in hours since 2001-03-04" in out


def test_a_table_page_is_the_images_plane_decoded(store: Path) -> None:
    arr = zl.open(f"{store}::/precip")
    assert isinstance(arr, zl.Array)
    plane = TablePlane(arr, 2, 1, {0: 1}, cf=read_cf(arr))  # lon as rows, lat as columns, at time 1
    page = plane.page_values(arr.read(plane.selection(0, 2)))
    want = xr.open_zarr(store)["precip"].isel(time=1).values.T
    np.testing.assert_array_equal(page, want)
    assert [plane.row_label(i) for i in range(2)] == ["0 °E", "10 °E"]
    assert plane.column_label(0) == "50 °N" and "precipitation (mm/day)" in plane.heading
    stored = TablePlane(arr, 2, 1, {0: 1}, cf=plane.cf, raw=True)
    raw = xr.open_zarr(store, mask_and_scale=False)["precip"].isel(time=1).values.T
    np.testing.assert_array_equal(stored.page_values(arr.read(stored.selection(0, 2))), raw)


def test_decoded_times_and_values_are_xarrays(store: Path) -> None:
    ds = xr.open_zarr(store)
    time = zl.open(f"{store}::/time")
    assert isinstance(time, zl.Array)
    np.testing.assert_array_equal(decoding_of(time).values(time.read()), ds["time"].values)
    positions, fmt = decoding_of(time).plotted(time.read())
    assert fmt is not None and [fmt(p) for p in positions] == [str(t)[:16].replace("T", " ") for t in ds["time"].values]
    temp = zl.open(f"{store}::/station_temp")
    assert isinstance(temp, zl.Array)
    np.testing.assert_array_equal(decoding_of(temp).values(temp.read()), ds["station_temp"].values)
