"""A hierarchy of 10,000 nodes in the window: rows are made only for what is shown
(counted), the filter finds nodes deep in groups nobody expanded while the tree holds only the
first matches and their ancestors, a group shown partly by the filter lists all its members once
expanded afterwards, and the metadata tabs show the 10,000-node consolidated root cut short."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import zarr

from zarrview.app.tree.filter import MAX_SHOWN
from zarrview.app.window import MainWindow

from test_app import _settle, window  # noqa: F401  (the window fixture)

from large_hierarchy import write_hierarchy, write_huge_array, write_wide_group  # noqa: E402

GROUPS, ARRAYS = 10, 1000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10 groups x 1000 arrays, consolidated (zarr-python reads it below)."""
    return write_hierarchy(tmp_path_factory.mktemp("big") / "h.zarr", groups=GROUPS, arrays=ARRAYS)


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
    rows = model.item(group).children
    outlined = [c for c in rows if c.outline is not None]
    assert len(outlined) > ARRAYS // 2  # arrays like one parsed before: no node made for a row
    shown = [[model.index(r, c, group).data() for c in range(3)] for r in range(0, ARRAYS, 97)]
    made = [model.item(model.index(r, 0, group)).node for r in range(0, ARRAYS, 97)]  # now made
    assert all(n is not None for n in made)
    assert shown == [[model.index(r, c, group).data() for c in range(3)] for r in range(0, ARRAYS, 97)]
    reference = zarr.open_group(str(big), mode="r")["g003"]
    for name, shape, dtype in shown:  # what the outline said is what zarr-python reads
        assert tuple(int(x) for x in shape.strip("()").split(",") if x.strip()) == reference[name].shape
        assert dtype == str(reference[name].dtype), (name, dtype)
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


def test_a_wide_group_lists_in_pages_as_the_view_scrolls(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """2,500 children without consolidated metadata: the first page of rows at once, the next
    when the view reaches the end (Qt's fetchMore), all of them once, in order."""
    from zarrview.app.tree.model import PAGE

    path = write_wide_group(tmp_path / "wide.zarr", children=2500)
    window.open_location(str(path))
    _settle(qtbot, window)
    model = window.model
    top = model.index(0, 0)
    qtbot.waitUntil(lambda: model.rowCount(top) == PAGE and not model.item(top).loading, timeout=15000)
    qtbot.wait(200)  # the view lays itself out again: that reads no further page
    assert model.rowCount(top) == PAGE and model.items_made <= PAGE + 2 and model.item(top).pages is not None
    scrollbar = window.tree.verticalScrollBar()
    for _ in range(200):
        if model.item(top).pages is None and not model.item(top).loading:
            break
        scrollbar.setValue(0)
        scrollbar.setValue(scrollbar.maximum())  # the user scrolls to the end
        qtbot.wait(20)
    expected = sorted(zarr.open_group(str(path), mode="r").array_keys())
    qtbot.waitUntil(lambda: model.rowCount(top) == len(expected), timeout=15000)
    assert _rows(model, top) == expected


def test_an_array_of_10_to_the_15_opens_at_once(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """Its view reads a bounded preview; its stored objects are counted by listing, not its
    10**12 grid keys, on a worker: none."""
    path = write_huge_array(tmp_path / "huge.zarr")
    window.open_location(str(path))
    _settle(qtbot, window)
    data = window.data
    qtbot.waitUntil(lambda: data.scene.detail is not None or data.scene.coarse is not None, timeout=15000)
    tile = data.scene.coarse or data.scene.detail
    assert tile.chunks <= data.budget_chunks
    assert tile.values.size <= 4 * 1024 * 1024
    meta = window.meta
    qtbot.waitUntil(lambda: any(meta.table.item(r, c) is not None and meta.table.item(r, c).text() == "0 objects, 0 B"
                                for r in range(meta.table.rowCount()) for c in range(meta.table.columnCount())),
                    timeout=15000)


@pytest.mark.slow
def test_a_wide_group_on_s3_shows_its_first_rows_after_a_small_batch(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                    tmp_path: Path) -> None:
    """moto's S3 on loopback, 300 children without consolidated metadata: the first rows after
    one listing request and a small batch of documents, more as the view scrolls, all in order."""
    pytest.importorskip("s3fs", reason="zarrview[cloud] is part of the test extras")
    pytest.importorskip("moto.server", reason="moto[server] is part of the test extras")
    import boto3
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    from cloud_servers import moto_s3
    from zarrview.app.tree.model import FIRST_REMOTE

    wide = write_wide_group(tmp_path / "wide.zarr", 300)
    with moto_s3() as endpoint:
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="wide")
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
        for p in wide.rglob("zarr.json"):
            backend.put_object("wide", f"w.zarr/{p.relative_to(wide).as_posix()}", p.read_bytes())
        window.open_location("s3://wide/w.zarr", endpoint_url=endpoint, anon=False, key="k", secret="s")
        model = window.model
        qtbot.waitUntil(lambda: model.rowCount() == 1 and model.rowCount(model.index(0, 0)) > 0
                        and not model.item(model.index(0, 0)).loading, timeout=30000)
        top = model.index(0, 0)
        qtbot.wait(200)
        assert model.rowCount(top) == FIRST_REMOTE  # the first rows: not the whole page, not every page
        scrollbar = window.tree.verticalScrollBar()
        for _ in range(400):
            if model.item(top).pages is None and not model.item(top).loading:
                break
            scrollbar.setValue(0)
            scrollbar.setValue(scrollbar.maximum())
            qtbot.wait(25)
        expected = sorted(p.parent.name for p in wide.rglob("zarr.json") if p.parent != wide)
        qtbot.waitUntil(lambda: model.rowCount(top) == len(expected), timeout=30000)
        assert _rows(model, top) == expected
