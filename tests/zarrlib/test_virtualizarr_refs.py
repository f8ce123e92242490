"""Kerchunk reference sets written by VirtualiZarr 2.8, read value for value.

A writer script runs once per session in a Python 3.12 venv (``py312_env``): it writes a
NetCDF4 file with h5netcdf (chunked+compressed and contiguous variables of several dtypes,
big-endian included, an unlimited dimension, coordinates, CF packing and fill attributes) and
VirtualiZarr's references of it as JSON (Zarr v2 and v3 metadata), as Parquet and with the
coordinates loaded (held inline). Every variable must read through ``zarrlib.open`` and the
command line as h5py reads the file, and decode as xarray decodes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from virtualizarr_refs import write_reference_sets
from zarrview.cli import main as cli_main
from zarrview.viewing.cf.values import value_coding
from zarrview.zarrlib.storage.references import ReferenceStore

#: the first test also builds the 3.12 venv (an install from PyPI) and runs the writer
pytestmark = pytest.mark.timeout(600)

SETS = ("refs.json", "refs_v3.json", "refs.parq", "loaded.json")


@pytest.fixture(scope="session")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return write_reference_sets(tmp_path_factory.mktemp("virtualizarr"))


def _stored(written: dict[str, Any], name: str) -> np.ndarray:
    return np.load(written["root"] / written["variables"][name]["npy"])


def _decoded(written: dict[str, Any], name: str) -> np.ndarray:
    return np.load(written["root"] / written["decoded"][name])


@pytest.mark.parametrize("refs", SETS)
def test_every_variable_reads_as_h5py_reads_the_file(written: dict[str, Any], refs: str) -> None:
    assert written["virtualizarr"].startswith("2.8.")
    root = zl.open(f"reference::{written['root'] / refs}")
    assert isinstance(root, zl.Group) and isinstance(root.store, ReferenceStore)
    assert sorted(root.member_names()) == sorted(written["variables"])
    assert root.attrs["title"] == "virtual references"
    for name, spec in written["variables"].items():
        arr = root[name]
        assert isinstance(arr, zl.Array)
        want = _stored(written, name)
        # Zarr v3 data types have no byte order (the bytes codec has): a big-endian variable reads native
        dtype = want.dtype.newbyteorder("=") if refs == "refs_v3.json" else want.dtype
        assert arr.shape == tuple(spec["shape"]) and np.dtype(arr.dtype) == dtype, f"{refs} {name}"
        np.testing.assert_array_equal(arr[...], want, err_msg=f"{refs} {name}")
    assert root["t2m"].attrs["units"] == "K" and root["t2m"].attrs["scale_factor"] == 0.01
    root.store.close()


def test_the_v3_set_says_big_endian_in_its_bytes_codec(written: dict[str, Any]) -> None:
    """The big-endian variable is a real test of the v3 set's bytes codec, not of its dtype."""
    refs = json.loads((written["root"] / "refs_v3.json").read_text())["refs"]
    meta = refs["big/zarr.json"]
    meta = json.loads(meta) if isinstance(meta, str) else meta
    assert {"name": "bytes", "configuration": {"endian": "big"}} in meta["codecs"]
    assert _stored(written, "big").dtype == np.dtype(">i4")


def test_parquet_folder_opened_as_a_path(written: dict[str, Any]) -> None:
    arr = zl.open(f"{written['root'] / 'refs.parq'}::/t2m")
    assert isinstance(arr, zl.Array)
    np.testing.assert_array_equal(arr[1:4, 2:7, 3:], _stored(written, "t2m")[1:4, 2:7, 3:])


@pytest.mark.parametrize("refs", SETS)
def test_cf_decoding_is_xarrays(written: dict[str, Any], refs: str) -> None:
    root = zl.open(f"reference::{written['root'] / refs}")
    assert sorted(written["decoded"]) == ["offset", "precip", "t2m"]
    for name in written["decoded"]:
        arr = root[name]
        assert isinstance(arr, zl.Array)
        coding = value_coding(arr)
        assert coding.active and not coding.notes, f"{refs} {name}: {coding.notes}"
        want = _decoded(written, name)
        got = coding.decode(arr[...])
        assert got.dtype == want.dtype, f"{refs} {name}"
        np.testing.assert_array_equal(got, want, err_msg=f"{refs} {name}")
    assert np.isnan(_decoded(written, "t2m")).any() and np.isnan(_decoded(written, "precip")).any()
    root.store.close()


@pytest.mark.parametrize("refs", SETS)
def test_export_writes_the_stored_and_the_decoded_plane(written: dict[str, Any], refs: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    location = f"reference::{written['root'] / refs}"
    out = tmp_path / "big.npy"
    assert cli_main(["export", f"{location}::/big", "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), _stored(written, "big"))
    # the plane picked by a date on the CF time coordinate (hours since 2000-01-01, every 6 hours)
    assert cli_main(["export", f"{location}::/t2m", "--slice", "time=2000-01-01T18:00", "--raw",
                     "-o", str(out)]) == 0
    assert "(index 3)" in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(out), _stored(written, "t2m")[3])
    assert cli_main(["export", f"{location}::/t2m", "--slice", "0,:,:", "-o", str(out)]) == 0
    for got, want in ((np.load(out), _decoded(written, "t2m")[0]),
                      (_export(location, "precip", out), _decoded(written, "precip"))):
        assert got.dtype == want.dtype  # xarray's: float64 from double scale_factor, float32 kept
        np.testing.assert_array_equal(got, want)


def _export(location: str, name: str, out: Path) -> np.ndarray:
    assert cli_main(["export", f"{location}::/{name}", "-o", str(out)]) == 0
    return np.load(out)


def _attribute(spelled: Any) -> Any:
    """An attribute the writer recorded from h5py, non-finite floats spelled as strings, as a float."""
    return [_attribute(v) for v in spelled] if isinstance(spelled, list) else float(spelled)


@pytest.mark.parametrize("refs", ("nan.parq", "nan_loaded.parq"))
def test_parquet_metadata_with_bare_nan_and_infinity(written: dict[str, Any], refs: str) -> None:
    """kerchunk writes ``.zmetadata`` with Python's json: a loaded coordinate's NaN ``_FillValue``
    and NaN or infinite attributes are the bare tokens ``NaN``, ``Infinity``, ``-Infinity``."""
    text = (written["root"] / refs / ".zmetadata").read_text()
    assert ":NaN" in text and ":Infinity" in text and ":-Infinity" in text
    expected = written["nan"]
    root = zl.open(f"reference::{written['root'] / refs}")
    assert sorted(root.member_names()) == sorted(expected["variables"])
    numeric_fills = 0
    for name, spec in expected["variables"].items():
        arr = root[name]
        assert isinstance(arr, zl.Array)
        np.testing.assert_array_equal(arr[...], np.load(written["root"] / spec["npy"]), err_msg=f"{refs} {name}")
        for key, spelled in spec["attrs"].items():
            got = arr.attrs[key]
            if key == "_FillValue" and isinstance(got, str):
                continue  # a virtual variable's fill value in xarray's encoded (base64) form
            numeric_fills += key == "_FillValue"
            np.testing.assert_array_equal(got, _attribute(spelled), err_msg=f"{refs} {name}.{key}")
    assert numeric_fills == (3 if refs == "nan_loaded.parq" else 0)  # the loaded coordinates'
    for name, npy in expected["decoded"].items():
        arr = root[name]
        assert isinstance(arr, zl.Array)
        want = np.load(written["root"] / npy)
        got = value_coding(arr).decode(arr[...])
        assert got.dtype == want.dtype, f"{refs} {name}"
        np.testing.assert_array_equal(got, want, err_msg=f"{refs} {name}")
    root.store.close()
