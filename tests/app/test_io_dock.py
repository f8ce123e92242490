"""View ▸ I/O: what each view costs, against the files the view read."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from zarrview.app.window import MainWindow  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)


def test_the_io_dock_counts_what_the_view_read(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    a = zarr.create_array(tmp_path / "a.zarr", shape=(40, 60), chunks=(10, 10), dtype="u2", fill_value=0)
    a[:25, :] = np.arange(25 * 60).reshape(25, 60)
    files = {p.relative_to(tmp_path / "a.zarr").as_posix(): p.stat().st_size
             for p in (tmp_path / "a.zarr").rglob("*") if p.is_file() and p.name != "zarr.json"}
    dock = window.io_dock
    assert window.pool.io_sink is None  # closed: nothing recorded
    action = next(a for m in window.menuBar().actions() if m.menu() is not None for a in m.menu().actions()
                  if a.text().replace("&", "") == "I/O")
    action.trigger()
    qtbot.waitUntil(lambda: window.pool.io_sink is not None, timeout=5000)
    said: list[str] = []
    dock.summary.connect(said.append)
    window.open_location(str(tmp_path / "a.zarr"))
    _settle(qtbot, window)

    def plane_view() -> Any:
        return next((v for v in dock.views if v.log.chunks_decoded), None)

    qtbot.waitUntil(lambda: plane_view() is not None, timeout=15000)
    cost = plane_view()
    log = cost.log
    assert log.request_count == 24 and log.bytes == sum(files.values())
    assert log.chunks_decoded == len(files)
    assert {r.key for r in log.requests if r.outcome == "stored"} == set(files)
    row = next(r for r in range(dock.view_table.rowCount()) if dock.view_table.item(r, 1).text() == "24")
    assert dock.view_table.item(row, 3).text() == str(sum(files.values()))
    dock.view_table.selectRow(row)
    assert dock.request_table.rowCount() == 24
    assert sum(int(dock.request_table.item(r, 2).text()) for r in range(24)) == sum(files.values())
    qtbot.waitUntil(lambda: any("24 requests" in s for s in said), timeout=5000)
    qtbot.waitUntil(lambda: window.io_label.isVisible() and "requests" in window.io_label.text(), timeout=5000)
    out = tmp_path / "requests.csv"
    dock.export_csv(str(out))
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["View", "Key", "Range", "Bytes", "Landed ms", "Tries", "Outcome"]
    assert sum(1 for r in rows[1:] if r[0] == log.label) == 24
    action.trigger()
    qtbot.waitUntil(lambda: window.pool.io_sink is None and not window.io_label.isVisible(), timeout=5000)
