"""AnnData's sparse matrices and embeddings against anndata's reading of them: a block of a CSR
or CSC layer equals the same slice of anndata's ``toarray()``, read from the byte ranges that
hold it; stored entries come in storage order; scatter points equal ``obsm``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from anndata_stores import Written
from store_wrappers import CountingStore, is_chunk_key
from zarrview import zarrlib as zl
from zarrview.scheduling import Lane, WorkerPool, call_now
from zarrview.viewing.anndata import AnnDataError, open_frame, open_sparse
from zarrview.viewing.anndata.embedding import PALETTE, colour_map, is_embedding, read_points
from zarrview.viewing.anndata.jobs import block_job
from zarrview.viewing.anndata.sparse import SparseMatrix
from zarrview.zarrlib.storage import LocalStore

STORES = ["anndata_v3", "anndata_v2", "anndata_v3_default"]
BLOCKS = [((0, 1), (0, 5)), ((100, 350), (5, 30)), ((990, 1000), (0, 40)), ((0, 1000), (17, 18)), ((500, 500), (0, 9))]


def _layer(request: pytest.FixtureRequest, which: str, layer: str) -> tuple[Written, SparseMatrix, np.ndarray]:
    """The store, zarrview's sparse matrix of ``layer`` and anndata's ``toarray()`` of it."""
    written: Written = request.getfixturevalue(which)
    matrix = open_sparse(zl.open(written.store)["layers/" + layer])  # type: ignore[arg-type]
    return written, matrix, written.npy(f"layer_{layer}")


@pytest.mark.parametrize("which", STORES)
@pytest.mark.parametrize("layer", ["counts", "spliced"])
def test_blocks_equal_toarray(which: str, layer: str, request: pytest.FixtureRequest) -> None:
    written, matrix, dense = _layer(request, which, layer)
    assert matrix.format == written.expected["layers"][layer][:3]
    assert matrix.shape == dense.shape and matrix.nnz == np.count_nonzero(dense)
    for rows, cols in BLOCKS:
        block = matrix.block(rows, cols)
        assert block.dtype == dense.dtype
        np.testing.assert_array_equal(block, dense[rows[0]:rows[1], cols[0]:cols[1]])


@pytest.mark.parametrize("which", STORES)
@pytest.mark.parametrize("layer", ["counts", "spliced"])
def test_entries_in_storage_order(which: str, layer: str, request: pytest.FixtureRequest) -> None:
    _, matrix, dense = _layer(request, which, layer)
    # CSR stores row by row, CSC column by column: numpy's nonzero of the matrix or its transpose
    if matrix.format == "csr":
        rows, cols = np.nonzero(dense)
    else:
        cols, rows = np.nonzero(dense.T)
    for start in (0, 1, matrix.nnz // 3, matrix.nnz - 50):
        got = matrix.entries(start, start + 200)
        stop = min(matrix.nnz, start + 200)
        np.testing.assert_array_equal(got.rows, rows[start:stop])
        np.testing.assert_array_equal(got.cols, cols[start:stop])
        np.testing.assert_array_equal(got.values, dense[rows[start:stop], cols[start:stop]])


def test_a_block_reads_only_its_byte_ranges(anndata_v3: Written) -> None:
    """Rows 5,000–5,100 of the CSR layer read the pointers of those rows and the entries between
    them: one inner chunk or two of each array, never the whole layer."""
    store = CountingStore(LocalStore(anndata_v3.store))
    matrix = open_sparse(zl.open(store)["layers/counts"])  # type: ignore[arg-type]
    store.reset()
    block = matrix.block((5000, 5100), (0, 300))
    np.testing.assert_array_equal(block, anndata_v3.npy("layer_counts")[5000:5100])
    chunk = 1000  # the writer's inner chunks (shards of four)
    ptr = np.load(anndata_v3.folder / "layer_counts.npy")[:5100]
    first, last = int(np.count_nonzero(ptr[:5000])), int(np.count_nonzero(ptr))
    inner = {"indptr": {5000 // chunk, 5100 // chunk},
             "data": set(range(first // chunk, (last - 1) // chunk + 1))}
    inner["indices"] = inner["data"]
    meta = {n: json.loads((anndata_v3.store / "layers/counts" / n / "zarr.json").read_text()) for n in inner}
    for name, wanted in inner.items():
        keys = [r for r in store.requests if is_chunk_key(r.key) and r.key.split("/")[-3] == name]
        shards = {int(r.key.rsplit("/", 1)[1]) for r in keys}
        assert shards == {i // 4 for i in wanted}, (name, shards)
        itemsize = np.dtype({"float32": "f4", "int32": "i4", "int64": "i8"}[meta[name]["data_type"]]).itemsize
        read = sum(store.bytes[r.key] for r in keys) / max(1, len({r.key for r in keys}))
        # each inner chunk is at most its raw size (+ the shard index): far less than its shard
        assert sum(store.bytes[k] for k in {r.key for r in keys}) <= (len(wanted) * chunk * itemsize
                                                                     + 4 * 16 * len(shards) + 64), (name, read)


def test_bad_sparse_groups_say_what_is_wrong(anndata_v3_default: Written, tmp_path: Path) -> None:
    import shutil

    dst = tmp_path / "bad.zarr"
    shutil.copytree(anndata_v3_default.store, dst)
    meta = dst / "layers" / "counts" / "zarr.json"
    doc = json.loads(meta.read_text())
    doc["attributes"]["shape"] = [999, 60]
    meta.write_text(json.dumps(doc))
    with pytest.raises(AnnDataError, match=r"/layers/counts/indptr holds 1,001 pointers .* needs 1,000"):
        open_sparse(zl.open(dst)["layers/counts"])  # type: ignore[arg-type]
    doc["attributes"]["shape"] = "big"
    meta.write_text(json.dumps(doc))
    with pytest.raises(AnnDataError, match=r"/layers/counts: a sparse matrix's attribute shape"):
        open_sparse(zl.open(dst)["layers/counts"])  # type: ignore[arg-type]


def test_block_job_on_a_lane(anndata_v2: Written) -> None:
    matrix = open_sparse(zl.open(anndata_v2.store)["layers/spliced"])  # type: ignore[arg-type]
    got = []
    pool = WorkerPool(2)
    lane: Lane[np.ndarray] = Lane(pool, call_now, "block")
    lane.submit(block_job(matrix, (10, 60), (3, 9)), got.append)
    assert pool.wait_until_idle(20)
    pool.close()
    assert got and got[0].error is None
    np.testing.assert_array_equal(got[0].value, anndata_v2.npy("layer_spliced")[10:60, 3:9])


@pytest.mark.parametrize("which", STORES)
def test_scatter_points_equal_obsm(which: str, request: pytest.FixtureRequest) -> None:
    written: Written = request.getfixturevalue(which)
    root = zl.open(written.store)
    obs = open_frame(root["obs"])  # type: ignore[arg-type]
    truth = written.csv_rows("obs")
    header = truth[0]
    umap, pca = root["obsm/X_umap"], root["obsm/X_pca3"]
    assert is_embedding(umap) and is_embedding(pca) and not is_embedding(root["X"])
    points = read_points(umap, (0, 1), obs.column("cell_type"))
    expected = written.npy("obsm_X_umap")
    np.testing.assert_array_equal(points.x, expected[:, 0])
    np.testing.assert_array_equal(points.y, expected[:, 1])
    labels = written.expected["categories"]["cell_type"]
    codes = [labels.index(r[header.index("cell_type")]) if r[header.index("cell_type")] else -1 for r in truth[1:]]
    for i in (0, 1, 2, 3, len(codes) - 1):
        assert tuple(points.colours[i]) == (tuple(PALETTE[codes[i]]) if codes[i] >= 0 else (190, 190, 190))
    assert [name for name, _ in points.legend][:len(labels)] == labels
    three = read_points(pca, (0, 2), obs.column("total_counts"))
    np.testing.assert_array_equal(three.y, written.npy("obsm_X_pca3")[:, 2])
    counts = np.array([float(r[header.index("total_counts")]) for r in truth[1:]])
    assert three.value_range == (counts.min(), counts.max())
    np.testing.assert_array_equal(three.colours, colour_map(counts, counts.min(), counts.max()))


def test_scatter_draws_every_step_th_cell(anndata_v3: Written) -> None:
    root = zl.open(anndata_v3.store)
    points = read_points(root["obsm/X_umap"], (1, 0), None, max_points=3000)
    step = math.ceil(20_000 / 3000)
    assert points.step == step and points.total == 20_000
    np.testing.assert_array_equal(points.x, anndata_v3.npy("obsm_X_umap")[::step, 1])


def test_pointers_that_go_backwards_are_named(anndata_v2: Written, tmp_path: Path) -> None:
    """A hostile CSR layer whose pointers decrease costs an AnnDataError naming the array, not a
    crash or a wrong block; a categorical code past its labels reads as missing."""
    import shutil

    import zarr

    dst = tmp_path / "bad.zarr"
    shutil.copytree(anndata_v2.store, dst)
    indptr = zarr.open_array(dst / "layers" / "counts" / "indptr", mode="r+")
    indptr[10] = int(indptr[11]) + 5
    matrix = open_sparse(zl.open(dst)["layers/counts"])  # type: ignore[arg-type]
    with pytest.raises(AnnDataError, match=r"/layers/counts/indptr: pointers 5:21 decrease"):
        matrix.block((5, 20), (0, 10))
    np.testing.assert_array_equal(matrix.block((100, 120), (0, 40)), anndata_v2.npy("layer_counts")[100:120])
    codes = zarr.open_array(dst / "obs" / "cell_type" / "codes", mode="r+")
    codes[7] = 120
    page = open_frame(zl.open(dst)["obs"]).read_page(0, 10)  # type: ignore[arg-type]
    assert page.text(7, 1) == "NA" and page.columns[0].missing is not None and page.columns[0].missing[7]
