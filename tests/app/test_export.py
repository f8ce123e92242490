"""The Export menu as a person uses it: nothing to export without an array; data and image
at full resolution while the view shows only a preview; a cancel that leaves nothing; a
failure said, naming the file and the reason."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from store_wrappers import CountingStore, is_chunk_key  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)

import zarrview.zarrlib as zl  # noqa: E402
from png_decode import decode_png  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402
from drawn import drawn

VALUES = (np.arange(400 * 400, dtype="u4") % 65521).reshape(1, 400, 400).astype("u2")


@pytest.fixture
def big(tmp_path: Path) -> Path:
    a = zarr.create_array(tmp_path / "big", shape=VALUES.shape, chunks=(1, 20, 20), dtype="u2")
    a[...] = VALUES
    return tmp_path / "big"


class Hold:
    """A request hook for ``CountingStore`` (as its ``fail``, never failing): once held, lets
    ``free`` more chunk requests through and holds the rest until released, so the read is
    certainly still running when it is cancelled."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.release.set()
        self.lock = threading.Lock()
        self.free = 0
        self.waiting = 0

    def hold(self, free: int) -> None:
        self.free = free
        self.release.clear()

    def __call__(self, req: Any) -> None:
        if self.release.is_set() or not is_chunk_key(req.key):
            return None
        with self.lock:
            self.free -= 1
            wait = self.free < 0
            self.waiting += wait
        if wait:
            self.release.wait(10)
        return None


def choose(window: MainWindow, monkeypatch: pytest.MonkeyPatch, path: Path) -> list[str]:
    """The save dialog answers ``path``; returns the captions it was asked with."""
    asked: list[str] = []
    monkeypatch.setattr(window.exports, "ask_path", lambda caption, _filters: asked.append(caption) or str(path))
    return asked


def wait_idle(qtbot: Any, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.exports.job is None, timeout=20000)


def test_nothing_to_export_without_an_array(qtbot: Any, window: MainWindow, big: Path, tmp_path: Path) -> None:  # noqa: F811
    actions = window.exports
    menu_texts = [a.text() for a in window.menuBar().actions()[1].menu().actions() if a.text()]
    assert menu_texts == ["Export &Data (NPY, CSV)…", "Export &Image (PNG)…", "Export &Table (CSV)…",
                          "Save &Screenshot (PNG)…"]
    assert not any(a.isEnabled() for a in (actions.data_action, actions.image_action, actions.screenshot_action,
                                           actions.table_action))
    window.data.set_array(zl.open(big))
    _settle(qtbot, window)
    assert all(a.isEnabled() for a in (actions.data_action, actions.image_action, actions.screenshot_action))
    window.data.show_message("/ is a group: select an array to see its data.")
    assert not actions.data_action.isEnabled() and not actions.image_action.isEnabled()
    text = tmp_path / "t"
    zarr.create_array(text, shape=(3,), chunks=(2,), dtype=str)[...] = np.array(["a", "b", "c"], dtype=object)
    window.data.set_array(zl.open(text))
    _settle(qtbot, window)
    assert actions.data_action.isEnabled() and not actions.image_action.isEnabled()  # a table is no image


def test_data_and_image_are_full_resolution_while_a_preview_shows(qtbot: Any, window: MainWindow, big: Path,  # noqa: F811
                                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    window.data.budget_chunks = 16
    window.data.set_array(zl.open(big))
    _settle(qtbot, window)
    shown = drawn(window.data)
    assert shown is not None and shown.shape[0] < 400  # on screen: one sample in several
    asked = choose(window, monkeypatch, tmp_path / "plane.npy")
    reports: list[tuple[int, int]] = []
    shown = window.exports._progress
    monkeypatch.setattr(window.exports, "_progress", lambda job, d, t: reports.append((d, t)) or shown(job, d, t))
    window.exports.data_action.trigger()
    wait_idle(qtbot, window)
    assert asked == ["Export data"] and reports[-1] == (400, 400)  # progress over every chunk of the plane
    np.testing.assert_array_equal(np.load(tmp_path / "plane.npy"), VALUES[0])  # every value, not the preview
    assert "full resolution" in window.status_label.text() and "plane.npy" in window.status_label.text()

    hist = window.data.image.ui.histogram.item
    hist.gradient.loadPreset("viridis")
    hist.setLevels(1000, 50000)
    lut = hist.gradient.getLookupTable(256, alpha=False)
    choose(window, monkeypatch, tmp_path / "plane.png")
    window.exports.image_action.trigger()
    wait_idle(qtbot, window)
    img = decode_png((tmp_path / "plane.png").read_bytes())
    idx = np.clip(np.floor((VALUES[0].astype("f8") - 1000) * 256 / 49000), 0, 255).astype(int)
    np.testing.assert_array_equal(img, lut[idx])  # 400 x 400, through the histogram's levels and colours


def test_a_large_plane_is_read_only_when_the_user_agrees(qtbot: Any, window: MainWindow, big: Path,  # noqa: F811
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    window.data.set_array(zl.open(big))
    _settle(qtbot, window)
    window.exports.ask_above = 1000
    sizes: list[int] = []
    monkeypatch.setattr(window.exports, "confirm_size", lambda spec, n: sizes.append(n) or False)
    choose(window, monkeypatch, tmp_path / "plane.npy")
    window.exports.data_action.trigger()
    assert sizes == [400 * 400 * 2] and window.exports.job is None and not (tmp_path / "plane.npy").exists()


def test_cancel_stops_the_read_and_writes_nothing(qtbot: Any, window: MainWindow, big: Path, tmp_path: Path,  # noqa: F811
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    hold = Hold()
    window.data.budget_chunks = 4
    window.data.set_array(zl.open(CountingStore(LocalStore(big), fail=hold)))
    _settle(qtbot, window)
    hold.hold(free=5)
    out = tmp_path / "out"
    out.mkdir()
    choose(window, monkeypatch, out / "plane.npy")
    window.exports.data_action.trigger()
    job = window.exports.job
    assert job is not None and not window.exports.data_action.isEnabled()  # one export at a time
    qtbot.waitUntil(lambda: hold.waiting > 0, timeout=20000)  # the read is under way, and cannot finish
    job.dialog.canceled.emit()  # the dialog's Cancel button
    hold.release.set()
    wait_idle(qtbot, window)
    assert "cancelled" in window.status_label.text()
    assert list(out.iterdir()) == []
    assert window.exports.data_action.isEnabled()


@pytest.mark.parametrize("action", ["data_action", "image_action", "screenshot_action"])
def test_a_failed_write_is_reported_as_a_failure(qtbot: Any, window: MainWindow, big: Path, tmp_path: Path,  # noqa: F811
                                                 monkeypatch: pytest.MonkeyPatch, action: str) -> None:
    window.data.set_array(zl.open(big))
    _settle(qtbot, window)
    target = tmp_path / "missing" / ("p.npy" if action == "data_action" else "p.png")
    choose(window, monkeypatch, target)
    getattr(window.exports, action).trigger()
    qtbot.waitUntil(lambda: window.exports.last_error is not None, timeout=20000)
    message = window.exports.last_error
    assert str(target) in message and "does not exist" in message
    assert window.status_label.text() == message
    box = window.exports.error_box
    assert box is not None and box.isVisible() and box.text() == message
    box.close()


def test_screenshot_is_the_view_as_drawn(qtbot: Any, window: MainWindow, big: Path, tmp_path: Path,  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    window.data.set_array(zl.open(big))
    _settle(qtbot, window)
    choose(window, monkeypatch, tmp_path / "shot.png")
    window.exports.screenshot_action.trigger()
    qtbot.waitUntil(lambda: "screenshot" in window.status_label.text(), timeout=20000)
    widget = window.data.stack.currentWidget()
    img = decode_png((tmp_path / "shot.png").read_bytes())
    ratio = widget.devicePixelRatioF()
    assert img.shape[:2] == (round(widget.height() * ratio), round(widget.width() * ratio))
