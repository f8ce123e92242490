"""The image takes most of the window: in the default 1280x820 window a plain volume's image and
an OME image's (three channels, a label layer) are measured on screen from the widgets'
geometry; the metadata panel folds to a line, and the column of channel and label controls beside
the image opens by itself only where the image keeps 60 % of the width (else its toggle says it is
there), shows and hides from the View menu, and both choices come back in the next session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from PySide6.QtCore import QPoint, QPointF
from PySide6.QtWidgets import QWidget

from zarrview.app.window import MainWindow
from zarrview.scheduling import WorkerPool

from test_app import _settle, window  # noqa: F401  (the window fixture)

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402

#: the least image height, in pixels, of a 1280x820 window
PLAIN_HEIGHT = 600
OME_HEIGHT = 520
#: and its least width, beside the column of controls and the histogram
MIN_WIDTH = 420


def _volume(path: Path) -> str:
    a = zarr.create_array(path, shape=(4, 96, 96), chunks=(1, 96, 96), dtype="u2", dimension_names=["z", "y", "x"])
    a[...] = np.arange(4 * 96 * 96, dtype="u2").reshape(4, 96, 96)
    return str(path)


@pytest.fixture(scope="module")
def ome_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An OME image of three channels with a label layer, written by ome-zarr-py."""
    from ome_zarr.format import FormatV04
    from ome_zarr.writer import write_labels

    path = tmp_path_factory.mktemp("layout") / "img.zarr"
    data = (np.arange(3 * 2 * 64 * 64) % 251).astype("u1").reshape(3, 2, 64, 64)
    ome_zarr_image(path, "0.4", data, "czyx", scale_factors=(), chunks=(1, 1, 64, 64))
    label = np.zeros((2, 64, 64), "u4")
    label[:, 8:30, 8:30] = 1
    write_labels(label, zarr.open_group(str(path), mode="a"), name="nuclei", scaler=None, scale_factors=[],
                 axes="zyx", fmt=FormatV04())
    return str(path)


def _open(qtbot: Any, w: MainWindow, location: str, labels: bool = False) -> None:
    w.resize(1280, 820)
    w.open_location(location)
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.scene.detail is not None and not w.data.scene.busy
                    and (not labels or w.data.label_panel is not None), timeout=15000)
    _settle(qtbot, w)


def _canvas(w: MainWindow) -> QWidget:
    """The widget the plane is drawn in (the histogram beside it is not image)."""
    return w.data.image.ui.graphicsView


def _drawn_size(w: MainWindow) -> tuple[float, float]:
    """The on-screen height and width of the plane shown, from its corners in data coordinates."""
    state = w.data.state
    assert state is not None
    rows, cols = state.plane_shape
    box = w.data.image.view.getViewBox()
    top_left, bottom_right = box.mapViewToScene(QPointF(0, 0)), box.mapViewToScene(QPointF(cols, rows))
    return abs(bottom_right.y() - top_left.y()), abs(bottom_right.x() - top_left.x())


def _right_of(w: MainWindow, panel: QWidget, canvas: QWidget) -> bool:
    return panel.mapTo(w, QPoint(0, 0)).x() >= canvas.mapTo(w, QPoint(canvas.width(), 0)).x()


def test_a_plain_volume_gets_most_of_the_window(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    _open(qtbot, window, _volume(tmp_path / "vol.zarr"))
    canvas = _canvas(window)
    assert canvas.width() >= 0.6 * window.width(), canvas.width()  # the tree leaves the image most of the width
    assert canvas.height() >= PLAIN_HEIGHT and canvas.width() >= PLAIN_HEIGHT, (canvas.width(), canvas.height())
    height, width = _drawn_size(window)  # a square plane fitted to the canvas: as large as it can be
    assert min(height, width) >= 0.8 * min(canvas.width(), canvas.height()), (height, width)
    assert not window.meta.isVisible() and window.meta_fold.summary.text().startswith("/ · array · (4, 96, 96)")
    # nothing for the column: neither it nor its toggle takes room; the colour map is on the axes' line
    assert not window.data.side.isVisible() and not window.data.side_button.isVisible()
    top = canvas.mapTo(window, QPoint(0, 0)).y()
    colours = window.data.colours
    assert colours is not None and colours.isVisible()
    axes_line = window.data.plane.y_combo.mapTo(window, QPoint(0, 0)).y()
    assert abs(colours.mapTo(window, QPoint(0, 0)).y() - axes_line) < 8 and axes_line < top
    slider, _box = window.data.plane.sliders[0]  # one line under the axes' line, above the image
    assert slider.isVisible() and slider.mapTo(window, QPoint(0, 0)).y() < top


def test_an_ome_image_keeps_its_height_beside_its_channels_and_labels(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                      ome_image: str) -> None:
    _open(qtbot, window, ome_image, labels=True)
    canvas = _canvas(window)
    # by default the column folds to its toggle: beside it the image would keep less than 60 % of the width
    assert not window.data.side.isVisible() and window.data.side_button.isVisible()
    assert canvas.width() >= 0.6 * window.width(), canvas.width()
    window.data.side_button.click()  # the user opens it
    qtbot.waitUntil(lambda: window.data.side.isVisible() and canvas.width() < 0.6 * window.width(), timeout=5000)
    assert canvas.height() >= OME_HEIGHT and canvas.width() >= MIN_WIDTH, (canvas.width(), canvas.height())
    channels, labels = window.data.channels, window.data.label_panel
    assert channels is not None and labels is not None
    assert [row.active.text() for row in channels.rows] == ["channel 0", "channel 1", "channel 2"]
    assert channels.list.verticalScrollBar().maximum() == 0  # every channel's row in view, none scrolled off
    for panel in (channels, labels):
        assert panel.isVisible() and window.data.side.isAncestorOf(panel) and _right_of(window, panel, canvas)
    # every control of the column fits in it, not cut at its right edge
    row = channels.rows[0]
    for widget in (*(getattr(row, name) for name in row.__dataclass_fields__), labels.boxes["nuclei"],
                   labels.sliders["nuclei"]):
        right = widget.mapTo(window.data.side, QPoint(widget.width(), 0)).x()
        assert right <= window.data.side.viewport().width(), (widget, right, window.data.side.viewport().width())


def _action(w: MainWindow, text: str) -> Any:
    return next(a for a in w.menuBar().actions()[2].menu().actions() if a.text() == text)


def test_the_panels_fold_and_come_back_next_time(qtbot: Any, window: MainWindow, ome_image: str) -> None:  # noqa: F811
    _open(qtbot, window, ome_image, labels=True)
    canvas = _canvas(window)
    column = _action(window, "Image &Controls Column")
    assert not column.isChecked() and not window.data.side.isVisible()  # folded where it does not fit
    wide = canvas.width()
    sizes = window.split.sizes()
    window.split.setSizes([60, sum(sizes) - 60])  # the tree dragged narrow: the column fits, opens, the menu says so
    qtbot.waitUntil(lambda: column.isChecked() and window.data.side.isVisible(), timeout=5000)
    window.split.setSizes(sizes)
    qtbot.waitUntil(lambda: not column.isChecked() and canvas.width() >= wide - 8, timeout=5000)
    column.trigger()  # the user's choice: open, whatever the width
    qtbot.waitUntil(lambda: window.data.side.isVisible() and canvas.width() < wide, timeout=5000)
    narrow, tall = canvas.width(), canvas.height()
    column.trigger()  # hidden: the image takes the column's width
    qtbot.waitUntil(lambda: canvas.width() > narrow, timeout=5000)
    assert not window.data.side.isVisible() and not window.data.side_button.isChecked()
    assert canvas.width() >= narrow + window.data.side.width() - 8
    metadata = _action(window, "&Metadata Panel")
    assert not metadata.isChecked()
    window.meta_fold.button.click()  # the header's own button: the menu follows
    assert metadata.isChecked() and window.meta.isVisible()
    qtbot.waitUntil(lambda: canvas.height() < tall, timeout=5000)
    assert window.meta.height() >= 200  # it opens at a height that shows its fields
    assert window.meta_fold.open_height >= 200
    window.data.side_button.click()  # the column back from its own button
    assert column.isChecked() and window.data.side.isVisible()
    column.trigger()
    window.close()  # remembered: the metadata open, the column hidden
    again = MainWindow(WorkerPool())
    qtbot.addWidget(again)
    try:
        assert again.meta_fold.is_open() and _action(again, "&Metadata Panel").isChecked()
        assert not again.data.side_button.isChecked() and not _action(again, "Image &Controls Column").isChecked()
        again.remembers_layout = False  # a --screenshot run: its panels are not saved
        again.meta_fold.set_open(False)
        again.close()
    finally:
        again.pool.close()
    third = MainWindow(WorkerPool())
    qtbot.addWidget(third)
    try:
        assert third.meta_fold.is_open()
    finally:
        third.pool.close()


def test_the_empty_window_says_how_to_open_data(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    text = window.data.message.text()
    assert window.model.rowCount() == 0 and window.data.message.isVisible()
    assert "drop a .zarr folder" in text and "Open Folder" in text and "Open URL" in text
    _open(qtbot, window, _volume(tmp_path / "vol.zarr"))
    window.tree.setCurrentIndex(window.proxy.index(0, 0))
    window.close_current_store()
    qtbot.waitUntil(lambda: window.model.rowCount() == 0, timeout=5000)
    assert window.data.message.text() == text  # the last store closed: the hint again
