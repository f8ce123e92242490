"""Single-file OME-Zarr (``.ozx``) in the window: opened from the command line's location, the
Open-file dialog and a drop, its image shown from the pyramid with the values ome-zarr-py was
given (and zarr-python's ZipStore reads at the coarser level), its archive comment in the root's
metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

from zarrview.app.window import MainWindow

from ome_stores import ome_zarr_image
from ozx_files import zip_folder
from _window_helpers import show_image, zoom_to_corner
from test_app import _settle, window  # noqa: F401  (the window fixture)

DATA = np.random.default_rng(11).integers(0, 4000, (2, 512, 384), dtype="u2")


@pytest.fixture(scope="module")
def ozx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("ozxapp")
    folder = ome_zarr_image(base / "img.zarr", "0.5", DATA, "zyx", scale_factors=(2, 4), chunks=(1, 128, 128))
    return zip_folder(folder, base / "img.ozx")


def _level(path: Path, level: str) -> np.ndarray:
    store = zarr.storage.ZipStore(path, mode="r")
    try:
        return np.asarray(zarr.open_array(store, path=level, mode="r")[...])
    finally:
        store.close()


def test_an_ozx_shows_its_image_and_archive(qtbot: Any, window: MainWindow, ozx: Path) -> None:  # noqa: F811
    state, tile = show_image(qtbot, window, str(ozx))
    assert state is not None and state.pyramid is not None and len(state.pyramid) == 3
    assert state.axis_names == ("z", "y", "x")
    assert tile is not None
    truth = _level(ozx, f"s{tile.level}")[state.indices[0]]
    np.testing.assert_array_equal(tile.values, truth[tile.r0:tile.r1, tile.c0:tile.c1])
    tile = zoom_to_corner(qtbot, window)
    np.testing.assert_array_equal(tile.values, DATA[state.indices[0], tile.r0:tile.r1, tile.c0:tile.c1])
    fields = window.meta.fields()
    assert fields["Archive"] == "single-file OME-Zarr (.ozx): OME-Zarr 0.5, " \
        f"{len(__import__('zipfile').ZipFile(ozx).infolist())} entries, ZIP64, zarr.json first"
    assert "Archive note" not in fields
    assert "Error" not in window.status_label.text()


def test_the_open_file_dialog_offers_ozx(qtbot: Any, window: MainWindow, ozx: Path,  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QFileDialog

    asked: list[str] = []

    def pick(parent: Any, caption: str, folder: str, filters: str) -> tuple[str, str]:
        asked.append(filters)
        return str(ozx), filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileName", pick)
    window.open_file()
    _settle(qtbot, window)
    assert asked and asked[0].split(";;")[0] == "Zarr archives (*.zip *.ozx)"
    assert window.model.rowCount() == 1
    assert window.model.node(window.model.index(0, 0)).url == str(ozx.resolve())


def test_dropping_an_ozx_opens_it(qtbot: Any, window: MainWindow, ozx: Path) -> None:  # noqa: F811
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(ozx))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    _settle(qtbot, window)
    assert window.model.rowCount() == 1
    root = window.model.node(window.model.index(0, 0))
    assert root.url == str(ozx.resolve()) and root.attrs["ome"]["version"] == "0.5"
    window.open_location(f"zip::{ozx}::/s1")  # the same store again, at a node: no second copy
    _settle(qtbot, window)
    assert window.model.rowCount() == 1
