"""Stores the "Copy as Python" snippets are run against: plain Zarr v2 and v3 arrays (4-D, sharded,
text, big-endian), a CF cube written by xarray with coordinates, a kerchunk-style reference set
of a folder, a zip of a folder, and an Icechunk repository holding an xarray dataset (written in
the Python 3.12 oracle venv, where icechunk lives). Each snippet's ``data`` is compared with the
.npy ``zarrview export`` writes."""

from __future__ import annotations

import base64
import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
import zarr

import py312_env
from cf_datasets import cf_dataset

V4 = (np.arange(3 * 4 * 20 * 30).reshape(3, 4, 20, 30) * 7 % 30011).astype("i2")
SHARDED = np.random.default_rng(3).normal(size=(40, 50)).astype("f4")
TEXT = np.array(["alpha", "", "γάμμα", "delta"], dtype=object)
BIG = (np.arange(10 * 12).reshape(10, 12) * 3 - 100).astype(">i2")
#: the CF cube's times: one plane a day
TIMES = pd.date_range("2001-03-01", periods=3, freq="D")


def write_plain(root: Path) -> Path:
    """A Zarr v3 group that is one dataset for xarray (every array has dimension names): a 4-D
    array, a sharded one and text; and a subgroup whose array has no dimension names."""
    g = zarr.open_group(root, mode="w", zarr_format=3)
    g.create_array("v4", shape=V4.shape, chunks=(1, 2, 8, 8), dtype=V4.dtype,
                   dimension_names=["t", "c", "y", "x"])[...] = V4
    g.create_array("sh", shape=SHARDED.shape, chunks=(8, 10), shards=(16, 20), dtype=SHARDED.dtype,
                   dimension_names=["row", "col"])[...] = SHARDED
    g.create_array("text", shape=TEXT.shape, chunks=(3,), dtype=str, dimension_names=["n"])[...] = TEXT
    bare = g.create_group("bare")
    bare.create_array("plane", shape=(6, 5), chunks=(4, 4), dtype="u1")[...] = np.arange(30).reshape(6, 5)
    return root


def write_v2(root: Path) -> Path:
    """A Zarr v2 group with xarray's dimension names: big-endian integers and text."""
    g = zarr.open_group(root, mode="w", zarr_format=2)
    big = g.create_array("big", shape=BIG.shape, chunks=(4, 5), dtype=BIG.dtype, fill_value=None)
    big[...] = BIG
    big.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    text = g.create_array("text", shape=TEXT.shape, chunks=(3,), dtype=str)
    text[...] = TEXT
    text.attrs["_ARRAY_DIMENSIONS"] = ["n"]
    zarr.consolidate_metadata(root)
    return root


def cf_cube() -> tuple[xr.Dataset, dict[str, dict[str, Any]]]:
    """``cf_datasets.cf_dataset`` over three days, each day's plane rolled along lon so that the
    days differ, with lat, lon and time coordinates."""
    ds, encoding = cf_dataset()
    days = [ds.roll(lon=i, roll_coords=False) for i in range(len(TIMES))]
    cube = xr.concat(days, dim="time", data_vars="all").assign_coords(
        time=TIMES, lat=np.linspace(-40.0, 40.0, ds.sizes["lat"]), lon=np.linspace(0.0, 300.0, ds.sizes["lon"]))
    return cube, encoding


def write_cf_cube(path: Path, zarr_format: int) -> Path:
    """The CF cube written by xarray with its encodings, consolidated."""
    cube, encoding = cf_cube()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unsigned fill 255 of an int8 array, said by xarray
        cube.to_zarr(path, zarr_format=zarr_format, consolidated=True, encoding=encoding, mode="w")
    return path


def folder_references(folder: Path, out: Path) -> Path:
    """A kerchunk-style JSON reference set (version 1) of a Zarr v2 folder: metadata inline,
    every chunk a (file, offset, length) reference into the folder."""
    refs: dict[str, Any] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        key = path.relative_to(folder).as_posix()
        if path.name in (".zarray", ".zattrs", ".zgroup", ".zmetadata"):
            refs[key] = path.read_text()
        elif path.stat().st_size:
            refs[key] = [str(path), 0, path.stat().st_size]
        else:
            refs[key] = "base64:" + base64.b64encode(b"").decode()
    out.write_text(json.dumps({"version": 1, "refs": refs}))
    return out


def zip_folder(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            z.write(path, path.relative_to(folder).as_posix())
    return out


_ICECHUNK_DATASET = '''
import sys, warnings
warnings.simplefilter("ignore")
import icechunk, numpy as np, xarray as xr
repo = icechunk.Repository.create(icechunk.local_filesystem_storage(sys.argv[1]))
session = repo.writable_session("main")
values = 270.0 + np.arange(20).reshape(4, 5) * 5.5
values[1, 2] = np.nan
ds = xr.Dataset({"t": (("y", "x"), values)}, coords={"y": [10.0, 20.0, 30.0, 40.0], "x": np.arange(5)})
ds["t"].attrs.update(units="K")
encoding = {"t": {"scale_factor": 0.5, "add_offset": 270.0, "_FillValue": -32767, "dtype": "i2"}}
ds.to_zarr(session.store, zarr_format=3, consolidated=False, encoding=encoding, mode="w")
first = session.commit("first")
repo.create_tag("v1", first)
session = repo.writable_session("main")
ds2 = ds.copy()
ds2["t"] = ds2["t"] + 1.5
ds2.to_zarr(session.store, zarr_format=3, consolidated=False, encoding=encoding, mode="w")
print(session.commit("second"))
'''


def write_icechunk_dataset(python: str, out: Path) -> str:
    """An Icechunk repository at ``out`` whose main branch holds a packed CF variable ``t`` (y, x)
    written by xarray, tagged ``v1`` at the first commit; returns the second commit's snapshot
    id. ``python`` is the oracle venv's interpreter."""
    script = out.with_suffix(".py")
    script.write_text(_ICECHUNK_DATASET)
    return py312_env.run(python, script, str(out), timeout=300).strip()


def run_in(python: str, codes: list[str], out: Path) -> list[np.ndarray]:
    """Each of ``codes`` run by ``python`` (the oracle venv's interpreter), each as it is in a
    fresh namespace, in one process (one start-up for them all); each one's ``data``, saved
    into ``out`` (a folder) and loaded back (objects allowed: text is compared as left)."""
    out.mkdir(parents=True, exist_ok=True)
    files = [out / f"snippet-{i}.py" for i in range(len(codes))]
    for file, code in zip(files, codes):
        file.write_text(code)
    script = out / "run_snippets.py"
    script.write_text(
        "import sys\nimport numpy as np\n"
        "for name in sys.argv[1:]:\n"
        "    namespace = {}\n"
        "    exec(compile(open(name).read(), name, 'exec'), namespace)\n"
        "    np.save(name[:-3] + '.npy', namespace['data'], allow_pickle=True)\n")
    py312_env.run(python, script, *map(str, files), timeout=300)
    return [np.load(file.with_suffix(".npy"), allow_pickle=True) for file in files]
