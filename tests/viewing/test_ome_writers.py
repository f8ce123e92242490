"""OME-Zarr 0.4 (Zarr v2) and 0.5 (Zarr v3) written by ome-zarr-py: what ``detect`` finds
against what ome-zarr-py's own reader reports and the numbers written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ome_zarr")
# ome-zarr-py 0.18 warns about its own defaults (no scale for the channel axis, the Scaler class)
pytestmark = [pytest.mark.filterwarnings("ignore:Scale value not provided:UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

import zarrview.zarrlib as zl  # noqa: E402
from ome_stores import ome_zarr_image, ome_zarr_nodes, ome_zarr_plate, pattern  # noqa: E402
from zarrview.viewing.ome import OmeImage, OmeLabels, OmePlate, OmeWell, detect  # noqa: E402
from zarrview.viewing.ome.transforms import combine  # noqa: E402

VERSIONS = ("0.4", "0.5")
UNITS = {"z": "micrometer", "y": "micrometer", "x": "micrometer"}
OMERO = {"channels": [
    {"label": "DAPI", "color": "0000FF", "window": {"start": 0, "end": 500, "min": 0, "max": 65535}, "active": True},
    {"label": "GFP", "color": "00FF00", "window": {"start": 10, "end": 900, "min": 0, "max": 65535}, "active": False,
     "inverted": True}],
    "rdefs": {"defaultZ": 3, "defaultT": 0, "model": "color"}}
LABEL_META = {"colors": [{"label-value": 1, "rgba": [255, 0, 0, 255]}, {"label-value": 2, "rgba": [0, 0, 255, 128]}],
              "properties": [{"label-value": 1, "class": "cell"}, {"label-value": 2, "class": "nucleus", "area": 12}]}


@pytest.fixture(scope="module", params=VERSIONS)
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, np.ndarray]:
    version = request.param
    data = pattern((2, 8, 64, 64))
    labels = (pattern((1, 8, 64, 64), "uint8") % 3).astype("uint8")
    path = ome_zarr_image(tmp_path_factory.mktemp("w") / "img.zarr", version, data, "czyx", chunks=(1, 4, 16, 16),
                          scale={"z": 2.0, "y": 0.5, "x": 0.5}, units=UNITS, omero=OMERO, labels={"cells": labels},
                          label_metadata=LABEL_META)
    return version, path, data


def _reader_node(path: Path, rel: str = "") -> Any:
    want = str(path / rel).rstrip("/")
    return next(n for n in ome_zarr_nodes(path) if str(n.zarr.path).rstrip("/") == want)


def _combined(transforms: list[dict[str, Any]], ndim: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    return combine(ndim, [(t["type"], tuple(t[t["type"]])) for t in transforms])


def test_image_levels_axes_and_transforms_match_the_reader(written: tuple[str, Path, np.ndarray]) -> None:
    version, path, data = written
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.version == version and not img.is_label
    assert [p for p in img.problems if p.severity == "error"] == []
    ref = _reader_node(path)
    ms = img.first
    assert [lv.shape for lv in ms.levels] == [tuple(d.shape) for d in ref.data]
    assert [(a.name, a.type, a.unit) for a in ms.axes] == [(a["name"], a["type"], a.get("unit"))
                                                          for a in ref.metadata["axes"]]
    for lv, transforms in zip(ms.levels, ref.metadata["coordinateTransformations"]):
        assert (lv.scale, lv.translation) == _combined(transforms, 4)
    # the numbers written: pixel size 2 x 0.5 x 0.5 um, halved per level in y and x only
    assert [lv.scale for lv in ms.levels] == [(1, 2, 0.5, 0.5), (1, 2, 1, 1), (1, 2, 2, 2)]
    assert [lv.chunk_counts for lv in ms.levels] == [(2, 2, 4, 4), (2, 2, 2, 2), (2, 2, 1, 1)]
    assert ms.levels[0].chunks == (1, 4, 16, 16) and ms.levels[0].dtype == "uint16"
    np.testing.assert_array_equal(ms.levels[0].array[1, 3], data[1, 3])  # type: ignore[index]
    np.testing.assert_array_equal(ms.levels[2].array[...], np.asarray(ref.data[2]))  # type: ignore[index]


def test_omero_channels_and_rdefs(written: tuple[str, Path, np.ndarray]) -> None:
    _, path, _ = written
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.omero is not None
    ref = _reader_node(path).metadata  # ome-zarr-py's reading of the same channels
    chans = img.omero.channels
    assert [c.label for c in chans] == ref["channel_names"] == ["DAPI", "GFP"]
    assert [c.color for c in chans] == ["0000FF", "00FF00"] and chans[1].rgb == (0, 255, 0)
    assert [c.active for c in chans] == ref["visible"] == [True, False]
    assert [(c.window.start, c.window.end) for c in chans if c.window] == [tuple(x) for x in ref["contrast_limits"]]
    assert (chans[1].window.min, chans[1].window.max, chans[1].inverted) == (0, 65535, True)  # type: ignore[union-attr]
    assert (img.omero.rdefs.default_z, img.omero.rdefs.default_t, img.omero.rdefs.model) == (3, 0, "color")


def test_labels_list_and_label_image(written: tuple[str, Path, np.ndarray]) -> None:
    version, path, _ = written
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage) and img.labels == ("cells",)
    group = detect(zl.open(f"{path}::/labels"))
    assert isinstance(group, OmeLabels) and group.labels == ("cells",)
    label = detect(zl.open(f"{path}::/labels/cells"))
    assert isinstance(label, OmeImage) and label.is_label and label.label is not None
    assert [p for p in label.problems if p.severity == "error"] == []
    ref = _reader_node(path, "labels/cells").metadata
    colors = label.label.color_map()
    assert {k: [c / 255 for c in v] for k, v in colors.items() if v} == {k: list(v) for k, v in ref["color"].items()}
    assert {v: label.label.properties_of(v) for v in (1, 2)} == ref["properties"]
    assert len(label.first.levels) == len(img.first.levels) == 3
    assert all(lv.dtype == "uint8" for lv in label.first.levels)


def test_plate_and_wells_match_the_reader(tmp_path: Path) -> None:
    for version in VERSIONS:
        path = ome_zarr_plate(tmp_path / f"plate{version}.zarr", version, ["A", "B", "C"], ["1", "2", "3", "4"],
                              ["A/1", "B/3", "C/4"], fields=2)
        plate = detect(zl.open(str(path)))
        assert isinstance(plate, OmePlate) and plate.version == version and plate.problems == ()
        ref = _reader_node(path).metadata["metadata"]["plate"]
        assert plate.rows == tuple(r["name"] for r in ref["rows"])
        assert plate.columns == tuple(c["name"] for c in ref["columns"])
        assert [(w.path, w.row, w.column) for w in plate.wells] == [(w["path"], w["rowIndex"], w["columnIndex"])
                                                                    for w in ref["wells"]]
        assert plate.field_count == 2 and [a.id for a in plate.acquisitions] == [0]
        assert plate.well_at(1, 2).path == "B/3" and plate.well_at(0, 1) is None  # type: ignore[union-attr]
        well = detect(zl.open(f"{path}::/B/3"))
        assert isinstance(well, OmeWell) and [(i.path, i.acquisition) for i in well.images] == [("0", 0), ("1", 0)]
        field = detect(zl.open(f"{path}::/B/3/1"))
        assert isinstance(field, OmeImage) and field.first.levels[0].shape == (1, 16, 16)


@pytest.mark.parametrize("version", VERSIONS)
def test_per_axis_factors_written_by_ome_zarr(tmp_path: Path, version: str) -> None:
    """A pyramid downsampled by 3 in y and x and not in z, as ome-zarr-py writes it."""
    data = pattern((6, 81, 81))
    path = ome_zarr_image(tmp_path / "f3.zarr", version, data, "zyx",
                          scale_factors=[{"z": 1, "y": 3, "x": 3}, {"z": 1, "y": 9, "x": 9}])
    img = detect(zl.open(str(path)))
    assert isinstance(img, OmeImage)
    ref = _reader_node(path)
    assert [lv.shape for lv in img.first.levels] == [tuple(d.shape) for d in ref.data] == [(6, 81, 81), (6, 27, 27),
                                                                                             (6, 9, 9)]
    for lv, transforms in zip(img.first.levels, ref.metadata["coordinateTransformations"]):
        assert (lv.scale, lv.translation) == _combined(transforms, 3)
    assert [lv.scale[1] for lv in img.first.levels] == [1, 3, 9]
