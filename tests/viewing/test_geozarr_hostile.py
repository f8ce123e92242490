"""Hostile and broken multiscales, proj: and spatial: metadata: each costs a named problem, never a
crash; ``zarrview export`` of such a group exits with a message, and whatever can still be read
(a valid first level) is. The stores are written by zarr-python; the attributes by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarrview import zarrlib as zl
from zarrview.cli import main
from zarrview.viewing.conventions.declared import conventions
from zarrview.viewing.conventions.geozarr import detect_geozarr
from zarrview.viewing.ome import OmeImage, detect

MS = {"uuid": "d35379db-88df-4056-af3a-620245f8e347", "name": "multiscales",
      "schema_url": "https://raw.githubusercontent.com/zarr-conventions/multiscales/refs/tags/v1/schema.json"}
DEAD = {"schema_url": "https://no-such-host.invalid/conventions/v9/schema.json", "name": "multiscales"}
DATA = np.arange(40 * 50, dtype="uint16").reshape(40, 50)


def _store(tmp_path: Path, attrs: dict[str, Any]) -> Path:
    import zarr

    root = tmp_path / "g.zarr"
    group = zarr.open_group(str(root), mode="w", zarr_format=3, attributes=attrs)
    arr = group.create_array("0", shape=DATA.shape, dtype=DATA.dtype, chunks=(16, 16), dimension_names=("y", "x"))
    arr[...] = DATA
    group.create_array("line", shape=(5,), dtype="f4")[...] = 1
    group.create_array("words", shape=(3, 3), dtype=str)[...] = np.full((3, 3), "a")
    return root


CASES: list[tuple[str, dict[str, Any], str, int]] = [
    ("no layout", {"zarr_conventions": [MS], "multiscales": {}}, '"layout" is required', 1),
    ("layout not a list", {"multiscales": {"layout": "0"}}, '"layout" must be a list', 1),
    ("empty layout", {"multiscales": {"layout": []}}, "at least one level", 1),
    ("asset a number", {"multiscales": {"layout": [{"asset": 5}]}}, '"asset" must be a string', 1),
    ("asset climbs out", {"multiscales": {"layout": [{"asset": "../0"}]}}, 'without ".."', 1),
    ("asset missing", {"multiscales": {"layout": [{"asset": "nope"}]}}, "cannot be opened", 1),
    ("level not an object", {"multiscales": {"layout": ["0"]}}, "a level must be an object", 1),
    ("scale of strings", {"multiscales": {"layout": [
        {"asset": "0"}, {"asset": "0b", "derived_from": "0", "transform": {"scale": ["2", 2]}}]}},
     "positive numbers", 0),
    ("derived without transform", {"multiscales": {"layout": [{"asset": "0"}, {"asset": "0c", "derived_from": "0"}]}},
     'MUST then have a "transform"', 0),
    ("derived from nothing", {"multiscales": {"layout": [
        {"asset": "0", "derived_from": "ghost", "transform": {"scale": [1, 1]}}]}}, "not a level of the layout", 0),
    ("short spatial transform", {"multiscales": {"layout": [{"asset": "0", "spatial:transform": [1, 2, 3]}]}},
     "six numbers", 0),
    ("singular transform", {"multiscales": {"layout": [{"asset": "0", "spatial:transform": [0, 0, 1, 0, 0, 1]}]}},
     "determinant is 0", 0),
    ("proj:code a number", {"multiscales": {"layout": [{"asset": "0"}]}, "proj:code": 32633}, '"proj:code" must be', 0),
    ("spatial:dimensions unknown", {"multiscales": {"layout": [{"asset": "0"}]}, "spatial:dimensions": ["lat", "lon"]},
     "has no dimension 'lat'", 0),
    ("zarr_conventions not a list", {"zarr_conventions": "multiscales", "multiscales": {"layout": [{"asset": "0"}]}},
     "MUST be a list of convention objects", 0),
    ("convention without identity", {"zarr_conventions": [{"name": "multiscales"}], "multiscales": {"layout": [
        {"asset": "0"}]}}, '"uuid", "schema_url" or "spec_url"', 0),
    ("declared but OME-shaped", {"zarr_conventions": [MS], "multiscales": [{"datasets": [{"path": "0"}]}]},
     "must be an object", 1),
    ("derived in a cycle", {"multiscales": {"layout": [
        {"asset": "0"}, {"asset": "p", "derived_from": "q", "transform": {"scale": [2, 2]}},
        {"asset": "q", "derived_from": "p", "transform": {"scale": [2, 2]}}]}}, "in a cycle", 0),
    ("a hundred thousand levels", {"multiscales": {"layout": [{"asset": "0"}] + [{"asset": f"l{i}"} for i in range(10**5)]}},
     "the first 64 are read", 0),
    ("a 1-D level", {"multiscales": {"layout": [{"asset": "line"}]}}, "must be a grid of numbers", 1),
    ("a text level", {"multiscales": {"layout": [{"asset": "words"}]}}, "must be a grid of numbers", 1),
    ("unknown transform type", {"multiscales": {"layout": [{"asset": "0"}]}, "spatial:transform_type": "rpc",
                                "spatial:transform": [1, 0, 0, 0, -1, 0]}, "not one zarrview reads", 0),
]


@pytest.mark.parametrize("attrs, problem, rc", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_metadata_is_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str], attrs: dict[str, Any],
                                      problem: str, rc: int) -> None:
    root = _store(tmp_path, attrs)
    group = zl.open(str(root))
    assert detect(group) is None  # never taken for OME-NGFF
    found = detect_geozarr(group)
    assert found is not None
    messages = [p.message for p in found.problems]
    assert any(problem in m for m in messages), messages
    out = tmp_path / "plane.npy"
    assert main(["export", str(root), "-o", str(out)]) == rc
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if rc == 0:
        np.testing.assert_array_equal(np.load(out), DATA)
    else:
        assert err.startswith("zarrview: ") and str(group.path) in err


def test_an_ome_multiscales_without_a_pyramid_is_said_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _store(tmp_path, {"multiscales": [{"version": "0.4", "datasets": "0"}]})
    image = detect(zl.open(str(root)))
    assert isinstance(image, OmeImage) and image.multiscales == ()
    assert main(["export", str(root), "-o", str(tmp_path / "x.npy")]) == 1
    err = capsys.readouterr().err
    assert "names no readable pyramid" in err and '"datasets" must be a list' in err


def test_a_convention_is_never_identified_by_its_name(tmp_path: Path) -> None:
    """An OME-NGFF 0.4 image beside an unrelated convention that calls itself "multiscales" (and
    whose schema_url is dead) stays an OME image: names are free text, URLs are never fetched."""
    attrs = {"zarr_conventions": [DEAD],
             "multiscales": [{"version": "0.4", "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
                              "datasets": [{"path": "0", "coordinateTransformations": [
                                  {"type": "scale", "scale": [1.0, 1.0]}]}]}]}
    group = zl.open(str(_store(tmp_path, attrs)))
    assert conventions(group.attrs).names() == ("multiscales",)  # shown by its name, not read as the convention
    assert "multiscales" not in conventions(group.attrs).applied
    image = detect(group)
    assert isinstance(image, OmeImage) and len(image.first.levels) == 1
    assert detect_geozarr(group) is None
