"""OME-Zarr plates in the window: selecting a plate group shows the grid of its wells (thumbnails
of their first fields, missing wells hatched and named), and a click on a well opens its field."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from zarrview.app.window import MainWindow
from zarrview.viewing.plate.mosaic import MISSING_RGBA

from ome_stores import ome_zarr_plate
from test_app import _settle, window  # noqa: F401  (the window fixture)


def _wait_for_plate(qtbot: Any, window: MainWindow) -> Any:  # noqa: F811  (not the fixture)
    qtbot.waitUntil(lambda: window.data.plate_view is not None and window.data.plate_view.mosaic.plate is not None
                    and not window.data.plate_view.mosaic.busy, timeout=20000)
    _settle(qtbot, window)
    return window.data.plate_view


def _click_cell(qtbot: Any, view: Any, row: int, column: int) -> None:
    m = view.mosaic
    y0, x0 = m.cell_origin(row, column)
    vb = view.plot.getPlotItem().getViewBox()
    pos = view.plot.mapFromScene(vb.mapViewToScene(QPointF(x0 + m.cell / 2, y0 + m.cell / 2)))
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_a_plate_group_shows_its_wells_and_a_click_opens_a_field(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                 tmp_path: Path, version: str) -> None:
    path = ome_zarr_plate(tmp_path / f"plate{version}.zarr", version, ["A", "B"], ["1", "2", "3"],
                          ["A/1", "A/2", "B/2", "B/3"], fields=2, shape=(1, 32, 24))
    shutil.rmtree(path / "A/2")  # listed, gone
    window.open_location(str(path))
    view = _wait_for_plate(qtbot, window)
    assert window.data.stack.currentWidget() is view
    m = view.mosaic
    assert set(m.thumbs) == {(0, 0), (1, 1), (1, 2)} and [(r, c) for r, c, _ in m.missing] == [(0, 1)]
    drawn = np.asarray(view.image.image)
    assert drawn.shape == (2 * m.pitch, 3 * m.pitch, 4)
    y0, x0 = m.cell_origin(0, 1)
    assert (drawn[y0:y0 + m.cell, x0:x0 + m.cell] == MISSING_RGBA).all(axis=-1).any()  # hatched
    assert "3 of 4 wells drawn" in window.status_label.text() and "1 missing" in window.status_label.text()
    ticks = view.plot.getPlotItem().getAxis("left")._tickLevels[0]
    assert [t for _, t in ticks] == ["A", "B"]
    # under the cursor: a missing well says why, in the status bar and the tooltip
    vb = view.plot.getPlotItem().getViewBox()
    view._moved(vb.mapViewToScene(QPointF(x0 + 10, y0 + 10)))
    assert window.status_label.text() == "A/2: missing: no group at A/2" == view.plot.toolTip()
    # a click on B/3 selects its first field in the tree, which shows its image
    _click_cell(qtbot, view, 1, 2)
    qtbot.waitUntil(lambda: window.data.state is not None, timeout=15000)
    _settle(qtbot, window)
    node = window.model.node(window.proxy.mapToSource(window.tree.currentIndex()))
    assert node.path == "/B/3/0"
    assert window.data.stack.currentWidget() is not view and view.mosaic.plate is None  # the plate stopped
    # back on the plate: the grid again
    window.tree.setCurrentIndex(window.proxy.index(0, 0))
    view = _wait_for_plate(qtbot, window)
    assert len(view.mosaic.thumbs) == 3 and window.data.stack.currentWidget() is view


def test_a_plate_over_a_store_that_cannot_list_opens_a_field_by_path(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                    tmp_path: Path, files_over_http: str) -> None:
    path = ome_zarr_plate(tmp_path / "remote.zarr", "0.5", ["A"], ["1", "2"], ["A/1", "A/2"], fields=1)
    window.open_location(files_over_http + str(path))
    view = _wait_for_plate(qtbot, window)
    assert set(view.mosaic.thumbs) == {(0, 0), (0, 1)}
    _click_cell(qtbot, view, 0, 1)
    qtbot.waitUntil(lambda: window.data.state is not None, timeout=15000)
    _settle(qtbot, window)
    assert window.model.node(window.proxy.mapToSource(window.tree.currentIndex())).path == "/A/2/0"
