"""A hierarchy of 10,000 nodes in the window (issue 16): rows are made only for what is shown
(counted), the filter finds nodes deep in groups nobody expanded while the tree holds only the
first matches and their ancestors, a group shown partly by the filter lists all its members once
expanded afterwards, and the metadata tabs show the 10,000-node consolidated root cut short."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zarr

from zarrview.app.tree_filter import MAX_SHOWN
from zarrview.app.window import MainWindow

from test_app import _settle, window  # noqa: F401  (the window fixture)

GROUPS, ARRAYS = 10, 1000


def _array_doc(i: int) -> dict[str, Any]:
    return {"zarr_format": 3, "node_type": "array", "shape": [100, 200], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10, 20]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0.0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {"index": i}}


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10 groups x 1000 arrays, consolidated, written as documents (zarr-python reads it below)."""
    root = tmp_path_factory.mktemp("big") / "h.zarr"
    meta: dict[str, Any] = {}
    for g in range(GROUPS):
        meta[f"g{g:03d}"] = {"zarr_format": 3, "node_type": "group", "attributes": {"group": g}}
        for a in range(ARRAYS):
            meta[f"g{g:03d}/a{a:04d}"] = _array_doc(a)
    for path, doc in meta.items():
        (root / path).mkdir(parents=True)
        (root / path / "zarr.json").write_text(json.dumps(doc))
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {},
                                                "consolidated_metadata": {"kind": "inline", "must_understand": False,
                                                                          "metadata": meta}}))
    return root


def _rows(model: Any, parent: Any) -> list[str]:
    return [model.index(r, 0, parent).data() for r in range(model.rowCount(parent))]


def test_rows_only_for_what_is_shown(qtbot: Any, window: MainWindow, big: Path) -> None:  # noqa: F811
    window.open_location(str(big))
    _settle(qtbot, window)
    model = window.model
    top = model.index(0, 0)
    assert _rows(model, top) == sorted(k for k, _ in zarr.open_group(str(big), mode="r").groups())
    assert model.items_made <= GROUPS + 5  # the store, its groups: no row for an array not shown
    window.tree.expand(window.proxy.mapFromSource(model.index(3, 0, top)))
    group = model.index(3, 0, top)
    qtbot.waitUntil(lambda: model.rowCount(group) == ARRAYS, timeout=15000)
    assert _rows(model, group) == sorted(zarr.open_group(str(big), mode="r")["g003"].array_keys())
    assert model.items_made <= GROUPS + 5 + ARRAYS
    window.tree.setCurrentIndex(window.proxy.mapFromSource(top))
    qtbot.waitUntil(lambda: window.meta.json.toPlainText().startswith("{"), timeout=15000)  # written on a worker
    text = window.meta.json.toPlainText()
    assert len(text) < 200_000 and "more entries not shown" in text  # not the 10,000-entry document


def test_filter_finds_deep_nodes_and_shows_only_the_first_matches(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                   big: Path) -> None:
    window.open_location(str(big))
    _settle(qtbot, window)
    model, proxy, tf = window.model, window.proxy, window.tree_filter
    window.filter.setText("a0500")
    qtbot.waitUntil(lambda: not tf.searching, timeout=30000)
    top = proxy.index(0, 0)
    shown = [(proxy.index(g, 0, top).data(), _rows(proxy, proxy.index(g, 0, top))) for g in range(proxy.rowCount(top))]
    assert shown == [(f"g{g:03d}", ["a0500"]) for g in range(GROUPS)]  # every group, without expanding any
    assert all(window.tree.isExpanded(proxy.index(g, 0, top)) for g in range(GROUPS))
    assert model.items_made <= 2 * GROUPS + 5  # the matches and their groups, not 10,000 rows
    window.filter.setText("a0")  # 10,000 matches: the first ones in the tree, the count said
    assert tf.matches == GROUPS * ARRAYS and tf.label.text().startswith(f"{MAX_SHOWN:,} of {GROUPS * ARRAYS:,} matches")
    assert model.items_made <= MAX_SHOWN + 2 * GROUPS + 5
    window.filter.setText("")
    group = model.index(0, 0, model.index(0, 0))  # g000: partly shown by the filter
    assert model.item(group).partial
    window.tree.expand(proxy.mapFromSource(group))
    qtbot.waitUntil(lambda: model.rowCount(group) == ARRAYS and not model.item(group).loading, timeout=15000)
    names = _rows(model, group)
    assert names == sorted(set(names)) and len(names) == ARRAYS  # every member once, in order
