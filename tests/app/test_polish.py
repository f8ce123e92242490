"""The metadata tab shows every field of a node without scrolling at the default window size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.app.window import MainWindow
from zarrview.describe import summary

from test_app import _settle, window  # noqa: F401  (the window fixture)


def _nodes(tmp_path: Path) -> list[zl.Node]:
    root = zarr.open_group(tmp_path / "fit.zarr", mode="w", attributes={"title": "fit"})
    root.create_array("sharded", shape=(24, 2048, 2048), chunks=(1, 256, 256), shards=(8, 1024, 1024), dtype="u2",
                      dimension_names=["z", "y", "x"], compressors=[zarr.codecs.ZstdCodec(level=5)],
                      fill_value=7)[0, :10, :10] = np.ones((10, 10), "u2")
    zarr.create_array(tmp_path / "v2.zarr", shape=(100, 200), chunks=(10, 20), dtype="<f8", zarr_format=2,
                      fill_value=np.nan, attributes={"units": "K"})
    return [zl.open(f"{tmp_path / 'fit.zarr'}::/sharded"), zl.open(tmp_path / "v2.zarr"), zl.open(tmp_path / "fit.zarr")]


def test_every_field_shows_without_scrolling(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    window.resize(1280, 820)  # the default size of a first start
    window.meta_fold.set_open(True)  # folded at first: its fields must fit once it is opened
    for node in _nodes(tmp_path):
        window.meta.show_node(node)
        qtbot.wait(20)
        table = window.meta.table
        fields = window.meta.fields()
        stored = fields.pop("Stored", None)  # counted on a worker, for arrays
        assert fields == dict(summary(node))
        if isinstance(node, zl.Array):
            count = node.stored_objects()
            assert count is not None and stored is not None
            qtbot.waitUntil(lambda count=count: window.meta.fields().get("Stored", "").startswith(f"{count[0]:,} object"),
                            timeout=5000)
        assert not table.verticalScrollBar().isVisible(), node.path
        last = table.rowCount() - 1
        bottom = table.rowViewportPosition(last) + table.rowHeight(last)
        assert bottom <= table.viewport().height(), (node.path, bottom, table.viewport().height())


def test_the_status_bar_is_cleared_when_the_view_changes(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    nodes = _nodes(tmp_path)
    window.data.set_array(nodes[0])  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert window.status_label.text().startswith("Read /sharded")
    window.data.show_message("/ is a group: select an array to see its data.")
    assert window.status_label.text() == ""
    window.data.set_array(nodes[1])  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert window.status_label.text().startswith("Read /[")
    window.data.image.view.setRange(xRange=(10, 30), yRange=(10, 30), padding=0)  # a pan that needs no read
    qtbot.wait(400)
    assert window.status_label.text().startswith("Read /[")  # still true of what is shown: kept


def test_image_axes_tick_in_data_coordinates(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    node = _nodes(tmp_path)[0]
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    toggle = next(a for a in view_menu.actions() if "Axes" in a.text())
    window.data.set_array(node)  # type: ignore[arg-type]
    _settle(qtbot, window)
    plot = window.data.image.view
    assert toggle.isChecked() and plot.getAxis("left").isVisible()  # shown by default
    toggle.setChecked(False)
    assert not plot.getAxis("left").isVisible() and not plot.getAxis("bottom").isVisible()
    toggle.setChecked(True)
    window.data.image.view.setRange(xRange=(100, 300), yRange=(1000, 1100), padding=0)
    qtbot.wait(50)
    left, bottom = plot.getAxis("left"), plot.getAxis("bottom")
    assert left.isVisible() and bottom.isVisible()
    assert left.labelText == "y" and bottom.labelText == "x"
    (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
    assert x0 <= 100 and x1 >= 300 and y0 <= 1000 and y1 >= 1100  # the range asked for is on screen
    assert bottom.range == pytest.approx([x0, x1]) and sorted(left.range) == pytest.approx([y0, y1])
    toggle.setChecked(False)
    assert not plot.getAxis("left").isVisible()
    assert window.settings.value("image_axes") == "false"


PEER = Path(__file__).resolve().parents[1] / "data" / "zarrs"


@pytest.mark.parametrize("node", ["/a/baz", "/a/foo"])
def test_a_plane_of_nan_is_drawn_in_the_nan_colour(qtbot: Any, window: MainWindow, tmp_path: Path, node: str) -> None:
    from zarrview.viewing.image.contrast import NAN_RGBA

    bright = zarr.create_array(tmp_path / "bright", shape=(50, 50), chunks=(25, 25), dtype="u1")
    bright[...] = 255
    window.data.set_array(zl.open(tmp_path / "bright"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    window.data.set_array(zl.open(f"{PEER / 'hierarchy.zarr'}::{node}"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    from PySide6.QtCore import QPointF

    gv = window.data.image.ui.graphicsView
    shot = gv.grab().toImage()
    item = window.data.image.getImageItem()
    middle = item.mapToScene(QPointF(item.width() / 2, item.height() / 2))  # the plane's centre, axes or not
    at = gv.mapFromScene(middle)
    centre = shot.pixelColor(at.x(), at.y()).getRgb()
    assert centre == NAN_RGBA  # neither the previous array's white nor the background
    assert window.data.stack.currentWidget() is window.data.image
    status = window.status_label.text()
    assert "no finite value" in status and not status.startswith("Reading")
