"""The conventions in ``zarrview validate``: the OME-NGFF problems the window's OME tab lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.cli import main as cli_main
from zarrview.viewing.ome.detect import detect
from zarrview.viewing.validation import validate
from zarrview.zarrlib.storage import LocalStore


def test_ome_problems_are_findings_of_the_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = zarr.open_group(tmp_path / "img.zarr", mode="w")
    g.create_array("0", shape=(4, 8, 8), chunks=(1, 8, 8), dtype="u1")
    g.attrs["ome"] = {"version": "0.5", "multiscales": [{
        "axes": [{"name": "c", "type": "channel"}, {"name": "y", "type": "space"}],  # three dimensions, two axes
        "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]}]}]}
    root = zl.open(tmp_path / "img.zarr")
    assert isinstance(root, zl.Group)
    ome = detect(root, labels=False)
    assert ome is not None and ome.problems  # the truth: what the OME tab lists
    findings = [f for f in validate(LocalStore(tmp_path / "img.zarr"), root) if f.rule == "ome-ngff"]
    assert [(f.severity, f.message) for f in findings] == [(p.severity, f"{p.path}: {p.message}") for p in ome.problems]
    assert all(f.key == "zarr.json" for f in findings)
    errors = sum(p.severity == "error" for p in ome.problems)
    assert cli_main(["validate", str(tmp_path / "img.zarr"), "--json"]) == (1 if errors else 0)
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == errors and any(f["rule"] == "ome-ngff" for f in report["findings"])


def test_an_anndata_frame_that_breaks_the_format_is_a_finding(tmp_path: Path) -> None:
    """A dataframe column longer than its index: what the window's table refuses, by the same words."""
    from zarrview.viewing.anndata.frame import open_frame

    g = zarr.open_group(tmp_path / "obs.zarr", mode="w")
    g.attrs.update({"encoding-type": "dataframe", "encoding-version": "0.2.0", "_index": "_index",
                    "column-order": ["n"]})
    index = g.create_array("_index", shape=(3,), dtype="i8")
    index[...] = [0, 1, 2]
    index.attrs.update({"encoding-type": "array", "encoding-version": "0.2.0"})
    n = g.create_array("n", shape=(4,), dtype="f4")
    n[...] = [1, 2, 3, 4]
    n.attrs.update({"encoding-type": "array", "encoding-version": "0.2.0"})
    root = zl.open(tmp_path / "obs.zarr")
    assert isinstance(root, zl.Group)
    with pytest.raises(zl.ZarrError) as refused:
        open_frame(root)
    findings = [f for f in validate(LocalStore(tmp_path / "obs.zarr"), root) if f.rule == "anndata"]
    assert [(f.severity, f.key, f.message) for f in findings] == [("error", "zarr.json", str(refused.value))]
    assert "4 rows where the index has 3" in findings[0].message
