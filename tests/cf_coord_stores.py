"""Stores for the coordinate tests: small CF datasets written by xarray, and NCZarr stores built
by hand (netCDF-C is not installed here), each in the layout netCDF-C's documentation gives for
its release."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

#: latitudes descending (ERA5's order) at uneven steps that need up to three decimals
LATS = np.array([90.0, 45.25, 0.125, -0.5, -89.75])
LONS = np.arange(0.0, 360.0, 0.25)  # 0 .. 359.75
LEVELS = np.array([1000.0, 850.0, 500.0, 250.0])
TIMES = np.array(["2001-03-04T00", "2001-03-04T06", "2001-03-04T12"], dtype="datetime64[ns]")


def cf_dataset(lat_ascending: bool = False) -> Any:
    """(time, level, lat, lon) float32 ``t`` with pressure levels ``positive: down`` and 2-D
    ``lat2d``/``lon2d`` auxiliary coordinates (xarray names them in ``t``'s ``coordinates``)."""
    import xarray as xr

    lats = LATS[::-1] if lat_ascending else LATS
    shape = (len(TIMES), len(LEVELS), len(lats), len(LONS))
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    lat2d, lon2d = np.meshgrid(lats, LONS, indexing="ij")
    return xr.Dataset(
        {"t": (("time", "level", "lat", "lon"), data, {"units": "K", "long_name": "temperature"})},
        coords={
            "time": ("time", TIMES, {"standard_name": "time"}),
            "level": ("level", LEVELS, {"units": "hPa", "positive": "down", "standard_name": "air_pressure"}),
            "lat": ("lat", lats, {"units": "degrees_north", "standard_name": "latitude"}),
            "lon": ("lon", LONS, {"units": "degrees_east", "standard_name": "longitude"}),
            "lat2d": (("lat", "lon"), lat2d), "lon2d": (("lat", "lon"), lon2d),
        },
    )


def write_xarray(ds: Any, path: Path, zarr_format: int, consolidated: bool, **encoding: Any) -> Path:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr's notes on v3 consolidated metadata and string types
        ds.to_zarr(path, zarr_format=zarr_format, consolidated=consolidated, mode="w", encoding=encoding or None)
    return path


def v2_group(root: Path, rel: str = "", zgroup: dict[str, Any] | None = None,
             attrs: dict[str, Any] | None = None) -> None:
    """A v2 group; ``zgroup`` adds keys to ``.zgroup`` (where NCZarr 4.8/4.9 puts its own)."""
    where = root / rel
    where.mkdir(parents=True, exist_ok=True)
    (where / ".zgroup").write_text(json.dumps({"zarr_format": 2, **(zgroup or {})}))
    if attrs is not None:
        (where / ".zattrs").write_text(json.dumps(attrs))


def v2_array(root: Path, rel: str, values: np.ndarray, zarray: dict[str, Any] | None = None,
             attrs: dict[str, Any] | None = None, chunk: bytes | None = None,
             compressor: dict[str, Any] | None = None) -> None:
    """A v2 array in one uncompressed chunk (``chunk`` replaces its bytes: a corrupt one)."""
    values = np.asarray(values)
    where = root / rel
    where.mkdir(parents=True, exist_ok=True)
    doc = {"zarr_format": 2, "shape": list(values.shape), "chunks": list(values.shape) or [1],
           "dtype": values.dtype.str, "compressor": compressor, "fill_value": None, "order": "C",
           "filters": None, **(zarray or {})}
    (where / ".zarray").write_text(json.dumps(doc))
    if attrs is not None:
        (where / ".zattrs").write_text(json.dumps(attrs))
    key = ".".join("0" for _ in values.shape) or "0"
    (where / key).write_bytes(values.tobytes() if chunk is None else chunk)


def nczarr_48(root: Path) -> Path:
    """netCDF-C 4.8: ``_NCZARR_ARRAY.dimrefs`` in ``.zarray`` (no ``_ARRAY_DIMENSIONS``), root
    dimensions in ``.zgroup``'s ``_NCZARR_GROUP.dims``; xarray reads this layout."""
    v2_group(root, zgroup={"_NCZARR_SUPERBLOCK": {"version": "1.0.0"},
                           "_NCZARR_GROUP": {"dims": {"lat": 3, "lon": 4}, "vars": ["lat", "lon", "v"],
                                             "groups": []}})
    ref = {"_NCZARR_ARRAY": {"dimrefs": ["/lat", "/lon"], "storage": "chunked"}}
    v2_array(root, "v", np.arange(12.0).reshape(3, 4), ref, {"_NCZARR_ATTR": {"types": {}}})
    v2_array(root, "lat", np.array([10.5, 20.5, 30.5]), {"_NCZARR_ARRAY": {"dimrefs": ["/lat"]}},
             {"units": "degrees_north", "_NCZARR_ATTR": {"types": {"units": ">S1"}}})
    v2_array(root, "lon", np.array([-10.0, 0.0, 10.0, 20.0]), {"_NCZARR_ARRAY": {"dimrefs": ["/lon"]}},
             {"units": "degrees_east", "_NCZARR_ATTR": {"types": {"units": ">S1"}}})
    return root


def nczarr_new(root: Path) -> Path:
    """netCDF-C since 2024: everything among the attributes, lower-case keys, the newer key names
    (``dimension_references``, ``dimensions``), and a dimension defined in a sub-group: ``v``
    in the root uses ``/grp/depth``, while the root also holds an unrelated ``depth`` array."""
    v2_group(root, attrs={"_nczarr_superblock": {"version": "3.0.0"},
                          "_nczarr_group": {"dimensions": [{"name": "depth", "size": 7}], "arrays": ["v", "depth"],
                                            "subgroups": ["grp"]}})
    v2_group(root, "grp", attrs={"_nczarr_group": {"dimensions": [{"name": "depth", "size": 3, "unlimited": 0}],
                                                   "arrays": ["depth"], "subgroups": []}})
    v2_array(root, "v", np.arange(3.0), attrs={"_nczarr_array": {"dimension_references": ["/grp/depth"]}})
    v2_array(root, "depth", np.arange(7.0), attrs={"_nczarr_array": {"dimension_references": ["/depth"]}})
    v2_array(root, "grp/depth", np.array([5.0, 50.0, 500.0]),
             attrs={"units": "m", "positive": "down", "_nczarr_array": {"dimension_references": ["/grp/depth"]}})
    return root
