"""Lines, tables and the readout in the window, against the values zarr-python wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from PySide6.QtCore import QPointF, Qt

import zarrview.zarrlib as zl
from zarrview.app.window import MainWindow

from test_app import _settle, plotted, window  # noqa: F401  (the window fixture)

from _window_helpers import Heartbeat


def test_a_long_series_is_an_envelope_and_the_window_keeps_answering(qtbot: Any, window: MainWindow,
                                                                       tmp_path: Path) -> None:
    n = 20_000_000
    data = np.cos(np.arange(n, dtype="f4") / 1e5).astype("f4")
    data[12_345_678] = 50.0
    zarr.create_array(tmp_path / "long", shape=(n,), chunks=(1_000_000,), dtype="f4")[...] = data
    beat = Heartbeat()
    beat.start()
    window.data.set_array(zl.open(tmp_path / "long"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    beat.assert_responsive()
    beat.timer.stop()
    y = plotted(qtbot, window)
    assert 2 * 16 <= len(y) <= 2 * 4096  # one min/max pair per screen column, not 20 million points
    assert np.nanmax(y) == 50.0 and np.nanmin(y) == pytest.approx(data.min())
    assert "minimum and maximum" in window.status_label.text()


def test_records_of_any_rank_show_every_field(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    dt = np.dtype([("id", "<i4"), ("temp", "<f8"), ("tag", "S6")])
    rec = np.zeros((5, 3), dtype=dt)
    rec["id"] = np.arange(15).reshape(5, 3)
    rec["temp"] = np.linspace(-1, 1, 15).reshape(5, 3)
    rec["tag"] = [[f"t{i}{j}".encode() for j in range(3)] for i in range(5)]
    zarr.create_array(tmp_path / "rec", shape=rec.shape, chunks=(2, 2), dtype=dt, zarr_format=2)[...] = rec
    window.data.set_array(zl.open(tmp_path / "rec"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    model = window.data.table.model()
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers == ["id", "temp", "tag"] and model.rowCount() == 5
    assert [model.data(model.index(3, c)) for c in range(3)] == [str(rec[3, 0]["id"]), repr(float(rec[3, 0]["temp"])), "t30"]
    # the second dimension has a slider: move it and the same rows show column 2 of the records
    boxes = [w for w in window.data.controls.findChildren(object) if hasattr(w, "setValue") and hasattr(w, "value")
             and type(w).__name__ in ("QSpinBox", "LongIndexBox")]
    assert len(boxes) == 1
    boxes[0].setValue(2)
    _settle(qtbot, window)
    model = window.data.table.model()
    assert [model.data(model.index(4, c)) for c in range(3)] == [str(rec[4, 2]["id"]), repr(float(rec[4, 2]["temp"])), "t42"]


def test_the_readout_under_the_cursor(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    data = np.random.default_rng(7).integers(0, 60000, (3, 40, 50), dtype="u2")
    zarr.create_array(tmp_path / "img", shape=data.shape, chunks=(1, 20, 20), dtype="u2",
                      dimension_names=["t", "y", "x"])[...] = data
    window.data.set_array(zl.open(tmp_path / "img"), {0: 2})  # type: ignore[arg-type]
    _settle(qtbot, window)
    vb = window.data.image.view.getViewBox()
    window.data.image._mouse_moved(vb.mapViewToScene(QPointF(17.5, 11.5)))  # column 17, row 11
    assert window.status_label.text() == f"y 11, x 17 (t 2): {data[2, 11, 17]}"


def test_a_line_zooms_along_x_and_its_y_follows_the_values_in_view(qtbot: Any, window: MainWindow,
                                                                    tmp_path: Path) -> None:
    data = np.concatenate([np.linspace(0, 1, 500), np.linspace(100, 101, 500)]).astype("f4")
    zarr.create_array(tmp_path / "steps", shape=data.shape, chunks=(250,), dtype="f4")[...] = data
    window.data.set_array(zl.open(tmp_path / "steps"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    box = window.data.plot.getPlotItem().getViewBox()
    assert box.state["mouseEnabled"] == [True, False]  # the wheel zooms x only
    box.setXRange(10, 400, padding=0)
    qtbot.waitUntil(lambda: box.viewRange()[1][1] < 50, timeout=5000)  # y fits the first step, not the second
    y0, y1 = box.viewRange()[1]
    assert y0 <= data[10:400].min() and y1 >= data[10:400].max() and y1 - y0 < 2
