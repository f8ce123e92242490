"""The metadata panel of an array on a rectilinear chunk grid (written by zarr-python 3.4.2)
shows the grid: each dimension's chunk (or shard) edges, as the runs the grid spells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import zarrview.zarrlib as zl
from zarrview.app.metadata_panel import MetadataPanel
from rectilinear_arrays import write_arrays


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rectilinear-panel")
    write_arrays(out)
    return out


def _fields(panel: MetadataPanel) -> dict[str, str]:
    table = panel.table
    found: dict[str, str] = {}
    for r in range(table.rowCount()):
        for c in range(0, table.columnCount(), 2):
            key, value = table.item(r, c), table.item(r, c + 1)
            if key is not None and value is not None:
                found[key.text()] = value.text()
    return found


@pytest.mark.parametrize("name, rows", [
    ("cube", {"Chunk grid": "rectilinear, 27 chunks (3, 3, 3), largest (4, 3, 5)",
              "Chunk edges 0": "1, 2, 4 (3 chunks)", "Chunk edges 1": "3×3 (3 chunks)",
              "Chunk edges 2": "5, 1, 5 (3 chunks)", "Chunks in grid": "27 (3, 3, 3)"}),
    ("sharded", {"Shard grid": "rectilinear, 6 shards (3, 2), largest (8, 16)",
                 "Shard edges 0": "4, 8×2 (3 shards)", "Shard edges 1": "8, 16 (2 shards)",
                 "Chunk shape": "(2, 4)", "Chunks in grid": "60 (10, 6)"}),
])
def test_the_panel_shows_each_dimensions_edges(qtbot: Any, root: Path, name: str, rows: dict[str, str],
                                              worker_pool: Any) -> None:
    panel = MetadataPanel(worker_pool)
    qtbot.addWidget(panel)
    panel.show_node(zl.open(root / f"{name}.zarr"))
    fields = _fields(panel)
    assert {k: fields.get(k) for k in rows} == rows
