"""Bad metadata: each case gives a clear Problem (severity, JSON path, a message naming what is
wrong), never an exception, and the image stays usable where its levels can be read."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrview.zarrlib as zl
from ome_stores import ome_attrs, write_group
from zarrview.viewing.ome import OmeImage, OmeLabels, OmePlate, detect

VERSIONS = ("0.4", "0.5")
AXES = [{"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
        {"name": "x", "type": "space", "unit": "micrometer"}]
SHAPES = {"0": (2, 32, 32), "1": (2, 16, 16)}


def _ms(version: str) -> dict[str, Any]:
    ms: dict[str, Any] = {"name": "img", "axes": copy.deepcopy(AXES), "datasets": [
        {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 0.5, 0.5]}]},
        {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1, 1.0, 1.0]},
                                                    {"type": "translation", "translation": [0, 0.25, 0.25]}]}]}
    if version == "0.4":
        ms["version"] = "0.4"
    return ms


def _omero() -> dict[str, Any]:
    return {"channels": [{"label": "a", "color": "FF0000", "window": {"start": 0, "end": 10, "min": 0, "max": 255}},
                         {"label": "b", "color": "00FF00", "window": {"start": 0, "end": 10, "min": 0, "max": 255}}]}


def image(tmp_path: Path, version: str, edit: Callable[[dict[str, Any]], None] | None = None,
          shapes: dict[str, tuple[int, ...]] | None = None, dtype: str = "uint16", fmt_version: str | None = None,
          dimension_names: list[Any] | None | str = "axes") -> Path:
    """A valid two-level image whose OME keys ``edit`` then breaks."""
    keys: dict[str, Any] = {"multiscales": [_ms(version)], "omero": _omero()}
    if edit is not None:
        edit(keys)
    names = [a["name"] for a in AXES] if dimension_names == "axes" else dimension_names
    arrays = {p: {"shape": s, "dtype": dtype, "dimension_names": names} for p, s in (shapes or SHAPES).items()}
    return write_group(tmp_path / "img.zarr", fmt_version or version, ome_attrs(version, **keys), arrays)


def _ds(k: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return k["multiscales"][0]["datasets"][i]


# (id, edit of the OME keys, expected severity, JSON path below the namespace, words in the message)
CASES: list[tuple[str, Callable[[dict[str, Any]], None], str, str, str]] = [
    ("axes-count", lambda k: k["multiscales"][0]["axes"].pop(0), "error", "multiscales[0].datasets[0]",
     "has 3 dimensions; there are 2 axes"),
    ("unit-unknown", lambda k: k["multiscales"][0]["axes"][1].update(unit="micron"), "warning",
     "multiscales[0].axes[1].unit", "'micron' is not a space unit"),
    ("unit-of-time-on-space", lambda k: k["multiscales"][0]["axes"][2].update(unit="second"), "warning",
     "multiscales[0].axes[2].unit", "'second' is not a space unit"),
    ("type-custom", lambda k: k["multiscales"][0]["axes"][0].update(type="wavelength"), "warning",
     "multiscales[0].axes[0].type", "custom type 'wavelength'"),
    ("names-repeat", lambda k: k["multiscales"][0]["axes"][2].update(name="y"), "error",
     "multiscales[0].axes[1].name", "MUST be unique"),
    ("one-space-axis", lambda k: k["multiscales"][0]["axes"][1].update(type="channel"), "error",
     "multiscales[0].axes", 'MUST be 2 or 3 axes of type "space"'),
    ("order", lambda k: k["multiscales"][0]["axes"].reverse(), "error", "multiscales[0].axes",
     "MUST be ordered time, then channel"),
    ("scale-length", lambda k: _ds(k)["coordinateTransformations"][0].update(scale=[0.5, 0.5]), "error",
     "multiscales[0].datasets[0].coordinateTransformations[0].scale", "has 2 values; it MUST have one per axis (3)"),
    ("no-scale", lambda k: _ds(k).update(coordinateTransformations=[]), "error",
     "multiscales[0].datasets[0].coordinateTransformations", "exactly one scale"),
    ("no-transforms", lambda k: _ds(k).pop("coordinateTransformations"), "error",
     "multiscales[0].datasets[0].coordinateTransformations", 'MUST have "coordinateTransformations"'),
    ("translation-first", lambda k: _ds(k, 1)["coordinateTransformations"].reverse(), "error",
     "multiscales[0].datasets[1].coordinateTransformations", "translation MUST come after the scale"),
    ("affine", lambda k: _ds(k)["coordinateTransformations"].append({"type": "affine", "affine": [1]}), "error",
     "multiscales[0].datasets[0].coordinateTransformations[1].type", "MUST be of type scale or translation"),
    ("scale-zero", lambda k: _ds(k)["coordinateTransformations"][0].update(scale=[1, 0, 0.5]), "error",
     "multiscales[0].datasets[0].coordinateTransformations[0].scale", "must be positive"),
    ("scale-in-a-file", lambda k: _ds(k)["coordinateTransformations"].__setitem__(0, {"type": "scale", "path": "s"}),
     "warning", "multiscales[0].datasets[0].coordinateTransformations[0]", "stored as binary data ('s') is not read"),
    ("order-of-levels", lambda k: k["multiscales"][0]["datasets"].reverse(), "error", "multiscales[0].datasets",
     "MUST be ordered from highest to lowest resolution"),
    ("missing-level", lambda k: _ds(k, 1).update(path="nope"), "error", "multiscales[0].datasets[1].path",
     "level 'nope' cannot be opened"),
    ("no-datasets", lambda k: k["multiscales"][0].update(datasets=[]), "error", "multiscales[0].datasets",
     'MUST list at least one level'),
    ("multiscales-not-list", lambda k: k.update(multiscales={"axes": []}), "error", "multiscales",
     "must be a non-empty list"),
    ("axes-missing", lambda k: k["multiscales"][0].pop("axes"), "error", "multiscales[0].axes",
     '"axes" is required'),
    ("no-color", lambda k: k["omero"]["channels"][1].pop("color"), "error", "omero.channels[1]",
     "channel 1 ('b') has no \"color\""),
    ("bad-color", lambda k: k["omero"]["channels"][0].update(color="red"), "error", "omero.channels[0].color",
     "6 hexadecimal digits"),
    ("no-window", lambda k: k["omero"]["channels"][0].pop("window"), "error", "omero.channels[0]",
     "channel 0 ('a') has no \"window\""),
    ("window-part", lambda k: k["omero"]["channels"][0]["window"].pop("max"), "error", "omero.channels[0].window",
     "the window MUST have max"),
    ("channel-count", lambda k: k["omero"]["channels"].pop(), "warning", "omero.channels",
     "1 channels are described; the image has 2"),
    ("no-channels", lambda k: k["omero"].pop("channels"), "error", "omero.channels", '"channels" is required'),
    ("rdefs-model", lambda k: k["omero"].update(rdefs={"model": "rainbow"}), "warning", "omero.rdefs.model",
     "not 'rainbow'"),
    ("schema-only", lambda k: k["omero"]["channels"][0].update(label=5), "error", "omero.channels[0].label",
     "schema: 5 is not of type 'string'"),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_broken_rule_is_one_clear_problem(tmp_path: Path, version: str, case: tuple[Any, ...]) -> None:
    _, edit, severity, path, words = case
    img = detect(zl.open(str(image(tmp_path, version, edit))))
    assert isinstance(img, OmeImage)
    prefix = "$.ome." if version == "0.5" else "$."
    hits = [p for p in img.problems if p.path == prefix + path and words in p.message and p.severity == severity]
    assert hits, "\n".join(map(str, img.problems))
    assert hits[0].node == "/" and str(hits[0]).startswith(f"{severity}: /: {prefix}{path}: ")


@pytest.mark.parametrize("version", VERSIONS)
def test_a_valid_image_has_no_problem(tmp_path: Path, version: str) -> None:
    img = detect(zl.open(str(image(tmp_path, version))))
    assert isinstance(img, OmeImage) and img.problems == ()


def test_dimension_names_must_equal_the_axes_in_05(tmp_path: Path) -> None:
    img = detect(zl.open(str(image(tmp_path, "0.5", dimension_names=["c", "row", "col"]))))
    assert isinstance(img, OmeImage)
    msgs = [p.message for p in img.problems if p.severity == "error"]
    assert any("dimension_names ['c', 'row', 'col'] MUST equal the axes names ['c', 'y', 'x']" in m for m in msgs), msgs
    img = detect(zl.open(str(image(tmp_path, "0.5", dimension_names=None))))
    assert any('has no "dimension_names"' in p.message for p in img.problems)  # type: ignore[union-attr]
    # 0.4 (Zarr v2) has no dimension names to check
    assert detect(zl.open(str(image(tmp_path, "0.4", dimension_names=None)))).problems == ()  # type: ignore[union-attr]


def test_a_missing_level_leaves_the_others_usable(tmp_path: Path) -> None:
    img = detect(zl.open(str(image(tmp_path, "0.5", lambda k: _ds(k, 0).update(path="gone")))))
    assert isinstance(img, OmeImage)
    levels = img.first.levels
    assert levels[0].array is None and levels[0].error and levels[1].readable and levels[1].shape == (2, 16, 16)
    assert [lv.path for lv in img.first.readable_levels] == ["1"]


def test_version_rules(tmp_path: Path) -> None:
    later = detect(zl.open(str(image(tmp_path, "0.5", lambda k: None))))
    assert later is not None
    p = image(tmp_path, "0.5")
    doc = zl.open(str(p)).attrs
    doc["ome"]["version"] = "0.7"
    write_group(p, "0.5", doc, {n: {"shape": s, "dimension_names": ["c", "y", "x"]} for n, s in SHAPES.items()})
    img = detect(zl.open(str(p)))
    # a later version is read as the latest known (0.6); this one's 0.5-shaped multiscale breaks
    # 0.6's rules, each said, and its levels still lie where 0.5 puts them
    assert isinstance(img, OmeImage) and img.version == "0.6"
    messages = [p.message for p in img.problems]
    assert messages[0] == "version '0.7' is read as 0.6"
    assert 'a 0.6 multiscale MUST have "coordinateSystems"' in messages
    assert [lv.scale for lv in img.first.levels] == [(1, 0.5, 0.5), (1, 1, 1)]
    assert img.first.levels[1].translation == (0, 0.25, 0.25) and img.first.axes[1].unit == "micrometer"
    # 0.5 metadata in a Zarr v2 group
    img = detect(zl.open(str(image(tmp_path, "0.5", fmt_version="0.4"))))
    assert any("0.5 metadata MUST be in a Zarr v3 group" in p.message for p in img.problems)  # type: ignore[union-attr]


def test_label_rules(tmp_path: Path) -> None:
    """Listed label images must exist, have image-label, integer pixels and the image's level count."""
    for version in VERSIONS:
        root = image(tmp_path, version)
        write_group(root / "labels", version, ome_attrs(version, labels=["good", "plain", "float", "short", "absent"]))

        def label(name: str, with_label: bool = True, dtype: str = "uint8", levels: int = 2,
                  version: str = version, root: Path = root) -> None:
            ms = _ms(version)
            ms["datasets"] = ms["datasets"][:levels]
            keys: dict[str, Any] = {"multiscales": [ms]}
            if with_label:
                keys["image-label"] = {"colors": [{"label-value": 1, "rgba": [1, 2, 3, 4]}]}
            arrays = {d["path"]: {"shape": SHAPES[d["path"]], "dtype": dtype, "dimension_names": ["c", "y", "x"]}
                      for d in ms["datasets"]}
            write_group(root / "labels" / name, version, ome_attrs(version, **keys), arrays)

        label("good")
        label("plain", with_label=False)
        label("float", dtype="float32")
        label("short", levels=1)
        img = detect(zl.open(str(root)))
        assert isinstance(img, OmeImage) and img.labels == ("good", "plain", "float", "short", "absent")
        said = {(p.node, p.severity, p.message) for p in img.problems}
        assert ("/labels", "warning", "label image 'plain' has no \"image-label\" (colours, properties, source)") in said
        assert ("/labels", "error", "label image 'short' has 1 levels; it MUST have as many as its image (2)") in said
        assert any(n == "/labels" and s == "error" and "'absent' cannot be opened" in m for n, s, m in said)
        bad = detect(zl.open(f"{root}::/labels/float"))
        assert isinstance(bad, OmeImage) and bad.is_label
        assert any("label images MUST be of an integer type" in p.message for p in bad.errors)
        group = detect(zl.open(f"{root}::/labels"))
        assert isinstance(group, OmeLabels) and any("'absent'" in p.message for p in group.problems)


def test_image_label_colours(tmp_path: Path) -> None:
    keys = {"multiscales": [_ms("0.5")], "image-label": {"colors": [
        {"label-value": 1, "rgba": [300, 0, 0, 255]}, {"label-value": "two", "rgba": [0, 0, 0, 0]},
        {"label-value": 3, "rgba": [1, 2, 3, 4]}, {"label-value": 3, "rgba": [5, 6, 7, 8]}]}}
    arrays = {p: {"shape": s, "dtype": "uint8", "dimension_names": ["c", "y", "x"]} for p, s in SHAPES.items()}
    img = detect(zl.open(str(write_group(tmp_path / "l.zarr", "0.5", ome_attrs("0.5", **keys), arrays))))
    assert isinstance(img, OmeImage) and img.label is not None
    assert img.label.color_map() == {1: None, 3: (5, 6, 7, 8)}  # the last entry wins on repeats
    paths = {p.path for p in img.errors}
    assert {"$.ome.image-label.colors[0].rgba", "$.ome.image-label.colors[1].label-value"} <= paths


PLATE_CASES = [
    ("path-not-rows", lambda p: p["wells"][0].update(path="Z/1"), "plate.wells[0].path", "'Z' is not one of the rows"),
    ("row-index", lambda p: p["wells"][0].update(rowIndex=1), "plate.wells[0].rowIndex",
     "rowIndex 1 is row 'B'; path and rowIndex MUST name the same row"),
    ("column-past", lambda p: p["wells"][1].update(columnIndex=9), "plate.wells[1].columnIndex",
     "columnIndex 9 is past the 2 columns"),
    ("deep-path", lambda p: p["wells"][0].update(path="plate/A/1"), "plate.wells[0].path",
     "MUST be a row name, '/', and a column name"),
    ("row-name", lambda p: p["rows"][0].update(name="A-1"), "plate.rows[0].name", "only alphanumeric"),
    ("no-columns", lambda p: p.pop("columns"), "plate.columns", '"columns" is required'),
    ("acquisition-id", lambda p: p["acquisitions"][0].update(id=-1), "plate.acquisitions[0].id", "at least 0"),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", PLATE_CASES, ids=[c[0] for c in PLATE_CASES])
def test_plate_rules(tmp_path: Path, version: str, case: tuple[Any, ...]) -> None:
    _, edit, path, words = case
    plate = {"rows": [{"name": "A"}, {"name": "B"}], "columns": [{"name": "1"}, {"name": "2"}],
             "wells": [{"path": "A/1", "rowIndex": 0, "columnIndex": 0}, {"path": "B/2", "rowIndex": 1, "columnIndex": 1}],
             "acquisitions": [{"id": 0}]}
    edit(plate)
    node = detect(zl.open(str(write_group(tmp_path / "p.zarr", version, ome_attrs(version, plate=plate)))))
    assert isinstance(node, OmePlate)
    prefix = "$.ome." if version == "0.5" else "$."
    assert any(p.path == prefix + path and words in p.message for p in node.problems), \
        "\n".join(map(str, node.problems))


def test_bioformats2raw_layout_must_be_3(tmp_path: Path) -> None:
    node = detect(zl.open(str(write_group(tmp_path / "b.zarr", "0.4", {"bioformats2raw.layout": 2}))))
    assert node is not None and any(p.path == "$.bioformats2raw.layout" and "MUST be 3" in p.message
                                    for p in node.problems)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=True) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
                        ["path", "name", "type", "scale", "translation", "axes", "datasets", "unit", "color",
                         "window", "channels", "label-value", "rgba", "rows", "columns", "wells", "images"]),
                        inner, max_size=4), max_leaves=12)
KEYS = ["multiscales", "omero", "labels", "image-label", "plate", "well", "bioformats2raw.layout"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from(VERSIONS), key=st.sampled_from(KEYS), value=JSON,
       where=st.sampled_from(["top", "axes", "datasets", "transforms", "channel"]))
def test_any_json_in_any_place_never_raises(tmp_path: Path, version: str, key: str, value: Any, where: str) -> None:
    def edit(k: dict[str, Any]) -> None:
        if where == "top":
            k[key] = value
        elif where == "axes":
            k["multiscales"][0]["axes"][1] = value
        elif where == "datasets":
            k["multiscales"][0]["datasets"][0] = value
        elif where == "transforms":
            _ds(k)["coordinateTransformations"] = value
        else:
            k["omero"]["channels"][0] = value

    node = detect(zl.open(str(image(tmp_path, version, edit))))
    assert node is not None
    for p in node.problems:
        assert p.severity in ("error", "warning") and p.path.startswith("$") and p.message
