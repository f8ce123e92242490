"""SpatialData stores written by spatialdata 0.8 (its blobs dataset, as written by default and in
the older Zarr v2 container format, with its elements moved by scales, translations and an
affine, and with its shapes in GeoArrow's encoding) read as what they are, against what
spatialdata reads back from the same stores:

- the elements by kind are spatialdata's own listing;
- spatialdata's images and labels are OME-NGFF without problems, while real errors in the same
  documents still are problems;
- every transformation is spatialdata's ``to_affine_matrix``;
- the labels of an image's coordinate system are offered as its label layers, each pixel placed
  where spatialdata's matrices put it, and their values are spatialdata's;
- points, circles and polygons land where numpy puts spatialdata's coordinates through
  spatialdata's matrices, with a bounded, evenly spaced sample of many points;
- without pyarrow, reading them names the extra to install.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.viewing.ome import OmeImage, detect
from zarrview.viewing.spatialdata.parquet import EXTRA, read_points
from zarrview.viewing.spatialdata.scene import XY, label_layers, mates_of, read_overlay
from zarrview.viewing.spatialdata.store import KINDS, mark, read_store, rows
from zarrview.viewing.spatialdata.wkb import WkbError, parse
from zarrview.zarrlib.errors import MissingExtraError, ZarrError

pytest.importorskip("pyarrow")
TAGS = ("blobs", "moved", "v01", "geoarrow")


@pytest.fixture(scope="module")
def stores(spatialdata_written: dict[str, Any]) -> dict[str, Any]:
    return spatialdata_written


def _open(stores: dict[str, Any], tag: str, path: str = "") -> Any:
    return zl.open(str(stores["root"] / f"{tag}.zarr") + (f"::/{path}" if path else ""))


@pytest.mark.parametrize("tag", TAGS)
def test_elements_are_spatialdatas_listing(stores: dict[str, Any], tag: str) -> None:
    store = read_store(_open(stores, tag))
    assert store is not None
    assert {k: sorted(e.name for e in store.of(k)) for k in KINDS} == stores[tag]["elements"]
    assert mark(store.group.attrs) == f"SpatialData {'0.1' if tag == 'v01' else '0.2'} (spatialdata 0.8.0)"
    assert mark(store.group["images"].attrs, store.group.attrs, "images") == "SpatialData images"
    assert read_store(store.group["images"]) is None  # only the root is a store


@pytest.mark.parametrize("tag", TAGS)
def test_spatialdata_images_and_labels_have_no_ome_problems(stores: dict[str, Any], tag: str) -> None:
    root = _open(stores, tag)
    for kind in ("images", "labels"):
        for name in stores[tag]["elements"][kind]:
            found = detect(root[f"{kind}/{name}"])
            assert isinstance(found, OmeImage) and found.is_label == (kind == "labels")
            assert found.problems == (), (name, found.problems)
            assert found.version == ("0.4" if tag == "v01" else "0.5")


@pytest.mark.parametrize("tag", ("blobs", "v01"))
def test_real_ome_errors_in_spatialdata_elements_still_show(stores: dict[str, Any], tag: str,
                                                           tmp_path: Path) -> None:
    copy = _copy(stores, tag, tmp_path / "copy.zarr")
    v2 = tag == "v01"
    doc_path = copy / "images" / "blobs_multiscale_image" / (".zattrs" if v2 else "zarr.json")
    doc = json.loads(doc_path.read_text())
    attrs = doc if v2 else doc["attributes"]
    ms = (attrs if v2 else attrs["ome"])["multiscales"][0]
    del ms["datasets"][1]["coordinateTransformations"]          # a level without its scale
    ms["coordinateTransformations"][0]["output"] = {"axes": ms["coordinateTransformations"][0]["output"]["axes"]}
    (attrs if v2 else attrs["ome"])["omero"]["channels"][0]["color"] = "red"
    doc_path.write_text(json.dumps(doc))
    found = detect(zl.open(str(copy) + "::/images/blobs_multiscale_image"))
    paths = {p.path for p in found.errors}
    prefix = "$" if v2 else "$.ome"
    assert f"{prefix}.multiscales[0].datasets[1].coordinateTransformations" in paths, found.problems
    assert f"{prefix}.multiscales[0].coordinateTransformations[0].output" in paths, found.problems
    assert f"{prefix}.omero.channels[0].color" in paths, found.problems


@pytest.mark.parametrize("tag", TAGS)
def test_transformations_are_spatialdatas_matrices(stores: dict[str, Any], tag: str) -> None:
    store = read_store(_open(stores, tag))
    assert store is not None
    expected = stores[tag]["transforms"]
    for element in store.elements:
        if element.kind == "tables":
            continue
        assert set(element.systems) == set(expected[element.name]), element.name
        for system, matrix in expected[element.name].items():
            np.testing.assert_allclose(element.systems[system].matrix(XY, XY), matrix, err_msg=element.name)
        assert ("Coordinate systems", ", ".join(element.systems)) in rows(element.group.attrs)
        assert set(", ".join(element.systems).split(", ")) == set(expected[element.name])


def _copy(stores: dict[str, Any], tag: str, to: Path) -> Path:
    """A copy of a store to break, without its consolidated metadata (which would still hold
    the unbroken documents)."""
    shutil.copytree(stores["root"] / f"{tag}.zarr", to)
    root = to / "zarr.json"
    if root.exists():
        doc = json.loads(root.read_text())
        doc.pop("consolidated_metadata", None)
        root.write_text(json.dumps(doc))
    (to / ".zmetadata").unlink(missing_ok=True)
    return to


def test_broken_transformations_and_parquet_are_named_errors(stores: dict[str, Any], tmp_path: Path) -> None:
    copy = _copy(stores, "moved", tmp_path / "copy.zarr")
    doc_path = copy / "points" / "blobs_points" / "zarr.json"
    doc = json.loads(doc_path.read_text())
    doc["attributes"]["coordinateTransformations"][0]["affine"] = [[1.0, 0.0]]  # a row too short
    doc_path.write_text(json.dumps(doc))
    (copy / "shapes" / "blobs_circles" / "shapes.parquet").write_bytes(b"PAR1 not really")
    store = read_store(zl.open(str(copy)))
    assert store is not None
    points = next(e for e in store.elements if e.name == "blobs_points")
    assert points.error is not None and "/points/blobs_points" in points.error and "affine[0]" in points.error
    mates = mates_of(zl.open(str(copy) + "::/images/blobs_image"))
    assert mates is not None
    circles = next(e for e, _ in mates.store.mates(mates.image, ("shapes",)) if e.name == "blobs_circles")
    with pytest.raises(ZarrError, match="shapes.parquet"):
        read_overlay(mates.image, circles, "global")
    assert [e.name for e, _ in mates.store.mates(mates.image, ("points",))] == []  # unplaced: not offered


def _pixel_centres(matrix_image: np.ndarray, matrix_label: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Where spatialdata's matrices put label pixel centres ``j`` (x, y columns) in the image's
    pixel space, as centre coordinates (pixel i's centre at i)."""
    xy = np.column_stack([j + 0.5, np.ones(len(j))])
    return (np.linalg.solve(matrix_image, matrix_label) @ xy.T).T[:, :2] - 0.5


@pytest.mark.parametrize("tag", ("moved", "v01", "blobs"))
@pytest.mark.parametrize("image", ("blobs_image", "blobs_multiscale_image"))
def test_labels_of_the_coordinate_system_are_placed_by_spatialdatas_matrices(stores: dict[str, Any], tag: str,
                                                                            image: str) -> None:
    group = _open(stores, tag, f"images/{image}")
    mates = mates_of(group)
    assert mates is not None
    layers, notes = label_layers(mates, detect(group, labels=False))
    assert notes == ()
    assert sorted(layer.name for layer in layers) == stores[tag]["elements"]["labels"]
    m_image = np.array(stores[tag]["transforms"][image]["global"])
    for layer in layers:
        m_label = np.array(stores[tag]["transforms"][layer.name]["global"])
        level = layer.levels[0]
        j = np.array([0.0, 1.0, 17.0, 511.0])
        want = _pixel_centres(m_image, m_label, np.column_stack([j, j]))
        y, x = layer.axes.index("y"), layer.axes.index("x")
        np.testing.assert_allclose(level.scale[x] * j + level.translation[x], want[:, 0], err_msg=layer.name)
        np.testing.assert_allclose(level.scale[y] * j + level.translation[y], want[:, 1], err_msg=layer.name)
        assert level.array is not None
        truth = np.load(stores["root"] / stores[tag]["arrays"][layer.name])
        np.testing.assert_array_equal(level.array[...], truth)


def _through(m_image: np.ndarray, m_element: np.ndarray, xy: np.ndarray) -> np.ndarray:
    homogeneous = np.column_stack([xy, np.ones(len(xy))])
    return (np.linalg.solve(m_image, m_element) @ homogeneous.T).T[:, :2]


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("image", ("blobs_image", "blobs_multiscale_image"))
def test_points_and_shapes_land_where_spatialdatas_matrices_put_them(stores: dict[str, Any], tag: str,
                                                                     image: str) -> None:
    mates = mates_of(_open(stores, tag, f"images/{image}"))
    assert mates is not None
    truth = stores[tag]
    m_image = np.array(truth["transforms"][image]["global"])
    wanted = mates.store.mates(mates.image, ("points", "shapes"))
    assert sorted(e.name for e, _ in wanted) == sorted(truth["elements"]["points"] + truth["elements"]["shapes"])
    for element, system in wanted:
        assert system == "global"
        overlay = read_overlay(mates.image, element, system)
        assert overlay.error is None
        m = np.array(truth["transforms"][element.name]["global"])
        if element.name in truth["points"]:
            pts = truth["points"][element.name]
            np.testing.assert_allclose(overlay.xy, _through(m_image, m, np.column_stack([pts["x"], pts["y"]])))
            assert [overlay.categories[c] for c in overlay.codes] == pts["genes"]
            assert overlay.total == overlay.drawn == len(pts["x"])
        elif element.name in truth["circles"]:
            c = truth["circles"][element.name]
            np.testing.assert_allclose(overlay.xy, _through(m_image, m, np.column_stack([c["x"], c["y"]])))
            scale = np.sqrt(abs(np.linalg.det(np.linalg.solve(m_image, m)[:2, :2])))
            np.testing.assert_allclose(overlay.radius, np.array(c["radius"]) * scale)
        else:
            rings = truth["polygons"][element.name]
            assert len(overlay.rings) == len(rings)
            for got, ring in zip(overlay.rings, rings):
                np.testing.assert_allclose(got, _through(m_image, m, np.array(ring)))


def test_many_points_are_drawn_as_an_even_sample(stores: dict[str, Any]) -> None:
    truth = stores["blobs"]["points"]["blobs_points"]
    pts = read_points(_open(stores, "blobs", "points/blobs_points"), "genes", max_points=30)
    stride = -(-len(truth["x"]) // 30)
    assert pts.total == len(truth["x"]) and len(pts.xy) <= 30
    np.testing.assert_array_equal(pts.xy, np.column_stack([truth["x"], truth["y"]])[::stride])


def test_without_pyarrow_the_extra_is_named(stores: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtraError, match=r"zarrview\[spatialdata\]") as caught:
        read_points(_open(stores, "blobs", "points/blobs_points"))
    assert EXTRA in str(caught.value)


def test_hostile_wkb_is_an_error_not_memory() -> None:
    polygon = bytes.fromhex("01030000000100000004000000") + np.array(
        [0, 0, 1, 0, 1, 1, 0, 0], "<f8").tobytes()
    shape = parse(polygon)
    np.testing.assert_array_equal(shape.rings[0], [[0, 0], [1, 0], [1, 1], [0, 0]])
    for bad in (polygon[:-3], bytes.fromhex("0103000000ffffffff"), bytes.fromhex("0107000000"), b"\x05",
                polygon + b"\x00"):
        with pytest.raises(WkbError):
            parse(bad)


def test_millions_of_points_are_sampled_from_row_groups_evenly_spaced(stores: dict[str, Any], tmp_path: Path) -> None:
    """A points element many times larger than what is drawn is read from some of its row groups
    only, spread through it, each sampled evenly: here 12 groups of 1,000 rows, 500 drawn."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    copy = _copy(stores, "blobs", tmp_path / "copy.zarr")
    folder = copy / "points" / "blobs_points" / "points.parquet"
    for part in folder.iterdir():
        part.unlink()
    index = np.arange(12_000)
    for k in range(2):
        rows = index[k * 6000:(k + 1) * 6000]
        pq.write_table(pa.table({"x": rows.astype(float), "y": 2.0 * rows, "genes": pa.array(["g"] * len(rows))}),
                       folder / f"part.{k}.parquet", row_group_size=1000)
    pts = read_points(zl.open(str(copy) + "::/points/blobs_points"), "genes", max_points=500)
    # 4 of the 12 groups, spread from the first to the last, every 8th of their 4,000 rows
    want = np.concatenate([np.arange(g * 1000, (g + 1) * 1000) for g in (0, 4, 7, 11)])[::8]
    np.testing.assert_array_equal(pts.xy, np.column_stack([want, 2.0 * want]))
    assert pts.total == 12_000 and pts.sampled == "from 4 of 12 row groups" and set(pts.codes.tolist()) == {0}


def test_only_elements_of_the_images_coordinate_systems_are_offered(stores: dict[str, Any], tmp_path: Path) -> None:
    """Labels and shapes moved into a coordinate system the image is not in are left off it."""
    copy = _copy(stores, "moved", tmp_path / "copy.zarr")
    for path in ("shapes/blobs_polygons", "labels/blobs_multiscale_labels"):
        doc_path = copy / path / "zarr.json"
        doc = json.loads(doc_path.read_text())
        attrs = doc["attributes"]
        steps = attrs["ome"]["multiscales"][0]["coordinateTransformations"] if "ome" in attrs \
            else attrs["coordinateTransformations"]
        for step in steps:
            step["output"]["name"] = "elsewhere"
        doc_path.write_text(json.dumps(doc))
    group = zl.open(str(copy) + "::/images/blobs_image")
    mates = mates_of(group)
    assert mates is not None
    offered = sorted(e.name for e, _ in mates.store.mates(mates.image, ("labels", "points", "shapes")))
    assert offered == ["blobs_circles", "blobs_labels", "blobs_multipolygons", "blobs_points"]
    layers, _ = label_layers(mates, detect(group, labels=False))
    assert [layer.name for layer in layers] == ["blobs_labels"]
    assert detect(zl.open(str(copy) + "::/labels/blobs_multiscale_labels")).problems == ()
