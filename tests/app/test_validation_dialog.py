"""File ▸ Validate Store: the store shown checked on a worker, its findings in a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402
from zarrview.zarrlib.validate import validate_store  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)


def test_validate_store_lists_the_findings(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "s.zarr"
    g = zarr.open_group(root, mode="w")
    g.create_array("good", shape=(8,), chunks=(4,), dtype="u1")[...] = np.arange(8)
    g.create_array("bad", shape=(8,), chunks=(4,), dtype="u1")[...] = 1
    doc = json.loads((root / "bad" / "zarr.json").read_text())
    doc["dimension_names"] = ["x", "y"]
    (root / "bad" / "zarr.json").write_text(json.dumps(doc))
    (root / "good" / "c" / "stray").write_text("?")
    window.open_location(str(root))
    _settle(qtbot, window)
    entry = next(a for m in window.menuBar().actions() if m.menu() is not None for a in m.menu().actions()
                 if a.text().replace("&", "") == "Validate Store…")
    entry.trigger()
    dialog = window.validation
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.findings is not None, timeout=15000)
    truth = validate_store(LocalStore(root))
    rows = [tuple(dialog.table.item(r, c).text() for c in range(4)) for r in range(dialog.table.rowCount())]
    assert rows == [(f.severity, f.key, f.rule, f.message) for f in truth]
    assert ("error", "bad/zarr.json", "v3.dimension_names") in [r[:3] for r in rows]
    assert ("warning", "good/c/stray", "chunks.stray") in [r[:3] for r in rows]
    assert dialog.summary.text().endswith("1 error, 1 warning")
    assert "§array-metadata-dimension-names" in dialog.table.item(rows.index(next(r for r in rows if r[2] == "v3.dimension_names")), 0).toolTip()
    dialog.close()
