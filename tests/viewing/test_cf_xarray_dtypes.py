"""The dtypes of CF-decoded values are xarray's: packed integers and floats, with and without
``add_offset`` and fill values, and CF times, written by xarray to Zarr v2 and v3 and compared,
dtype and value, with what ``xr.open_zarr`` decodes from the same store.

xarray's packed dtype depends on the type of ``scale_factor``/``add_offset`` as read (JSON
numbers are doubles) and on whether a fill value is present even where it masks nothing (a
float array's NaN); its times are datetime64[ns] wherever they fit nanoseconds.
"""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.viewing.cf.decoded import decoding_of
from zarrview.viewing.cf.values import value_coding

xr = pytest.importorskip("xarray")

SHAPE = (4, 6)
STORED = ("int8", "int16", "int32", "uint16", "float32", "float16")
SCALES = ("float32", "float64")
OFFSETS = (False, True)
#: "none": no fill value; "value": a fill value in range; "default": what xarray writes unasked
#: (NaN for a float array, nothing for an integer one)
FILLS = ("none", "value", "default")
PACKED = [f"{stored}_{scale}_{'offset' if offset else 'scale'}_{fill}"
          for stored, scale, offset, fill in itertools.product(STORED, SCALES, OFFSETS, FILLS)
          if not (fill == "default" and stored[0] != "f")]  # an integer array's default is no fill


def _packed_dataset() -> tuple[Any, dict[str, dict[str, Any]]]:
    """One variable a combination of PACKED, and the encoding xarray writes it with. The values
    are whole multiples of the scale (so each packs exactly), with missing ones where a fill can
    mark them."""
    rng = np.random.default_rng(5)
    variables: dict[str, Any] = {}
    encoding: dict[str, dict[str, Any]] = {}
    for name in PACKED:
        stored, scale_type, form, fill = name.split("_")
        scale = np.dtype(scale_type).type(0.5)
        offset = np.dtype(scale_type).type(10.0) if form == "offset" else None
        packed = rng.integers(1, 100, SHAPE).astype(np.float64)
        values = packed * float(scale) + (0.0 if offset is None else float(offset))
        if fill != "none":
            values.flat[::5] = np.nan
        enc: dict[str, Any] = {"dtype": stored, "scale_factor": scale}
        if offset is not None:
            enc["add_offset"] = offset
        if fill == "value":
            enc["_FillValue"] = np.dtype(stored).type(0)
        elif fill == "none":
            enc["_FillValue"] = None
        variables[name] = (("y", "x"), values)
        encoding[name] = enc
    return xr.Dataset(variables), encoding


def _write(ds: Any, path: Path, zarr_format: int, encoding: dict[str, dict[str, Any]] | None = None) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # xarray's notes on consolidated v3 metadata and cftime dates
        ds.to_zarr(path, zarr_format=zarr_format, mode="w", encoding=encoding or {})
    return path


def _xarray(path: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_zarr(path).load()


@pytest.fixture(scope="module", params=[2, 3], ids=lambda f: f"v{f}")
def packed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[zl.Group, Any]:
    ds, encoding = _packed_dataset()
    path = _write(ds, tmp_path_factory.mktemp("packed") / "p.zarr", request.param, encoding)
    group = zl.open(str(path))
    assert isinstance(group, zl.Group)
    return group, _xarray(path)


@pytest.mark.parametrize("name", PACKED)
def test_packed_values_decode_to_xarrays_dtype(packed: tuple[zl.Group, Any], name: str) -> None:
    group, decoded = packed
    arr = group[name]
    assert isinstance(arr, zl.Array)
    want = decoded[name].values
    coding = value_coding(arr)
    got = coding.decode(arr[...])
    assert got.dtype == want.dtype, f"{name}: {got.dtype}, xarray {want.dtype}"
    np.testing.assert_array_equal(got, want)
    assert coding.decoded_dtype == want.dtype and coding.notes == ()
    assert decoding_of(arr).values(arr[...]).dtype == want.dtype


#: name -> (values, units, calendar, stored dtype, fill value): CF times xarray decodes to datetime64
TIMES: dict[str, tuple[list[float], str, str, str, Any]] = {
    "hours": ([0, 6, 12, 18.5], "hours since 2000-01-01", "standard", "float64", None),
    "days": ([-3, 0, 31, 366], "days since 1970-01-01", "standard", "int32", None),
    "seconds": ([0, 1, -1, 86_400 * 365 * 200], "seconds since 2001-03-04 06:00:00", "proleptic_gregorian", "int64",
                -1),
    "minutes": ([0, 90, 1440, 2880], "minutes since 1999-12-31T12:00", "gregorian", "float32", None),
    "edge": ([0, 1, 2, 3], "days since 1677-09-22", "standard", "int16", None),
}


@pytest.fixture(scope="module", params=[2, 3], ids=lambda f: f"v{f}")
def times(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    ds = xr.Dataset()
    encoding: dict[str, dict[str, Any]] = {}
    for name, (values, units, calendar, dtype, fill) in TIMES.items():
        ds[name] = xr.DataArray(np.asarray(values, dtype=dtype), dims=f"d_{name}",
                                attrs={"units": units, "calendar": calendar})
        encoding[name] = {"_FillValue": fill}
    path = _write(ds, tmp_path_factory.mktemp("times") / "t.zarr", request.param, encoding)
    return path, _xarray(path)


@pytest.mark.parametrize("name", list(TIMES))
def test_times_decode_to_xarrays_datetime64(times: tuple[Path, Any], name: str) -> None:
    path, decoded = times
    want = decoded[name].values
    assert want.dtype.kind == "M"
    arr = zl.open(f"{path}::/{name}")
    assert isinstance(arr, zl.Array)
    got = decoding_of(arr).values(arr.read())
    assert got.dtype == want.dtype, f"{name}: {got.dtype}, xarray {want.dtype}"
    np.testing.assert_array_equal(got, want)


def test_times_beyond_nanoseconds_are_xarrays_dates(tmp_path: Path) -> None:
    """Where the times do not fit datetime64[ns], xarray gives cftime dates: the datetime64 given
    instead names the same dates."""
    ds = xr.Dataset({"t": xr.DataArray(np.array([0, 1, 400], dtype="int32"), dims="d",
                                       attrs={"units": "days since 2300-01-01", "calendar": "standard"})})
    path = _write(ds, tmp_path / "late.zarr", 3)
    want = _xarray(path)["t"].values
    assert want.dtype == object
    arr = zl.open(f"{path}::/t")
    assert isinstance(arr, zl.Array)
    got = decoding_of(arr).values(arr.read())
    assert got.dtype.kind == "M"
    assert np.datetime_as_string(got, unit="s").tolist() == [d.isoformat() for d in want]
