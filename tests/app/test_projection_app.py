"""Projections from the image view's controls, as a person makes them: pick a dimension, an
operation and a range, press Project, see the projection (equal to numpy's reduction of the
same zarr-python-written values), read it under the cursor, export it, cancel it, and return to
the plain plane by moving the reduced dimension's slider."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from drawn import drawn  # noqa: E402
from store_wrappers import CountingStore  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)
from test_export import Hold, choose, wait_idle  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app.projection_controls import SCHEDULER_KEY, ProjectionControls  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402

rng = np.random.default_rng(7)
COUNTS = rng.integers(0, 60000, (20, 24, 30)).astype("u2")
FIELD = rng.normal(10, 3, (20, 24, 30)).astype("f4")
FIELD[rng.random(FIELD.shape) < 0.3] = np.nan
FIELD[:, 0, 0] = np.nan  # NaN through the whole range: NaN, as numpy's nan-functions say


def write(path: Path, values: np.ndarray) -> Path:
    a = zarr.create_array(path, shape=values.shape, chunks=(4, 8, 16), dtype=values.dtype,
                          dimension_names=("z", "y", "x"))
    a[...] = values
    return path


def controls(window: MainWindow) -> ProjectionControls:  # noqa: F811
    pc = window.data.projection
    assert pc is not None
    return pc


def project(qtbot: Any, window: MainWindow, dim: int, op: str, start: int, stop: int) -> ProjectionControls:  # noqa: F811
    """Set the row's controls and press Project, as a person does."""
    pc = controls(window)
    pc.dim.setCurrentIndex(pc.dim.findData(dim))
    pc.op.setCurrentText(op)
    pc.start.setValue(start)
    pc.stop.setValue(stop)
    qtbot.mouseClick(pc.button, Qt.MouseButton.LeftButton)
    return pc


def shown(window: MainWindow) -> np.ndarray:  # noqa: F811
    image = drawn(window.data)
    assert image is not None
    return np.asarray(image)


def test_a_max_projection_is_drawn_read_out_and_exported_as_numpy_reduces(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                          tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    window.data.set_array(zl.open(write(tmp_path / "counts.zarr", COUNTS)))
    _settle(qtbot, window)
    pc = controls(window)
    assert [pc.dim.itemText(i) for i in range(pc.dim.count())] == ["None", "z (20)"]  # y and x are displayed
    project(qtbot, window, 0, "max", 3, 17)
    qtbot.waitUntil(lambda: pc.shown is not None, timeout=15000)
    truth = COUNTS[3:17].max(axis=0)
    qtbot.waitUntil(lambda: np.array_equal(shown(window), truth), timeout=15000)  # its frame is rendered on a worker
    assert pc.label.text() == "showing max over z [3:17]"
    assert "max over z[3:17]" in window.status_label.text()
    assert pc.readout(5, 7) == f"y 5, x 7 (max over z [3:17]): {truth[5, 7]}"
    lo, hi = window.data.image.ui.histogram.item.getLevels()
    assert truth.min() <= lo < hi <= truth.max()  # levels from the projection's own values

    choose(window, monkeypatch, tmp_path / "max.npy")
    window.exports.data_action.trigger()
    wait_idle(qtbot, window)
    np.testing.assert_array_equal(np.load(tmp_path / "max.npy"), truth)  # File > Export writes the projection

    window.data.set_index(0, 9)  # the reduced dimension's slider: back to the plain plane
    qtbot.waitUntil(lambda: pc.shown is None and np.array_equal(shown(window), COUNTS[9]), timeout=15000)
    assert pc.dim.currentData() is None and pc.label.text() == ""


@pytest.mark.parametrize(("name", "op"), [("field", "mean"), ("field", "max"), ("counts", "mean")])
def test_mean_and_max_equal_numpy_nan_ignored(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                              name: str, op: str) -> None:
    values = {"field": FIELD, "counts": COUNTS}[name]
    window.data.set_array(zl.open(write(tmp_path / f"{name}.zarr", values)))
    _settle(qtbot, window)
    pc = project(qtbot, window, 0, op, 2, 19)
    qtbot.waitUntil(lambda: pc.shown is not None, timeout=15000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the all-NaN element
        truth = np.nanmean(values[2:19], axis=0, dtype=np.float64) if op == "mean" else np.nanmax(values[2:19], axis=0)
    assert pc.shown is not None and pc.shown.image is not None
    np.testing.assert_allclose(pc.shown.image, truth, rtol=1e-9, equal_nan=True)
    # drawn (as float32 at most) once its frame, rendered on a worker, has landed
    qtbot.waitUntil(lambda: np.allclose(shown(window), truth, rtol=1e-6, equal_nan=True), timeout=15000)
    assert np.isnan(pc.shown.image[0, 0]) == (name == "field")  # NaN only where every value is NaN


def test_cancel_stops_a_projection_and_the_plane_stays_usable(qtbot: Any, window: MainWindow,  # noqa: F811
                                                              tmp_path: Path) -> None:
    hold = Hold()
    window.data.set_array(zl.open(CountingStore(LocalStore(write(tmp_path / "c.zarr", COUNTS)), fail=hold)))
    _settle(qtbot, window)
    hold.hold(free=2)
    pc = project(qtbot, window, 0, "mean", 0, 20)
    qtbot.waitUntil(lambda: hold.waiting > 0, timeout=15000)  # under way, and it cannot finish
    # the button follows the progress the projection reports, which reaches the GUI thread
    # after the worker has started reading
    qtbot.waitUntil(window.cancel_button.isEnabled, timeout=15000)
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    hold.release.set()
    qtbot.waitUntil(lambda: "Cancelled mean over z[0:20]" in window.status_label.text(), timeout=15000)
    assert pc.shown is None and pc.driver.inflight is None
    np.testing.assert_array_equal(shown(window), COUNTS[0])  # the plain plane, as before
    window.data.set_index(0, 4)
    qtbot.waitUntil(lambda: np.array_equal(shown(window), COUNTS[4]), timeout=15000)
    pc = project(qtbot, window, 0, "min", 0, 20)  # and projecting works again
    qtbot.waitUntil(lambda: pc.shown is not None and np.array_equal(shown(window), COUNTS.min(axis=0)), timeout=15000)


def test_a_scheduler_set_in_preferences_sends_projections_to_it(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                tmp_path: Path) -> None:
    window.data.set_array(zl.open(write(tmp_path / "counts.zarr", COUNTS)))
    _settle(qtbot, window)
    assert controls(window).engine().scheduler is None  # none set: this machine
    window.settings.setValue(SCHEDULER_KEY, " tcp://127.0.0.1:8786 ")
    engine = controls(window).engine()
    assert engine.scheduler == "tcp://127.0.0.1:8786" and engine.source is not None
    np.testing.assert_array_equal(engine.source.open()[:, 1, :], COUNTS[:, 1, :])  # what a worker opens
