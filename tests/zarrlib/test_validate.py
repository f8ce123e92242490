"""``zarrview validate`` against a corpus of broken stores, one defect each, and the valid ones.

Each broken store is a store zarr-python wrote, then changed in one way. The validator must name
that defect (its rule, at its key, with its severity) and, for a broken metadata document,
zarr-python must refuse the same document (or the difference is listed here with its reason).
Valid stores (the fixtures in ``tests/data``, zarr-python's own writes) must give no error.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import google_crc32c
import numpy as np
import pytest
import zarr

from zarrview.cli import main as cli_main
from zarrview.zarrlib.storage import LocalStore
from zarrview.zarrlib.validate import SECTIONS, Finding, validate_store

DATA = Path(__file__).resolve().parents[1] / "data"


def _v3(root: Path) -> Path:
    a = zarr.create_array(root / "a", shape=(8, 8), chunks=(4, 4), dtype="i2", fill_value=0)
    a[...] = np.arange(64).reshape(8, 8)
    zarr.open_group(root, mode="a")  # the root group's document
    return root / "a" / "zarr.json"


def _v2(root: Path) -> Path:
    zarr.open_group(root, mode="w", zarr_format=2)
    a = zarr.create_array(root / "a", shape=(8, 8), chunks=(4, 4), dtype="i2", fill_value=0, zarr_format=2)
    a[...] = np.arange(64).reshape(8, 8)
    return root / "a" / ".zarray"


def _sharded(root: Path) -> Path:
    zarr.open_group(root, mode="w")
    s = zarr.create_array(root / "a", shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="u1", fill_value=0)
    s[...] = 3
    return root / "a" / "zarr.json"


def _edit(path: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _set(path: Path, **fields: Any) -> None:
    _edit(path, lambda d: d.update(fields))


def _drop(path: Path, field: str) -> None:
    _edit(path, lambda d: d.pop(field))


def _index(shard: Path, change: Callable[[np.ndarray], None]) -> None:
    """Rewrite the index at the end of ``shard`` (four inner chunks) with a valid checksum."""
    data = bytearray(shard.read_bytes())
    n = 4 * 16
    index = np.frombuffer(bytes(data[-(n + 4):-4]), dtype="<u8").reshape(4, 2).copy()
    change(index)
    raw = index.astype("<u8").tobytes()
    data[-(n + 4):] = raw + google_crc32c.value(raw).to_bytes(4, "little")
    shard.write_bytes(bytes(data))


def _both(root: Path) -> None:
    """A v3 array whose folder also holds the .zarray of a v2 array of the same data."""
    _v3(root)
    other = root.parent / (root.name + "-v2")
    (root / "a" / ".zarray").write_text(_v2(other).read_text())


def _consolidated_v2(root: Path) -> Path:
    _v2(root)
    zarr.consolidate_metadata(root)
    return root / ".zmetadata"


# name -> (make the broken store in a folder, the expected rule, the key (relative), severity,
#          whether zarr-python refuses the document: True, False, or None where it is not a document)
Case = tuple[Callable[[Path], None], str, str, str, bool | None]
CASES: dict[str, Case] = {
    "v3 not json": (lambda r: _v3(r).write_text("{not json"), "json", "a/zarr.json", "error", True),
    "v3 a list": (lambda r: _v3(r).write_text("[1, 2]"), "json", "a/zarr.json", "error", True),
    "v3 bare NaN": (lambda r: _edit(_v3(r), lambda d: d.update(data_type="float32")) or
                    (r / "a" / "zarr.json").write_text((r / "a" / "zarr.json").read_text().replace(
                        '"fill_value": 0', '"fill_value": NaN')), "json.nan", "a/zarr.json", "error", True),
    "v3 zarr_format 2": (lambda r: _set(_v3(r), zarr_format=2), "v3.zarr_format", "a/zarr.json", "error", True),
    "v3 node_type": (lambda r: _set(_v3(r), node_type="table"), "v3.node_type", "a/zarr.json", "error", True),
    "v3 no shape": (lambda r: _drop(_v3(r), "shape"), "v3.required", "a/zarr.json", "error", True),
    "v3 no codecs": (lambda r: _drop(_v3(r), "codecs"), "v3.required", "a/zarr.json", "error", True),
    "v3 negative shape": (lambda r: _set(_v3(r), shape=[8, -8]), "v3.shape", "a/zarr.json", "error", True),
    "v3 shape not a list": (lambda r: _set(_v3(r), shape="8x8"), "v3.shape", "a/zarr.json", "error", True),
    "v3 data_type a number": (lambda r: _set(_v3(r), data_type=5), "v3.data_type", "a/zarr.json", "error", True),
    "v3 chunk_shape rank": (lambda r: _set(_v3(r), chunk_grid={"name": "regular", "configuration": {"chunk_shape": [4]}}),
                            "v3.chunk_grid", "a/zarr.json", "error", True),
    "v3 chunk_shape zero": (lambda r: _set(_v3(r), chunk_grid={"name": "regular",
                                                               "configuration": {"chunk_shape": [4, 0]}}),
                            "v3.chunk_grid", "a/zarr.json", "error", True),
    "v3 unknown grid": (lambda r: _set(_v3(r), chunk_grid={"name": "hexagonal", "configuration": {}}),
                        "v3.chunk_grid", "a/zarr.json", "warning", True),
    "v3 key separator": (lambda r: _set(_v3(r), chunk_key_encoding={"name": "default",
                                                                   "configuration": {"separator": "-"}}),
                         "v3.chunk_key_encoding", "a/zarr.json", "error", True),
    "v3 unknown key encoding": (lambda r: _set(_v3(r), chunk_key_encoding={"name": "morton"}),
                                "v3.chunk_key_encoding", "a/zarr.json", "warning", True),
    "v3 fill out of range": (lambda r: _set(_v3(r), fill_value=70000), "v3.fill_value", "a/zarr.json", "error", True),
    "v3 fill a word": (lambda r: _set(_v3(r), fill_value="zero"), "v3.fill_value", "a/zarr.json", "error", True),
    "v3 codecs empty": (lambda r: _set(_v3(r), codecs=[]), "v3.codecs", "a/zarr.json", "error", True),
    "v3 no array-to-bytes codec": (lambda r: _set(_v3(r), codecs=[{"name": "zstd", "configuration": {"level": 1}}]),
                                   "v3.codecs", "a/zarr.json", "error", True),
    "v3 codecs out of order": (lambda r: _edit(_v3(r), lambda d: d.update(codecs=d["codecs"][::-1])),
                               "v3.codecs", "a/zarr.json", "error", True),
    "v3 two array-to-bytes codecs": (lambda r: _edit(_v3(r), lambda d: d.update(codecs=[d["codecs"][0]] * 2)),
                                     "v3.codecs", "a/zarr.json", "error", True),
    "v3 bytes endian": (lambda r: _set(_v3(r), codecs=[{"name": "bytes", "configuration": {"endian": "middle"}}]),
                        "v3.codecs", "a/zarr.json", "error", True),
    "v3 unknown codec": (lambda r: _edit(_v3(r), lambda d: d.update(codecs=[d["codecs"][0], {"name": "wavelet"}])),
                         "v3.codecs", "a/zarr.json", "warning", True),
    "v3 dimension_names length": (lambda r: _set(_v3(r), dimension_names=["y"]), "v3.dimension_names",
                                  "a/zarr.json", "error", True),
    "v3 dimension_names type": (lambda r: _set(_v3(r), dimension_names=["y", 7]), "v3.dimension_names",
                                "a/zarr.json", "error", True),
    # zarr-python opens the array and reads its data; only reading its attributes would fail
    "v3 attributes a list": (lambda r: _set(_v3(r), attributes=[1]), "v3.attributes", "a/zarr.json", "error", False),
    "v3 storage transformer": (lambda r: _set(_v3(r), storage_transformers=[{"name": "chunk-manifest"}]),
                               "v3.storage_transformers", "a/zarr.json", "error", True),
    "v3 unknown field": (lambda r: _set(_v3(r), chunk_layout={"tiles": 3}), "v3.unknown_field", "a/zarr.json",
                         "error", True),
    "v3 inner chunks do not divide the shard": (
        lambda r: _edit(_sharded(r), lambda d: d["codecs"][0]["configuration"].update(chunk_shape=[3, 3])),
        "v3.codecs", "a/zarr.json", "error", True),
    "v3 index_location": (
        lambda r: _edit(_sharded(r), lambda d: d["codecs"][0]["configuration"].update(index_location="middle")),
        "v3.codecs", "a/zarr.json", "error", True),
    "v3 group zarr_format": (lambda r: _v3(r) and _set(r / "zarr.json", zarr_format=4), "v3.zarr_format", "zarr.json",
                             "error", True),
    "v3 group attributes": (lambda r: _v3(r) and _set(r / "zarr.json", attributes="none"), "v3.attributes",
                            "zarr.json", "error", True),
    "v2 zarr_format 3": (lambda r: _set(_v2(r), zarr_format=3), "v2.zarr_format", "a/.zarray", "error", True),
    "v2 no dtype": (lambda r: _drop(_v2(r), "dtype"), "v2.required", "a/.zarray", "error", True),
    "v2 chunks rank": (lambda r: _set(_v2(r), chunks=[4]), "v2.chunks", "a/.zarray", "error", True),
    "v2 dtype": (lambda r: _set(_v2(r), dtype="<x9"), "v2.dtype", "a/.zarray", "error", True),
    "v2 order": (lambda r: _set(_v2(r), order="Z"), "v2.order", "a/.zarray", "error", True),
    "v2 compressor without id": (lambda r: _set(_v2(r), compressor={"level": 1}), "v2.compressor", "a/.zarray",
                                 "error", True),
    "v2 filters not a list": (lambda r: _set(_v2(r), filters={"id": "delta"}), "v2.filters", "a/.zarray", "error",
                              True),
    "v2 fill a word": (lambda r: _set(_v2(r), fill_value="zero"), "v2.fill_value", "a/.zarray", "error", True),
    "v2 separator": (lambda r: _set(_v2(r), dimension_separator="-"), "v2.dimension_separator", "a/.zarray", "error",
                     True),
    # zarr-python opens a .zgroup whatever its zarr_format says
    "v2 group zarr_format": (lambda r: _v2(r) and _set(r / ".zgroup", zarr_format=3), "v2.group", ".zgroup", "error",
                             False),
    "v2 array and group": (lambda r: shutil.copy(_v2(r).parent.parent / ".zgroup", r / "a" / ".zgroup"), "v2.array",
                           "a/.zarray", "error", None),
    "v2 attributes alone": (lambda r: _v2(r) and (r / "b").mkdir() or (r / "b" / ".zattrs").write_text("{}"),
                            "v2.attributes", "b/.zattrs", "warning", None),
    "array inside an array": (lambda r: shutil.copytree(_v3(r).parent, r / "a" / "inner"), "hierarchy.array_parent",
                              "a/inner/zarr.json", "error", None),
    "v2 and v3 at one node": (lambda r: _both(r), "hierarchy.mixed", "a/zarr.json", "warning", None),
    "v3 node without a parent document": (lambda r: _v3(r) and (r / "zarr.json").unlink(), "hierarchy.implicit",
                                          "a/zarr.json", "warning", None),
    "consolidated entry differs": (lambda r: _edit(_consolidated_v2(r), lambda d: d["metadata"]["a/.zarray"].update(
        chunks=[2, 2])), "consolidated.differs", ".zmetadata", "error", None),
    "consolidated entry names nothing": (lambda r: _edit(_consolidated_v2(r), lambda d: d["metadata"].update(
        {"ghost/.zarray": d["metadata"]["a/.zarray"]})), "consolidated.extra", ".zmetadata", "error", None),
    "consolidated entry missing": (lambda r: _edit(_consolidated_v2(r), lambda d: d["metadata"].pop("a/.zarray")),
                                   "consolidated.missing", ".zmetadata", "warning", None),
    "v3 consolidated entry differs": (lambda r: (_v3(r), zarr.consolidate_metadata(r), _edit(
        r / "zarr.json", lambda d: d["consolidated_metadata"]["metadata"]["a"].update(shape=[9, 9]))),
        "consolidated.differs", "zarr.json", "error", None),
    "shard entries overlap": (lambda r: _sharded(r) and _index(r / "a" / "c" / "0" / "0",
                                                              lambda ix: ix.__setitem__((1, 0), ix[0, 0])),
                              "shard.overlap", "a/c/0/0", "error", None),
    "shard entry past the end": (lambda r: _sharded(r) and _index(r / "a" / "c" / "0" / "0",
                                                                 lambda ix: ix.__setitem__((3, 0), 10_000)),
                                 "shard.past_end", "a/c/0/0", "error", None),
    "shard entry half empty": (lambda r: _sharded(r) and _index(r / "a" / "c" / "0" / "0",
                                                               lambda ix: ix.__setitem__((2, 0), 2**64 - 1)),
                               "shard.half_empty", "a/c/0/0", "error", None),
    "shard index checksum": (lambda r: _sharded(r) and (r / "a" / "c" / "1" / "1").write_bytes(
        (r / "a" / "c" / "1" / "1").read_bytes()[:-1] + b"\x00"), "shard.index", "a/c/1/1", "error", None),
    "stray object": (lambda r: _v3(r) and (r / "a" / "c" / "notes.txt").write_text("x"), "chunks.stray",
                     "a/c/notes.txt", "warning", None),
    "chunk outside the grid": (lambda r: _v3(r) and shutil.copytree(r / "a" / "c" / "0", r / "a" / "c" / "7"),
                               "chunks.stray", "a/c/7/0", "warning", None),
}


def _zarr_python_refuses(root: Path, key: str) -> bool:
    """Whether zarr-python refuses to open (and read) the node whose document is ``key``."""
    node = root / Path(key).parent
    try:
        if node == root:
            zarr.open_group(node, mode="r")
        else:
            zarr.open_array(node, mode="r")[...]
    except Exception:
        return True
    return False


def test_the_corpus_has_forty_kinds() -> None:
    assert len(CASES) >= 40 and all(rule in SECTIONS for _, rule, _, _, _ in CASES.values())


@pytest.mark.parametrize("name", list(CASES))
def test_every_defect_is_named(tmp_path: Path, name: str) -> None:
    make, rule, key, severity, refused = CASES[name]
    root = tmp_path / "s.zarr"
    make(root)
    findings = validate_store(LocalStore(root))
    named = [f for f in findings if f.rule == rule and f.key == key]
    assert named, f"{name}: no {rule} at {key} among {[str(f) for f in findings]}"
    assert named[0].severity == severity, str(named[0])
    assert named[0].section == SECTIONS[rule] and named[0].message
    if refused is not None:
        assert _zarr_python_refuses(root, key) == refused, f"{name}: zarr-python {'accepts' if refused else 'refuses'} it"


def _good_stores() -> list[Path]:
    found = [p for p in sorted((DATA / "zarrs").iterdir()) if p.is_dir() and (p.suffix == ".zarr" or p.name in ("v2", "v3", "v3_zarr_python"))]
    return found + [DATA / "ome" / v for v in ("0.4", "0.5")]


@pytest.mark.parametrize("root", _good_stores(), ids=lambda p: str(p.relative_to(DATA)))
def test_valid_stores_have_no_errors(root: Path) -> None:
    errors = [str(f) for f in validate_store(LocalStore(root)) if f.severity == "error"]
    assert not errors, errors


def test_zarr_pythons_own_writes_have_no_findings(tmp_path: Path) -> None:
    g = zarr.open_group(tmp_path / "g.zarr", mode="w")
    g.attrs["title"] = "written by zarr-python"
    g.create_array("dense", shape=(30, 40), chunks=(10, 10), dtype="f4", dimension_names=["y", "x"])[...] = 1.5
    g.create_array("sub/sharded", shape=(64,), chunks=(4,), shards=(16,), dtype="u2")[...] = 7
    zarr.consolidate_metadata(tmp_path / "g.zarr")
    v2 = zarr.open_group(tmp_path / "v2.zarr", mode="w", zarr_format=2)
    v2.create_array("x", shape=(5, 5), chunks=(2, 2), dtype="i8")[...] = 3
    zarr.consolidate_metadata(tmp_path / "v2.zarr")
    for store in ("g.zarr", "v2.zarr"):
        assert validate_store(LocalStore(tmp_path / store)) == [], store


def test_cli_validate_exit_status_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = tmp_path / "good.zarr", tmp_path / "bad.zarr"
    _v3(good)
    _set(_v3(bad), fill_value="zero")
    assert cli_main(["validate", str(good)]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out
    assert cli_main(["validate", str(bad), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == 1 and report["findings"][0]["key"] == "a/zarr.json"
    assert report["findings"][0]["rule"] == "v3.fill_value" and "§array-metadata-fill-value" in report["findings"][0]["section"]
    assert cli_main(["validate", f"{bad}::/a"]) == 1
    assert "v3.fill_value" in capsys.readouterr().out


def test_findings_of_one_kind_are_counted_past_the_first(tmp_path: Path) -> None:
    root = tmp_path / "s.zarr"
    _v3(root)
    for i in range(30):
        (root / "a" / "c" / f"note{i}").write_text("x")
    strays = [f for f in validate_store(LocalStore(root)) if f.rule == "chunks.stray"]
    assert len(strays) == 21 and "30 findings of this kind" in strays[-1].message
    assert isinstance(strays[0], Finding)
