"""A slider step repaints what changed, in the order the user looks at it: a plane that lands at
once never says "Reading" in the status bar (it would repaint the bar twice a step), a slow read
says so while it runs, and the histogram of the new plane is drawn after the new plane's pixels,
with numpy's counts of that plane."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import zarr

import zarrview.zarrlib as zl
from zarrview.app.data_view import BUSY_DELAY_MS
from zarrview.app.window import MainWindow
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore
from drawn import drawn
from test_app import _settle, window  # noqa: F401  (the window fixture)


def _stack(path: Path) -> np.ndarray:
    data = np.stack([np.full((48, 40), 10 * (k + 1), "u1") for k in range(3)])
    data[:, :8] += np.arange(3, dtype="u1")[:, None, None] * 50  # each plane's histogram its own
    a = zarr.create_array(path, shape=data.shape, chunks=(1, 16, 16), dtype="u1")
    a[...] = data
    return data


def test_a_cached_plane_lands_without_a_reading_status_and_its_histogram_follows(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                                  tmp_path: Path) -> None:
    data = _stack(tmp_path / "s")
    view = window.data
    view.set_array(zl.open(tmp_path / "s"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    view.set_index(0, 2)
    _settle(qtbot, window)
    said: list[str] = []
    view.status.connect(said.append)
    at_pixels: list[Any] = []
    view.loaded.connect(lambda: at_pixels.append(view.image.ui.histogram.item.plot.getData()[1]))
    view.set_index(0, 0)  # back to a plane whose chunks are cached
    _settle(qtbot, window)
    np.testing.assert_array_equal(drawn(view), data[0])
    assert said and not any(s.startswith("Reading") for s in said) and said[-1].startswith("Read /[0, :, :]")
    edges, counts = view.image.ui.histogram.item.plot.getData()
    values, want = np.unique(data[0], return_counts=True)
    assert dict(zip(edges[counts > 0].astype(int).tolist(), counts[counts > 0].tolist(), strict=True)) == \
        dict(zip(values.tolist(), want.tolist(), strict=True))
    # when the new pixels were in, the histogram still showed the plane before (drawn next)
    assert at_pixels and not np.array_equal(at_pixels[0], counts)


def test_a_slow_read_says_it_is_reading_while_it_runs(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    data = _stack(tmp_path / "s")
    # plane 1's chunks wait until the test has seen what the window says (a prefetch of them
    # while plane 0 is shown waits too, so plane 1 is never in the cache before it is asked for)
    gate = threading.Event()
    arr = zl.open(CountingStore(LocalStore(tmp_path / "s"), slow=lambda key: key.startswith("c/1/"), gate=gate))
    window.data.set_array(arr)  # type: ignore[arg-type]
    # plane 0 drawn (not settled: a prefetch of plane 1 may be waiting at the gate)
    qtbot.waitUntil(lambda: np.array_equal(drawn(window.data), data[0]), timeout=30_000)
    said: list[str] = []
    window.data.status.connect(said.append)
    t0 = time.monotonic()
    try:
        window.data.set_index(0, 1)
        qtbot.waitUntil(lambda: window.status_label.text().startswith("Reading /[1, :, :]"), timeout=30_000)
        assert time.monotonic() - t0 >= BUSY_DELAY_MS / 1000 * 0.9
    finally:
        gate.set()
    _settle(qtbot, window)
    assert window.status_label.text().startswith("Read /[1, :, :]")
    assert [s for s in said if s.startswith("Reading")] == [said[0]]  # said once, first, not repeated
    np.testing.assert_array_equal(drawn(window.data), data[1])
