"""View ▸ Chunk Grid in the window: the boundaries drawn are the chunk and shard boundaries,
the chunks tinted are those with no file, and the chunk under the cursor is named with the
size of its file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from zarrview.app.window import MainWindow  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)


def _grid_action(w: MainWindow) -> Any:
    return next(a for m in w.menuBar().actions() if m.menu() is not None for a in m.menu().actions()
                if a.text().replace("&", "") == "Chunk Grid")


def test_the_grid_shows_the_chunks_and_the_missing_ones(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    a = zarr.create_array(tmp_path / "a.zarr", shape=(60, 80), chunks=(20, 20), shards=(20, 40), dtype="u2",
                          fill_value=0)
    a[:20, :] = 5
    a[40:, 60:] = np.arange(20 * 20).reshape(20, 20) + 1
    window.open_location(str(tmp_path / "a.zarr"))
    _settle(qtbot, window)
    action = _grid_action(window)
    assert action.shortcut().toString() == "Ctrl+Shift+G"
    action.trigger()
    overlay = window.data.chunk_grid
    qtbot.waitUntil(lambda: overlay.lines is not None, timeout=10000)
    lines = overlay.lines
    assert lines.chunk_rows == (0, 20, 40, 60) and lines.chunk_cols == (0, 20, 40, 60, 80)
    assert lines.shard_rows == (0, 20, 40, 60) and lines.shard_cols == (0, 40, 80)
    shards = {tuple(int(x) for x in p.relative_to(tmp_path / "a.zarr" / "c").parts)
              for p in (tmp_path / "a.zarr" / "c").rglob("*") if p.is_file()}
    assert shards == {(0, 0), (0, 1), (2, 1)}
    stored = {(0, 0), (0, 1), (0, 2), (0, 3), (2, 3)}  # the inner chunks written
    every = {(r, c) for r in range(3) for c in range(4)}
    qtbot.waitUntil(lambda: overlay.missing_chunks == every - stored, timeout=15000)
    # the plane was read whole: its stored chunks are held decoded in the pool's cache, the others not
    qtbot.waitUntil(lambda: overlay.cached_chunks == stored, timeout=15000)
    cache_id = window.data.state.array.reader.cache_id
    assert {c for c in every if (cache_id, c) in window.pool.cache} == stored
    shown: list[str] = []
    window.data.status.connect(shown.append)
    window.data.image.hovered(45, 65)  # the cursor over chunk (2, 3), stored in shard c/2/1
    qtbot.waitUntil(lambda: any("stored" in s and "chunk [2, 3]" in s for s in shown), timeout=10000)
    shard = (tmp_path / "a.zarr" / "c" / "2" / "1").read_bytes()
    index = np.frombuffer(shard[-(16 * 2 + 4):-4], dtype="<u8").reshape(2, 2)
    assert any(f"chunk [2, 3] in shard c/2/1: {int(index[1, 1])} B stored" in s for s in shown), shown
    window.data.image.hovered(30, 10)
    qtbot.waitUntil(lambda: any("chunk [1, 0] in shard c/1/0: not stored" in s for s in shown), timeout=10000)
    action.trigger()
    assert not overlay.chunks.isVisible() and not overlay.missing.isVisible()


def test_the_chunks_being_read_are_drawn_until_they_land(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """Over a server that answers plane 1's chunks slowly: while they are read they are drawn,
    every one of them and nothing else, and once they land none are."""
    from http_server import Faults, serve

    a = zarr.create_array(tmp_path / "v.zarr", shape=(2, 40, 60), chunks=(1, 20, 20), dtype="u1", fill_value=0)
    a[...] = 7
    with serve(tmp_path, Faults(delay=1.5, delay_match="/v.zarr/c/1/")) as (url, _):
        window.open_location(f"{url}/v.zarr")
        _settle(qtbot, window)
        _grid_action(window).trigger()
        overlay = window.data.chunk_grid
        qtbot.waitUntil(lambda: overlay.lines is not None, timeout=10000)
        assert overlay.reading_chunks == frozenset()
        window.data.set_index(0, 1)
        every = frozenset((1, r, c) for r in range(2) for c in range(3))
        qtbot.waitUntil(lambda: overlay.reading_chunks == every, timeout=10000)
        assert not overlay.reading.path().isEmpty()
        qtbot.waitUntil(lambda: overlay.reading_chunks == frozenset(), timeout=30000)
        assert overlay.reading.path().isEmpty()
