"""OME-Zarr in the tree and the metadata panel's OME tab: images, label images, labels
groups, plates and wells marked in the tree from their attributes, an image's levels as its
children; the OME tab's rows against what was written (ome-zarr-py 0.4 and 0.5) and the model,
and a bad document's problems listed while its image still shows."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")
pytest.importorskip("ome_zarr")
pytestmark = [pytest.mark.filterwarnings("ignore:Scale value not provided:UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app.bridge import init_bridge  # noqa: E402
from ome_stores import bioformats2raw, hand_image, ome_zarr_image, ome_zarr_plate, pattern  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)
from zarrview.app.tree.model import HierarchyModel  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.ome import detect  # noqa: E402

VERSIONS = ("0.4", "0.5")
OMERO = {"channels": [
    {"label": "DAPI", "color": "0000FF", "window": {"start": 0, "end": 500, "min": 0, "max": 65535}, "active": True},
    {"label": "GFP", "color": "00FF00", "window": {"start": 10, "end": 900, "min": 0, "max": 65535}, "active": False,
     "inverted": True}],
    "rdefs": {"defaultZ": 1, "model": "color"}}


def _image(path: Path, version: str) -> Path:
    data = pattern((2, 4, 64, 64))
    labels = (pattern((1, 4, 64, 64), "uint8") % 3).astype("uint8")
    return ome_zarr_image(path, version, data, "czyx", chunks=(1, 2, 16, 16), scale={"z": 2.0, "y": 0.5, "x": 0.5},
                          units={"z": "micrometer", "y": "micrometer", "x": "micrometer"}, omero=OMERO,
                          labels={"cells": labels},
                          label_metadata={"colors": [{"label-value": 1, "rgba": [255, 0, 0, 255]}],
                                          "properties": [{"label-value": 1, "class": "cell"}]})


def _written(path: Path, rel: str = "") -> dict[str, Any]:
    """The OME metadata as written (0.5: under "ome")."""
    attrs = dict(zarr.open_group(str(path / rel), mode="r").attrs)
    return attrs.get("ome", attrs)


def _listed(qtbot: Any, model: HierarchyModel, index: QModelIndex) -> dict[str, QModelIndex]:
    init_bridge()
    model.fetchMore(index)
    qtbot.waitUntil(lambda: not model.item(index).loading, timeout=10000)
    return {model.index(r, 0, index).data(): model.index(r, 0, index) for r in range(model.rowCount(index))}


def _type(index: QModelIndex) -> str:
    return index.siblingAtColumn(2).data()


@pytest.mark.parametrize("version", VERSIONS)
def test_tree_marks_an_image_its_levels_and_its_labels(qtbot: Any, tmp_path: Path, version: str, worker_pool: Any) -> None:
    path = _image(tmp_path / "img.zarr", version)
    datasets = [d["path"] for d in _written(path)["multiscales"][0]["datasets"]]
    model = HierarchyModel(worker_pool)
    top = model.add_store(zl.open(str(path)), "img.zarr")
    assert _type(top) == f"image ({len(datasets)} levels)"
    assert f"OME-NGFF {version} image" in top.data(Qt.ItemDataRole.ToolTipRole)
    children = _listed(qtbot, model, top)
    assert sorted(children) == sorted([*datasets, "labels"])  # the levels, and labels as a child group
    for i, name in enumerate(datasets):
        assert _type(children[name]) == f"uint16 · level {i}"
        assert model.node(children[name]).shape == zarr.open_group(str(path))[name].shape
    assert _type(children["labels"]) == "labels (1)"
    cells = _listed(qtbot, model, children["labels"])["cells"]
    label_datasets = [d["path"] for d in _written(path, "labels/cells")["multiscales"][0]["datasets"]]
    assert _type(cells) == f"label image ({len(label_datasets)} levels)"
    assert {_type(i) for i in _listed(qtbot, model, cells).values()} == {
        f"uint8 · level {i}" for i in range(len(label_datasets))}


@pytest.mark.parametrize("version", VERSIONS)
def test_tree_marks_a_plate_and_its_wells(qtbot: Any, tmp_path: Path, version: str, worker_pool: Any) -> None:
    path = ome_zarr_plate(tmp_path / "plate.zarr", version, ["A", "B"], ["1", "2", "3"], ["A/1", "B/3"])
    model = HierarchyModel(worker_pool)
    top = model.add_store(zl.open(str(path)), "plate.zarr")
    assert _type(top) == "plate 2×3, 2 wells"
    row = _listed(qtbot, model, top)["A"]
    assert _type(row) == "group"  # a row of a plate holds no OME metadata of its own
    well = _listed(qtbot, model, row)["1"]
    assert _type(well) == "well (2 fields)"
    field = _listed(qtbot, model, well)["0"]
    assert _type(field) == "image (1 level)"
    [level0] = [d["path"] for d in _written(path, "A/1/0")["multiscales"][0]["datasets"]]
    assert _type(_listed(qtbot, model, field)[level0]) == "uint16 · level 0"


def _select_root(qtbot: Any, window: MainWindow, path: Path) -> None:
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.meta.ome.node is not None, timeout=15000)
    _settle(qtbot, window)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_ome_tab_shows_what_was_written(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                            version: str) -> None:
    path = _image(tmp_path / "img.zarr", version)
    _select_root(qtbot, window, path)
    meta, ome = window.meta, window.meta.ome
    assert meta.isTabVisible(meta.indexOf(ome))
    written = _written(path)
    ms = written["multiscales"][0]
    assert ome.rows("Axes") == [[str(i), a["name"], a["type"], a.get("unit", "—")] for i, a in enumerate(ms["axes"])]
    root = zarr.open_group(str(path), mode="r")
    levels = ome.rows("Levels")
    assert [r[1] for r in levels] == [d["path"] for d in ms["datasets"]]
    for row, d in zip(levels, ms["datasets"]):
        arr = root[d["path"]]
        counts = [math.ceil(s / c) for s, c in zip(arr.shape, arr.chunks)]
        assert row[2] == str(tuple(arr.shape))
        scale = next(t["scale"] for t in d["coordinateTransformations"] if t["type"] == "scale")
        assert row[3] == "(" + ", ".join(f"{v:g}" for v in scale) + ")"
        assert row[5] == f"{tuple(arr.chunks)}: {math.prod(counts):,} ({'×'.join(map(str, counts))})"
        assert row[6] == "—" and row[7] == "uint16"
    channels = ome.rows("Channels")
    assert channels == [["0", "DAPI", "#0000FF", "0–500 of 0–65535", "yes", "no"],
                        ["1", "GFP", "#00FF00", "10–900 of 0–65535", "no", "yes"]]
    table = ome.tables()["Channels"]
    assert table.item(0, 2).data(Qt.ItemDataRole.DecorationRole) == QColor(0, 0, 255)
    assert table.item(1, 2).data(Qt.ItemDataRole.DecorationRole) == QColor(0, 255, 0)
    # the labels group is read after the image, and listed
    qtbot.waitUntil(lambda: "Labels" in ome.titles(), timeout=10000)
    assert ome.rows("Labels") == [["cells"]]
    # the problems: the image's, then its labels group's (ome-zarr-py 0.18 writes no version there in 0.5)
    image, labels = detect(zl.open(str(path)), labels=False), detect(zl.open(str(path))["labels"])  # type: ignore[arg-type]
    assert image is not None and labels is not None
    problems = [*image.problems, *labels.problems]
    assert not [p for p in problems if p.severity == "error"]
    title = ome.titles()[-1]
    assert title == ("Problems" if not problems else f"Problems ({len(problems)} warning{'s' * (len(problems) > 1)})")
    assert meta.tabText(meta.indexOf(ome)) == ("OME" if not problems else "OME" + title[len("Problems"):])
    if problems:
        assert ome.rows(title) == [[p.severity, p.node, p.path, p.message] for p in problems]
    # the same words as the model's values, level by level
    assert [r[2] for r in levels] == [str(lv.shape) for lv in image.first.levels]  # type: ignore[union-attr]
    # and the image is on screen
    assert window.data.state is not None and window.data.state.pyramid is not None


def test_the_ome_tab_opens_only_for_ome_groups(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = _image(tmp_path / "img.zarr", "0.5")
    _select_root(qtbot, window, path)
    meta = window.meta
    index = meta.indexOf(meta.ome)
    meta.setCurrentWidget(meta.ome)
    tree_root = window.proxy.mapFromSource(window.model.index(0, 0))
    level0 = _written(path)["multiscales"][0]["datasets"][0]["path"]
    level = window.proxy.mapFromSource(window.model.child_named(window.model.index(0, 0), level0))
    window.tree.setCurrentIndex(level)  # a level array: no OME tab
    _settle(qtbot, window)
    assert window.model.node(window.proxy.mapToSource(level)).kind == "array"
    assert not meta.isTabVisible(index) and meta.currentWidget() is not meta.ome
    window.tree.setCurrentIndex(tree_root)  # back to the image: the tab that was open opens again
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: meta.ome.node is not None, timeout=10000)
    assert meta.isTabVisible(index) and meta.currentWidget() is meta.ome
    window.tree.setCurrentIndex(level)
    _settle(qtbot, window)
    meta.setCurrentWidget(meta.attrs)  # chosen while the OME tab is hidden: the next image keeps it
    window.tree.setCurrentIndex(tree_root)
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: meta.ome.node is not None, timeout=10000)
    assert meta.isTabVisible(index) and meta.currentWidget() is meta.attrs


def test_label_image_values_and_colours(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = _image(tmp_path / "img.zarr", "0.4")
    _select_root(qtbot, window, path / "labels" / "cells")
    ome = window.meta.ome
    assert "Label values" in ome.titles() and "Channels" not in ome.titles()
    assert ome.rows("Label values") == [["1", "#FF0000FF", "class: cell"]]
    assert ome.tables()["Label values"].item(0, 1).data(Qt.ItemDataRole.DecorationRole) == QColor(255, 0, 0)
    assert window.data.state is not None  # a label image shows as an image


@pytest.mark.parametrize("version", VERSIONS)
def test_a_bad_document_lists_its_problems_and_still_shows(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                                          version: str) -> None:
    omero = {"channels": [{"label": "no window", "color": "FF0000"}, {"label": "no colour", "window": {}}]}
    path = hand_image(tmp_path / "bad.zarr", version, [((40, 60), (1, 1), None), ((20, 30), (2, 2), None)], "yx",
                      chunks=(16, 16), extra={"omero": omero},
                      more_multiscales=[{"name": "unordered", "levels": [("u0", (10, 15), (4, 4)),
                                                                         ("u1", (20, 30), (2, 2))]}])
    _select_root(qtbot, window, path)
    ome, meta = window.meta.ome, window.meta
    model = detect(zl.open(str(path)), labels=False)
    assert model is not None and model.errors
    title = ome.titles()[-1]
    assert title.startswith("Problems (") and f"{len(model.errors)} error" in title
    assert ome.rows(title) == [[p.severity, p.node, p.path, p.message] for p in model.problems]
    assert any("window" in p.message for p in model.problems) and any("color" in p.message for p in model.problems)
    assert meta.tabText(meta.indexOf(ome)).startswith("OME (") and "error" in meta.tabText(meta.indexOf(ome))
    first_error = next(i for i, p in enumerate(model.problems) if p.severity == "error")
    assert ome.tables()[title].item(first_error, 0).foreground().color() == QColor(200, 40, 40)
    # both multiscales are described, and the image is still shown from the first
    assert "Levels of multiscale 1 'unordered'" in ome.titles()
    qtbot.waitUntil(lambda: bool(window.data.scene.tiles()), timeout=10000)
    state = window.data.state
    assert state is not None and state.array.shape == (40, 60)
    tile = window.data.scene.tiles()[-1]
    level = next(lv.array for lv in state.pyramid or () if lv.index == tile.level)
    np.testing.assert_array_equal(tile.values, np.asarray(level[...])[tile.r0:tile.r1, tile.c0:tile.c1])


@pytest.mark.parametrize("version", VERSIONS)
def test_a_plate_is_tabulated_and_shown(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                        version: str) -> None:
    path = ome_zarr_plate(tmp_path / "plate.zarr", version, ["A", "B"], ["1", "2", "3"], ["A/1", "B/3"])
    _select_root(qtbot, window, path)
    ome = window.meta.ome
    assert ome.rows("Plate") == [["2: A B", "3: 1 2 3", "2 of 6", "2", "0 (first)"]]
    assert ome.rows("Wells") == [["A/1", "A", "1"], ["B/3", "B", "3"]]
    data = window.data
    assert data.stack.currentWidget() is not data.message or "OME-NGFF plate" in data.message.text()
    assert "is a group" not in data.message.text()  # not the empty group view


def test_a_well_is_summed_up(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = ome_zarr_plate(tmp_path / "plate.zarr", "0.5", ["A"], ["1"], ["A/1"], fields=3)
    _select_root(qtbot, window, path / "A" / "1")
    assert window.meta.ome.rows("Fields") == [["0", "0", "0"], ["1", "1", "0"], ["2", "2", "0"]]
    shown = window.data.message.text()
    assert window.data.stack.currentWidget() is window.data.message
    assert "OME-NGFF well" in shown and "Fields: 0 (acquisition 0), 1" in shown and "select a field" in shown


@pytest.mark.parametrize("series_attr", [True, False])
def test_a_bioformats2raw_collection_lists_every_series(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                                        series_attr: bool) -> None:
    worker_pool = window.pool
    path = bioformats2raw(tmp_path / "bf.zarr", "0.4", 3, series_attr=series_attr)
    model = HierarchyModel(worker_pool)
    assert _type(model.add_store(zl.open(str(path)), "bf.zarr")) == "bioformats2raw series"
    _select_root(qtbot, window, path)
    assert window.meta.ome.rows("Series") == [["0", "0"], ["1", "1"], ["2", "2"]]
    assert "Series (3, from " in window.data.message.text() and "select a series" in window.data.message.text()
