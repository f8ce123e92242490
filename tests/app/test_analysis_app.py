"""Line profiles and region statistics in the window: the tool is placed programmatically, and
the numbers in its panel are numpy's of the same array (level 0 of a pyramid whose coarse level
is on screen); another array removes the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest
import zarr

from PySide6.QtCore import Qt

import zarrview.zarrlib as zl
from zarrview.app.window import MainWindow
from zarrview.viewing.analysis.plane import Block

from ome_stores import hand_image, pattern
from drawn import drawn
from test_app import _settle, window  # noqa: F401  (the window fixture)


def _rois(w: MainWindow) -> list[Any]:
    return [i for i in w.data.image.view.items if isinstance(i, (pg.LineSegmentROI, pg.RectROI))]


def test_region_statistics_show_numpys_numbers_and_go_with_the_array(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                      tmp_path: Path) -> None:
    data = np.random.default_rng(8).normal(20.0, 3.0, (3, 60, 70)).astype("f4")
    data[:, ::6, ::5] = np.nan
    data[:, 2::11, 1::4] = -1.0
    arr = zarr.create_array(tmp_path / "f", shape=data.shape, chunks=(1, 16, 16), dtype="f4", fill_value=-1.0)
    arr[...] = data
    arr.attrs["units"] = "degC"
    window.data.set_array(zl.open(tmp_path / "f"), {0: 2})  # type: ignore[arg-type]
    _settle(qtbot, window)
    tools = window.data.analysis
    stats_action = next(a for a in window.menuBar().actions()[2].menu().actions() if a.text() == "Region &Statistics")
    stats_action.trigger()  # from the View menu: a rectangle over the middle of the view
    assert tools.tool == "stats" and len(_rois(window)) == 1 and tools.holder.isVisible()
    tools.place_box(Block(5, 50, 3, 61))
    _settle(qtbot, window)
    part = data[2, 5:50, 3:61]
    shown = tools.panel.values
    assert shown["min"] == f"{np.nanmin(part):.6g} degC" and shown["max"] == f"{np.nanmax(part):.6g} degC"
    assert shown["mean"] == f"{np.nanmean(part.astype('f8')):.6g} degC"
    assert shown["std"] == f"{np.nanstd(part.astype('f8')):.6g} degC"
    assert shown["NaN"] == f"{int(np.isnan(part).sum()):,}" and shown["fill"] == f"{int((part == -1).sum()):,}"
    assert shown["values"] == f"{int((~np.isnan(part)).sum()):,}"
    panel = tools.panel  # four lines of figures take four lines of the window, the image the rest
    qtbot.waitUntil(lambda: panel.height() <= panel.table.sizeHint().height() + panel.title.sizeHint().height() + 20,
                    timeout=5000)
    window.data.set_index(0, 0)  # another plane: the same rectangle measured again
    _settle(qtbot, window)
    assert tools.panel.values["max"] == f"{np.nanmax(data[0, 5:50, 3:61]):.6g} degC"
    window.data.set_array(zl.open(tmp_path / "f"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert tools.tool is None and not _rois(window) and not tools.holder.isVisible() and not stats_action.isChecked()


def test_a_profile_reads_level_0_whatever_level_is_shown(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    levels = [((256, 320), (0.5, 0.5), None), ((128, 160), (1.0, 1.0), None), ((64, 80), (2.0, 2.0), None)]
    path = hand_image(tmp_path / "img.zarr", "0.4", levels, "yx", chunks=(64, 64),
                      units={"y": "micrometer", "x": "micrometer"})
    data = pattern((256, 320))  # level 0; every pixel differs from its neighbours, and from the levels above
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None or window.data.scene.coarse is not None, timeout=15000)
    window.data.set_state(window.data.state.with_(level=2))  # the coarsest level on screen
    _settle(qtbot, window)
    assert drawn(window.data).shape == (64, 80)
    tools = window.data.analysis
    tools.use("profile")
    tools.place_line(((10.2, 5.7), (200.9, 301.3)))
    _settle(qtbot, window)
    got = tools.result
    n = int(np.ceil(np.hypot(200.9 - 10.2, 301.3 - 5.7))) + 1
    t = np.linspace(0, 1, n)
    rows, cols = np.floor(10.2 + t * 190.7).astype(int), np.floor(5.7 + t * 295.6).astype(int)
    np.testing.assert_array_equal(got.values, data[rows, cols])
    assert got.distance_unit == "µm" and got.distance[-1] == pytest.approx(np.hypot(190.7, 295.6) * 0.5)
    curve = tools.panel.plot.getPlotItem().listDataItems()[0]
    np.testing.assert_array_equal(curve.yData, data[rows, cols])
    assert tools.panel.plot.getAxis("bottom").labelText == "distance (µm)"
    tools.use(None)
    assert not _rois(window) and not tools.holder.isVisible()


def _drag(w: MainWindow, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A left-button drag on the image from (row, column) ``start`` to ``end``, as mouse events."""
    from PySide6.QtCore import QEvent, QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    view = w.data.image.ui.graphicsView
    box = w.data.image.view.getViewBox()

    def at(p: tuple[float, float]) -> QPointF:
        return QPointF(view.mapFromScene(box.mapViewToScene(QPointF(p[1], p[0]))))

    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    a, b = at(start), at(end)
    steps = [a + (b - a) * (k / 8) for k in range(1, 9)]
    events = [QMouseEvent(QEvent.Type.MouseButtonPress, a, view.mapToGlobal(a), left, left, Qt.KeyboardModifier.NoModifier)]
    events += [QMouseEvent(QEvent.Type.MouseMove, p, view.mapToGlobal(p), none, left, Qt.KeyboardModifier.NoModifier)
               for p in steps]
    events.append(QMouseEvent(QEvent.Type.MouseButtonRelease, b, view.mapToGlobal(b), left, none,
                              Qt.KeyboardModifier.NoModifier))
    for event in events:
        QApplication.sendEvent(view.viewport(), event)


def test_a_drag_draws_the_rectangle_and_the_view_pans_again_once_closed(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    data = np.arange(40 * 50, dtype="u2").reshape(40, 50)
    zarr.create_array(tmp_path / "u", shape=data.shape, chunks=(16, 16), dtype="u2")[...] = data
    window.data.set_array(zl.open(tmp_path / "u"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    tools = window.data.analysis
    tools.use("stats")
    _drag(window, (5.2, 4.6), (30.4, 20.1))
    _settle(qtbot, window)
    b = tools.result.block
    assert (b.r0, b.r1, b.c0, b.c1) == (5, 31, 4, 21)
    assert tools.panel.values["min"] == str(data[5, 4]) and tools.panel.values["max"] == str(data[30, 20])
    tools.use(None)
    before = window.data.image.view.viewRange()
    _drag(window, (5.0, 5.0), (20.0, 30.0))
    assert window.data.image.view.viewRange() != before and tools.result is None  # a pan, not a rectangle


def test_region_statistics_of_a_picture_have_a_column_per_channel(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                   tmp_path: Path, request: Any) -> None:
    rng = np.random.default_rng(12)
    data = np.stack([rng.integers(0, 50, (40, 48)), rng.integers(150, 256, (40, 48)),
                     np.full((40, 48), 77)], axis=-1).astype("u1")
    arr = zarr.create_array(tmp_path / "rgb", shape=data.shape, chunks=(16, 16, 3), dtype="u1", fill_value=0)
    arr[...] = data
    window.data.set_array(zl.open(tmp_path / "rgb"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    tools = window.data.analysis
    tools.use("stats")
    tools.place_box(Block(3, 37, 4, 45))
    _settle(qtbot, window)
    part = data[3:37, 4:45]
    shown = tools.panel.values
    for k, name in enumerate(("red", "green", "blue")):
        assert shown[f"max:{name}"] == str(part[..., k].max()) and shown[f"min:{name}"] == str(part[..., k].min())
        assert shown[f"mean:{name}"] == f"{part[..., k].astype('f8').mean():.6g}"
        assert shown[f"values:{name}"] == f"{part[..., k].size:,}"
    assert shown["max"] == str(part.max()) and shown["std:blue"] == "0" and shown["values"] == f"{part.size:,}"
    assert shown["fill:red"] == f"{int((part[..., 0] == 0).sum()):,}" and shown["fill"] == f"{int((part == 0).sum()):,}"
    headings = [tools.panel.grid.itemAtPosition(1, c).widget().text() for c in range(1, 5)]
    assert headings == ["red", "green", "blue", "all"]
    window.resize(1100, 760)
    _settle(qtbot, window)
    window.grab().save(str(tmp_path / "channel_stats.png"))


def test_the_tool_buttons_are_the_view_menus_entries_and_show_with_an_image(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                           tmp_path: Path) -> None:
    arr = zarr.create_array(tmp_path / "v", shape=(4, 20, 24), chunks=(2, 10, 12), dtype="u2")
    arr[...] = np.arange(4 * 20 * 24, dtype="u2").reshape(4, 20, 24)
    line = zarr.create_array(tmp_path / "l", shape=(9,), chunks=(9,), dtype="f4")
    line[...] = np.arange(9, dtype="f4")
    window.resize(1280, 820)
    window.data.set_array(zl.open(tmp_path / "v"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    buttons = window.data.tools.buttons
    assert window.data.tools.isVisible() and list(buttons) == ["Sections", "Profile", "Statistics", "Series", "Grid", "Compare"]
    view_menu = window.menuBar().actions()[2].menu()
    stats_entry = next(a for a in view_menu.actions() if a.text() == "Region &Statistics")
    qtbot.mouseClick(buttons["Statistics"], Qt.MouseButton.LeftButton)
    assert window.data.analysis.tool == "stats" and stats_entry.isChecked() and buttons["Statistics"].isChecked()
    qtbot.mouseClick(buttons["Profile"], Qt.MouseButton.LeftButton)  # one tool at a time, as in the menu
    assert window.data.analysis.tool == "profile" and not buttons["Statistics"].isChecked()
    qtbot.mouseClick(buttons["Sections"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.orthogonal.visible, timeout=5000)
    window.data.set_array(zl.open(tmp_path / "l"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert not window.data.tools.isVisible()  # a line plot has none of these tools
