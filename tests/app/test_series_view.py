"""The time-series widget offscreen: the plot holds the line xarray reads, its x ticks are the
coordinate's words, the dimension picker replots, and Cancel stops the reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from zarrview import zarrlib as zl  # noqa: E402
from zarrview.app.bridge import init_bridge  # noqa: E402
from zarrview.app.series_view import SeriesView  # noqa: E402
from zarrview.scheduling import WorkerPool  # noqa: E402
from zarrview.viewing.line.series import LineAxis, PointQuery  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402

from store_wrappers import CountingStore, is_chunk_key  # noqa: E402

SHAPE = (30, 6, 8)
DATA = np.random.default_rng(3).normal(0, 1, SHAPE).astype("f4")
DATA[4, 2, 5] = np.nan  # a missing value stays a gap in the line


@pytest.fixture
def view(qtbot: Any) -> Iterator[SeriesView]:
    init_bridge()
    w = SeriesView(WorkerPool())
    qtbot.addWidget(w)
    w.show()
    yield w
    w.pool.close()


def _ticks(axis: Any, lo: float, hi: float) -> list[float]:
    return [v for _, values in axis.tickValues(lo, hi, 600) for v in values]


def test_the_plot_holds_the_line_with_coordinate_ticks(qtbot: Any, view: SeriesView, tmp_path: Path) -> None:
    xr = pytest.importorskip("xarray")
    lat = np.linspace(45.25, 42.75, 6)
    ds = xr.Dataset({"t2m": (("time", "lat", "lon"), DATA)},
                    coords={"time": np.arange(30) * 6.0, "lat": lat, "lon": np.arange(8) * 2.5})
    ds.time.attrs["units"] = "hours since 2001-03-01"
    ds.to_zarr(tmp_path / "ds.zarr", zarr_format=3, consolidated=True, encoding={"t2m": {"chunks": (7, 3, 4)}})
    truth = xr.open_zarr(tmp_path / "ds.zarr", chunks=None, decode_times=False)
    arr = zl.open(tmp_path / "ds.zarr")["t2m"]

    def hours(v: float) -> str:
        return f"+{v:g} h"

    axes = (LineAxis("time", truth.time.values, hours), LineAxis("lat", lat, lambda v: f"{v:g} °N"),
            LineAxis("lon", truth.lon.values, lambda v: f"{v:g} °E"))
    view.show_point(PointQuery(arr, (0, 2, 5), 0, axes=axes, y_label="K"))  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: not view.series.busy and view.series.y is not None, timeout=10000)
    want = truth.t2m[:, 2, 5].values
    assert view.finite_points() == np.isfinite(want).sum() == 29
    np.testing.assert_array_equal(view.curve.yData, want)
    np.testing.assert_array_equal(view.curve.xData, truth.time.values)
    assert view.title.text() == f"t2m at lat={lat[2]:g} °N, lon=12.5 °E"
    assert not view.progress.isVisible() and not view.cancel.isEnabled()
    ticks = _ticks(view.bottom, 0, 174)
    assert ticks and view.bottom.tickStrings(ticks, 1, 30) == [hours(v) for v in ticks]
    assert view.left.tickStrings([0.5], 1, 1) != ["+0.5 h"]  # the value axis keeps its numbers
    # the picker plots the same point along longitude
    view.along.setCurrentIndex(2)
    qtbot.waitUntil(lambda: view.series.dim == 2 and not view.series.busy, timeout=10000)
    np.testing.assert_array_equal(view.curve.yData, truth.t2m[0, 2, :].values)
    assert view.title.text().startswith("t2m at time=+0 h, lat=")
    assert view.bottom.tickStrings([2.5], 1, 1) == ["2.5 °E"]


def test_progress_shows_while_it_fills_and_cancel_stops_it(qtbot: Any, view: SeriesView, tmp_path: Path) -> None:
    data = np.arange(80 * 2, dtype="f4").reshape(80, 2)
    zarr.create_array(tmp_path / "slow", shape=data.shape, chunks=(1, 2), dtype="f4")[...] = data
    store = CountingStore(LocalStore(tmp_path / "slow"), latency=0.02, slow=is_chunk_key)
    view.model.block_chunks = 2
    view.show_point(PointQuery(zl.open(store), (0, 1), 0))  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: view.finite_points() >= 2, timeout=10000)  # drawn while it fills
    assert view.series.busy and view.progress.isVisible() and view.progress.value() >= 2 and view.cancel.isEnabled() and view.progress.maximum() == 80
    qtbot.mouseClick(view.cancel, Qt.MouseButton.LeftButton)
    at_cancel = store.chunk_reads()
    assert not view.series.busy and "Cancelled" in view.status.text()
    assert view.pool.wait_until_idle(10)
    qtbot.wait(50)
    assert store.chunk_reads() - at_cancel <= 2 and store.chunk_reads() < 40
    n = view.finite_points()
    assert 2 <= n < 80 and not view.progress.isVisible()
    np.testing.assert_array_equal(view.curve.yData[:n], data[:n, 1])

