"""One-off reads (a group's decision, an AnnData element opened, a count of stored objects, an
export) run on drivers: a read replaced by a newer one is never handed on, the reads counted as
under way follow the newest (a replaced read still running on a worker keeps nobody waiting),
and a second export is refused while one runs."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from test_app import _settle, window  # noqa: E402, F401  (the window fixture)

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app import anndata_groups, node_display  # noqa: E402
from zarrview.app.anndata_groups import AnnDataHandler  # noqa: E402
from zarrview.app.bridge import init_bridge  # noqa: E402
from zarrview.app.metadata_panel import MetadataPanel  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.scheduling import WorkerPool  # noqa: E402

FRAME = {"encoding-type": "dataframe", "encoding-version": "0.2.0", "_index": "_index", "column-order": []}


class Held:
    """Holds the read it is asked to hold until released, and says when it has started."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def hold(self) -> None:
        self.started.set()
        assert self.release.wait(60)


def delivered(pool: WorkerPool, lane: str) -> int:
    """Answers of ``lane`` that reached its driver, stale ones included (which it drops)."""
    counts = pool.tally.counts()
    return counts[lane].delivered if lane in counts else 0


def test_an_element_opened_before_is_never_handed_on_and_reading_follows_the_newest(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_bridge()
    root = zarr.open_group(tmp_path / "ad.zarr", mode="w")
    for name in ("obs", "var"):
        root.create_group(name).attrs.update(FRAME)
    store = zl.open(tmp_path / "ad.zarr")
    assert isinstance(store, zl.Group)
    obs, var = store["obs"], store["var"]
    held = Held()

    def open_frame(group: zl.Group) -> str:
        if group.path == obs.path:
            held.hold()
        return group.path

    monkeypatch.setattr(anndata_groups, "open_frame", open_frame)
    pool = WorkerPool(threads=2)
    selected: list[zl.Node] = []
    handler = AnnDataHandler(pool, lambda: selected[-1] if selected else None)
    found: list[str] = []
    handler.frame_found.connect(found.append)
    try:
        selected.append(obs)
        assert handler.show(obs)
        assert held.started.wait(10) and handler.reading == 1
        selected.append(var)
        assert handler.show(var)
        qtbot.waitUntil(lambda: found == [var.path], timeout=10000)
        assert handler.reading == 0 and not held.release.is_set()  # obs is still being read
        held.release.set()
        qtbot.waitUntil(lambda: delivered(pool, "AnnData") == 2, timeout=10000)  # obs's answer, dropped
        assert found == [var.path] and handler.reading == 0
    finally:
        held.release.set()
        pool.close()


def test_the_count_of_an_array_shown_before_never_replaces_the_count_shown(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_bridge()
    root = zarr.open_group(tmp_path / "s.zarr", mode="w")
    root.create_array("a", shape=(4,), chunks=(1,), dtype="u1")[...] = np.arange(4)
    root.create_array("b", shape=(4,), chunks=(2,), dtype="u1")[...] = np.arange(4)
    store = zl.open(tmp_path / "s.zarr")
    assert isinstance(store, zl.Group)
    a, b = store["a"], store["b"]
    assert isinstance(a, zl.Array) and isinstance(b, zl.Array)
    held = Held()
    count = a.stored_objects

    def held_count(cancel: Any = None, limit: int | None = None) -> Any:
        held.hold()
        return count(cancel=None, limit=limit)

    monkeypatch.setattr(a, "stored_objects", held_count)
    pool = WorkerPool(threads=2)
    panel = MetadataPanel(pool)
    qtbot.addWidget(panel)
    try:
        panel.show_node(a)
        assert held.started.wait(10) and panel.fields()["Stored"] == "counting…"
        panel.show_node(b)
        qtbot.waitUntil(lambda: panel.fields()["Stored"].startswith("2 objects"), timeout=10000)
        held.release.set()
        qtbot.waitUntil(lambda: delivered(pool, "stored objects") == 2, timeout=10000)
        assert panel.fields()["Stored"].startswith("2 objects")  # not a's four
        qtbot.waitUntil(lambda: not panel.json.toPlainText().startswith("Reading"), timeout=10000)
        assert json.loads(panel.json.toPlainText())["chunk_grid"]["configuration"]["chunk_shape"] == [2]  # b's
    finally:
        held.release.set()
        pool.close()


def test_a_group_read_replaced_by_another_keeps_nothing_pending(
        qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    root = zarr.open_group(tmp_path / "g.zarr", mode="w")
    root.create_group("first")
    root.create_group("second").attrs["note"] = "plain"
    store = zl.open(tmp_path / "g.zarr")
    assert isinstance(store, zl.Group)
    first, second = store["first"], store["second"]
    assert isinstance(first, zl.Group) and isinstance(second, zl.Group)
    held = Held()
    decide = node_display.decide

    def held_decide(node: zl.Node, *args: Any, **kwargs: Any) -> Any:
        if node is first and kwargs.get("read", True):
            held.hold()
        return decide(node, *args, **kwargs)

    monkeypatch.setattr(node_display, "decide", held_decide)
    try:
        window.display.show(first)
        assert held.started.wait(10) and window.display.reading == 1 and window.pending_opens >= 1
        window.display.show(second)
        qtbot.waitUntil(lambda: window.display.reading == 0, timeout=10000)
        assert not held.release.is_set()  # the first group's read still runs: nobody waits for it
        assert window.display.looking_at is second
    finally:
        held.release.set()
    qtbot.waitUntil(lambda: delivered(window.pool, "OME metadata") == 2, timeout=10000)
    _settle(qtbot, window)
    assert window.display.reading == 0 and window.display.looking_at is second


def test_a_second_export_is_refused_while_one_runs(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    zarr.create_array(tmp_path / "p", shape=(40, 50), chunks=(10, 10), dtype="u2")[...] = np.arange(2000).reshape(40, 50)
    window.data.set_array(zl.open(tmp_path / "p"))
    _settle(qtbot, window)
    spec = window.data.plane_spec()
    assert spec is not None
    assert window.exports.start(spec, str(tmp_path / "one.npy"))
    assert not window.exports.start(spec, str(tmp_path / "two.npy"))  # one export at a time
    qtbot.waitUntil(lambda: window.exports.job is None, timeout=20000)
    assert "Exported" in window.status_label.text()
    np.testing.assert_array_equal(np.load(tmp_path / "one.npy"), np.arange(2000).reshape(40, 50))
    assert not (tmp_path / "two.npy").exists()
    assert window.exports.start(spec, str(tmp_path / "two.npy"))  # and the next once it is over
    qtbot.waitUntil(lambda: window.exports.job is None, timeout=20000)
    assert (tmp_path / "two.npy").exists()
