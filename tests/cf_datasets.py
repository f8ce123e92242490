"""Small CF datasets written at test time: by xarray (the encodings it writes for packed, filled and
unsigned data) and by zarr-python (attributes xarray would refuse to write), so that what zarrview
decodes can be checked against what xarray decodes from the same store."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr
import zarr

SHAPE = (5, 7)

#: flag attributes of the two flag variables (CF 3.5 examples 3.5 and 3.6, shortened)
QC_FLAGS = {"flag_values": [0, 1, 2], "flag_meanings": "quality_good sensor_nonfunctional outside_valid_range"}
STATUS_FLAGS = {"flag_masks": [1, 2, 4, 8], "flag_meanings": "low_battery processor_fault memory_fault disk_fault"}


def _with_holes(values: np.ndarray, every: int = 4) -> np.ndarray:
    out = values.astype(np.float64)
    out.flat[::every] = np.nan
    return out


def cf_dataset() -> tuple[xr.Dataset, dict[str, dict[str, Any]]]:
    """A dataset with one variable for each way CF codes values, and the encodings xarray is to
    write them with."""
    rng = np.random.default_rng(14)
    dims = ("lat", "lon")
    temps = np.round(rng.uniform(230.0, 310.0, SHAPE), 2)
    rain = _with_holes(rng.uniform(0.0, 40.0, SHAPE)).astype(np.float32)
    stored16 = rng.integers(-32768, 32767, SHAPE, dtype=np.int16)
    stored16.flat[::3] = -32767   # the _FillValue
    stored16.flat[1::5] = -32768  # the missing_value added after writing
    tenths = rng.integers(-50, 1200, SHAPE).astype(np.float64) * 0.1
    tenths.flat[::6] = np.nan
    unsigned = rng.integers(0, 256, SHAPE, dtype=np.uint8)
    unsigned.flat[::5] = 255
    unsigned.flat[1] = 200
    signed8 = rng.integers(-128, 128, SHAPE, dtype=np.int8)
    sst = rng.uniform(-5.0, 30.0, SHAPE).astype(np.float32)
    sst.flat[::7] = np.nan
    ds = xr.Dataset({
        "t2m": (dims, _with_holes(temps, 3), {"long_name": "2 metre temperature", "units": "K"}),
        "sst": (dims, sst, {"standard_name": "sea_surface_temperature", "units": "degC",
                            "actual_range": [float(np.nanmin(sst)), float(np.nanmax(sst))]}),
        "rain": (dims, rain, {"units": "mm"}),
        "small": (dims, _with_holes(rng.integers(0, 1000, SHAPE), 5)),
        "count": (dims, _with_holes(rng.integers(0, 10**6, SHAPE), 5)),
        "twofills": (dims, stored16),
        "ranged": (dims, tenths, {"valid_range": [0, 1000]}),
        "above": (dims, sst - 10.0, {"valid_min": 0.0}),
        "u8": (dims, unsigned),
        "u8raw": (dims, signed8, {"_Unsigned": "true"}),
        "plain": (dims, stored16.copy()),
        "qc": (dims, rng.integers(0, 3, SHAPE, dtype=np.int8), dict(QC_FLAGS)),
        "status": (dims, rng.integers(0, 16, SHAPE, dtype=np.uint8), dict(STATUS_FLAGS)),
    })
    encoding: dict[str, dict[str, Any]] = {
        "t2m": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32767},
        "rain": {"_FillValue": -9999.9},
        "small": {"dtype": "int16", "_FillValue": -1},
        "count": {"dtype": "int32", "_FillValue": -1},
        "twofills": {"_FillValue": -32767},
        "ranged": {"dtype": "int16", "scale_factor": 0.1, "_FillValue": -32767},
        "u8": {"dtype": "int8", "_Unsigned": "true", "_FillValue": 255},
    }
    return ds, encoding


def write_cf_dataset(path: Path, zarr_format: int, consolidated: bool) -> Path:
    """``cf_dataset()`` written by xarray, then ``missing_value`` -32768 given to ``twofills``
    (xarray refuses to write a missing_value other than the _FillValue)."""
    ds, encoding = cf_dataset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unsigned fill 255 of an int8 array, said by xarray
        ds.to_zarr(path, zarr_format=zarr_format, consolidated=consolidated, encoding=encoding, mode="w")
    set_attributes(path, "twofills", {"missing_value": -32768})
    return path


def set_attributes(path: Path, name: str, attrs: dict[str, Any], remove: tuple[str, ...] = ()) -> None:
    """Attributes of one array changed after writing (consolidated metadata rewritten if any)."""
    arr = zarr.open_array(path / name, mode="r+")
    for key in remove:
        arr.attrs.pop(key, None)
    arr.attrs.update(attrs)
    if (path / ".zmetadata").exists() or "consolidated_metadata" in _group_document(path):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zarr-python: consolidated metadata is not in the v3 spec
            zarr.consolidate_metadata(path)


def _group_document(path: Path) -> dict[str, Any]:
    doc = path / "zarr.json"
    return json.loads(doc.read_text()) if doc.exists() else {}


def write_array_with_attributes(path: Path, data: np.ndarray, attrs: dict[str, Any], zarr_format: int,
                                fill_value: Any = None) -> Path:
    """A one-array group written by zarr-python with ``attrs`` as given (no CF encoding), named
    ``v``, with dimension names so that xarray can open it."""
    group = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    dims = [f"d{i}" for i in range(data.ndim)]
    extra: dict[str, Any] = {"dimension_names": dims} if zarr_format == 3 else {}
    arr = group.create_array("v", shape=data.shape, dtype=data.dtype, fill_value=fill_value, **extra)
    arr[...] = data
    arr.attrs.update(attrs if zarr_format == 3 else {**attrs, "_ARRAY_DIMENSIONS": dims})
    return path
