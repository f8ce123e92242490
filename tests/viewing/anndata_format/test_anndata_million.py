"""A million cells: a page of the obs table and a scatter of the embedding read what they need
(the chunks of the rows shown; two coordinates of every drawn cell) in bounded memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from anndata_stores import Written
from store_wrappers import CountingStore, is_chunk_key
from zarrview import zarrlib as zl
from zarrview.viewing.anndata import open_frame
from zarrview.viewing.anndata.embedding import MAX_POINTS, read_points
from zarrview.zarrlib.storage import LocalStore

N = 1_000_000


@pytest.mark.timeout(600)  # the first to ask writes the million cells: about 45 s on a quiet machine
def test_a_page_of_a_million_rows(anndata_million: Written) -> None:
    store = CountingStore(LocalStore(anndata_million.store))
    frame = open_frame(zl.open(store)["obs"])  # type: ignore[arg-type]
    assert frame.rows == N
    store.reset()
    tracemalloc.start()
    page = frame.read_page(700_000, 700_500)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    truth = anndata_million.csv_rows("obs")
    assert [[page.text(r, c, "") for c in range(len(frame.headers))] for r in range(700_000, 700_500)] \
        == truth[700_001:700_501]
    # chunks of 50,000 rows in shards of 200,000: rows 700,000-700,499 lie in shard 3 alone
    values = [k for k in store.chunk_keys() if "/categories/" not in k]
    assert values and all(k.endswith("/c/3") for k in values), values
    read = sum(n for k, n in store.bytes.items() if is_chunk_key(k))
    stored = sum(p.stat().st_size for p in (anndata_million.store / "obs").rglob("*") if p.is_file())
    assert read < stored / 5, (read, stored)
    assert peak < 48 << 20, peak  # a few decoded 50,000-row chunks, not the million rows


@pytest.mark.timeout(600)  # the first to ask writes the million cells: about 45 s on a quiet machine
def test_a_scatter_of_a_million_cells(anndata_million: Written) -> None:
    root = zl.open(anndata_million.store)
    frame = open_frame(root["obs"])  # type: ignore[arg-type]
    tracemalloc.start()
    points = read_points(root["obsm/X_umap"], (0, 1), frame.column("cell_type"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    step = -(-N // MAX_POINTS)
    assert points.step == step and points.x.size == len(range(0, N, step))
    umap = anndata_million.npy("obsm_X_umap")
    np.testing.assert_array_equal(points.x, umap[::step, 0])
    np.testing.assert_array_equal(points.y, umap[::step, 1])
    assert peak < 64 << 20, peak
