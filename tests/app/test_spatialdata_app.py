"""A SpatialData store written by spatialdata 0.8 in the window: its root is named and summed up by
element kind, an image shows the labels of its coordinate system as label layers (their values
spatialdata's, drawn over the image) and its points and shapes drawn where spatialdata's
coordinates and matrices put them, each with a line in the panel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtWidgets import QCheckBox, QGraphicsPathItem

from zarrview.app.tree.columns import TYPE_COLUMN
from zarrview.app.window import MainWindow

from test_app import _settle, window  # noqa: F401  (the window fixture)
from test_channels_app import _pixel

pytest.importorskip("pyarrow")
#: where the screenshot of the blobs image with its labels, points and shapes is kept, if set
SHOT = os.environ.get("ZARRVIEW_SPATIALDATA_SHOT")


@pytest.fixture(scope="module")
def stores(spatialdata_written: dict[str, Any]) -> dict[str, Any]:
    return spatialdata_written


def _overlaid(qtbot: Any, w: MainWindow) -> None:
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.scene.detail is not None and not w.data.scene.busy
                    and w.spatial.panel is not None and w.data.label_panel is not None, timeout=30000)
    _settle(qtbot, w)


def test_the_root_is_named_and_summed_up(qtbot: Any, window: MainWindow, stores: dict[str, Any]) -> None:  # noqa: F811
    window.open_location(str(stores["root"] / "blobs.zarr"))
    _settle(qtbot, window)
    root = window.model.index(0, TYPE_COLUMN)
    assert window.model.data(root) == "SpatialData 0.2 (spatialdata 0.8.0)"
    top = window.model.index(0, 0)
    qtbot.waitUntil(lambda: window.model.rowCount(top) == 5, timeout=15000)
    kinds = {window.model.data(window.model.index(r, 0, top)): window.model.data(window.model.index(r, TYPE_COLUMN, top))
             for r in range(5)}
    assert kinds == {"images": "SpatialData images", "labels": "labels (2)", "points": "SpatialData points",
                     "shapes": "SpatialData shapes", "tables": "SpatialData tables"}
    window.tree.setCurrentIndex(window.proxy.mapFromSource(window.model.index(0, 0)))
    qtbot.waitUntil(lambda: "Points (1)" in window.data.message.text(), timeout=15000)
    text = window.data.message.text()
    for kind, names in stores["blobs"]["elements"].items():
        assert f"{kind.capitalize()} ({len(names)}): {', '.join(names)}" in text


def test_an_image_with_its_labels_points_and_shapes(qtbot: Any, window: MainWindow,  # noqa: F811
                                                    stores: dict[str, Any]) -> None:
    truth = stores["moved"]
    window.open_location(str(stores["root"] / "moved.zarr") + "::/images/blobs_image")
    _overlaid(qtbot, window)
    state = window.data.state
    assert sorted(layer.name for layer in state.labels) == truth["elements"]["labels"]
    # one label layer at a time: blobs_labels, moved by x2 and (10, -5), over the identity image
    panel = window.data.label_panel
    panel.boxes["blobs_multiscale_labels"].setChecked(False)
    panel.sliders["blobs_labels"].setValue(100)
    boxes = window.spatial.panel.findChildren(QCheckBox)
    for box in boxes:  # the label alone at the pixel looked at
        box.setChecked(False)
    _settle(qtbot, window)
    labels = np.load(stores["root"] / truth["arrays"]["blobs_labels"])
    j = np.argwhere(labels[5:200, 5:200] > 0)[0] + 5   # a labelled label pixel
    row, col = 2 * j[0] + 10, 2 * j[1] - 5             # where spatialdata's matrix puts it
    layer = next(layer for layer in window.data.state.labels if layer.name == "blobs_labels")
    assert _pixel(window, row, col) == tuple(layer.color_of(int(labels[j[0], j[1]]))[:3])
    for box in boxes:
        box.setChecked(True)
    checks = [c.text() for c in boxes]
    assert sorted(c.split(":")[0] for c in checks) == sorted(truth["elements"]["points"] + truth["elements"]["shapes"])
    assert "blobs_points: 200 points" in checks
    shown = {o.name: o for o in window.spatial.shown}
    scatter = window.spatial.items[[o.name for o in window.spatial.shown].index("blobs_points")]
    m = np.array(truth["transforms"]["blobs_points"]["global"])
    pts = truth["points"]["blobs_points"]
    want = (m @ np.vstack([pts["x"], pts["y"], np.ones(len(pts["x"]))]))[:2].T
    by_gene = {}  # a scatter per feature value, in that value's colour
    for child in scatter.childItems():
        brush = child.opts["brush"].color().getRgb()[:3]
        by_gene[brush] = np.column_stack([child.data["x"], child.data["y"]])
    genes = np.array(pts["genes"])
    assert len(by_gene) == len(set(pts["genes"]))
    for gene in set(pts["genes"]):
        mine = want[genes == gene]
        got = next(v for v in by_gene.values() if len(v) == len(mine) and np.allclose(v, mine))
        assert got is not None
    paths = [i for i in window.spatial.items if isinstance(i, QGraphicsPathItem)]
    assert len(paths) == 2 and shown["blobs_polygons"].rings
    assert scatter.isVisible()
    next(c for c in boxes if c.text().startswith("blobs_points")).setChecked(False)
    assert not scatter.isVisible()


def test_screenshot_of_the_blobs(qtbot: Any, window: MainWindow, stores: dict[str, Any],  # noqa: F811
                                 tmp_path: Path) -> None:
    window.resize(1400, 1100)
    window.right.setSizes([60, 1040])
    window.open_location(str(stores["root"] / "blobs.zarr") + "::/images/blobs_image")
    _overlaid(qtbot, window)
    window.data.label_panel.boxes["blobs_multiscale_labels"].setChecked(False)
    _settle(qtbot, window)
    shot = window.grab()
    assert not shot.isNull()
    shot.save(SHOT or str(tmp_path / "blobs.png"))
    # a point of blobs_points is drawn in its feature's colour, not the image's
    pts = stores["blobs"]["points"]["blobs_points"]
    x, y = int(pts["x"][0]), int(pts["y"][0])
    assert _pixel(window, y, x) != _pixel(window, y, x + 12) or _pixel(window, y, x) != _pixel(window, y + 12, x)


def test_a_label_element_shows_in_its_colours(qtbot: Any, window: MainWindow,  # noqa: F811
                                             stores: dict[str, Any]) -> None:
    window.open_location(str(stores["root"] / "blobs.zarr") + "::/labels/blobs_labels")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.label_panel is not None and window.data.scene.detail is not None
                    and window.data.scene.detail.label("blobs_labels") is not None, timeout=15000)
    _settle(qtbot, window)
    (layer,) = window.data.state.labels
    assert layer.name == "blobs_labels" and layer.opacity == 1.0
    labels = np.load(stores["root"] / stores["blobs"]["arrays"]["blobs_labels"])
    inside = [(r, c) for r, c in np.argwhere(labels[8:-8, 8:-8] > 0).tolist()  # well inside a label: the
              if (labels[r:r + 17, c:c + 17] == labels[r + 8, c + 8]).all()]    # view is smaller than 1:1
    assert len(inside) > 100
    for r, c in (inside[0], inside[len(inside) // 2], inside[-1]):
        assert _pixel(window, r + 8, c + 8) == tuple(layer.color_of(int(labels[r + 8, c + 8]))[:3])
