"""Pairs of datasets for the comparison tests, written by xarray (CF coordinates, packed values)
and zarr-python (chunking, sharding, fill values), each the truth the comparison is held to."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

#: A: daily from 2001-01-01 on a 1° grid; B: 12-hourly from 2001-01-03 on a 0.5° grid, offset
#: by 0.2° so that no point of A is halfway between two of B's
A_TIMES = pd.date_range("2001-01-01", periods=10, freq="D")
B_TIMES = pd.date_range("2001-01-03", periods=16, freq="12h")
A_LATS = np.arange(0.0, 11.0)
A_LONS = np.arange(0.0, 21.0)
B_LATS = -2.2 + 0.5 * np.arange(21)
B_LONS = 5.1 + 0.5 * np.arange(51)


def write(ds: xr.Dataset, path: Path, **encoding: Any) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr's notes on v3 consolidated metadata
        ds.to_zarr(path, zarr_format=3, consolidated=False, mode="w", encoding=encoding or None)
    return path


def gridded(times: Any, lats: np.ndarray, lons: np.ndarray, seed: int, *, level: tuple[np.ndarray, str] | None = None
            ) -> xr.Dataset:
    """``t`` over (time[, level], lat, lon), random float32 with its coordinates."""
    rng = np.random.default_rng(seed)
    dims: tuple[str, ...] = ("time", "lat", "lon")
    coords: dict[str, Any] = {
        "time": ("time", times),
        "lat": ("lat", lats, {"units": "degrees_north", "standard_name": "latitude"}),
        "lon": ("lon", lons, {"units": "degrees_east", "standard_name": "longitude"})}
    if level is not None:
        dims = ("time", "level", "lat", "lon")
        coords["level"] = ("level", level[0], {"units": level[1]})
    shape = tuple(len(coords[d][1]) for d in dims)
    data = rng.normal(280.0, 10.0, shape).astype(np.float32)
    return xr.Dataset({"t": (dims, data, {"units": "K"})}, coords=coords)


def daily_a(path: Path, *, descending: bool = False) -> Path:
    lats = A_LATS[::-1] if descending else A_LATS
    return write(gridded(A_TIMES, lats, A_LONS, 1), path, time={"units": "days since 2001-01-01"})


def half_degree_b(path: Path) -> Path:
    return write(gridded(B_TIMES, B_LATS, B_LONS, 2), path, time={"units": "hours since 2000-12-01"})


def calendar_360(path: Path, start: str, periods: int, freq: str, units: str, seed: int) -> Path:
    times = xr.date_range(start, periods=periods, freq=freq, calendar="360_day", use_cftime=True)
    ds = gridded(times, A_LATS, A_LONS, seed)
    return write(ds, path, time={"units": units, "calendar": "360_day"})


def packed(path: Path, values: np.ndarray, *, scale: float, offset: float, fill: int,
           chunks: tuple[int, ...]) -> Path:
    """``v`` stored as int16 with ``scale_factor``, ``add_offset`` and ``_FillValue`` (NaN in
    ``values`` become the fill), as xarray packs it."""
    dims = tuple(f"d{i}" for i in range(values.ndim))
    ds = xr.Dataset({"v": (dims, values, {"units": "K"})})
    return write(ds, path, v={"dtype": "int16", "scale_factor": scale, "add_offset": offset, "_FillValue": fill,
                              "chunks": chunks})
