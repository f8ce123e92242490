"""AnnData stores in the window, as a person opens them, against anndata's own reads: obs as
one table (paged as it scrolls), a sparse layer's block and stored entries, an embedding's
scatter plot; screenshots of the table and the scatter."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from anndata_stores import Written
from test_app import _settle, window  # noqa: F401  (the window fixture)
from zarrview.app.paged_table import PENDING, PagedTableModel
from zarrview.app.window import MainWindow
from zarrview.viewing.anndata.embedding import PALETTE

SHOTS = Path(os.environ.get("ZARRVIEW_SCREENSHOTS", "/tmp"))


def _shown_rows(model: PagedTableModel, first: int, last: int) -> list[list[str | None]]:
    return [[model.text(r, c) for c in range(model.columnCount())] for r in range(first, last)]


def test_obs_is_one_table_paged_as_it_scrolls(qtbot: Any, window: MainWindow, anndata_v3: Written) -> None:
    window.open_location(f"{anndata_v3.store}::/obs")
    _settle(qtbot, window)
    table = window.data.anndata.table
    assert window.data.stack.currentWidget() is table
    model = table.model()
    assert isinstance(model, PagedTableModel)
    truth = anndata_v3.csv_rows("obs")
    assert model.headers == truth[0][:1] + truth[0][1:] and model.rowCount() == len(truth) - 1
    na = [[x if x != "" else "NA" for x in row] for row in truth]
    assert _shown_rows(model, 0, 20) == na[1:21]
    assert window.meta.fields()["AnnData encoding"] == "dataframe 0.2.0 (a dataframe)"
    window.grab().save(str(SHOTS / "anndata_obs_table.png"))
    for row in (15_000, 7_777, 19_990, 3):  # scrolled to, far apart: only their pages are read
        table.scrollTo(model.index(row, 0))
        qtbot.waitUntil(lambda r=row: model.text(r, 0) is not None, timeout=10000)  # type: ignore[misc]
        _settle(qtbot, window)
        first, last = table.visible_rows()
        assert first <= row <= last
        assert _shown_rows(model, first, min(last, model.rowCount() - 1) + 1) == na[first + 1:min(last, model.rowCount() - 1) + 2]
    held = model.paged.held()
    assert len(held) <= model.paged.max_pages and len(held) < model.rowCount() // model.paged.page
    assert model.data(model.index(10_600 if 10_500 not in held else 1_200, 1)) == PENDING


def test_a_sparse_layer_block_and_its_entries(qtbot: Any, window: MainWindow, anndata_v2: Written) -> None:
    window.open_location(f"{anndata_v2.store}::/layers/spliced")
    _settle(qtbot, window)
    view = window.data.anndata.sparse
    assert window.data.stack.currentWidget() is view
    dense = anndata_v2.npy("layer_spliced")

    def drawn() -> tuple[tuple[int, int], tuple[int, int]]:
        assert view.block is not None and view.span is not None
        (r0, r1), (c0, c1) = view.span
        np.testing.assert_array_equal(view.block, dense[r0:r1, c0:c1])  # what was read is what is drawn
        return view.span

    rows, cols = drawn()
    assert rows[0] == 0 and cols[0] == 0 and rows[1] >= 200 and cols[1] == 40  # 40 genes: clipped
    view.row0.setValue(2_900)  # the view moves; the block it shows is read
    _settle(qtbot, window)
    rows, cols = drawn()
    assert rows[0] <= 2_900 < rows[1] and rows[1] == 3_000
    view.plot.getViewBox().setRange(xRange=(5, 25), yRange=(1_000, 1_020), padding=0)  # zoomed in
    _settle(qtbot, window)
    rows, cols = drawn()
    assert rows[0] <= 1_000 and rows[1] >= 1_020 and rows[1] - rows[0] < 100 and cols[0] <= 5
    view.plot.getViewBox().setRange(xRange=(0, 40), yRange=(0, 3_000), padding=0)  # zoomed out
    _settle(qtbot, window)
    rows, cols = drawn()
    assert rows == (0, 1024)  # at most 1024 rows from the top left, never the whole matrix
    model = view.entries.model()
    assert isinstance(model, PagedTableModel)
    cols, rows = np.nonzero(dense.T)  # CSC: column by column
    assert model.rowCount() == len(rows)
    for k in (0, 1, 2, 250):
        assert model.text(k, 0) == str(rows[k]) and model.text(k, 1) == str(cols[k])
        assert model.text(k, 2) == str(dense[rows[k], cols[k]])


def test_an_embedding_is_a_scatter_plot(qtbot: Any, window: MainWindow, anndata_v3: Written) -> None:
    window.open_location(f"{anndata_v3.store}::/obsm/X_umap")
    _settle(qtbot, window)
    scatter = window.data.anndata.scatter
    assert window.data.stack.currentWidget() is scatter
    points = scatter.points
    assert points is not None
    umap = anndata_v3.npy("obsm_X_umap")
    np.testing.assert_array_equal(points.x, umap[:, 0])
    np.testing.assert_array_equal(points.y, umap[:, 1])
    labels = anndata_v3.expected["categories"]["cell_type"]
    assert scatter.colour_box.currentData() == "cell_type"
    drawn = scatter.plot.getPlotItem().listDataItems()
    truth = anndata_v3.csv_rows("obs")
    column = truth[0].index("cell_type")
    for item, label in zip(drawn, labels):  # one set a category, in the categories' order
        members = [i for i, r in enumerate(truth[1:]) if r[column] == label]
        np.testing.assert_array_equal(np.sort(item.data["x"]), np.sort(umap[members, 0]))
        assert item.opts["name"] == label
        assert item.opts["brush"].color().getRgb()[:3] == tuple(PALETTE[labels.index(label)])
    window.grab().save(str(SHOTS / "anndata_umap_scatter.png"))
    scatter.colour_box.setCurrentIndex(scatter.colour_box.findData("total_counts"))
    scatter.read()
    _settle(qtbot, window)
    counts = np.array([float(r[truth[0].index("total_counts")]) for r in truth[1:]])
    assert scatter.points is not None and scatter.points.value_range == (counts.min(), counts.max())
    assert "total_counts" in scatter.range_label.text()


def test_the_anndata_group_says_what_it_holds(qtbot: Any, window: MainWindow, anndata_v2: Written) -> None:
    window.open_location(str(anndata_v2.store))
    _settle(qtbot, window)
    assert "is an AnnData object (encoding anndata 0.1.0)" in window.data.message.text()
    assert window.meta.fields()["AnnData encoding"] == "anndata 0.1.0 (an AnnData object)"


@pytest.mark.timeout(600)  # the first to ask writes the million cells: about 45 s on a quiet machine
def test_a_million_cells_table_and_scatter(qtbot: Any, window: MainWindow, anndata_million: Written) -> None:
    """Scrolled to the end of a million rows, the table holds a few pages; the scatter draws
    every 4th cell, coloured by a category (not by the million-label barcode)."""
    window.open_location(f"{anndata_million.store}::/obs")
    _settle(qtbot, window)
    table = window.data.anndata.table
    model = table.model()
    assert isinstance(model, PagedTableModel) and model.rowCount() == 1_000_000
    truth = anndata_million.csv_rows("obs")
    na = [[x if x != "" else "NA" for x in row] for row in truth]
    for row in (999_990, 500_000, 123_456):
        table.scrollTo(model.index(row, 0))
        qtbot.waitUntil(lambda r=row: model.text(r, 0) is not None, timeout=10000)  # type: ignore[misc]
        _settle(qtbot, window)
        assert _shown_rows(model, row, min(row + 10, 1_000_000)) == na[row + 1:row + 11]
    assert len(model.paged.held()) <= 8
    window.open_location(f"{anndata_million.store}::/obsm/X_umap")
    _settle(qtbot, window)
    scatter = window.data.anndata.scatter
    assert scatter.points is not None and scatter.points.step == 4
    assert scatter.colour_box.currentData() == "cell_type"
    assert scatter.colour_box.findData("barcode") == -1  # a million categories colour nothing apart
    np.testing.assert_array_equal(scatter.points.x, anndata_million.npy("obsm_X_umap")[::4, 0])


def test_the_paged_model_passes_qtmodeltester(qtmodeltester: Any, qtbot: Any, window: MainWindow,
                                              anndata_v2: Written) -> None:
    window.open_location(f"{anndata_v2.store}::/var")
    _settle(qtbot, window)
    model = window.data.anndata.table.model()
    assert isinstance(model, PagedTableModel)
    truth = anndata_v2.csv_rows("var")
    assert model.headers == ["_index", *truth[0][1:]]  # the index's key where anndata names none
    assert _shown_rows(model, 0, len(truth) - 1) == truth[1:]
    qtmodeltester.check(model)


def test_export_the_table_from_the_window(qtbot: Any, window: MainWindow, anndata_v2: Written,
                                          tmp_path: Path) -> None:
    window.open_location(f"{anndata_v2.store}::/obs")
    _settle(qtbot, window)
    exports = window.exports  # type: ignore[attr-defined]
    exports.update()
    assert exports.table_action.isEnabled() and not exports.data_action.isEnabled()
    out = tmp_path / "obs.csv"
    exports.ask_path = lambda *_: str(out)
    exports.table_action.trigger()
    qtbot.waitUntil(lambda: not exports.table_writing, timeout=10000)
    with open(out, newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == anndata_v2.csv_rows("obs")
    assert f"Exported /obs (3,000 rows) to {out}" == window.status_label.text()


def test_a_categorical_column_alone_shows_its_labels(qtbot: Any, window: MainWindow, anndata_v3: Written) -> None:
    window.open_location(f"{anndata_v3.store}::/obs/cell_type")
    _settle(qtbot, window)
    model = window.data.anndata.table.model()
    assert isinstance(model, PagedTableModel) and model.headers == ["cell_id", "cell_type"]
    truth = anndata_v3.csv_rows("obs")
    column = truth[0].index("cell_type")
    assert _shown_rows(model, 0, 15) == [[r[0], r[column] or "NA"] for r in truth[1:16]]
