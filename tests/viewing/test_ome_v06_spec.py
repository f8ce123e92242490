"""OME-Zarr 0.6 documents as groups: the multiscales and scene examples of the 0.6rc0
specification (tests/data/ome/0.6/), the cases of ome_zarr_transformations_conformance
(tests/data/ome/transformations-conformance/: routes between a scene's coordinate systems), the
dialects written before 0.6rc0, and broken metadata, which gives problems and never raises."""

from __future__ import annotations

import copy
import json
import re
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrview.zarrlib as zl
from ome_stores import DATA, ome_attrs, spec_example, write_group
from zarrview.viewing.ome import OmeImage, OmeScene, detect
from zarrview.viewing.ome.affine import TransformationError

CONFORMANCE = DATA / "transformations-conformance"
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


def image(path: Path, attrs: dict[str, Any], shapes: list[tuple[int, ...]]) -> Path:
    """A store for a 0.6 multiscales document: arrays of ``shapes`` at the paths it names."""
    ms = attrs["ome"]["multiscales"][0]
    systems = ms.get("coordinateSystems") or attrs["ome"].get("coordinateSystems") or [{"axes": ms.get("axes", [])}]
    names = [a["name"] for a in systems[-1]["axes"]]
    arrays = {ds["path"]: {"shape": s, "dimension_names": names} for ds, s in zip(ms["datasets"], shapes)}
    return write_group(path, "0.6", attrs, arrays)


def test_multiscales_example(tmp_path: Path) -> None:
    attrs = spec_example("0.6", "multiscales_strict/multiscales_example")
    img = detect(zl.open(str(image(tmp_path / "ex.zarr", attrs, [(4, 3, 16, 32, 32), (4, 3, 8, 16, 16),
                                                                   (4, 3, 4, 8, 8)]))))
    assert isinstance(img, OmeImage) and img.problems == (), img.problems
    ms = img.first
    written = attrs["ome"]["multiscales"][0]
    assert ms.intrinsic == written["datasets"][0]["coordinateTransformations"][0]["output"]["name"]
    intrinsic = next(s for s in written["coordinateSystems"] if s["name"] == ms.intrinsic)
    assert [(a.name, a.type, a.unit) for a in ms.axes] == [(a["name"], a["type"], a.get("unit"))
                                                           for a in intrinsic["axes"]]
    for lv, ds in zip(ms.levels, written["datasets"]):
        t = ds["coordinateTransformations"][0]
        steps = t["transformations"] if t["type"] == "sequence" else [t]
        scale = next(s["scale"] for s in steps if s["type"] == "scale")
        shift = next((s["translation"] for s in steps if s["type"] == "translation"), [0] * 5)
        assert lv.scale == tuple(scale) and lv.translation == tuple(shift)


def test_multiscales_transformations_example_is_shown_in_the_intrinsic_system(tmp_path: Path) -> None:
    """The levels lie in "intrinsic" (1 × 1); "physical", 10 × that, is a system the image names."""
    attrs = spec_example("0.6", "multiscales_strict/multiscales_transformations")
    img = detect(zl.open(str(image(tmp_path / "ex.zarr", attrs, [(8, 8)]))))
    assert isinstance(img, OmeImage) and img.problems == (), img.problems
    assert img.first.levels[0].scale == (1, 1) and img.first.intrinsic == "intrinsic"
    assert [s.name for s in img.first.coordinate_systems] == ["physical", "intrinsic"]


def _tile(path: Path, name: str, shift: tuple[float, float]) -> None:
    axes = [{"name": "x", "type": "space", "unit": "micrometer"}, {"name": "y", "type": "space", "unit": "micrometer"}]
    ms = {"coordinateSystems": [{"name": name, "axes": axes}], "datasets": [{"path": "s0", "coordinateTransformations": [
        {"type": "sequence", "input": {"path": "s0"}, "output": {"name": name}, "transformations": [
            {"type": "scale", "scale": [2.0, 2.0]}, {"type": "translation", "translation": list(shift)}]}]}]}
    write_group(path, "0.6", ome_attrs("0.6", multiscales=[ms]), {"s0": {"shape": (4, 4), "dimension_names": ["x", "y"]}})


def test_scene_stitching_example_links_every_tile(tmp_path: Path) -> None:
    attrs = spec_example("0.6", "scene/scene_stitching")
    root = write_group(tmp_path / "scene.zarr", "0.6", attrs)
    links = attrs["ome"]["scene"]["coordinateTransformations"]
    for t in links:
        _tile(root / t["input"]["path"], t["input"]["name"], (0.0, 0.0))
    scene = detect(zl.open(str(root)))
    assert isinstance(scene, OmeScene) and scene.problems == (), scene.problems
    assert scene.images == tuple(sorted(t["input"]["path"] for t in links))
    assert [s.name for s in scene.coordinate_systems] == ["world"]
    points = np.array([[1.0, 2.0], [-3.0, 40.0]])
    shifts = {t["input"]["path"]: np.array(t["translation"], dtype=float) for t in links}
    for a in shifts:
        np.testing.assert_allclose(scene.route((a, "physical"), ("", "world")).apply(points), points + shifts[a])
        for b in shifts:  # tile to tile: up to the world, back down the other's link
            np.testing.assert_allclose(scene.route((a, "physical"), (b, "physical")).apply(points),
                                       points + shifts[a] - shifts[b])


def test_a_scene_names_what_it_cannot_find(tmp_path: Path) -> None:
    attrs = copy.deepcopy(spec_example("0.6", "scene/scene_stitching"))
    links = attrs["ome"]["scene"]["coordinateTransformations"]
    links[1]["input"]["name"] = "elsewhere"
    links[3]["output"]["name"] = "nowhere"
    root = write_group(tmp_path / "scene.zarr", "0.6", attrs)
    for t in links[:3]:
        _tile(root / t["input"]["path"], "physical", (0.0, 0.0))
    scene = detect(zl.open(str(root)))
    assert isinstance(scene, OmeScene)
    said = {p.path: p.message for p in scene.problems if p.severity == "error"}
    assert "has no coordinate system 'elsewhere'" in said["$.ome.scene.coordinateTransformations[1].input"]
    assert "cannot be opened" in said["$.ome.scene.coordinateTransformations[3].input"]
    assert "MUST be connected" in said["$.ome.scene"]
    with pytest.raises(TransformationError):
        scene.route(("tile_1", "physical"), ("", "world"))


# -- ome_zarr_transformations_conformance ----------------------------------------------------------

CASES = sorted(p.name for p in CONFORMANCE.glob("*.ome.zarr"))


def test_every_case_is_copied() -> None:
    assert len(CASES) == 24


def test_a_pre_release_says_nothing_of_its_own_spellings(tmp_path: Path) -> None:
    attrs = zl.open(str(CONFORMANCE / "byDimension.ome.zarr")).attrs
    root = write_group(tmp_path / "dev.zarr", "0.6", {"ome": {**attrs["ome"], "version": "0.6.dev3"}})
    scene = detect(zl.open(str(root)))
    assert isinstance(scene, OmeScene)
    assert [p.message for p in scene.problems] == ["version '0.6.dev3' is a pre-release of 0.6; read with its own spellings"]


@pytest.mark.parametrize("case", CASES)
def test_conformance_case(case: str) -> None:
    spec = tomllib.loads((CONFORMANCE / case / "conformance.toml").read_text())
    scene = detect(zl.open(str(CONFORMANCE / case)))
    assert isinstance(scene, OmeScene)
    source, target = ("", spec["source"]["name"]), ("", spec["target"]["name"])
    if spec["should_error"]:
        with pytest.raises(TransformationError, match="not defined"):
            scene.route(source, target)
        return
    # the cases declare "0.6" but spell references and byDimension items as the pre-releases
    # did: read all the same, and each spelling said
    assert all("spelling" in p.message for p in scene.problems), scene.problems
    got = scene.route(source, target).apply(np.array(spec["source"]["coordinates"], dtype=float))
    np.testing.assert_allclose(got, spec["target"]["coordinates"], rtol=spec["relative_tolerance"],
                               atol=spec["absolute_tolerance"])


# -- dialects ---------------------------------------------------------------------------------------

def _dev3(attrs: dict[str, Any]) -> dict[str, Any]:
    """A 0.6rc0 document as 0.6.dev3 wrote it: references as strings."""
    doc = copy.deepcopy(attrs)
    doc["ome"]["version"] = "0.6.dev3"
    ms = doc["ome"]["multiscales"][0]
    for ds in ms["datasets"]:
        t = ds["coordinateTransformations"][0]
        t["input"], t["output"] = t["input"]["path"], t["output"]["name"]
    for t in ms.get("coordinateTransformations", []):
        t["input"], t["output"] = t["input"]["name"], t["output"]["name"]
    return doc


def _dev4(attrs: dict[str, Any]) -> dict[str, Any]:
    return {**attrs, "ome": {**attrs["ome"], "version": "0.6.dev4"}}


def _systems_beside(attrs: dict[str, Any]) -> dict[str, Any]:
    """An early draft's layout: the coordinate systems beside "multiscales"."""
    doc = copy.deepcopy(attrs)
    doc["ome"]["coordinateSystems"] = doc["ome"]["multiscales"][0].pop("coordinateSystems")
    return doc


EXAMPLE_SHAPES = {"multiscales_example": [(4, 3, 16, 32, 32), (4, 3, 8, 16, 16), (4, 3, 4, 8, 8)],
                  "multiscales_transformations": [(8, 8)]}
PRE = "is a pre-release of 0.6; read with its own spellings"
DIALECTS: list[tuple[str, str, Callable[[dict[str, Any]], dict[str, Any]], list[str]]] = [
    ("dev3-strings", "multiscales_transformations", _dev3, [f"version '0.6.dev3' {PRE}"]),
    ("dev3-strings-5d", "multiscales_example", _dev3, [f"version '0.6.dev3' {PRE}"]),
    ("dev4", "multiscales_example", _dev4, [f"version '0.6.dev4' {PRE}"]),
    # read, but the layout is not 0.6rc0's, and its schema says so
    ("systems-beside", "multiscales_example", _systems_beside,
     ['"coordinateSystems" beside "multiscales" is a pre-release layout; 0.6 puts them in each multiscale',
      "does not match the 0.6 image schema: 'coordinateSystems' is a required property"]),
]


@pytest.mark.parametrize(("name", "edit", "warnings"), [d[1:] for d in DIALECTS], ids=[d[0] for d in DIALECTS])
def test_dialects_place_the_levels_as_0_6rc0(tmp_path: Path, name: str, edit: Callable[[dict[str, Any]], dict[str, Any]],
                                             warnings: list[str]) -> None:
    attrs = spec_example("0.6", f"multiscales_strict/{name}")
    final = detect(zl.open(str(image(tmp_path / "rc0.zarr", attrs, EXAMPLE_SHAPES[name]))))
    img = detect(zl.open(str(image(tmp_path / "dialect.zarr", edit(attrs), EXAMPLE_SHAPES[name]))))
    assert isinstance(img, OmeImage) and isinstance(final, OmeImage) and final.problems == ()
    assert [p.message for p in img.problems] == warnings
    assert img.first.axes == final.first.axes and img.first.intrinsic == final.first.intrinsic
    assert [(lv.scale, lv.translation) for lv in img.first.levels] == \
        [(lv.scale, lv.translation) for lv in final.first.levels]


# -- broken metadata --------------------------------------------------------------------------------

def _base() -> dict[str, Any]:
    return copy.deepcopy(spec_example("0.6", "multiscales_strict/multiscales_example"))


def _ds(doc: dict[str, Any], j: int = 0) -> dict[str, Any]:
    t: dict[str, Any] = doc["ome"]["multiscales"][0]["datasets"][j]["coordinateTransformations"][0]
    return t


def _cycle(doc: dict[str, Any]) -> None:
    t = _ds(doc, 1)
    t["transformations"].append(t)


def _rotate(doc: dict[str, Any]) -> None:
    _ds(doc, 1).update(type="affine", affine=[[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 2, 0, 0, 0],
                                              [0, 0, 0, 0, 2, 0], [0, 0, 0, 2, 0, 0]])
    del _ds(doc, 1)["transformations"]


# (id, edit, severity, JSON path below $.ome.multiscales[0], words); level 1 is the one broken
BROKEN: list[tuple[str, Callable[[dict[str, Any]], None], str, str, str]] = [
    ("no-systems", lambda d: d["ome"]["multiscales"][0].pop("coordinateSystems"), "error", "",
     'MUST have "coordinateSystems"'),
    ("cycle", _cycle, "error", ".datasets[1].coordinateTransformations[0]", "contains itself"),
    ("dimensionality", lambda d: _ds(d, 1)["transformations"][0].update(scale=[2, 2, 2]), "error",
     ".datasets[1].coordinateTransformations[0]", "3 values; the input has 5 axes"),
    ("not-axis-aligned", _rotate, "warning", ".datasets[1].coordinateTransformations", "unsupported: level 1"),
    ("unknown-output", lambda d: _ds(d, 1)["output"].update(name="elsewhere"), "error",
     ".datasets[1].coordinateTransformations[0].output", "not one of the coordinate systems"),
    ("wrong-input", lambda d: _ds(d, 1)["input"].update(path="s9"), "error",
     ".datasets[1].coordinateTransformations[0].input", "MUST be the dataset's path"),
    ("negative-scale", lambda d: _ds(d, 1)["transformations"][0].update(scale=[1, 1, -2, 2, 2]), "error",
     ".datasets[1].coordinateTransformations", "must be positive"),
    ("field", lambda d: _ds(d, 1).update(type="displacements", path="field"), "warning",
     ".datasets[1].coordinateTransformations[0]", "unsupported: displacements"),
    ("link-unknown", lambda d: d["ome"]["multiscales"][0].update(coordinateTransformations=[
        {"type": "identity", "input": {"name": _ds(d)["output"]["name"]}, "output": {"name": "x"}}]),
     "error", ".coordinateTransformations[0]", "not defined in this multiscale"),
    ("link-dimensionality", lambda d: d["ome"]["multiscales"][0].update(coordinateTransformations=[
        {"type": "scale", "scale": [1, 2], "input": {"name": _ds(d)["output"]["name"]},
         "output": {"name": _ds(d)["output"]["name"]}}]),
     "error", ".coordinateTransformations[0]", "2 values; the input has 5 axes"),
    ("string-systems", lambda d: d["ome"]["multiscales"][0].update(coordinateSystems="all"), "error",
     ".coordinateSystems", "must be a list"),
]


@pytest.mark.parametrize(("edit", "severity", "path", "words"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_broken_0_6_metadata_is_a_problem(tmp_path: Path, edit: Callable[[dict[str, Any]], None], severity: str,
                                          path: str, words: str) -> None:
    doc = _base()
    edit(doc)
    shapes = EXAMPLE_SHAPES["multiscales_example"]
    names = ["t", "c", "z", "y", "x"]
    root = write_group(tmp_path / "img.zarr", "0.6", {}, {ds["path"]: {"shape": s, "dimension_names": names}
                       for ds, s in zip(doc["ome"]["multiscales"][0]["datasets"], shapes)})
    group = zl.open(str(root))
    group.attrs.update(doc)  # given as read: a cycle has no JSON form
    img = detect(group)
    assert isinstance(img, OmeImage)
    hits = [p for p in img.problems if p.path == f"$.ome.multiscales[0]{path}" and words in p.message]
    assert hits and hits[0].severity == severity, img.problems
    levels = img.first.levels
    assert len(levels) == 3 and all(lv.readable for lv in levels)
    if edit in (_cycle, _rotate):  # the level cannot be placed: drawn with the identity
        assert levels[1].scale == (1.0,) * 5 and levels[1].translation == (0.0,) * 5
    if path.startswith(".datasets[1]"):  # the others are placed as written
        written = _ds(_base(), 2)["transformations"]
        assert levels[2].scale == tuple(written[0]["scale"]) and levels[2].translation == tuple(written[1]["translation"])


def test_a_group_that_is_not_v3_is_said(tmp_path: Path) -> None:
    doc = _base()
    root = tmp_path / "v2.zarr"
    shutil.rmtree(root, ignore_errors=True)
    write_group(root, "0.4", doc)
    found = detect(zl.open(str(root)))
    assert found is not None
    assert any("0.6 metadata MUST be in a Zarr v3 group" in p.message for p in found.problems)


@pytest.mark.parametrize(("names", "said"), [(None, []), (["t", "c", "z", "row", "col"], ["warning"])])
def test_dimension_names_are_optional_in_0_6(tmp_path: Path, names: list[str] | None, said: list[str]) -> None:
    """0.5 requires the arrays' dimension_names; 0.6rc0 no longer does: absent is fine, different
    from the intrinsic system's axes a warning."""
    doc = _base()
    root = write_group(tmp_path / "img.zarr", "0.6", doc, {
        ds["path"]: {"shape": s, "dimension_names": names}
        for ds, s in zip(doc["ome"]["multiscales"][0]["datasets"], EXAMPLE_SHAPES["multiscales_example"])})
    img = detect(zl.open(str(root)))
    assert isinstance(img, OmeImage)
    assert [p.severity for p in img.problems] == said * 3
    assert all("differ from the intrinsic" in p.message for p in img.problems)


@pytest.mark.parametrize(("link_type", "errors"), [("identity", []), ("affine", ["MUST be an identity, scale or translation"])])
def test_a_link_to_a_label_image(tmp_path: Path, link_type: str, errors: list[str]) -> None:
    """The example that links an image's system to its label image's: only identity, scale or
    translation may do that."""
    doc = json.loads(_COMMENT.sub("", (DATA / "0.6" / "multiscales_strict" /
                                        "multiscales_reference_to_label.json").read_text()))
    link = doc["ome"]["multiscales"][0]["coordinateTransformations"][0]
    if link_type == "affine":
        link.update(type="affine", affine=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])
    root = write_group(tmp_path / "img.zarr", "0.6", doc, {"s0": {"shape": (4, 8, 8), "dimension_names": ["z", "y", "x"]}})
    img = detect(zl.open(str(root)), labels=False)
    assert isinstance(img, OmeImage)
    assert img.first.levels[0].scale == (0.5, 0.5, 1)
    said = [p.message for p in img.problems]
    assert len(said) == len(errors) and all(e in m for e, m in zip(errors, said)), said


def test_a_scene_is_marked_and_described() -> None:
    from zarrview.viewing.ome import describe, marker

    group = zl.open(str(CONFORMANCE / "simple_path.ome.zarr"))
    assert marker(group.attrs) == "[OME scene 0.6, 2 transformations]"
    scene = detect(group)
    assert scene is not None
    lines = describe(scene)
    assert lines[0] == "OME-NGFF scene (version 0.6)"
    assert "  Coordinate systems: input (y, x), intermediate (y, x), output (y, x)" in lines
    assert "    identity (input->intermediate): 'input' -> 'intermediate'" in lines


LEAF = st.recursive(st.none() | st.booleans() | st.integers(-2, 6) | st.floats(allow_nan=False) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["type", "name", "path", "scale", "translation", "transformations",
                                         "input", "output", "axes", "mapAxis", "affine"]), inner, max_size=4),
                    max_leaves=12)
PLACES = ["coordinateSystems", "system", "axis", "dataset", "transformation", "step", "input", "output", "links",
          "scene"]


def _put(doc: dict[str, Any], where: str, value: Any) -> None:
    ms = doc["ome"]["multiscales"][0]
    t = ms["datasets"][1]["coordinateTransformations"][0]
    if where == "scene":
        doc["ome"]["scene"] = value
    elif where == "links":
        ms["coordinateTransformations"] = value
    elif where in ("input", "output"):
        t[where] = value
    elif where == "step":
        t["transformations"][0] = value
    elif where == "transformation":
        ms["datasets"][1]["coordinateTransformations"][0] = value
    elif where == "dataset":
        ms["datasets"][1] = value
    elif where == "axis":
        ms["coordinateSystems"][0]["axes"][2] = value
    elif where == "system":
        ms["coordinateSystems"][0] = value
    else:
        ms["coordinateSystems"] = value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(PLACES), value=LEAF)
def test_any_json_in_any_0_6_place_never_raises(tmp_path: Path, where: str, value: Any) -> None:
    doc = _base()
    _put(doc, where, value)
    root = write_group(tmp_path / "img.zarr", "0.6", doc, {
        ds["path"]: {"shape": s, "dimension_names": ["t", "c", "z", "y", "x"]}
        for ds, s in zip(_base()["ome"]["multiscales"][0]["datasets"], EXAMPLE_SHAPES["multiscales_example"])})
    node = detect(zl.open(str(root)))
    assert node is not None
    for p in node.problems:
        assert p.severity in ("error", "warning") and p.path.startswith("$") and p.message
    if isinstance(node, OmeImage) and node.multiscales:
        assert all(len(lv.scale) == len(lv.translation) for lv in node.first.levels)
