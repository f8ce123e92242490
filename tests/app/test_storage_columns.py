"""The tree's Stored and Ratio columns: what each array and group holds in its store, read on
workers only once the columns are shown, against the files zarr-python wrote."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from _window_helpers import drop  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)
from zarrview.app.bridge import init_bridge  # noqa: E402
from zarrview.app.tree.columns import RATIO_COLUMN, STORED_COLUMN  # noqa: E402
from zarrview.app.tree.model import STORAGE_AT_ONCE, HierarchyModel  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.metadata import human_bytes  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402

pytestmark = pytest.mark.timeout(60)

DOCS = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}


def chunk_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and p.name not in DOCS]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A group with a chunked array (some chunks stored), a sharded one, a nested group, an array
    whose codec zarrlib lacks, and a v2 array; random values so the chunks compress unevenly."""
    rng = np.random.default_rng(5)
    root = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    raw = root.create_array("raw", shape=(64, 64), chunks=(16, 16), dtype="u2", fill_value=0)
    raw[:32, :] = rng.integers(0, 40, (32, 64))  # 8 of 16 chunks stored
    sharded = root.create_array("sharded", shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="f4", fill_value=0)
    sharded[:8, :40] = rng.random((8, 40))  # inner chunks of two shards
    root.create_array("sub/deep", shape=(100,), chunks=(10,), dtype="i8", fill_value=0)[:] = np.arange(100)
    odd = root.create_array("odd", shape=(10,), chunks=(5,), dtype="u1", fill_value=0)
    odd[:] = 3
    doc = tmp_path / "s.zarr" / "odd" / "zarr.json"
    meta = json.loads(doc.read_text())
    meta["codecs"].append({"name": "nonexistent_codec"})
    doc.write_text(json.dumps(meta))
    zarr.create_array(tmp_path / "s.zarr" / "v2", shape=(30,), chunks=(10,), dtype="f8", zarr_format=2,
                      fill_value=0)[:] = np.linspace(0, 1, 30)
    return tmp_path / "s.zarr"


def rows(model: HierarchyModel, parent: QModelIndex) -> dict[str, QModelIndex]:
    return {model.index(r, 0, parent).data(): model.index(r, 0, parent) for r in range(model.rowCount(parent))}


def listed(qtbot: Any, model: HierarchyModel, index: QModelIndex) -> dict[str, QModelIndex]:
    model.fetchMore(index)
    item = model.item(index)
    qtbot.waitUntil(lambda: item.children is not None and not item.loading, timeout=10000)
    return rows(model, index)


def cell(model: HierarchyModel, index: QModelIndex, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
    return model.data(index.siblingAtColumn(column), role)


def read_all(qtbot: Any, model: HierarchyModel, indexes: list[QModelIndex]) -> None:
    for index in indexes:
        cell(model, index, STORED_COLUMN)  # drawn: each row asks for its figures
    qtbot.waitUntil(lambda: not model.sizing(), timeout=20000)


def test_each_row_says_what_its_node_stores(qtbot: Any, store: Path, worker_pool: Any) -> None:
    init_bridge()
    model = HierarchyModel(worker_pool)
    top = model.add_store(zl.open(store), "s.zarr")
    found = listed(qtbot, model, top)
    assert cell(model, found["raw"], STORED_COLUMN) is None  # hidden: nothing read
    assert model.sizes.requests == 0
    model.set_storage_shown(True)
    sub = listed(qtbot, model, found["sub"])
    read_all(qtbot, model, [top, *found.values(), *sub.values()])

    raw = chunk_files(store / "raw")
    assert len(raw) == 8
    assert cell(model, found["raw"], STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in raw))
    expected = 8 * 16 * 16 * 2 / sum(p.stat().st_size for p in raw)
    assert cell(model, found["raw"], RATIO_COLUMN) == f"{expected:.1f}×"
    tip = cell(model, found["raw"], STORED_COLUMN, Qt.ItemDataRole.ToolTipRole)
    assert "8 of 16 chunks stored" in tip and f"{sum(p.stat().st_size for p in raw):,} bytes" in tip

    shards = chunk_files(store / "sharded")
    assert cell(model, found["sharded"], STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in shards))
    written = -(-8 // 8) * -(-40 // 8)  # the inner chunks that [:8, :40] touches
    assert f"{written} of 64 chunks stored" in cell(model, found["sharded"], STORED_COLUMN,
                                                                        Qt.ItemDataRole.ToolTipRole)
    assert cell(model, found["sharded"], RATIO_COLUMN).endswith("×")

    # v2 and nested arrays; a group sums the chunk objects of every array below it
    v2 = chunk_files(store / "v2")
    assert cell(model, found["v2"], STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in v2))
    assert cell(model, sub["deep"], STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in chunk_files(store / "sub")))
    everything = chunk_files(store)
    assert cell(model, top, STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in everything))
    assert f"{len(everything):,} chunk and shard objects" in cell(model, top, STORED_COLUMN, Qt.ItemDataRole.ToolTipRole)
    assert cell(model, top, RATIO_COLUMN) == ""  # a ratio is an array's
    assert cell(model, found["sub"], STORED_COLUMN) == cell(model, sub["deep"], STORED_COLUMN)

    # an array whose codec is missing is sized from its listing; its ratio is unknown
    odd = chunk_files(store / "odd")
    assert cell(model, found["odd"], STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in odd))
    assert cell(model, found["odd"], RATIO_COLUMN) == "—"
    assert cell(model, found["raw"], STORED_COLUMN, Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignRight

    asked = model.sizes.requests
    read_all(qtbot, model, [top, *found.values()])  # drawn again: read once
    assert model.sizes.requests == asked


def test_a_server_that_cannot_list_says_so(qtbot: Any, store: Path, files_over_http: str, worker_pool: Any) -> None:
    init_bridge()
    model = HierarchyModel(worker_pool)
    top = model.add_store(zl.open(files_over_http + str(store / "raw")), "raw")
    model.set_storage_shown(True)
    read_all(qtbot, model, [top])
    assert cell(model, top, STORED_COLUMN) == "—" and cell(model, top, RATIO_COLUMN) == "—"
    assert "cannot list" in cell(model, top, STORED_COLUMN, Qt.ItemDataRole.ToolTipRole)


class GatedWalk(LocalStore):
    """Listing for sizes waits at a gate, counting how many wait at once."""

    gate = threading.Event()
    lock = threading.Lock()
    waiting = 0
    most = 0

    def walk_sizes(self, prefix: str, cancel: Any = None) -> Any:
        cls = type(self)
        with cls.lock:
            cls.waiting += 1
            cls.most = max(cls.most, cls.waiting)
        try:
            cls.gate.wait(20)
        finally:
            with cls.lock:
                cls.waiting -= 1
        return super().walk_sizes(prefix, cancel)


def test_rows_are_sized_a_few_at_a_time_and_hiding_stops_them(qtbot: Any, tmp_path: Path) -> None:
    from zarrview.scheduling import WorkerPool

    root = zarr.open_group(tmp_path / "w.zarr", mode="w", zarr_format=3)
    for i in range(8):
        root.create_array(f"a{i}", shape=(4,), chunks=(2,), dtype="u1", fill_value=0)[:] = i + 1
    init_bridge()
    pool = WorkerPool(threads=8)
    GatedWalk.gate.clear()
    GatedWalk.most = 0
    try:
        model = HierarchyModel(pool)
        top = model.add_store(zl.open(GatedWalk(tmp_path / "w.zarr")), "w.zarr")
        GatedWalk.gate.set()
        found = listed(qtbot, model, top)
        GatedWalk.gate.clear()
        model.set_storage_shown(True)
        for index in found.values():
            assert cell(model, index, STORED_COLUMN) == "…"
        qtbot.waitUntil(lambda: GatedWalk.waiting == STORAGE_AT_ONCE, timeout=10000)
        assert GatedWalk.most == STORAGE_AT_ONCE  # eight rows asked, two read at once
        model.set_storage_shown(False)  # hidden while read: what comes is dropped
        assert not model.sizing()
        GatedWalk.gate.set()
        qtbot.waitUntil(lambda: GatedWalk.waiting == 0, timeout=10000)
        assert all(model.item(i).storage is None for i in found.values())
        model.set_storage_shown(True)  # shown again: asked again, and read
        read_all(qtbot, model, list(found.values()))
        assert cell(model, found["a3"], STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in chunk_files(tmp_path / "w.zarr" / "a3")))
        assert GatedWalk.most == STORAGE_AT_ONCE
    finally:
        GatedWalk.gate.set()
        pool.close()


def test_view_storage_columns_in_the_window(qtbot: Any, window: MainWindow, store: Path) -> None:  # noqa: F811
    w = window
    drop(qtbot, w, store)
    assert w.tree.isColumnHidden(STORED_COLUMN) and w.tree.isColumnHidden(RATIO_COLUMN)
    action = next(a for m in w.menuBar().findChildren(type(w.menuBar().addMenu("x")))
                  for a in m.actions() if a.text() == "&Storage Columns")
    action.trigger()
    assert not w.tree.isColumnHidden(STORED_COLUMN) and not w.tree.isColumnHidden(RATIO_COLUMN)
    top = w.model.index(w.model.rowCount() - 1, 0)
    w.tree.expand(w.proxy.mapFromSource(top))
    qtbot.waitUntil(lambda: w.model.rowCount(top) > 1 and not w.model.item(top).loading, timeout=10000)
    _settle(qtbot, w)
    w.tree.viewport().repaint()  # drawn rows ask for their figures
    qtbot.waitUntil(lambda: not w.model.sizing() and w.model.item(top).storage is not None, timeout=20000)
    raw = next(w.model.index(r, 0, top) for r in range(w.model.rowCount(top)) if w.model.index(r, 0, top).data() == "raw")
    qtbot.waitUntil(lambda: w.model.item(raw).storage is not None, timeout=20000)
    assert cell(w.model, raw, STORED_COLUMN) == human_bytes(sum(p.stat().st_size for p in chunk_files(store / "raw")))
    action.trigger()
    assert w.tree.isColumnHidden(STORED_COLUMN)
