"""The examples of the OME-NGFF 0.4 and 0.5 specifications (tests/data/ome/), made into stores:
each is read with the values it states and without a problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import zarrview.zarrlib as zl
from ome_stores import DATA, bioformats2raw, ome_attrs, spec_example, write_group
from zarrview.viewing.ome import Bioformats2raw, OmeImage, OmePlate, OmeWell, detect

VERSIONS = ("0.4", "0.5")


def _image_store(path: Path, version: str, attrs: dict[str, Any], shapes: list[tuple[int, ...]]) -> Path:
    """A store for a multiscales example: arrays of the given shapes at the paths it names."""
    ms = (attrs["ome"] if version == "0.5" else attrs)["multiscales"][0]
    names = [a["name"] for a in ms["axes"]]
    arrays = {ds["path"]: {"shape": shape, "dimension_names": names} for ds, shape in zip(ms["datasets"], shapes)}
    return write_group(path, version, attrs, arrays)


def test_every_example_is_copied() -> None:
    for version in VERSIONS:
        names = sorted(p.relative_to(DATA / version).as_posix() for p in (DATA / version).rglob("*.json"))
        assert len(names) == 10, names


@pytest.mark.parametrize("version", VERSIONS)
def test_multiscales_example(tmp_path: Path, version: str) -> None:
    attrs = spec_example(version, "multiscales_strict/multiscales_example")
    path = _image_store(tmp_path / "ex.zarr", version, attrs, [(4, 3, 16, 32, 32), (4, 3, 8, 16, 16), (4, 3, 4, 8, 8)])
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.problems == (), img.problems
    ms = img.first
    assert img.name == ms.name == "example" and ms.type == "gaussian"
    assert [(a.name, a.type, a.unit) for a in ms.axes] == [
        ("t", "time", "millisecond"), ("c", "channel", None), ("z", "space", "micrometer"),
        ("y", "space", "micrometer"), ("x", "space", "micrometer")]
    # each level's scale times the multiscale's time scale of 0.1
    assert [lv.scale for lv in ms.levels] == [(0.1, 1, 0.5, 0.5, 0.5), (0.1, 1, 1, 1, 1), (0.1, 1, 2, 2, 2)]
    assert all(lv.translation == (0,) * 5 for lv in ms.levels)
    assert ms.metadata["method"] == "skimage.transform.pyramid_gaussian"


@pytest.mark.parametrize("version", VERSIONS)
def test_multiscales_transformations_example(tmp_path: Path, version: str) -> None:
    attrs = spec_example(version, "multiscales_strict/multiscales_transformations")
    img = detect(zl.open(str(_image_store(tmp_path / "ex.zarr", version, attrs, [(8, 8)]))))
    assert isinstance(img, OmeImage) and img.problems == ()
    assert img.first.levels[0].scale == (10, 10) and img.name == "image_with_coordinateTransformations"


@pytest.mark.parametrize("version", VERSIONS)
def test_label_example(tmp_path: Path, version: str) -> None:
    """The image-label example, given the multiscales a label image has."""
    attrs = spec_example(version, "label_strict/colors_properties")
    ms = {"name": "labels", "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
          "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]}]}
    if version == "0.4":
        attrs["multiscales"] = [{**ms, "version": "0.4"}]
    else:
        attrs["ome"]["multiscales"] = [ms]
    path = write_group(tmp_path / "label.zarr", version, attrs, {"0": {"shape": (8, 8), "dtype": "uint8",
                                                                       "dimension_names": ["y", "x"]}})
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.is_label and img.problems == (), img.problems
    lab = img.label
    written = (attrs["ome"] if version == "0.5" else attrs)["image-label"]
    assert lab is not None and lab.color_map() == {c["label-value"]: tuple(c["rgba"]) for c in written["colors"]}
    for p in written["properties"]:
        assert lab.properties_of(p["label-value"]) == {k: v for k, v in p.items() if k != "label-value"}
    assert lab.source == "../../"
    if version == "0.5":
        assert lab.properties_of(1) == {"area (pixels)": 1650, "class": "cell", "cell type": "neuron"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["plate_2wells", "plate_6wells"])
def test_plate_examples(tmp_path: Path, version: str, name: str) -> None:
    attrs = spec_example(version, f"plate_strict/{name}")
    plate = detect(zl.open(str(write_group(tmp_path / "p.zarr", version, attrs))))
    assert isinstance(plate, OmePlate) and plate.problems == (), plate.problems
    written = (attrs["ome"] if version == "0.5" else attrs)["plate"]
    assert plate.rows == tuple(r["name"] for r in written["rows"])
    assert plate.columns == tuple(c["name"] for c in written["columns"])
    assert [(w.path, w.row, w.column) for w in plate.wells] == [(w["path"], w["rowIndex"], w["columnIndex"])
                                                                for w in written["wells"]]
    assert plate.field_count == written["field_count"]
    assert [(a.id, a.name, a.maximum_field_count, a.start_time) for a in plate.acquisitions] == [
        (a["id"], a["name"], a["maximumfieldcount"], a["starttime"]) for a in written["acquisitions"]]
    if name == "plate_2wells":  # sparse: 2 wells of a 96-well plate
        assert (len(plate.rows), len(plate.columns)) == (8, 12)
        assert plate.well_at(2, 4).path == "C/5" and plate.well_at(0, 0) is None  # type: ignore[union-attr]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["well_2fields", "well_4fields"])
def test_well_examples(tmp_path: Path, version: str, name: str) -> None:
    attrs = spec_example(version, f"well_strict/{name}")
    well = detect(zl.open(str(write_group(tmp_path / "w.zarr", version, attrs))))
    assert isinstance(well, OmeWell) and well.problems == (), well.problems
    written = (attrs["ome"] if version == "0.5" else attrs)["well"]["images"]
    assert [(i.path, i.acquisition) for i in well.images] == [(w["path"], w.get("acquisition")) for w in written]


@pytest.mark.parametrize("version", VERSIONS)
def test_bioformats2raw_examples(tmp_path: Path, version: str) -> None:
    """bf2raw/image.json over a collection whose OME group holds ome/series-2.json."""
    path = bioformats2raw(tmp_path / "bf.zarr", version, 2, series_attr=False)
    write_group(path, version, spec_example(version, "bf2raw/image"))
    write_group(path / "OME", version, spec_example(version, "ome/series-2"))
    node = detect(zl.open(str(path)))
    assert isinstance(node, Bioformats2raw) and node.problems == (), node.problems
    assert (node.series, node.series_from) == (("0", "1"), "OME/series")
    plate = detect(zl.open(str(write_group(tmp_path / "bfp.zarr", version, spec_example(version, "bf2raw/plate")))))
    assert isinstance(plate, OmePlate) and plate.bioformats2raw and plate.problems == ()
    assert [w.path for w in plate.wells] == ["A/1"] and plate.name == "Plate Name 0"


def test_attributes_of_both_versions_are_placed_as_the_examples_place_them() -> None:
    assert ome_attrs("0.5", plate={}) == {"ome": {"version": "0.5", "plate": {}}}
    assert ome_attrs("0.4", plate={}) == {"plate": {}}


def test_shipped_schemas_are_the_specifications() -> None:
    """The package's schemas (zarrview/viewing/ome/schemas) are verbatim copies of shared/'s."""
    import zarrview.viewing.ome as ome

    shipped = Path(ome.__file__).parent / "schemas"
    specs = Path(__file__).resolve().parents[3] / "shared" / "specs" / "ome-ngff"
    if not specs.is_dir():
        pytest.skip(f"{specs} is missing (shared/ is not beside the repository)")
    for version in VERSIONS:
        names = sorted(p.name for p in (specs / version / "schemas").glob("*.schema"))
        assert names == sorted(p.name for p in (shipped / version).glob("*.schema"))
        for name in names:
            assert (shipped / version / name).read_bytes() == (specs / version / "schemas" / name).read_bytes()
