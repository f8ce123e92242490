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


# SHA-256 of every JSON schema the OME-NGFF 0.4 and 0.5 specifications publish (their schemas/
# folders), so that an edit of a shipped copy is caught without the specifications at hand
SPEC_SCHEMA_SHA256 = {
    "0.4": {
        "bf2raw.schema": "019529b8fed6bc5a27cb6185513b2e1e1f1b38aeaf886937e11abefe6b078945",
        "image.schema": "89fe8ef5fe1537e142a8034473597e2b7d372e2f6954677bf49b7197e87adb9e",
        "label.schema": "f2eeebaf37f1045136812129b78e4dd639f7297e61e2d2b11533999b52402065",
        "ome.schema": "80fea76a29d38f03b2420f4e4f9dd886ffa8949e3817e79180f6d7fb65ea570c",
        "plate.schema": "3a6a7fb41cdf1967d60578c16baf9251fa1f1f7367b731041d8ae8f5ffc20942",
        "strict_image.schema": "b2c5d390536040d52d9bc79bce1a5d15480c42887cb7dc057bea2249775bf4bd",
        "strict_label.schema": "a090749377ae94c05bbf3d59ab3fbc95e3c910ea2a16549a9294ad66e3b027e8",
        "strict_plate.schema": "ba3bb51635b37872aca90bd84bcaabea7070fd7cbf74380e1877a8cbc3674d1f",
        "strict_well.schema": "6de848a9959147e72f6748a37cc01cab4fdb6422906bc4856d8cb77461b2fe1a",
        "well.schema": "b018d01b0243a02d06d911ed5e55ca176d9be410fdc1cdd7ad9ef8f0e9faccfa",
    },
    "0.5": {
        "_version.schema": "26c03746999987ae695a4d0efb2ae56503dd69b7b80320732f2a04a540ef91d5",
        "bf2raw.schema": "cc1ed75518e72f6173be7011a819a7907aa6686b3153d3392b922710fa5ee2aa",
        "image.schema": "eb129f72fdd91e0da5c762b0214ac96a714a562c559fc60c6f688e28644c929d",
        "label.schema": "9f8bfd0cc0d50c6680dd39abe9b569e53283651933fac56d3b82ca8345740aec",
        "ome.schema": "9b9b3259256e928a2d2994f58fee47377eddbe8c0e421e50dfd2cca391e711c5",
        "ome_zarr.schema": "2e123d2aa2bde3cc866b2bda1d7840c462915c2aa76226e3fba9384202cf33f7",
        "plate.schema": "a8a89bfd90a5c3c9f72eb94a9f3b6fa91939ba3230d0f2fef7a58fba7b075233",
        "strict_image.schema": "a907836da5d1d528f30008238a2862891ffa60e63366fe403c732a88e6ab6825",
        "strict_label.schema": "5d3ffcf97be415f8f4b459ea50230dbe78ba147d5434bda0307b3943ca1c265d",
        "strict_plate.schema": "f63546f9821a4cd6ec8d7f5966ca8e444bcf70a0514641291d5d95ef60739ef9",
        "strict_well.schema": "45ae31e1f7f530fa6308a4770bd4adf1ae04ea65f35a9111f64a7b311cdf70db",
        "well.schema": "03f2bb88aa66de9d46d5b6bd2e935dabafcd452f6cbbbd671e1f2688a7df6b55",
    },
}


def test_shipped_schemas_are_the_specifications() -> None:
    """The package's schemas (zarrview/viewing/ome/schemas) are verbatim copies of the
    specifications' schemas: the same names, the same bytes."""
    import hashlib

    import zarrview.viewing.ome as ome

    shipped = Path(ome.__file__).parent / "schemas"
    for version in VERSIONS:
        digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (shipped / version).glob("*.schema")}
        assert digests == SPEC_SCHEMA_SHA256[version], version
