"""The Storage tab: the audit of the array shown, made on a worker when the tab is opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import zarr

import zarrview.zarrlib as zl
from zarrview.app.bridge import init_bridge
from zarrview.app.metadata_panel import MetadataPanel


def test_the_storage_tab_audits_the_array_shown(qtbot: Any, tmp_path: Path, worker_pool: Any) -> None:
    a = zarr.create_array(tmp_path / "a.zarr", shape=(40, 40), chunks=(10, 10), dtype="u2", fill_value=0)
    a[:10, :] = np.arange(400).reshape(10, 40)
    files = [p for p in (tmp_path / "a.zarr").rglob("*") if p.is_file() and p.name != "zarr.json"]
    g = zarr.open_group(tmp_path / "g.zarr", mode="w")
    g.attrs["title"] = "a group"
    init_bridge()
    panel = MetadataPanel(worker_pool)
    qtbot.addWidget(panel)
    panel.show()
    panel.show_node(zl.open(tmp_path / "g.zarr"))
    assert panel.isTabVisible(panel.indexOf(panel.storage))  # a group's arrays are audited on request
    panel.show_node(zl.open(tmp_path / "a.zarr"))
    assert panel.isTabVisible(panel.indexOf(panel.storage))
    assert "counted when this tab is open" in panel.storage.toPlainText()  # nothing listed until asked
    panel.setCurrentWidget(panel.storage)
    qtbot.waitUntil(lambda: "chunks " in panel.storage.toPlainText(), timeout=15000)
    text = panel.storage.toPlainText()
    assert f"{len(files)} of 16 stored (25 %), 12 missing" in text
    assert f"({sum(p.stat().st_size for p in files):,})" in text
    assert "│████│" in text and "│    │" in text  # the first row of chunks stored, the others not
    panel.show_node(zl.open(tmp_path / "g.zarr"))  # the tab open: the group's arrays are audited at once
    qtbot.waitUntil(lambda: "holds no array" in panel.storage.toPlainText(), timeout=15000)


def test_a_group_audits_every_array_below_it(qtbot: Any, tmp_path: Path, worker_pool: Any) -> None:
    g = zarr.open_group(tmp_path / "g.zarr", mode="w")
    g.create_array("one", shape=(20,), chunks=(5,), dtype="u1", fill_value=0)[:5] = 1
    g.create_array("sub/two", shape=(6, 6), chunks=(3, 3), dtype="u1", fill_value=0)[...] = 2
    init_bridge()
    panel = MetadataPanel(worker_pool)
    qtbot.addWidget(panel)
    panel.show()
    panel.setCurrentWidget(panel.storage)
    panel.show_node(zl.open(tmp_path / "g.zarr"))
    panel.setCurrentWidget(panel.storage)
    qtbot.waitUntil(lambda: "/sub/two" in panel.storage.toPlainText(), timeout=15000)
    text = panel.storage.toPlainText()
    assert "/one  20, 4 chunks" in text and "1 of 4 stored (25 %)" in text
    assert "4 of 4 stored (100 %)" in text
