"""Zoomed into a region of a huge array (``--region``): the full-resolution chunks are drawn in
place, checked pixel by pixel on the rendered window against the values zarr-python wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from PySide6.QtCore import QPoint

import zarrview.zarrlib as zl
from zarrview.app.window import MainWindow

from test_app import _settle, window  # noqa: F401  (the window fixture)

from http_server import serve

BIG = 65536
CHUNK = 256
REGION = (9000, 9512, 9000, 9768)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    root = tmp_path_factory.mktemp("bigview") / "big.zarr"
    a = zarr.create_array(root, shape=(BIG, BIG), chunks=(256, 256), dtype="u1", fill_value=0)
    yy, xx = np.mgrid[0:1024, 0:1280]
    block = ((np.sin(yy / 40) + np.cos(xx / 60)) * 60 + 128).astype("u1")
    a[8960:9984, 8960:10240] = block
    return root, block


def _chunks(r0: float, r1: float, c0: float, c1: float, grow: int = 0) -> set[str]:
    """The keys (``row/column``) of the chunks under rows r0:r1 and columns c0:c1, with ``grow``
    more chunks on every side."""
    last = BIG // CHUNK
    rows = range(max(0, int(r0 // CHUNK) - grow), min(last, int(np.ceil(r1 / CHUNK)) + grow))
    cols = range(max(0, int(c0 // CHUNK) - grow), min(last, int(np.ceil(c1 / CHUNK)) + grow))
    return {f"{r}/{c}" for r in rows for c in cols}


def _rendered_vs_data(w: MainWindow, block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grey levels on screen and the grey the data maps to through the shown levels, at a grid
    of screen pixels inside the region."""
    gv = w.data.image.ui.graphicsView
    shot = gv.grab().toImage()
    lo, hi = w.data.image.ui.histogram.item.getLevels()
    vb = w.data.image.view.getViewBox()
    seen, want = [], []
    for fy in np.linspace(0.15, 0.85, 9):
        for fx in np.linspace(0.15, 0.85, 9):
            px = QPoint(int(fx * gv.width()), int(fy * gv.height()))
            p = vb.mapSceneToView(gv.mapToScene(px))
            r, c = int(p.y()), int(p.x())
            if not (REGION[0] <= r < REGION[1] and REGION[2] <= c < REGION[3]):
                continue
            seen.append(shot.pixelColor(px).red())
            v = float(block[r - 8960, c - 8960])
            want.append(np.clip((v - lo) / (hi - lo), 0, 1) * 255)
    return np.array(seen), np.array(want)


@pytest.mark.parametrize("over_http", [False, True])
def test_region_of_a_huge_array_is_drawn_at_full_resolution(qtbot: Any, window: MainWindow, big: tuple[Path, np.ndarray],
                                                              over_http: bool) -> None:
    root, block = big
    with serve(root.parent) as (url, log):
        location = f"{url}/{root.name}" if over_http else str(root)
        window.data.pending_region = REGION
        arr = zl.open(location)
        log.clear()

        def chunk_gets() -> list[str]:
            return [path.rsplit("/c/", 1)[1] for _, path, _ in log.requests("GET") if "/c/" in path]

        def resting() -> bool:
            """The view rests on the region: its full-resolution tile holds all it shows, and
            (over HTTP) every chunk of the ring around it has been asked for, read ahead."""
            scene, state = window.data.scene, window.data.controller.state
            detail = scene.detail
            if detail is None or scene.busy or state is None or state.region is None or not window.pool.idle():
                return False
            shown = window.data.image.visible()[0]
            return (bool(np.allclose(state.region, shown)) and detail.covers(*shown)
                    and (not over_http or _chunks(*shown, grow=1) <= set(chunk_gets())))

        window.data.set_array(arr)
        qtbot.waitUntil(resting, timeout=20000)
        if over_http:
            # What is read is exact; how many requests it takes depends on timing. The view is
            # fitted to the pane's shape once the region's first tile lands, which shows a row
            # of chunks more; the read-ahead ring around that first tile may start before the
            # fitted view asks for it (the read-ahead is then stopped, its chunks in flight
            # dropped), and a chunk the store lacks is not cached, so each read that needs one
            # asks for it again: 40 requests where the ring had not started, up to 50 where it had.
            shown = window.data.image.visible()[0]
            detail = window.data.scene.detail
            assert detail is not None
            gets = chunk_gets()
            # full resolution: exactly the chunks on screen (the region and the fitted view's margin)
            assert _chunks(detail.r0, detail.r1, detail.c0, detail.c1) == _chunks(*shown)
            # nothing beyond one ring of chunks around the view: no preview of the 65536² plane
            assert set(gets) == _chunks(*shown, grow=1), sorted(set(gets) ^ _chunks(*shown, grow=1))
            # the region's 12 chunks are fetched once each; every later read has them from the cache
            region = _chunks(*REGION)
            assert len(region) == 12 and all(gets.count(key) == 1 for key in region), sorted(gets)
    seen, want = _rendered_vs_data(window, block)
    assert len(seen) >= 40
    assert np.abs(seen - want).mean() < 6, (seen[:10], want[:10])
    assert seen.std() > 20  # the data's pattern, not a blank area


def test_after_cancel_the_next_pan_reads_again(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """Cancel used to leave the view waiting for an answer that never came: it refused detail
    reads until a slider moved."""
    from zarrview.zarrlib.storage import LocalStore

    from store_wrappers import CountingStore

    values = (np.arange(1024 * 1024, dtype="u4") % 65521).reshape(1024, 1024).astype("u2")
    zarr.create_array(tmp_path / "slow", shape=values.shape, chunks=(32, 32), dtype="u2")[...] = values
    store = CountingStore(LocalStore(tmp_path / "slow"))
    window.data.budget_chunks = 16
    window.data.set_array(zl.open(store))  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert window.data.scene.coarse is not None and window.data.scene.detail is None
    store.latency = 0.1  # each chunk now takes a tenth of a second: 16 of them, time to cancel
    window.data.image.view.setRange(xRange=(200, 320), yRange=(100, 220), padding=0)
    qtbot.waitUntil(lambda: window.data.scene.busy, timeout=5000)
    qtbot.waitUntil(lambda: window.cancel_button.isEnabled(), timeout=5000)
    window.cancel_button.click()
    qtbot.waitUntil(lambda: not window.data.scene.busy, timeout=5000)
    assert window.data.scene.detail is None and "Cancel" in window.status_label.text()
    store.latency = 0.0
    window.data.image.view.setRange(xRange=(210, 260), yRange=(110, 160), padding=0)  # a pan, zoomed in further
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=10000)
    tile = window.data.scene.detail
    assert tile.full_resolution and tile.covers(110, 160, 210, 260)
    np.testing.assert_array_equal(tile.values, values[tile.r0:tile.r1, tile.c0:tile.c1])
