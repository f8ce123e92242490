"""Which plane of B matches A's (viewing/compare/linking.py), held to what xarray says of the same
stores: ``sel(time=..., method="nearest")`` for the index, ``sel(lat=slice(lo, hi))`` for the
common window, ``get_indexer(..., method="nearest")`` for B resampled onto A's grid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cftime
import numpy as np
import pytest
import xarray as xr
import zarr
from compare_datasets import calendar_360, daily_a, gridded, half_degree_b, write

from zarrview import zarrlib
from zarrview.viewing.cf.coords import make_axis
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.compare.difference import plane_difference, plane_job, window_difference
from zarrview.viewing.compare.errors import GridMismatchError, LinkError
from zarrview.viewing.compare.linking import Side, match_dims, match_plane, nearest_index, nearest_indices
from zarrview.viewing.compare.units import factor
from zarrview.viewing.image.state import ViewState
from zarrview.zarrlib import CancelToken, ChunkCache
from zarrview.scheduling import Context


def _side(path: Path, name: str = "t") -> Side:
    arr = zarrlib.open(str(path))[name]
    return Side(arr, read_cf(arr))


def _state(side: Side, indices: tuple[int, ...], y: int, x: int) -> ViewState:
    return ViewState(side.array, y, x, indices, cf=side.cf)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("link")
    return daily_a(root / "a.zarr"), half_degree_b(root / "b.zarr")


def _window_truth(a_values: np.ndarray, b_values: np.ndarray) -> tuple[slice, slice]:
    """A's and B's index ranges of the overlap of their coordinates, as xarray's ``sel`` slices them."""
    lo = max(a_values.min(), b_values.min())
    hi = min(a_values.max(), b_values.max())
    out = []
    for values in (a_values, b_values):
        da = xr.DataArray(np.arange(len(values)), coords={"c": values}, dims="c")
        picked = da.sel(c=slice(hi, lo) if values[0] > values[-1] else slice(lo, hi)).values
        out.append(slice(int(picked.min()), int(picked.max()) + 1))
    return out[0], out[1]


def test_daily_against_half_daily_on_another_grid(pair: tuple[Path, Path]) -> None:
    a, b = _side(pair[0]), _side(pair[1])
    da, db = xr.open_zarr(pair[0], consolidated=False), xr.open_zarr(pair[1], consolidated=False)
    first, last = db.time.values[0], db.time.values[-1]
    half = (db.time.values[1] - db.time.values[0]) / 2
    for i, when in enumerate(da.time.values):
        match = match_plane(_state(a, (i, 0, 0), 1, 2), b)
        (link,) = match.dims
        assert (match.y_dim, match.x_dim, link.b_dim) == (1, 2, 0)
        if first - half <= when <= last + half:
            truth = int(np.flatnonzero(db.time.values == db.sel(time=when, method="nearest").time.values)[0])
            assert (link.status, link.index) == ("matched", truth)
            assert match.indices == (truth, 0, 0) and match.plane == {0: truth}
            assert match.matched
        else:  # 2001-01-01 and -02 lie before B's first time: said, not clamped
            assert link.status == "not matched" and not match.matched
            assert "outside B's time" in link.note and "2001-01-03 00:00" in link.note
            assert "not matched" in match.text
    assert not match.same_grid
    for axis, name in ((match.rows, "lat"), (match.columns, "lon")):
        window = axis.window
        assert window is not None
        a_truth, b_truth = _window_truth(da[name].values, db[name].values)
        assert window.a_slice == a_truth and (window.b_range[0], window.b_range[1]) == (b_truth.start, b_truth.stop)
        inside = da[name].values[window.a_slice]
        np.testing.assert_array_equal(window.b_of_a, db.indexes[name].get_indexer(inside, method="nearest"))
    assert "different grid" in match.text


def test_resampled_difference_is_xarrays_nearest(pair: tuple[Path, Path]) -> None:
    a, b = _side(pair[0]), _side(pair[1])
    da, db = xr.open_zarr(pair[0], consolidated=False), xr.open_zarr(pair[1], consolidated=False)
    state = _state(a, (4, 0, 0), 1, 2)
    match = match_plane(state, b)
    rows, cols = match.windows
    assert rows is not None and cols is not None
    a_plane = a.array.read((4, slice(None), slice(None)))
    b_plane = b.array.read((match.indices[0], slice(None), slice(None)))
    lats, lons = da.lat.values[rows.a_slice], da.lon.values[cols.a_slice]
    truth_b = db.t.isel(time=match.indices[0]).sel(lat=lats, lon=lons, method="nearest").values
    truth = da.t.isel(time=4).values[rows.a_slice, cols.a_slice] - truth_b
    whole = window_difference(a_plane, b_plane, match)
    np.testing.assert_array_equal(whole.values, truth)
    assert (whole.rows, whole.columns) == (rows.a_range, cols.a_range)
    at = np.unravel_index(np.nanargmax(np.abs(truth)), truth.shape)
    assert whole.stats.where == (at[0] + rows.a_range[0], at[1] + cols.a_range[0])
    # B read only where the resampling takes it gives the same
    part = b.array.read(match.selection(window=True))
    cut = window_difference(a_plane, part, match, b_origin=(rows.b_span[0], cols.b_span[0]))
    np.testing.assert_array_equal(cut.values, truth)
    # and the job reads both planes itself
    b_state = _state(b, match.indices, 1, 2)
    job = plane_job(state, b_state, match, "a/b")
    ratio = job.work(Context(CancelToken(), ChunkCache(1 << 20)))
    np.testing.assert_allclose(ratio.values, da.t.isel(time=4).values[rows.a_slice, cols.a_slice].astype(np.float64)
                               / truth_b.astype(np.float64), rtol=1e-15)
    assert ratio.ratio and ratio.stats.statistic == "max |A/B−1|"


def test_descending_latitudes_window(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    path = daily_a(tmp_path / "down.zarr", descending=True)
    a, b = _side(path), _side(pair[1])
    da, db = xr.open_zarr(path, consolidated=False), xr.open_zarr(pair[1], consolidated=False)
    match = match_plane(_state(a, (5, 0, 0), 1, 2), b)
    rows = match.rows.window
    assert rows is not None
    a_truth, b_truth = _window_truth(da.lat.values, db.lat.values)
    assert (rows.a_slice, rows.b_range) == (a_truth, (b_truth.start, b_truth.stop))
    np.testing.assert_array_equal(rows.b_of_a, db.indexes["lat"].get_indexer(da.lat.values[rows.a_slice], method="nearest"))


def test_same_grid(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    from compare_datasets import A_LATS, A_LONS, A_TIMES

    other = write(gridded(A_TIMES[3:], A_LATS, A_LONS, 9), tmp_path / "same.zarr",
                  time={"units": "hours since 1999-01-01"})
    a, b = _side(pair[0]), _side(other)
    match = match_plane(_state(a, (5, 0, 0), 1, 2), b)
    assert match.same_grid and match.indices == (2, 0, 0)
    assert "same grid" in match.text
    a_plane = a.array.read((5, slice(None), slice(None)))
    b_plane = b.array.read((2, slice(None), slice(None)))
    same = window_difference(a_plane, b_plane, match)
    np.testing.assert_array_equal(same.values, plane_difference(a_plane, b_plane).values)


def test_360_day_calendar(tmp_path: Path) -> None:
    a_path = calendar_360(tmp_path / "a.zarr", "2001-01-01", 30, "D", "days since 2001-01-01", 3)
    b_path = calendar_360(tmp_path / "b.zarr", "2001-01-20", 60, "6h", "hours since 2000-06-01", 4)
    a, b = _side(a_path), _side(b_path)
    da, db = xr.open_zarr(a_path, consolidated=False), xr.open_zarr(b_path, consolidated=False)
    b_times = db.indexes["time"]
    first = b_times[0] - (b_times[1] - b_times[0]) / 2
    for i, when in enumerate(da.indexes["time"]):
        (link,) = match_plane(_state(a, (i, 0, 0), 1, 2), b).dims
        if when >= first:
            truth = int(b_times.get_indexer([when], method="nearest")[0])
            assert (link.status, link.index) == ("matched", truth), when
        else:
            assert link.status == "not matched" and "outside" in link.note
    # 2001-01-30 of 360_day against a standard calendar's days: no instant of one is a day of the other
    standard = write(gridded(xr.date_range("2001-01-01", periods=40, freq="D"), np.arange(0.0, 11.0),
                             np.arange(0.0, 21.0), 5), tmp_path / "std.zarr", time={"units": "days since 2001-01-01"})
    (link,) = match_plane(_state(a, (29, 0, 0), 1, 2), _side(standard)).dims
    assert link.status == "not matched" and "360_day" in link.note and "gregorian" in link.note


def test_julian_against_standard_as_instants(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    """Julian 2000-12-21 is Gregorian 2001-01-03: the same instant, matched across calendars."""
    times = xr.date_range("2000-12-19", periods=8, freq="D", calendar="julian", use_cftime=True)
    path = write(gridded(times, np.arange(0.0, 11.0), np.arange(0.0, 21.0), 6), tmp_path / "julian.zarr",
                 time={"units": "days since 2000-01-01", "calendar": "julian"})
    a, b = _side(path), _side(pair[1])
    db = xr.open_zarr(pair[1], consolidated=False)
    for i, when in enumerate(times):
        (link,) = match_plane(_state(a, (i, 0, 0), 1, 2), b).dims
        gregorian = np.datetime64(when.change_calendar("proleptic_gregorian").isoformat())
        if gregorian >= np.datetime64("2001-01-02T18"):
            truth = int(db.indexes["time"].get_indexer([gregorian], method="nearest")[0])
            assert (link.status, link.index) == ("matched", truth)
        else:
            assert link.status == "not matched"


def test_levels_in_other_units_and_units_that_do_not_convert(tmp_path: Path) -> None:
    lats, lons = np.arange(0.0, 4.0), np.arange(0.0, 5.0)
    times = xr.date_range("2001-01-01", periods=2, freq="D")
    a = _side(write(gridded(times, lats, lons, 1, level=(np.array([1000.0, 850.0, 500.0, 250.0]), "hPa")),
                    tmp_path / "hpa.zarr"))
    b = _side(write(gridded(times, lats, lons, 2, level=(np.array([100000.0, 92500.0, 85000.0, 50000.0]), "Pa")),
                    tmp_path / "pa.zarr"))
    m = _side(write(gridded(times, lats, lons, 3, level=(np.array([0.0, 10.0, 20.0]), "m")), tmp_path / "m.zarr"))
    for i, truth in enumerate((0, 2, 3)):
        match = match_plane(_state(a, (1, i, 0, 0), 2, 3), b)
        assert match.indices == (1, truth, 0, 0) and match.same_grid
    match = match_plane(_state(a, (1, 2, 0, 0), 2, 3), m)
    level = match.dims[1]
    assert level.status == "not matched" and "'hPa'" in level.note and "'m'" in level.note
    # 400 hPa is 40000 Pa: beyond B's 50000 Pa by more than half a step? B's steps are 7500 Pa and more
    # (median 7500): 400 hPa is 10000 Pa past B's last value, so it is not matched
    c = _side(write(gridded(times, lats, lons, 4, level=(np.array([1000.0, 400.0]), "hPa")), tmp_path / "c.zarr"))
    (_, level) = match_plane(_state(c, (0, 1, 0, 0), 2, 3), b).dims
    assert level.status == "not matched" and "outside" in level.note
    assert factor("hPa", "Pa") == 100.0 and factor("degrees_north", "degrees") == 1.0
    assert factor("degrees_north", "degrees_east") is None and factor("K", "m") is None


def test_arrays_without_coordinates_by_index(tmp_path: Path) -> None:
    root = zarr.open_group(tmp_path / "plain.zarr", mode="w")
    root.create_array("a", shape=(5, 8, 9), dtype="f4")
    root.create_array("b", shape=(3, 8, 9), dtype="f4")
    root.create_array("c", shape=(3, 6, 12), dtype="f4")
    g = zarrlib.open(str(tmp_path / "plain.zarr"))
    a, b, c = (Side(g[n], read_cf(g[n])) for n in "abc")
    match = match_dims(a, (1, 0, 0), 1, 2, b)
    assert match.indices == (1, 0, 0) and match.dims[0].status == "matched" and match.same_grid
    match = match_dims(a, (4, 0, 0), 1, 2, b)
    assert match.indices == (2, 0, 0) and match.dims[0].status == "clamped" and "outside" in match.dims[0].note
    match = match_dims(a, (0, 0, 0), 1, 2, c)
    assert not match.same_grid
    rows, cols = match.windows
    assert rows is not None and cols is not None
    assert (rows.a_range, rows.b_range, cols.a_range, cols.b_range) == ((0, 6), (0, 6), (0, 9), (0, 9))


def test_names_pair_dimensions_in_any_order(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    """B stored (lon, lat, time): its rows are still A's latitudes, its time the matching one."""
    db = xr.open_zarr(pair[1], consolidated=False).load()
    path = write(db.transpose("lon", "lat", "time"), tmp_path / "t.zarr")
    a, b = _side(pair[0]), _side(path)
    match = match_plane(_state(a, (6, 0, 0), 1, 2), b)
    assert (match.y_dim, match.x_dim) == (1, 0)
    assert match.indices[2] == int(np.flatnonzero(db.time.values == np.datetime64("2001-01-07"))[0])
    a_plane = a.array.read((6, slice(None), slice(None)))
    b_plane = b.array.read(match.selection()).T  # rows along lat
    truth = window_difference(a_plane, db.t.isel(time=match.indices[2]).values, match)
    np.testing.assert_array_equal(window_difference(a_plane, b_plane, match).values, truth.values)


def test_no_dimension_for_the_rows(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    root = zarr.open_group(tmp_path / "other.zarr", mode="w")
    root.create_array("t", shape=(4, 3), dtype="f4", dimension_names=("time", "depth"))
    with pytest.raises(LinkError, match="rows"):
        match_plane(_state(_side(pair[0]), (0, 0, 0), 1, 2), Side(zarrlib.open(str(tmp_path / "other.zarr"))["t"]))


def test_no_overlap_refuses_the_window(tmp_path: Path, pair: tuple[Path, Path]) -> None:
    from compare_datasets import A_TIMES

    far = write(gridded(A_TIMES, np.arange(40.0, 45.0), np.arange(0.0, 21.0), 7), tmp_path / "far.zarr")
    a, b = _side(pair[0]), _side(far)
    match = match_plane(_state(a, (0, 0, 0), 1, 2), b)
    assert match.rows.window is None and "do not overlap" in (match.rows.reason or "")
    assert "no common window" in match.text
    with pytest.raises(GridMismatchError, match="do not overlap"):
        window_difference(np.zeros((11, 21)), np.zeros((5, 21)), match)
    with pytest.raises(GridMismatchError):
        plane_job(_state(a, (0, 0, 0), 1, 2), _state(b, (0, 0, 0), 1, 2), match)


def _axis(values: np.ndarray, name: str, units: str | None = None, **attrs: Any) -> Any:
    return make_axis(0, name, values, {"units": units, **attrs} if units else attrs, [])


def test_longitudes_round_the_circle() -> None:
    a = _axis(np.arange(0.0, 360.0, 1.0), "lon", "degrees_east")
    b = _axis(np.arange(-180.0, 180.0, 2.5), "lon", "degrees_east")
    for i in (0, 3, 179, 181, 350, 359):
        distance = np.abs((b.values - a.values[i] + 180.0) % 360.0 - 180.0)
        j, _ = nearest_index(a, i, b)
        assert j == int(np.argmin(distance))


def test_nearest_indices_is_argmin() -> None:
    rng = np.random.default_rng(3)
    values = np.sort(rng.uniform(-50, 50, 40))
    targets = rng.uniform(-60, 60, 200)
    truth = np.argmin(np.abs(values[None, :] - targets[:, None]), axis=1)
    np.testing.assert_array_equal(nearest_indices(values, targets), truth)
    down = values[::-1].copy()
    truth = np.argmin(np.abs(down[None, :] - targets[:, None]), axis=1)
    np.testing.assert_array_equal(nearest_indices(down, targets), truth)


def test_times_of_one_calendar_in_other_units() -> None:
    """Hours since 2000-06-01 against days since 2001-01-01 (360_day): the same instants."""
    days = np.arange(0, 30)
    a = _axis(days, "time", "days since 2001-01-01", calendar="360_day")
    hours = cftime.date2num([cftime.datetime(2001, 1, 1, calendar="360_day") + (k * np.timedelta64(6, "h")).item()
                             for k in range(120)], "hours since 2000-06-01", calendar="360_day")
    b = _axis(np.asarray(hours), "time", "hours since 2000-06-01", calendar="360_day")
    for i in range(30):
        j, note = nearest_index(a, i, b)
        assert j == 4 * i
        assert a.label(i) in note
