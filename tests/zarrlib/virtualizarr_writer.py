"""Writes a NetCDF4 file, VirtualiZarr's kerchunk references of it, and what h5py and xarray read
from the file itself (run in a 3.12 venv with VirtualiZarr 2.8).

Usage: python virtualizarr_writer.py OUT_FOLDER

OUT_FOLDER/data.nc is written with h5netcdf (netCDF4 dimensions, an unlimited dimension,
chunked+compressed and contiguous variables of several dtypes, CF attributes);
refs.json, refs_v3.json (Zarr v3 metadata), refs.parq (Parquet, several record files) and
loaded.json (coordinates loaded, so held inline) are VirtualiZarr's references of it;
OUT_FOLDER/expected.json names each variable's stored values (.npy, as h5py reads them) and,
for the CF-coded ones, xarray's decoded values.

OUT_FOLDER/nan.nc is written by xarray with NaN fill values (float coordinates get
``_FillValue: NaN``, a variable carries ``missing_value: NaN`` and infinite ``valid_min``/
``valid_max``); nan.parq and nan_loaded.parq (coordinates loaded) are its Parquet references,
whose ``.zmetadata`` spells those values as bare ``NaN``/``Infinity``. expected.json's ``nan``
names its variables' stored values, their attributes as h5py reads them (non-finite floats as
the strings ``"nan"``, ``"inf"``, ``"-inf"``) and xarray's decoded values.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import h5netcdf
import h5py
import numpy as np
import virtualizarr
import xarray as xr
from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import LocalStore
from virtualizarr import open_virtual_dataset
from virtualizarr.parsers import HDFParser

warnings.simplefilter("ignore")
out = os.path.abspath(sys.argv[1])
os.makedirs(out, exist_ok=True)
nc = os.path.join(out, "data.nc")
rng = np.random.default_rng(11)

T, Y, X = 5, 7, 6
t2m = rng.integers(-2000, 2000, (T, Y, X)).astype("i2")
t2m[0, 0, :3] = -32767  # the fill value: NaN once decoded
precip = rng.random((Y, X)).astype("f4") * 10
precip[3, 2] = 1e20
with h5netcdf.File(nc, "w") as f:
    f.attrs["title"] = "virtual references"
    f.attrs["Conventions"] = "CF-1.8"
    f.dimensions = {"time": None, "y": Y, "x": X}
    f.resize_dimension("time", T)
    time = f.create_variable("time", ("time",), "f8", chunks=(2,))  # unlimited: chunked
    time[:] = np.arange(T) * 6.0
    time.attrs.update({"units": "hours since 2000-01-01", "calendar": "standard", "standard_name": "time"})
    for name, n, step in (("y", Y, 0.5), ("x", X, 0.25)):
        v = f.create_variable(name, (name,), "f4")  # contiguous coordinates
        v[:] = np.arange(n, dtype="f4") * step
        v.attrs["units"] = "degrees"
    v = f.create_variable("t2m", ("time", "y", "x"), "i2", chunks=(2, 4, 4), compression="gzip",
                          compression_opts=4, shuffle=True, fillvalue=np.int16(-32767))
    v[:] = t2m
    v.attrs.update({"scale_factor": np.float64(0.01), "add_offset": np.float64(273.15), "units": "K",
                    "long_name": "2 metre temperature"})
    v = f.create_variable("precip", ("y", "x"), "f4", fillvalue=np.float32(1e20))  # contiguous
    v[:] = precip
    v.attrs.update({"units": "mm", "missing_value": np.float32(1e20)})
    v = f.create_variable("mask", ("y", "x"), "u1", chunks=(4, 3), compression="gzip")
    v[:] = (np.arange(Y * X).reshape(Y, X) % 3 == 0).astype("u1")
    v = f.create_variable("count", ("time", "x"), "i8")  # contiguous
    v[:] = np.arange(T * X, dtype="i8").reshape(T, X) * 10**10 - 7
    v = f.create_variable("big", ("time", "y"), ">i4", chunks=(3, 3), shuffle=True, compression="gzip")
    v[:] = rng.integers(-10**9, 10**9, (T, Y)).astype(">i4")
    v = f.create_variable("level", ("x",), "u2", chunks=(4,))  # chunked, uncompressed, partial edge
    v[:] = np.arange(X, dtype="u2") * 1000 + 7
    v = f.create_variable("offset", ("y", "x"), "f8", chunks=(7, 6), compression="gzip", compression_opts=9)
    v[:] = rng.standard_normal((Y, X))
    v.attrs["add_offset"] = np.float64(100.0)

registry = ObjectStoreRegistry({"file://": LocalStore()})


def virtual(loadable: list[str] | None) -> xr.Dataset:
    return open_virtual_dataset("file://" + nc, registry=registry, parser=HDFParser(),
                                loadable_variables=loadable)


everything_virtual = virtual([])
everything_virtual.virtualize.to_kerchunk(os.path.join(out, "refs.json"), format="json")
everything_virtual.virtualize.to_kerchunk(os.path.join(out, "refs_v3.json"), format="json", zarr_format=3)
everything_virtual.virtualize.to_kerchunk(os.path.join(out, "refs.parq"), format="parquet", record_size=4)
virtual(None).virtualize.to_kerchunk(os.path.join(out, "loaded.json"), format="json")  # coordinates inline

expected: dict = {"virtualizarr": virtualizarr.__version__, "variables": {}, "decoded": {}}
with h5py.File(nc, "r") as f:
    names = [n for n in f if isinstance(f[n], h5py.Dataset)]
    for name in names:
        values = np.asarray(f[name][()])
        np.save(os.path.join(out, f"{name}.npy"), values)
        expected["variables"][name] = {"npy": f"{name}.npy", "dtype": values.dtype.str,
                                       "shape": list(values.shape)}
with xr.open_dataset(nc, engine="h5netcdf", decode_times=False) as ds:
    for name in ("t2m", "precip", "offset"):
        decoded = ds[name].values
        np.save(os.path.join(out, f"{name}.decoded.npy"), decoded)
        expected["decoded"][name] = f"{name}.decoded.npy"
    raw = xr.open_dataset(nc, engine="h5netcdf", mask_and_scale=False, decode_times=False)
    for name in names:  # xarray's stored values are h5py's: two readers agree on the truth
        np.testing.assert_array_equal(raw[name].values, np.load(os.path.join(out, f"{name}.npy")))
    raw.close()

nan_nc = os.path.join(out, "nan.nc")
sst = rng.random((Y, X)).astype("f4") * 30
sst[2, 1:4] = np.nan
anomaly = rng.standard_normal((T, X))
anomaly[1, 2] = np.inf
xr.Dataset(
    {"sst": (("y", "x"), sst, {"missing_value": np.float32(np.nan), "units": "degC"}),
     "anomaly": (("time", "x"), anomaly, {"valid_min": -np.inf, "valid_max": np.inf})},
    coords={"y": np.arange(Y) * 0.5, "x": np.arange(X) * 0.25, "time": np.arange(T) * 1.0},
).to_netcdf(nan_nc, engine="h5netcdf", encoding={"sst": {"chunksizes": (4, 3)}})
for refs_name, loadable in (("nan.parq", []), ("nan_loaded.parq", None)):
    open_virtual_dataset("file://" + nan_nc, registry=registry, parser=HDFParser(),
                         loadable_variables=loadable).virtualize.to_kerchunk(
        os.path.join(out, refs_name), format="parquet", record_size=2)


def spelled(value: np.ndarray) -> object:
    """A float attribute as JSON can hold it: non-finite values as Python's str of them."""
    items = [v if np.isfinite(v) else str(v) for v in value.ravel().tolist()]
    return items[0] if value.size == 1 else items


expected["nan"] = {"variables": {}, "decoded": {}}
with h5py.File(nan_nc, "r") as f:
    for name in ("sst", "anomaly", "x", "y", "time"):
        np.save(os.path.join(out, f"nan.{name}.npy"), np.asarray(f[name][()]))
        attrs = {k: spelled(np.asarray(v)) for k, v in f[name].attrs.items() if np.asarray(v).dtype.kind == "f"}
        expected["nan"]["variables"][name] = {"npy": f"nan.{name}.npy", "attrs": attrs}
with xr.open_dataset(nan_nc, engine="h5netcdf", decode_times=False) as ds:
    for name in ("sst", "anomaly"):
        np.save(os.path.join(out, f"nan.{name}.decoded.npy"), ds[name].values)
        expected["nan"]["decoded"][name] = f"nan.{name}.decoded.npy"
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
print(json.dumps(expected["variables"]))
