"""CF time axes against xarray: time coordinates written at test time by xarray in every calendar
of the conventions, to Zarr v2 and v3, read back raw with zarrlib; ``time_axis``'s labels, nearest
values and plot positions must agree with what xarray (through cftime or numpy) decodes from the
same store, and with numpy for datetime64 stored natively (zarr-python's stores)."""

from __future__ import annotations

import datetime
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
cftime = pytest.importorskip("cftime")
zarr = pytest.importorskip("zarr")

from zarrview import zarrlib  # noqa: E402
from zarrview.viewing.cf.time import MISSING, CFTimeError, TimeAxis, time_axis  # noqa: E402

PEER = Path(__file__).resolve().parents[1] / "data" / "zarrs" / "zarr_python_compat"
CALENDARS = ("standard", "gregorian", "proleptic_gregorian", "julian", "noleap", "365_day",
             "all_leap", "366_day", "360_day")
NORMAL = {"gregorian": "standard", "365_day": "noleap", "366_day": "all_leap"}
#: (zarr format, consolidated): both formats, each way of listing
STORES = ((2, True), (3, False))
#: name -> (first date, count, step, units, stored dtype) of the time coordinates of each store
COORDS = {
    "day": ("2000-02-26", 6, "D", "days since 1999-12-01", "int32"),           # over Feb 28-30
    "hour": ("1999-12-30 12:00", 9, "6h", "hours since 2000-01-01 00:00:00", "int64"),  # < 0 too
    "second": ("2000-03-01 00:00:30", 4, "90s", "minutes since 2000-02-28T12:00", "float64"),
    "reform": ("1582-10-02", 5, "D", "days since 1582-10-01", "int16"),  # standard: Julian, then Gregorian
}


def _write(path: Path, ds: Any, zarr_format: int, consolidated: bool) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # xarray's notes on consolidation and pre-1582 dates
        ds.to_zarr(path, zarr_format=zarr_format, consolidated=consolidated)
    return path


@cache
def _store(root: Path, calendar: str, zarr_format: int, consolidated: bool) -> Path:
    """One store a calendar and format, holding each time coordinate of COORDS on its own dim."""
    coords = {}
    for name, (start, count, step, _, _) in COORDS.items():
        times = xr.date_range(start, periods=count, freq=step, calendar=calendar, use_cftime=True)
        coords[name] = (name, times)
    ds = xr.Dataset(coords=coords)
    for name, (_, _, _, units, dtype) in COORDS.items():
        ds[name].encoding.update(units=units, calendar=calendar, dtype=dtype)
    return _write(root / f"{calendar}-v{zarr_format}.zarr", ds, zarr_format, consolidated)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cftime")


def _raw(path: Path, name: str) -> tuple[np.ndarray, dict[str, Any]]:
    """Values and attributes as zarrlib reads them; a v2 array's fill value is its ``_FillValue``
    (where xarray finds it)."""
    array = zarrlib.open(str(path))[name]
    attrs = dict(array.attrs)
    if array.zarr_format == 2 and array.fill_value is not None:
        attrs.setdefault("_FillValue", array.fill_value)
    return array.read(), attrs


def _decoded(path: Path, name: str, consolidated: bool | None = None) -> list[Any]:
    """xarray's reading of the same store: datetimes (cftime or datetime.datetime), None for NaT."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = xr.open_zarr(path, consolidated=consolidated)[name].values
    return _dates(values)


def _dates(values: np.ndarray) -> list[Any]:
    if values.dtype.kind == "M":
        return [None if np.isnat(v) else v.astype("datetime64[us]").item() for v in values]
    return list(values)


def _format(dates: list[Any]) -> list[str]:
    """The labels the dates should have: one strftime format for all, the finest any date needs."""
    present = [d for d in dates if d is not None]
    cut = 0
    if any(d.microsecond for d in present):
        fmt, cut = "%Y-%m-%d %H:%M:%S.%f", (3 if all(d.microsecond % 1000 == 0 for d in present) else 0)
    elif any(d.second for d in present):
        fmt = "%Y-%m-%d %H:%M:%S"
    elif any(d.hour or d.minute for d in present):
        fmt = "%Y-%m-%d %H:%M"
    else:
        fmt = "%Y-%m-%d"
    return [MISSING if d is None else d.strftime(fmt)[:-cut or None] for d in dates]


def _days(delta: Any) -> float:
    return delta / datetime.timedelta(days=1)


def _check_against(axis: TimeAxis, dates: list[Any], epoch: Any) -> None:
    """Labels, nearest and numeric of ``axis`` against the reference ``dates`` (None: missing)
    and the reference instant ``epoch`` of its units."""
    assert len(axis) == len(dates)
    assert axis.labels() == _format(dates)
    assert [axis.label(i) for i in range(len(dates))] == axis.labels()
    numeric = axis.numeric()
    present = [i for i, d in enumerate(dates) if d is not None]
    assert np.isnan(numeric[[i for i, d in enumerate(dates) if d is None]]).all()
    expected = [_days(dates[i] - epoch) for i in present]
    np.testing.assert_allclose(numeric[present], expected, rtol=0, atol=1e-9)
    for i in present:  # every label finds its value (the first of equal ones)
        assert axis.nearest(axis.label(i)) == next(j for j in present if dates[j] == dates[i])
    for a, b in zip(present, present[1:]):  # points a quarter and three quarters of the way between
        for part, fmt in ((1 / 4, "%Y-%m-%dT%H:%M:%S"), (3 / 4, "%Y-%m-%d %H:%M:%S")):
            point = (dates[a] + (dates[b] - dates[a]) * part).replace(microsecond=0)
            distances = [abs(dates[k] - point) for k in present]
            assert axis.nearest(point.strftime(fmt)) == present[distances.index(min(distances))]
    for i in present:  # format() of a value's position is its label
        assert axis.format(numeric[i]) == axis.label(i)


def _epoch(units: str, calendar: str, like: Any = None) -> Any:
    """The reference instant of ``units`` by cftime, as a datetime.datetime where ``like`` is one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = cftime.num2date(0, units, calendar, only_use_cftime_datetimes=True)
    if isinstance(like, datetime.datetime):
        return datetime.datetime(e.year, e.month, e.day, e.hour, e.minute, e.second, e.microsecond)
    return e


@pytest.mark.parametrize(("zarr_format", "consolidated"), STORES)
@pytest.mark.parametrize("calendar", CALENDARS)
def test_every_calendar_agrees_with_xarray(root: Path, calendar: str, zarr_format: int,
                                           consolidated: bool) -> None:
    path = _store(root, calendar, zarr_format, consolidated)
    for name in COORDS:
        values, attrs = _raw(path, name)
        units = attrs["units"]  # xarray's cleaned-up spelling of COORDS' units
        axis, notes = time_axis(values, attrs)
        assert axis is not None and notes == [], (name, notes)
        assert (axis.calendar, axis.units) == (NORMAL.get(calendar, calendar), units)
        dates = _decoded(path, name, consolidated)
        _check_against(axis, dates, _epoch(units, calendar, like=dates[0]))


def test_calendars_differ_where_the_conventions_say(root: Path) -> None:
    """The same numbers name other dates in other calendars (CF 4.4.3), and a date one calendar
    has is an error in another, naming the text."""
    axes = {cal: time_axis(*_raw(_store(root, cal, 3, False), "day"))[0] for cal in CALENDARS}
    days = {cal: axis.labels()[3] for cal, axis in axes.items() if axis is not None}
    assert days["standard"] == days["all_leap"] == "2000-02-29"
    assert days["noleap"] == "2000-03-01" and days["360_day"] == "2000-02-29"
    for cal, text, fine in (("standard", "2001-02-30", False), ("360_day", "2001-02-30", True),
                            ("noleap", "2000-02-29", False), ("all_leap", "2001-02-29", True),
                            ("standard", "1582-10-10", False), ("julian", "1582-10-10", True)):
        axis = axes[cal]
        assert axis is not None
        if fine:
            assert 0 <= axis.nearest(text) < len(axis)
        else:
            with pytest.raises(CFTimeError, match=text):
                axis.nearest(text)
    for text in ("banana", "2001-13-01", "2001/03/04", ""):
        with pytest.raises(CFTimeError):
            axes["standard"].nearest(text)  # type: ignore[union-attr]


@pytest.mark.parametrize("zarr_format", (2, 3))
def test_missing_times_are_dashes_and_never_nearest(tmp_path: Path, zarr_format: int) -> None:
    """NaT written by xarray three ways (int64's minimum, NaN in floats, an explicit _FillValue)
    is labelled "—", has no position and is never the nearest value."""
    times = np.array(["2000-01-01T00", "NaT", "2000-01-01T12", "2000-01-02T00"], dtype="datetime64[ns]")
    ds = xr.Dataset(coords={"a": ("a", times), "b": ("b", times), "c": ("c", times)})
    ds.b.encoding.update(units="hours since 2000-01-01", dtype="float64")
    ds.c.encoding.update(units="hours since 2000-01-01", dtype="int32", _FillValue=-999)
    path = _write(tmp_path / "nat.zarr", ds, zarr_format, False)
    for name in "abc":
        values, attrs = _raw(path, name)
        axis, notes = time_axis(values, attrs)
        assert axis is not None and notes == []
        dates = _decoded(path, name, False)
        assert dates[1] is None
        _check_against(axis, dates, _epoch(attrs["units"], attrs["calendar"], like=dates[0]))
        assert axis.nearest("2000-01-01 06:00") == 0 and axis.nearest("2000-01-01 07:00") == 2
    # the stored fill (-999 hours) is a date too: it must not be found
    assert time_axis(*_raw(path, "c"))[0].nearest("1999-12-20 09:00") == 0  # type: ignore[union-attr]


@pytest.mark.parametrize("unit", ("Y", "W", "D", "h", "m", "s", "ms", "10ms", "us", "10us", "ns"))
def test_native_datetime64_agrees_with_zarr_python(unit: str) -> None:
    """zarr-python's v3 ``numpy.datetime64`` arrays (NaT as fill) against zarr-python's reading."""
    path = PEER / f"datetime64[{unit}].zarr"
    array = zarrlib.open(str(path))
    axis, notes = time_axis(array.read(), dict(array.attrs))
    assert axis is not None and notes == []
    assert axis.calendar == "proleptic_gregorian" and axis.units == f"datetime64[{unit}]"
    _check_against(axis, _dates(zarr.open_array(str(path), mode="r")[:]), datetime.datetime(1970, 1, 1))


@pytest.mark.parametrize("zarr_format", (2, 3))
def test_native_datetime64_agrees_with_xarray(tmp_path: Path, zarr_format: int) -> None:
    """datetime64 stored as such (v3 ``numpy.datetime64``, v2 ``<M8[ms]``) by zarr-python."""
    group = zarr.open_group(str(tmp_path / "native.zarr"), mode="w", zarr_format=zarr_format)
    extra = {"dimension_names": ["time"]} if zarr_format == 3 else {"attributes": {"_ARRAY_DIMENSIONS": ["time"]}}
    array = group.create_array("time", shape=(4,), dtype="datetime64[ms]", **extra)
    array[:] = np.array(["2001-03-04T06:00", "NaT", "1900-01-01T00:00:30.5", "2262-05-01"], dtype="datetime64[ms]")
    axis, notes = time_axis(*_raw(tmp_path / "native.zarr", "time"))
    assert axis is not None and notes == []
    _check_against(axis, _decoded(tmp_path / "native.zarr", "time", False), datetime.datetime(1970, 1, 1))
    assert axis.labels()[0] == "2001-03-04 06:00:00.000"


def test_calendar_none_counts_durations(tmp_path: Path) -> None:
    """CF 4.4.5: no annual cycle, so the values are durations since the start; xarray refuses."""
    ds = xr.Dataset(coords={"time": ("time", [0.0, 1.0, 2.5, 10.0],
                                     {"units": "days since 0001-07-15", "calendar": "NONE"})})
    path = _write(tmp_path / "none.zarr", ds, 3, False)
    with pytest.raises(ValueError):
        xr.open_zarr(path, consolidated=False)
    raw = xr.open_zarr(path, consolidated=False, decode_times=False).time.values
    axis, notes = time_axis(*_raw(path, "time"))
    assert axis is not None and notes == [] and axis.calendar == "none"
    assert [float(label.split()[0]) for label in axis.labels()] == list(raw)
    assert {label.split()[1] for label in axis.labels()} == {"days"}
    np.testing.assert_array_equal(axis.numeric(), raw)
    assert [axis.nearest(label) for label in axis.labels()] == [0, 1, 2, 3]
    assert axis.nearest("2") == 2 and axis.nearest("36 hours") == 1 and axis.nearest("7") == 3
    assert axis.format(4.0) == "4 days"
    with pytest.raises(CFTimeError, match="2001-03-04"):
        axis.nearest("2001-03-04")


def test_months_and_years(tmp_path: Path) -> None:
    """360_day months are its 30 days (as xarray decodes them); elsewhere udunits' fixed month
    (year / 12, a year of 365.242198781 days), with a note, where xarray refuses."""
    ds = xr.Dataset(coords={"m360": ("m360", [0, 1, 13], {"units": "months since 2000-01-01", "calendar": "360_day"}),
                            "m": ("m", [0, 6, 12], {"units": "months since 2000-01-01"}),
                            "y": ("y", [0.0, 1.0], {"units": "years since 2000-01-01", "calendar": "noleap"})})
    path = _write(tmp_path / "months.zarr", ds, 3, False)
    axis, notes = time_axis(*_raw(path, "m360"))
    assert axis is not None and notes == []
    dates = _dates(xr.decode_cf(xr.open_zarr(path, consolidated=False, decode_times=False)[["m360"]]).m360.values)
    _check_against(axis, dates, _epoch("days since 2000-01-01", "360_day"))
    for name, calendar in (("m", "standard"), ("y", "noleap")):
        with pytest.raises(ValueError):
            xr.decode_cf(xr.open_zarr(path, consolidated=False, decode_times=False)[[name]])
        axis, notes = time_axis(*_raw(path, name))
        assert axis is not None and len(notes) == 1 and "udunits" in notes[0] and "CF 4.4.2" in notes[0]
        year = cftime.num2date(365.242198781, "days since 2000-01-01", calendar)
        assert axis.labels()[-1] == _format([_epoch("days since 2000-01-01", calendar), year])[1]
        assert axis.numeric()[-1] == pytest.approx(365.242198781, abs=1e-9)


def test_time_zones_and_short_reference_dates(tmp_path: Path) -> None:
    """A reference date with an offset, without leading zeros or with ``T`` means what xarray reads."""
    units = ("hours since 2000-01-01 06:00:00+05:30", "hours since 2000-1-1 0:0:0", "seconds since 1970-01-01T00:00:00Z",
             "days since 2000-01-01 00:00:00 UTC")
    ds = xr.Dataset(coords={f"t{i}": (f"t{i}", [0, 30, 61], {"units": u}) for i, u in enumerate(units)})
    path = _write(tmp_path / "tz.zarr", ds, 2, True)
    for i, u in enumerate(units):
        axis, notes = time_axis(*_raw(path, f"t{i}"))
        assert axis is not None and notes == [] and axis.units == u
        dates = _decoded(path, f"t{i}", True)
        assert axis.labels() == _format(dates)
        np.testing.assert_allclose(np.diff(axis.numeric()), [_days(b - a) for a, b in zip(dates, dates[1:])])


@pytest.mark.parametrize(("attrs", "says"), [
    ({"units": "days since banana"}, "banana"),
    ({"units": "furlongs since 2000-01-01"}, "furlongs"),
    ({"units": "days since 2001-02-30"}, "2001-02-30"),
    ({"units": "days since 2000-01-01", "calendar": "martian"}, "martian"),
    ({"units": "days since 2000-01-01", "calendar": 42}, "42"),
    ({"units": "days since 2000-01-01", "month_lengths": [30] * 12}, "month_lengths"),
])
def test_bad_attributes_give_a_note_and_no_axis(tmp_path: Path, attrs: dict[str, Any], says: str) -> None:
    ds = xr.Dataset(coords={"time": ("time", np.array([0, 1, 2], dtype=np.int32), attrs)})
    path = _write(tmp_path / "bad.zarr", ds, 3, False)
    if not isinstance(attrs.get("calendar", ""), int) and "month_lengths" not in attrs:
        with pytest.raises(ValueError):  # xarray cannot decode them either
            xr.open_zarr(path, consolidated=False)
    axis, notes = time_axis(*_raw(path, "time"))
    assert axis is None and len(notes) == 1 and says in notes[0]


@pytest.mark.parametrize("attrs", [{}, {"units": "hPa"}, {"units": "days"}, {"units": 5}])
def test_values_that_are_not_times(attrs: dict[str, Any]) -> None:
    assert time_axis(np.arange(3), attrs) == (None, [])


def test_notes_for_values_and_fills_it_cannot_use() -> None:
    axis, notes = time_axis(np.array(["a", "b"]), {"units": "days since 2000-01-01"})
    assert axis is None and "not numbers" in notes[0]
    axis, notes = time_axis(np.array([0, 2**62]), {"units": "days since 2000-01-01", "_FillValue": "x"})
    assert axis is not None and axis.labels() == ["2000-01-01", MISSING]
    assert any("_FillValue 'x'" in note for note in notes) and any("1 of 2 values" in note for note in notes)
    axis, notes = time_axis(np.array([0, 1]), {"units": "days since 2000-01-01", "calendar": "UTC"})
    assert axis is not None and axis.calendar == "utc" and "leap seconds" in notes[0]
    assert axis.labels() == ["2000-01-01", "2000-01-02"]


def test_float32_times_are_labelled_without_the_floats_error(tmp_path: Path) -> None:
    """Hourly times stored as float32 days are off by seconds once decoded (xarray shows the
    error); labels are on the hour, each within the float's precision of xarray's value."""
    times = xr.date_range("1999-12-30", periods=12, freq="5h", use_cftime=False)
    ds = xr.Dataset(coords={"time": ("time", times)})
    ds.time.encoding.update(units="days since 1990-01-01", dtype="float32")
    path = _write(tmp_path / "f32.zarr", ds, 3, False)
    axis, notes = time_axis(*_raw(path, "time"))
    assert axis is not None and notes == []
    decoded = xr.open_zarr(path, consolidated=False).time.values
    assert _format(_dates(decoded)) != axis.labels()  # the error is there to be taken off
    to_the_minute = (decoded + np.timedelta64(30, "s")).astype("datetime64[m]")
    assert axis.labels() == [str(t).replace("T", " ") for t in to_the_minute]
    assert axis.labels() == [str(t).replace("T", " ")[:16] for t in times.values]
    assert np.abs(axis.numeric() * 86400 - (decoded - np.datetime64("1990-01-01")) / np.timedelta64(1, "s")).max() < 30


@pytest.mark.parametrize("calendar", ("standard", "noleap", "360_day"))
def test_format_between_values_is_finer(root: Path, calendar: str) -> None:
    """Tick labels between daily values name the hour (cftime's reading of the same position)."""
    values, attrs = _raw(_store(root, calendar, 3, False), "day")
    axis, _ = time_axis(values, attrs)
    assert axis is not None and axis.label(0).count(":") == 0
    for extra in (0.25, 1.5, 2 + 17 / 24):
        x = float(values[0]) + extra  # in days, as the units are
        at = cftime.num2date(x, attrs["units"], calendar)
        assert axis.format(axis.numeric()[0] + extra) == at.strftime("%Y-%m-%d %H:%M")
