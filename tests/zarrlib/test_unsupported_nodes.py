"""An array naming a codec or data type zarrlib lacks fails alone: it is
listed with its metadata and the error, raises only when read, and its siblings read normally;
as the root of a store, ``tree`` and ``info`` still describe it.

Every store is written by zarr-python, then one ``zarr.json`` or ``.zarray`` is edited by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.metadata.written import WrittenArray

pytestmark = pytest.mark.timeout(60)


def edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def add_codec(doc: dict[str, Any]) -> None:
    doc["codecs"].append({"name": "nonexistent_codec"})


def float7(doc: dict[str, Any]) -> None:
    doc["data_type"] = "float7_e3m3"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    good = root.create_array("good", shape=(4, 5), chunks=(2, 5), dtype="f4")
    good[:] = np.arange(20, dtype="f4").reshape(4, 5)
    bad = root.create_array("badcodec", shape=(6, 7), chunks=(3, 7), dtype="i2")
    bad[:] = 1
    bad.attrs["note"] = "kept"
    root.create_array("baddtype", shape=(9,), chunks=(4,), dtype="u1")[:] = 2
    root.create_group("sub").create_array("x", shape=(2,), dtype="i4")[:] = [7, 8]
    edit(tmp_path / "s.zarr" / "badcodec" / "zarr.json", add_codec)
    edit(tmp_path / "s.zarr" / "baddtype" / "zarr.json", float7)
    return tmp_path / "s.zarr"


def test_a_child_with_an_unknown_codec_keeps_its_metadata_and_fails_when_read(store: Path) -> None:
    root = zl.open(store)
    kids = {m.name: m for m in root.members()}
    assert sorted(kids) == ["badcodec", "baddtype", "good", "sub"]
    bad = kids["badcodec"]
    assert isinstance(bad, zl.UnsupportedArray) and isinstance(bad, zl.ErrorNode) and bad.kind == "array"
    assert bad.shape == (6, 7) and bad.written.chunks == (3, 7) and bad.written.data_type == "int16"
    assert bad.written.codecs == "bytes → zstd → nonexistent_codec"
    assert bad.attrs == {"note": "kept"} and bad.metadata["codecs"][-1] == {"name": "nonexistent_codec"}
    message = str(bad.error)
    assert "codec 'nonexistent_codec'" in message and "/badcodec/zarr.json" in message
    assert "is not supported (supported: " in message and "zstd" in message
    with pytest.raises(zl.UnsupportedCodecError, match="nonexistent_codec"):
        bad[...]
    np.testing.assert_array_equal(kids["good"][...], np.arange(20, dtype="f4").reshape(4, 5))
    np.testing.assert_array_equal(root["sub/x"][...], [7, 8])


def test_a_child_with_an_unknown_data_type_is_opened_by_path_too(store: Path) -> None:
    bad = zl.open(store)["baddtype"]
    assert isinstance(bad, zl.UnsupportedArray)
    assert bad.shape == (9,) and bad.written.chunks == (4,) and bad.written.data_type == "float7_e3m3"
    assert "data type 'float7_e3m3'" in str(bad.error) and "int16" in str(bad.error)
    with pytest.raises(zl.UnsupportedDataTypeError, match="float7_e3m3"):
        bad.read((slice(0, 2),))


def test_a_root_array_with_an_unknown_codec_opens(tmp_path: Path) -> None:
    arr = zarr.create_array(tmp_path / "r.zarr", shape=(4,), chunks=(2,), dtype="i4", zarr_format=3)
    arr[:] = 5
    edit(tmp_path / "r.zarr" / "zarr.json", add_codec)
    root = zl.open(tmp_path / "r.zarr")
    assert isinstance(root, zl.UnsupportedArray) and root.path == "/" and root.shape == (4,)
    with pytest.raises(zl.UnsupportedCodecError):
        root[...]


def test_a_v2_array_with_an_unknown_compressor(tmp_path: Path) -> None:
    g = zarr.open_group(tmp_path / "v2.zarr", mode="w", zarr_format=2)
    g.create_array("a", shape=(10,), chunks=(5,), dtype="<u2")[:] = 3
    g.create_array("b", shape=(3,), chunks=(3,), dtype="<u2")[:] = 4
    edit(tmp_path / "v2.zarr" / "a" / ".zarray", lambda d: d.__setitem__("compressor", {"id": "frobnicate"}))
    kids = {m.name: m for m in zl.open(tmp_path / "v2.zarr").members()}
    assert isinstance(kids["a"], zl.UnsupportedArray)
    assert kids["a"].written == WrittenArray((10,), (5,), "<u2", "frobnicate")
    assert "codec 'frobnicate'" in str(kids["a"].error) and "is not supported" in str(kids["a"].error)
    np.testing.assert_array_equal(kids["b"][...], [4, 4, 4])


def test_malformed_metadata_still_fails_at_open(store: Path) -> None:
    """Only unknown names are deferred: a broken document is an error where it is opened."""
    edit(store / "badcodec" / "zarr.json", lambda d: d.__setitem__("shape", [-1, 7]))
    with pytest.raises(zl.MetadataError):
        zl.open(store)["badcodec"]
    assert [m.kind for m in zl.open(store).members() if m.name == "badcodec"] == ["error"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zarrview", *args], capture_output=True, text=True, timeout=60)


def test_cli_tree_lists_the_unsupported_arrays_with_their_fields_and_error(store: Path) -> None:
    out = cli("tree", str(store))
    assert out.returncode == 0, out.stderr
    lines = {line.lstrip("├└─│ ").split("  ")[0]: line for line in out.stdout.splitlines()[1:]}
    assert "array (unsupported)  (6, 7)  int16  chunks (3, 7)  bytes → zstd → nonexistent_codec" in lines["badcodec"]
    assert "codec 'nonexistent_codec' in /badcodec/zarr.json is not supported" in lines["badcodec"]
    assert "array (unsupported)  (9,)  float7_e3m3  chunks (4,)" in lines["baddtype"]
    assert "array  (4, 5)  float32" in lines["good"] and "array  (2,)  int32" in lines["x"]


def test_cli_info_of_an_unsupported_child_and_root(store: Path, tmp_path: Path) -> None:
    out = cli("info", f"{store}::/badcodec")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split() == ["Path", "/badcodec"]
    assert "Shape        (6, 7)" in out.stdout and "Codecs       bytes → zstd → nonexistent_codec" in out.stdout
    assert "Error        codec 'nonexistent_codec'" in out.stdout and '"note": "kept"' in out.stdout
    assert '"name": "nonexistent_codec"' in out.stdout
    arr = zarr.create_array(tmp_path / "r.zarr", shape=(4,), chunks=(2,), dtype="i4", zarr_format=3)
    arr[:] = 5
    edit(tmp_path / "r.zarr" / "zarr.json", float7)
    for command in ("tree", "info"):
        out = cli(command, str(tmp_path / "r.zarr"))
        assert out.returncode == 0 and "float7_e3m3" in out.stdout and "is not supported" in out.stdout, out
        assert "(4,)" in out.stdout
