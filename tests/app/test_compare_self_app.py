"""View ▸ Compare with B taken from A itself: another channel held while A's other sliders move
it, another level of an OME-Zarr pyramid drawn in the same space and differenced by position,
and the pair reopened from a saved view and its command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from ome_stores import ome_zarr_image  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)
from test_compare_app import action, select  # noqa: E402
from zarrview.app.main import parse_args, view_arguments  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.scheduling import WorkerPool  # noqa: E402
from zarrview.viewing.saved_views import (flags, from_json, link, saved_from_arguments, saved_from_link,  # noqa: E402
                                          to_json)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def stack(tmp_path: Path) -> tuple[Path, np.ndarray]:
    rng = np.random.default_rng(11)
    values = rng.normal(0.0, 1.0, (3, 4, 40, 50)).astype("f4")
    g = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    g.create_array("v", shape=values.shape, chunks=(1, 1, 20, 25), dtype="f4", fill_value=0,
                   dimension_names=("t", "c", "y", "x"))[...] = values
    return tmp_path / "s.zarr", values


def _take(qtbot: Any, w: MainWindow, name: str, at: int | None = None) -> None:
    pane = w.compare
    qtbot.waitUntil(lambda: pane.source.findData(name) >= 0, timeout=10000)
    pane.source.setCurrentIndex(pane.source.findData(name))
    pane.source.activated.emit(pane.source.currentIndex())  # as a person's pick
    if at is not None:
        pane.at.setValue(at)
    _settle(qtbot, w)


def test_another_channel_is_held_while_b_follows_a(qtbot: Any, window: MainWindow,  # noqa: F811
                                                   stack: tuple[Path, np.ndarray]) -> None:
    path, values = stack
    w = window
    w.open_location(f"{path}::/v")
    _settle(qtbot, w)
    action(w, "compare").trigger()
    _take(qtbot, w, "index:1", 3)
    pane = w.compare
    qtbot.waitUntil(lambda: pane.b.state is not None and pane.b.state.indices[1] == 3, timeout=10000)
    assert pane.b.state.array is w.data.state.array
    w.data.set_index(0, 2)  # A along t: B follows; its channel stays
    qtbot.waitUntil(lambda: pane.b.state.indices[:2] == (2, 3), timeout=10000)
    pane.b.set_index(1, 1)  # B's own slider along the dimension held: the pane follows it
    qtbot.waitUntil(lambda: pane.at.value() == 1 and "c [1]" in pane.title.text(), timeout=10000)
    pane.at.setValue(3)
    qtbot.waitUntil(lambda: pane.b.state.indices[:2] == (2, 3), timeout=10000)
    pane.mode.setCurrentText("A − B")
    qtbot.waitUntil(lambda: pane.diff.array is not None and "differ" in pane.stats.text(), timeout=15000)
    _settle(qtbot, w)
    np.testing.assert_array_equal(pane.diff.array[...], values[2, 0].astype(np.float64) - values[2, 3])
    assert "c [3]" in pane.title.text() and "A: c [0]" in pane.title.text()
    assert pane.against_spec() == "index:1@3"
    w.data.set_index(1, 1)  # A's own channel: B stays held at 3
    qtbot.waitUntil(lambda: "A: c [1]" in pane.title.text(), timeout=10000)
    assert pane.b.state.indices[:2] == (2, 3)
    w.data.set_index(1, 0)
    qtbot.waitUntil(lambda: "A: c [0]" in pane.title.text(), timeout=10000)
    pane.whole.click()  # every t of channel 0 against channel 3
    qtbot.waitUntil(lambda: pane.whole_stats.text().startswith("Whole arrays: max"), timeout=20000)
    every = values[:, 0].astype(np.float64) - values[:, 3]
    text = pane.whole_stats.text()
    assert f"{every.size:,} of {every.size:,} differ" in text, text
    assert f"RMSE {np.sqrt(np.mean(every ** 2)):.6g}" in text, text

    saved = w.current_view()
    assert saved is not None and saved.compare is None and saved.compare_against == "index:1@3"
    assert saved.compare_mode == "a-b"
    again = from_json(to_json(saved), "test")
    assert again == saved
    assert saved_from_arguments(view_arguments(parse_args(flags(saved)))) == saved  # the window's command line
    assert saved_from_link(link(saved)) == saved

    other = MainWindow(WorkerPool())
    qtbot.addWidget(other)
    other.resize(w.size())
    other.show()
    try:
        other.open_view(saved)
        qtbot.waitUntil(lambda: other.compare.against_spec() == "index:1@3" and other.compare.b.state is not None
                        and other.compare.b.state.indices[:2] == (2, 3), timeout=15000)
        qtbot.waitUntil(lambda: other.compare.diff.array is not None, timeout=15000)
        np.testing.assert_array_equal(other.compare.diff.array[...], values[2, 0].astype(np.float64) - values[2, 3])
    finally:
        other.close()
        other.pool.close()



def test_another_level_is_drawn_in_level_zero_space(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    rng = np.random.default_rng(2)
    data = rng.integers(0, 4000, (3, 96, 128)).astype("uint16")
    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", data, "zyx", scale_factors=(2, 4), chunks=(1, 32, 32))
    w = window
    w.open_location(str(path))
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.state is not None and bool(w.data.state.pyramid), timeout=15000)
    action(w, "compare").trigger()
    _take(qtbot, w, "level", 1)
    pane = w.compare
    qtbot.waitUntil(lambda: pane.b.state is not None and pane.b.state.level == 1, timeout=15000)
    assert pane.matched.text().endswith("same grid")  # both views in level-0 space
    assert pane.b.state.plane_shape == w.data.state.plane_shape
    pane.mode.setCurrentText("A − B")
    qtbot.waitUntil(lambda: pane.diff.array is not None and "differ" in pane.stats.text(), timeout=15000)
    g = zarr.open_group(path, mode="r")
    w.data.set_index(0, 2)
    qtbot.waitUntil(lambda: pane.b.state.indices[0] == 2 and "differ" in pane.stats.text(), timeout=15000)
    c = 2
    paths = [d["path"] for d in dict(g.attrs)["multiscales"][0]["datasets"]]
    l0 = np.asarray(g[paths[0]][c], dtype=np.float64)
    l1 = np.asarray(g[paths[1]][c], dtype=np.float64)
    # ome-zarr-py's level 1 halves each axis: level-0 pixel i is nearest level-1 pixel i // 2
    np.testing.assert_array_equal(pane.diff.array[...], l0 - np.repeat(np.repeat(l1, 2, 0), 2, 1))
    assert "level 1" in pane.title.text()
    assert not pane.whole.isEnabled()  # two levels differ in shape: their planes are compared
    saved = w.current_view()
    assert saved is not None and saved.compare_against == "level@1" and saved.compare_mode == "a-b"
    assert saved.view.node == "/"  # the image, not its level 0
    other = MainWindow(WorkerPool())
    qtbot.addWidget(other)
    other.resize(w.size())
    other.show()
    try:
        other.open_location(link(saved))  # the link, as pasted
        qtbot.waitUntil(lambda: other.compare.b.state is not None and other.compare.b.state.level == 1
                        and other.compare.diff.array is not None, timeout=15000)
        np.testing.assert_array_equal(other.compare.diff.array[...], pane.diff.array[...])
    finally:
        other.close()
        other.pool.close()
    # the two views' controls scroll sideways rather than widen the window past a laptop's screen
    assert w.minimumSizeHint().width() <= 1280, w.minimumSizeHint()
    select(qtbot, w, paths[2])  # a level picked in the tree is A at that level, by position
    qtbot.waitUntil(lambda: pane.against_spec() == "level@2" and pane.b.state is not None
                    and pane.b.state.level == 2, timeout=15000)
    assert pane.b.state.plane_shape == w.data.state.plane_shape
