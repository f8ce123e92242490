"""What a person does with the window and what they see, for the app tests of broken stores
(test_app_hostile.py): open a store by dropping it or through File ▸ Open URL, click a row of the
tree, read the error on it, see an image or its red hatching; and a heartbeat on the GUI thread
that tells a window that answered from one that stalled.
"""

from __future__ import annotations

import gc
import re
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QModelIndex, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QDialogButtonBox

from modal_input import answer_dialog
from test_app import _settle, window  # noqa: F401  (the window fixture, for the heartbeat's)
from zarrview.app.dialogs import OpenUrlDialog
from zarrview.app.window import MainWindow
from drawn import drawn

#: the longest the GUI thread may go without running a timer, ten times the longest gap these
#: tests see on a quiet machine: about 0.4 s, the GUI thread's own work (CPU time) when a plane
#: of fill values first gets a diverging colour map, whose 256 colours the gradient editor
#: builds twice. A loaded machine stretches such gaps; what this bound is for does not stop:
#: a hostile store read on the GUI thread (a FIFO, /dev/zero) hangs it
MAX_STALL_S = 4.0
#: a Python exception's class name where a person should read a sentence
TYPE_NAME = re.compile(r"Traceback|\b[A-Z]\w*(Error|Exception)\b")


class Heartbeat:
    """A timer on the GUI thread every 10 ms; the longest gap between its ticks is how long
    the window stopped answering. Started once the test has built its store, so only what
    the window does counts."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        #: ticks taken while ``python_peak`` traced allocations: tracemalloc makes every
        #: allocation several times slower, so a gap ending in one is not the window's doing
        self.traced: list[bool] = []
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        self.ticks.append(time.monotonic())
        self.traced.append(tracemalloc.is_tracing())

    def start(self) -> None:
        # the objects earlier tests left are put out of the cycle collector's reach: a pass
        # over them (hundreds of ms in a full run) is the test process's cost, not the window's
        gc.freeze()
        self.ticks = [time.monotonic()]
        self.traced = [False]
        self.timer.start(10)

    def assert_responsive(self) -> None:
        self._tick()
        gaps = np.diff(self.ticks)[~np.array(self.traced[1:])]
        assert len(self.ticks) > 5, "the GUI thread never ran the timer"
        worst = gaps.max() if gaps.size else 0.0
        assert worst < MAX_STALL_S, f"the GUI thread stalled for {worst * 1000:.0f} ms"


@pytest.fixture
def heartbeat(window: MainWindow) -> Iterator[Heartbeat]:  # noqa: F811
    beat = Heartbeat()
    yield beat
    beat.timer.stop()
    gc.unfreeze()


def drop(qtbot, w: MainWindow, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """Drop ``folder`` on the window, as from a file manager."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder))])
    w.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                           Qt.KeyboardModifier.NoModifier))
    _settle(qtbot, w)


def open_url(qtbot, w: MainWindow, url: str, options: str = "") -> None:  # type: ignore[no-untyped-def]
    """File ▸ Open URL…: type ``url`` (and storage options as JSON) into the dialog, press Open."""
    typed: list[bool] = []

    def type_into(dialog: OpenUrlDialog) -> None:
        dialog.url.setText(url)
        dialog.options.setText(options)

    answer_dialog(OpenUrlDialog, type_into, QDialogButtonBox.StandardButton.Open, typed)
    w.open_url()  # the menu action's slot; returns when the dialog closes
    assert typed
    _settle(qtbot, w)


def click(qtbot, w: MainWindow, path: str) -> QModelIndex:  # type: ignore[no-untyped-def]
    """Click the row of ``path`` (``a/b``) in the last store of the tree, expanding its parents as
    a person would and waiting for their listings; the source-model index of the row."""
    model = w.model
    index = model.index(model.rowCount() - 1, 0)
    for name in [p for p in path.split("/") if p]:
        w.tree.expand(w.proxy.mapFromSource(index))
        parent = model.item(index)
        qtbot.waitUntil(lambda parent=parent: parent.children is not None and not parent.loading, timeout=10000)
        names = [model.data(model.index(r, 0, index)) for r in range(model.rowCount(index))]
        assert name in names, f"{name} is not listed under {model.data(index)}: {names}"
        index = model.index(names.index(name), 0, index)
    view_index = w.proxy.mapFromSource(index)
    w.tree.scrollTo(view_index)
    rect = w.tree.visualRect(view_index)
    assert rect.isValid(), f"{path} is not visible in the tree"
    qtbot.mouseClick(w.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert w.proxy.mapToSource(w.tree.currentIndex()) == index
    _settle(qtbot, w)
    return index


@dataclass
class Seen:
    """What the window shows about the selected node, as text."""

    row: list[Any]
    tooltip: str
    meta: dict[str, str]
    message: str | None  # the data view's message, when that is what it shows
    status: str


def seen(w: MainWindow, index: QModelIndex) -> Seen:
    model = w.model
    meta = w.meta.fields()
    message = w.data.message.text() if w.data.stack.currentWidget() is w.data.message else None
    return Seen([model.data(index.siblingAtColumn(c)) for c in range(3)],
                model.data(index, Qt.ItemDataRole.ToolTipRole) or "", meta, message, w.status_label.text())


def assert_sentence(text: str, *parts: str) -> None:
    """``text`` names every one of ``parts`` and is a message, not a traceback or a type name."""
    missing = [p for p in parts if p not in text]
    assert not missing, f"{missing} not in {text!r}"
    assert not TYPE_NAME.search(text), f"a Python type name or traceback shown: {text!r}"


def assert_error_on_node(w: MainWindow, index: QModelIndex, node_path: str, *parts: str) -> None:
    """The tree row says error (red, error icon) with the message as its tooltip; the metadata
    panel shows the node's path and the message; the data view shows it instead of an image."""
    s = seen(w, index)
    assert s.row[2] == "error", s.row
    assert model_colour(w, index) == (200, 40, 40)
    assert_sentence(s.tooltip, *parts)
    assert s.meta.get("Path") == node_path and set(s.meta) == {"Path", "Error"}, s.meta
    assert_sentence(s.meta["Error"], *parts)
    assert s.message is not None, "the data view does not show the error"
    assert_sentence(s.message, *parts)
    assert w.data.array is None and w.data.image.failures.items == []


def model_colour(w: MainWindow, index: QModelIndex) -> tuple[int, int, int] | None:
    brush = w.model.data(index, Qt.ItemDataRole.ForegroundRole)
    return None if brush is None else brush.color().getRgb()[:3]


def shown_image(w: MainWindow) -> np.ndarray:
    assert w.data.stack.currentWidget() is w.data.image, "the data view does not show an image"
    image = drawn(w.data)
    assert image is not None
    return image


def assert_shows(qtbot, w: MainWindow, path: str, expected: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    """Click ``path`` and see exactly ``expected``, with nothing hatched."""
    click(qtbot, w, path)
    np.testing.assert_array_equal(shown_image(w), expected)
    assert w.data.image.failures.items == []
    assert w.status_label.text().startswith(f"Read /{path}")


def hatched(w: MainWindow) -> list[tuple[tuple[int, int, int, int], str]]:
    """(x, y, width, height) in plane coordinates and the tooltip of every red box."""
    return [(tuple(int(v) for v in item.rect().getRect()), item.toolTip()) for item in w.data.image.failures.items]


def assert_hatched(w: MainWindow, boxes: list[tuple[int, int, int, int]], key: str, *parts: str) -> None:
    """Exactly ``boxes`` are hatched, each with ``key`` and ``parts`` in its tooltip, and the
    status bar says how many chunks failed, naming the key."""
    shown = hatched(w)
    assert sorted(b for b, _ in shown) == sorted(boxes)
    for _, tip in shown:
        assert tip.startswith(f"{key}: ")
        assert_sentence(tip, key, *parts)
    status = w.status_label.text()
    n = len(boxes)
    assert f"{n} chunk{'s' if n > 1 else ''} of " in status and "could not be read (hatched)" in status
    assert_sentence(status, key, *parts)


def python_peak(fn: Callable[[], None]) -> int:
    """The most memory Python and numpy allocated (on any thread) while ``fn`` ran."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def broken_node_then_sibling(qtbot, w: MainWindow, beat: Heartbeat, root: Path, node: str,  # type: ignore[no-untyped-def]
                             parts: tuple[str, ...], sibling: str, expected: np.ndarray) -> None:
    """Drop ``root``, click ``node`` and see its error naming ``parts``; click ``sibling`` and
    see exactly ``expected``; the GUI thread answered throughout."""
    beat.start()
    drop(qtbot, w, root)
    assert_error_on_node(w, click(qtbot, w, node), f"/{node}", *parts)
    assert_shows(qtbot, w, sibling, expected)
    beat.assert_responsive()


def show_image(qtbot, w: MainWindow, location: str, budget: int = 16) -> tuple[Any, Any]:  # type: ignore[no-untyped-def]
    """Open an OME-Zarr image as a person would and wait for its first detail tile, read within
    a budget of ``budget`` chunks (so the whole image comes from a coarser level); (state, tile)."""
    w.data.budget_chunks = budget
    w.open_location(location)
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.scene.detail is not None and not w.data.scene.busy, timeout=60_000)
    _settle(qtbot, w)
    return w.data.state, w.data.scene.detail


def zoom_to_corner(qtbot, w: MainWindow) -> Any:  # type: ignore[no-untyped-def]
    """Zoom to the top-left 100 x 60 pixels (2:1) and wait for level 0 there; its tile."""
    w.data.image.view.setRange(xRange=(0, 100), yRange=(0, 60), padding=0)
    qtbot.waitUntil(lambda: w.data.scene.detail is not None and w.data.scene.detail.level == 0, timeout=60_000)
    _settle(qtbot, w)
    tile = w.data.scene.detail
    assert tile.full_resolution and tile.covers(0, 60, 0, 100)
    return tile
