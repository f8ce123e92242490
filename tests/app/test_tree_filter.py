"""The tree filter through the real window: it finds nodes in groups nobody
expanded, shows them with their ancestors expanded, never moves the selection, can be cancelled
with Esc, says when a store cannot list, and clearing it restores the expansion from before.

Stores are written by zarr-python.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from _window_helpers import click, drop  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = zarr.open_group(tmp_path / "f.zarr", mode="w", zarr_format=3)
    deep = root.create_group("a").create_group("b").create_group("c")
    deep.create_array("deep_target", shape=(3,), dtype="u1")[:] = [1, 2, 3]
    root.create_group("other").create_array("plain", shape=(2,), dtype="u1")
    root.create_group("open_me").create_array("inside", shape=(2,), dtype="u1")
    root.create_array("zeta", shape=(2, 3), chunks=(1, 3), dtype="i4")[:] = np.arange(6).reshape(2, 3)
    return tmp_path / "f.zarr"


def source_paths(w: MainWindow, parent: QModelIndex | None = None) -> list[str]:
    """Paths of every row the model holds (listed so far)."""
    parent = parent if parent is not None else QModelIndex()
    out: list[str] = []
    for row in range(w.model.rowCount(parent)):
        index = w.model.index(row, 0, parent)
        node = w.model.node(index)
        if node is not None:
            out.append(node.path)
        out += source_paths(w, index)
    return out


def expanded(w: MainWindow, parent: QModelIndex | None = None) -> set[str]:
    parent = parent if parent is not None else QModelIndex()
    out: set[str] = set()
    for row in range(w.model.rowCount(parent)):
        index = w.model.index(row, 0, parent)
        if w.tree.isExpanded(w.proxy.mapFromSource(index)):
            out.add(w.model.node(index).path)  # type: ignore[union-attr]
        out |= expanded(w, index)
    return out


def shown(w: MainWindow, path: str) -> bool:
    """The row of ``path`` passes the filter and every ancestor of it is expanded."""
    index = w.model.index(w.model.rowCount() - 1, 0)
    for name in [p for p in path.split("/") if p]:
        view = w.proxy.mapFromSource(index)
        if not view.isValid() or not w.tree.isExpanded(view):
            return False
        index = w.model.child_named(index, name)
    return w.proxy.mapFromSource(index).isValid()


def test_filter_finds_unexpanded_nodes_keeps_the_selection_and_restores_expansion(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    drop(qtbot, window, store)
    click(qtbot, window, "open_me/inside")
    selected = click(qtbot, window, "zeta")
    shown_array = window.data.array
    assert shown_array is not None and shown_array.path == "/zeta"
    before = expanded(window)
    assert before == {"/", "/open_me"} and "/a/b/c/deep_target" not in source_paths(window)
    changes: list[object] = []
    window.tree.selectionModel().currentChanged.connect(lambda *a: changes.append(a))

    qtbot.keyClicks(window.filter, "deep_tar")
    qtbot.waitUntil(lambda: not window.tree_filter.searching, timeout=10000)
    _settle(qtbot, window)
    assert "/a/b/c/deep_target" in source_paths(window)  # listed by the walk, through the model
    assert shown(window, "/a/b/c/deep_target")
    assert not window.proxy.mapFromSource(window.model.child_named(window.model.index(0, 0), "other")).isValid()
    assert window.tree_filter.bar.isHidden()  # everything was listed: nothing to say
    assert changes == [] and window.proxy.mapToSource(window.tree.currentIndex()) == selected
    assert window.data.array is shown_array  # the data view was not reloaded

    window.filter.clear()
    _settle(qtbot, window)
    assert expanded(window) == before
    assert changes == [] and window.proxy.mapToSource(window.tree.currentIndex()) == selected
    assert window.data.array is shown_array
    assert window.proxy.mapFromSource(window.model.child_named(window.model.index(0, 0), "other")).isValid()


class GatedListing(LocalStore):
    """Listing below the root waits for the test, so a search is still running when Esc comes."""

    gate = threading.Event()

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        if prefix:
            self.gate.wait(10)
        return super().list_dir(prefix)


def test_esc_cancels_the_search_and_says_what_it_covers(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    GatedListing.gate.clear()
    root = zl.open(GatedListing(store))
    window.model.add_store(root, "gated")
    window.filter.setFocus()
    qtbot.keyClicks(window.filter, "deep")
    assert window.tree_filter.searching and window.tree_filter.label.text().startswith("Searching…")
    assert window.tree_filter.bar.isVisible() and window.tree_filter.cancel_button.isVisible()
    qtbot.keyClick(window.filter, Qt.Key.Key_Escape)
    GatedListing.gate.set()
    qtbot.waitUntil(lambda: not window.tree_filter.searching, timeout=10000)
    outcome = window.tree_filter.outcome
    assert outcome is not None and outcome.cancelled
    assert window.tree_filter.label.text().startswith("Search cancelled after ")
    assert "/a/b/c/deep_target" not in source_paths(window)


class CannotList(LocalStore):
    @property
    def can_list(self) -> bool:
        return False


def test_a_store_that_cannot_list_is_named(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.model.add_store(zl.open(CannotList(store)), "unlisted")
    qtbot.keyClicks(window.filter, "zeta")
    qtbot.waitUntil(lambda: not window.tree_filter.searching, timeout=10000)
    text = window.tree_filter.label.text()
    assert window.tree_filter.bar.isVisible() and "cannot be listed" in text and "only listed nodes" in text
