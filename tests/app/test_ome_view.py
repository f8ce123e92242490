"""OME-Zarr images in the window: selecting an image group shows its image from the pyramid level
the zoom needs, a level can be picked, and a zoomed corner reads level 0; stores written by
ome-zarr-py (0.4 and 0.5), values checked against what was written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarrview.app.window import MainWindow

from ome_stores import ome_zarr_image
from _window_helpers import show_image, zoom_to_corner
from test_app import _settle, window  # noqa: F401  (the window fixture)
from drawn import drawn


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_an_image_group_shows_its_image_from_the_pyramid(qtbot: Any, window: MainWindow, tmp_path: Path,  # noqa: F811
                                                        version: str) -> None:
    rng = np.random.default_rng(5)
    data = rng.integers(0, 4000, (3, 1024, 1024), dtype="u2")
    path = ome_zarr_image(tmp_path / f"img{version}.zarr", version, data, "zyx", scale_factors=(2, 4, 8),
                          chunks=(1, 128, 128), units={"y": "micrometer", "x": "micrometer"})
    state, tile = show_image(qtbot, window, str(path))
    assert state is not None and state.pyramid is not None and len(state.pyramid) == 4
    assert state.axis_names == ("z", "y", "x")
    assert tile is not None and tile.level > 0  # the whole image fits the view only from a coarser level
    level = state.pyramid[tile.level]
    truth = np.asarray(level.array[state.indices[0] if tile.level == 0 else 0, :, :])
    np.testing.assert_array_equal(tile.values, truth[: tile.values.shape[0], : tile.values.shape[1]])
    tile = zoom_to_corner(qtbot, window)  # zoomed to a corner at 2:1, level 0 is read: the data's values
    np.testing.assert_array_equal(tile.values, data[state.indices[0], tile.r0:tile.r1, tile.c0:tile.c1])
    assert window.status_label.text() and "Error" not in window.status_label.text()


def test_a_level_can_be_picked(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    data = np.arange(2 * 256 * 256, dtype="u2").reshape(2, 256, 256)
    path = ome_zarr_image(tmp_path / "pick.zarr", "0.4", data, "zyx", scale_factors=(2, 4), chunks=(1, 64, 64))
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=15000)
    from PySide6.QtWidgets import QComboBox

    picker = next(c for c in window.data.controls.findChildren(QComboBox) if c.itemText(0).startswith("auto"))
    assert [picker.itemText(i).split(":")[0] for i in range(picker.count())] == ["auto", "level 0", "level 1", "level 2"]
    assert "64 × 64" in picker.itemText(3)
    picker.setCurrentIndex(3)  # level 2, whatever the zoom
    qtbot.waitUntil(lambda: {t.level for t in window.data.scene.tiles()} == {2}, timeout=15000)
    # the scene holds level 2 before the window has drawn it (the next paint): wait for that
    qtbot.waitUntil(lambda: getattr(drawn(window.data), "shape", None) == (64, 64), timeout=15000)  # None: no image yet
    [tile] = window.data.scene.tiles()
    assert (tile.step_r, tile.step_c) == (4, 4) and tile.values.shape == (64, 64)
    np.testing.assert_array_equal(drawn(window.data), tile.image)


def test_a_remote_image_opened_whole_reads_one_level_only(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """Fitted to the window, what is read is the level shown (and the coarsest before it, drawn at
    once where the level shown is finer), never a preview of level 0 sized for a 1:1 view (which
    the window read before its first fit: 155 chunks of level 0). Which level is shown depends on
    the image's share of the window when the read is planned."""
    from http_server import serve

    data = np.random.default_rng(8).integers(0, 4000, (1, 4096, 4096), dtype="u2")
    ome_zarr_image(tmp_path / "remote.zarr", "0.5", data, "cyx", scale_factors=(2, 4, 8), chunks=(1, 256, 256))
    with serve(tmp_path) as (url, log):
        window.open_location(f"{url}/remote.zarr")
        qtbot.waitUntil(lambda: window.data.scene.detail is not None and not window.data.scene.busy, timeout=20000)
        _settle(qtbot, window)
        chunk_levels = {p.split("/remote.zarr/")[1].split("/")[0] for _, p, _ in log.requests("GET") if "/c/" in p}
    tile = window.data.scene.detail
    assert tile.level >= 2  # 4096 rows in a window some hundreds of pixels high
    # on a loaded machine the first fit can be planned before the window's last resize lands,
    # one level finer than the one then shown: still never level 0 or 1
    assert f"s{tile.level}" in chunk_levels and chunk_levels <= {"s2", "s3"}, chunk_levels


def test_several_multiscales_offer_a_picker(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    from PySide6.QtWidgets import QComboBox

    from ome_stores import hand_image

    path = hand_image(tmp_path / "two.zarr", "0.5", [((1, 64, 64), (1, 1, 1), None), ((1, 32, 32), (1, 2, 2), None)],
                      "zyx", chunks=(1, 32, 32), name="raw",
                      more_multiscales=[{"name": "deconvolved", "levels": [("d0", (1, 40, 48), (1, 1, 1))]}])
    window.open_location(str(path))
    qtbot.waitUntil(lambda: window.data.scene.detail is not None and not window.data.scene.busy, timeout=15000)
    picker = next(c for c in window.data.controls.findChildren(QComboBox) if c.itemText(0).startswith("raw"))
    assert [picker.itemText(i) for i in range(picker.count())] == ["raw (2 levels)", "deconvolved (1 levels)"]
    assert window.data.state.array.shape == (1, 64, 64)
    picker.setCurrentIndex(1)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.array.shape == (1, 40, 48)
                    and window.data.scene.detail is not None and not window.data.scene.busy, timeout=15000)
    import zarr

    truth = zarr.open_array(path / "d0", mode="r")[0]
    np.testing.assert_array_equal(window.data.scene.detail.values, truth)
