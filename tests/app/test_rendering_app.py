"""The image view's pixels are made on a worker, at the screen's reduction, and equal numpy's
mapping of the same plane through the levels and lookup table shown; a levels drag draws again;
the histogram counts the data; the readout reads the values, not the colours."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from drawn import drawn_item, drawn_rgba, expected_rgba  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.image import rendering  # noqa: E402

RNG = np.random.default_rng(3)
STACK = RNG.integers(0, 4000, (2, 1200, 1000), dtype=np.uint16)


def _store(tmp_path: Path) -> Path:
    g = zarr.open_group(tmp_path / "r.zarr", mode="w")
    g.create_array("stack", shape=STACK.shape, chunks=(1, 600, 500), dtype="u2")[...] = STACK
    field = RNG.normal(0, 1, (90, 70)).astype("f4")
    field[10:20, 30:50] = np.nan
    g.create_array("field", shape=field.shape, chunks=(45, 35), dtype="f4")[...] = field
    return tmp_path / "r.zarr"


def _table(window: MainWindow) -> np.ndarray | None:
    gradient = window.data.image.ui.histogram.item.gradient
    return None if gradient.isLookupTrivial() else np.asarray(gradient.getLookupTable(256, alpha=True), np.uint8)


def _assert_drawn(window: MainWindow, plane: np.ndarray) -> None:
    rendered = drawn_item(window.data).rendered
    assert rendered is not None
    kr, kc = rendered.step
    want = expected_rgba(plane[::kr, ::kc], window.data.scene.levels, _table(window))
    np.testing.assert_array_equal(drawn_rgba(window.data), want)


def test_frames_are_made_off_the_gui_thread_and_equal_numpy(qtbot: Any, window: MainWindow, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[threading.Thread] = []
    real = rendering.render_tile

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(rendering, "render_tile", spy)
    window.data.set_array(zl.open(f"{_store(tmp_path)}::/stack"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert window.data.colours is not None
    window.data.colours.combo.setCurrentText("viridis")
    _settle(qtbot, window)
    _assert_drawn(window, STACK[0])
    assert drawn_item(window.data).rendered.step > (1, 1)  # 1200 rows on a few hundred screen pixels
    window.data.set_index(0, 1)
    _settle(qtbot, window)
    _assert_drawn(window, STACK[1])
    hist = window.data.image.ui.histogram.item
    hist.setLevels(500, 1500)  # what a drag of the histogram's region does
    _settle(qtbot, window)
    assert window.data.scene.levels == pytest.approx((500, 1500))
    _assert_drawn(window, STACK[1])
    _, counts = hist.plot.getData()
    sample = STACK[1].reshape(-1)[:: -(-STACK[1].size // rendering.HISTOGRAM_SAMPLES)]
    assert counts.sum() == sample.size  # the data's values counted, not the colours drawn
    assert window.data.controller.readout(5, 7).count(str(STACK[1, 5, 7])) == 1
    assert threads and all(t is not threading.main_thread() for t in threads)


def test_nan_is_drawn_in_its_colour_and_a_zoom_draws_finer(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    store = _store(tmp_path)
    field = zl.open(f"{store}::/field")
    window.data.set_array(field)  # type: ignore[arg-type]
    _settle(qtbot, window)
    _assert_drawn(window, np.asarray(field[...]))
    assert (drawn_rgba(window.data)[15 // drawn_item(window.data).rendered.step[0], 40] == (255, 0, 255, 255)).all()
    window.data.set_array(zl.open(f"{store}::/stack"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    coarse = drawn_item(window.data).rendered.step
    window.data.image.view.setRange(xRange=(100, 160), yRange=(100, 160), padding=0)
    qtbot.waitUntil(lambda: drawn_item(window.data).rendered.step == (1, 1)
                    or getattr(drawn_item(window.data, "detail").rendered, "step", None) == (1, 1), timeout=5000)
    assert coarse > (1, 1)
