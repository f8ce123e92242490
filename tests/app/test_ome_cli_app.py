"""OME-Zarr on the command line: ``--level N`` starts an image at that pyramid level,
``--screenshot`` works on an image group, a label image and a plate, and ``zarrview export``
writes the shown plane of the chosen level of an image (level 0 by default). Truth: the arrays
ome-zarr-py (and a hand-built Z-downsampled pyramid) wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")
pytest.importorskip("ome_zarr")
pytestmark = [pytest.mark.filterwarnings("ignore:Scale value not provided:UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

from PySide6.QtWidgets import QComboBox  # noqa: E402

from ome_stores import hand_image, ome_zarr_image, ome_zarr_plate, pattern  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 4000, (3, 256, 256), dtype="u2")
    labels = (pattern((3, 256, 256), "uint8") % 5).astype("uint8")
    return ome_zarr_image(tmp_path_factory.mktemp("cli") / "img.zarr", "0.4", data, "zyx", scale_factors=(2, 4),
                          chunks=(1, 64, 64), labels={"cells": labels})


def _paths(image: Path, rel: str = "") -> list[str]:
    return [d["path"] for d in zarr.open_group(str(image / rel), mode="r").attrs["multiscales"][0]["datasets"]]


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "XDG_CONFIG_HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "zarrview", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def _colours(png: Path) -> int:
    from PySide6.QtGui import QImage

    img = QImage(str(png))
    assert img.width() > 600 and img.height() > 400
    return len({img.pixel(x, y) for x in range(0, img.width(), 13) for y in range(0, img.height(), 13)})


# -- --level ------------------------------------------------------------------------------------
def test_level_starts_an_image_at_that_level(qtbot: Any, window: MainWindow, image: Path) -> None:  # noqa: F811
    window.data.pending_level = 2
    window.open_location(str(image))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: bool(window.data.scene.tiles()) and not window.data.scene.busy, timeout=15000)
    _settle(qtbot, window)
    state = window.data.state
    assert state is not None and state.level == 2
    assert {t.level for t in window.data.scene.tiles()} == {2}
    [tile] = window.data.scene.tiles()
    truth = np.asarray(zarr.open_group(str(image), mode="r")[_paths(image)[2]][state.indices[0]])
    np.testing.assert_array_equal(tile.values, truth)
    picker = next(c for c in window.data.controls.findChildren(QComboBox) if c.itemText(0).startswith("auto"))
    assert picker.currentText().startswith("level 2:")
    picker.setCurrentIndex(0)  # back to auto: the zoom chooses again
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.level is None, timeout=5000)
    assert window.data.pending_level is None


def test_a_level_the_image_lacks_is_said(qtbot: Any, window: MainWindow, image: Path) -> None:  # noqa: F811
    window.data.pending_level = 7
    window.open_location(str(image))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: "--level 7" in window.data.message.text(), timeout=15000)
    assert "0, 1, 2" in window.data.message.text()
    assert window.data.stack.currentWidget() is window.data.message


def test_malformed_level_is_one_line_and_status_2(tmp_path: Path) -> None:
    out = _run(str(tmp_path), "--level", "-1", tmp_path=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == "zarrview: --level takes a level number, 0 or more, not '-1'"


# -- --screenshot -------------------------------------------------------------------------------
def test_screenshot_of_an_image_group_at_a_level(tmp_path: Path, image: Path) -> None:
    png = tmp_path / "image.png"
    proc = _run(str(image), "--level", "1", "--screenshot", str(png), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _colours(png) > 20  # random pixels drawn, not a blank window or an empty group view


def test_screenshot_of_a_label_image(tmp_path: Path, image: Path) -> None:
    png = tmp_path / "label.png"
    proc = _run(f"{image}::/labels/cells", "--screenshot", str(png), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _colours(png) > 10


def test_screenshot_of_a_plate(tmp_path: Path) -> None:
    plate = ome_zarr_plate(tmp_path / "plate.zarr", "0.5", ["A", "B"], ["1", "2", "3"], ["A/1", "B/3"])
    png = tmp_path / "plate.png"
    proc = _run(str(plate), "--screenshot", str(png), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _colours(png) > 10


# -- zarrview export --level --------------------------------------------------------------------
@pytest.mark.parametrize("level", [None, 0, 1, 2])
def test_export_writes_the_plane_of_the_chosen_level(tmp_path: Path, image: Path, level: int | None) -> None:
    out = tmp_path / "plane.npy"
    args = ["export", str(image), "--slice", "2,:,:", "-o", str(out)] + ([] if level is None else ["--level", str(level)])
    assert main(args) == 0
    arr = zarr.open_group(str(image), mode="r")[_paths(image)[level or 0]]
    np.testing.assert_array_equal(np.load(out), arr[2])  # z is not downsampled: plane 2 at every level


def test_export_carries_the_plane_into_a_z_downsampled_level(tmp_path: Path) -> None:
    path = hand_image(tmp_path / "z.zarr", "0.5", [((8, 32, 32), (1, 1, 1), None), ((4, 16, 16), (2, 2, 2), (0.5, 0.5, 0.5))],
                      chunks=(2, 16, 16))
    out = tmp_path / "z.npy"
    assert main(["export", str(path), "--slice", "5,:,:", "--level", "1", "-o", str(out)]) == 0
    # level-0 plane 5 is centred at z = 5; level 1's planes at 0.5, 2.5, 4.5, 6.5: the nearest is 2
    np.testing.assert_array_equal(np.load(out), zarr.open_array(str(path / "1"), mode="r")[2])
    png = tmp_path / "z.png"
    assert main(["export", str(path), "--level", "1", "-o", str(png)]) == 0
    from png_decode import decode_png

    assert decode_png(png.read_bytes()).shape[:2] == (16, 16)


def test_export_refuses_what_names_no_level(tmp_path: Path, image: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.npy"
    assert main(["export", str(image), "--level", "3", "-o", str(out)]) == 2
    assert "--level 3: the image at / has no such level (its readable levels are 0, 1, 2)" in capsys.readouterr().err
    level0 = _paths(image)[0]
    assert main(["export", f"{image}::/{level0}", "--level", "1", "-o", str(out)]) == 2
    assert "--level is for an OME-Zarr image group" in capsys.readouterr().err
    assert main(["export", f"{image}::/labels", "-o", str(out)]) == 1
    assert "is a group, not an array or an OME-Zarr image" in capsys.readouterr().err
    assert main(["export", str(image), "--slice", "3,:,:", "-o", str(out)]) == 2  # z has 3 planes
    assert not out.exists()
