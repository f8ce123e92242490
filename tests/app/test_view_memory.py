"""An array's view is kept for the session: its sliders, contrast and channels (colour, window,
shown or not, composite or single) come back as they were left when another node was selected
in between, and a --slice style plane given on the way back still wins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.image.memory import ViewMemory, kept_view, restored  # noqa: E402
from zarrview.viewing.image.state import initial_state  # noqa: E402

from drawn import drawn  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)

DATA = (np.arange(6 * 20 * 24) % 997).astype("u2").reshape(6, 20, 24)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("memory") / "s.zarr"
    g = zarr.open_group(root, mode="w")
    g.create_array("vol", shape=DATA.shape, chunks=(1, 20, 24), dtype="u2", dimension_names=["z", "y", "x"])[...] = DATA
    g.create_array("other", shape=(8, 8), chunks=(8, 8), dtype="f4")[...] = 1.5
    return root


def _shown(qtbot: Any, w: MainWindow, location: str) -> None:
    w.open_location(location)
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.scene.detail is not None and not w.data.scene.busy, timeout=15000)
    _settle(qtbot, w)


def test_sliders_and_contrast_come_back(qtbot: Any, window: MainWindow, store: Path) -> None:  # noqa: F811
    _shown(qtbot, window, f"{store}::/vol")
    data = window.data
    data.set_index(0, 4)
    qtbot.waitUntil(lambda: (got := drawn(data)) is not None and (got == DATA[4]).all(), timeout=10000)
    data.set_state(data.state.with_(contrast=(100.0, 300.0)))
    _shown(qtbot, window, f"{store}::/other")
    assert data.state.array.shape == (8, 8)
    _shown(qtbot, window, f"{store}::/vol")
    assert data.state.indices[0] == 4 and data.plane.sliders[0][1].value() == 4
    assert data.state.contrast == (100.0, 300.0)
    assert tuple(data.image.ui.histogram.item.getLevels()) == (100.0, 300.0)
    np.testing.assert_array_equal(drawn(data), DATA[4])
    data.set_array(data.state.array, {0: 1})  # a plane asked for (a link, a well) wins over the one kept
    assert data.state.indices[0] == 1 and data.state.contrast == (100.0, 300.0)


def test_channels_come_back(qtbot: Any, window: MainWindow, tmp_path: Path, store: Path) -> None:  # noqa: F811
    pytest.importorskip("ome_zarr")
    from ome_stores import ome_zarr_image

    image = (np.arange(3 * 16 * 16) % 251).astype("u1").reshape(3, 16, 16)
    path = ome_zarr_image(tmp_path / "img.zarr", "0.4", image, "cyx", scale_factors=())
    _shown(qtbot, window, str(path))
    data = window.data
    assert data.state.composite and data.channels is not None
    data.set_state(data.state.with_channel(1, active=False, color=(255, 255, 0), window=(5.0, 50.0)))
    want = data.state.channels
    _shown(qtbot, window, f"{store}::/other")
    _shown(qtbot, window, str(path))
    assert data.state.channels == want and data.state.composite
    assert data.channels is not None and not data.channels.rows[1].active.isChecked()
    assert data.channels.rows[0].active.isChecked()


def test_a_kept_view_applies_only_where_it_fits(tmp_path: Path) -> None:
    import zarrview.zarrlib as zl

    zarr.create_array(tmp_path / "a.zarr", shape=(4, 5, 6), chunks=(1, 5, 6), dtype="u1")
    arr = zl.open(str(tmp_path / "a.zarr"))
    first = initial_state(arr)  # type: ignore[arg-type]
    moved = first.with_(indices=(3, 0, 0), contrast=(1.0, 2.0), y_dim=0, x_dim=2)
    memory = ViewMemory(size=1)
    memory.keep(moved)
    assert memory.restore(first) == restored(first, kept_view(moved)) and memory.restore(first).indices == (3, 0, 0)
    assert memory.restore(first, plane_given=True).y_dim == first.y_dim
    zarr.create_array(tmp_path / "a.zarr", shape=(4, 5, 7), chunks=(1, 5, 7), dtype="u1", overwrite=True)
    again = initial_state(zl.open(str(tmp_path / "a.zarr")))  # type: ignore[arg-type]
    assert memory.restore(again) == again  # rewritten with another shape: a fresh view
