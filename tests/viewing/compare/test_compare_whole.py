"""Whole-array differences read block by block (viewing/compare/whole.py), held to numpy's figures
over the whole arrays as zarr-python and xarray read them: uneven chunks, sharding, fill values
and unwritten chunks, CF-packed values; and read in bounded memory, with progress and cancel."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr
import zarr
from compare_datasets import packed
from store_wrappers import CountingStore, is_chunk_key

from zarrview import zarrlib
from zarrview.scheduling import Context
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.compare.errors import ShapeMismatchError
from zarrview.viewing.compare.whole import plan_blocks, region_of, whole_difference, whole_job
from zarrview.zarrlib import CancelToken, ChunkCache, ReadCancelled
from zarrview.zarrlib.storage.base import ByteRequest
from zarrview.zarrlib.storage.local import LocalStore

SHAPE = (37, 53, 29)


def _values(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(0.0, 3.0, SHAPE)
    v[rng.random(SHAPE) < 0.04] = np.nan
    v[rng.random(SHAPE) < 0.005] = np.inf
    v[rng.random(SHAPE) < 0.02] = 0.0
    return v


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A: uneven chunks, fill value -1.5, a slab never written; B: sharded, other chunks, NaN fill."""
    root = tmp_path_factory.mktemp("whole") / "pair.zarr"
    g = zarr.open_group(root, mode="w")
    a = g.create_array("a", shape=SHAPE, chunks=(8, 16, 7), dtype="f8", fill_value=-1.5)
    b = g.create_array("b", shape=SHAPE, chunks=(5, 10, 29), shards=(10, 20, 29), dtype="f8", fill_value=np.nan)
    va, vb = _values(1), _values(1)
    moved = np.random.default_rng(2).random(SHAPE) < 0.25
    vb[moved] += np.random.default_rng(3).normal(size=int(moved.sum()))
    vb[_values(4) == 0] = 0.0
    a[:, :32, :] = va[:, :32, :]  # a[:, 32:, :] stays unwritten: the fill value
    b[:30] = vb[:30]               # b[30:] stays unwritten: NaN
    g.create_array("small", shape=(37, 53), dtype="f8")
    return root


def _truth(a: np.ndarray, b: np.ndarray, mode: str) -> dict[str, Any]:
    with np.errstate(all="ignore"):
        if mode == "a-b":
            values = a - b
            departure = np.abs(values)
            finite = np.isfinite(a) & np.isfinite(b)
        else:
            values = np.where(b == 0, np.nan, a / b)
            departure = np.abs(values - 1)
            finite = np.isfinite(values)
    return {"max_abs": np.nanmax(departure),
            "where": tuple(int(i) for i in np.unravel_index(np.nanargmax(departure), departure.shape)),
            "rms": float(np.sqrt(np.nanmean(np.where(finite, departure, np.nan) ** 2))),
            "differ": int(np.sum(~((a == b) | (np.isnan(a) & np.isnan(b))))),
            "count": a.size, "finite": int(finite.sum())}


def _check(stats: Any, truth: dict[str, Any]) -> None:
    assert stats.rms == pytest.approx(truth["rms"], rel=1e-12)
    got = {k: getattr(stats, k) for k in truth if k != "rms"}
    assert got == {k: v for k, v in truth.items() if k != "rms"}


@pytest.mark.parametrize("block_bytes", [6_000, 200_000, 64 << 20], ids=["parts-of-chunks", "chunks", "one-block"])
@pytest.mark.parametrize("mode", ["a-b", "a/b"])
def test_whole_arrays_are_numpys(stores: Path, mode: str, block_bytes: int) -> None:
    g = zarrlib.open(str(stores))
    truth_a = zarr.open_array(stores / "a", mode="r")[...]
    truth_b = zarr.open_array(stores / "b", mode="r")[...]
    seen: list[tuple[int, int]] = []
    stats = whole_difference(g["a"], g["b"], mode, block_bytes=block_bytes, progress=lambda d, t: seen.append((d, t)))
    _check(stats, _truth(truth_a, truth_b, mode))
    total = plan_blocks(g["a"], g["b"], region_of(SHAPE, None), block_bytes).total
    assert seen == [(i, total) for i in range(1, total + 1)]
    assert (total == 1) == (block_bytes == 64 << 20)


def test_a_selection_names_places_in_the_whole_array(stores: Path) -> None:
    g = zarrlib.open(str(stores))
    sel = (slice(3, 30), 20, slice(-20, None))
    truth_a = zarr.open_array(stores / "a", mode="r")[...][sel]
    truth_b = zarr.open_array(stores / "b", mode="r")[...][sel]
    stats = whole_difference(g["a"], g["b"], selection=sel, block_bytes=3_000)
    truth = _truth(truth_a, truth_b, "a-b")
    r, c = truth.pop("where")
    _check(stats, {**truth, "where": (3 + r, 20, 9 + c)})


def test_packed_values_decoded_as_xarray_decodes_them(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    values = np.round(rng.uniform(250.0, 310.0, (40, 60)), 2)
    values[rng.random(values.shape) < 0.05] = np.nan
    other = values + np.round(rng.normal(0.0, 0.3, values.shape), 2)
    other[rng.random(values.shape) < 0.05] = np.nan
    a_path = packed(tmp_path / "a.zarr", values, scale=0.01, offset=273.15, fill=-32767, chunks=(16, 25))
    b_path = packed(tmp_path / "b.zarr", other, scale=0.02, offset=280.0, fill=-9999, chunks=(7, 60))
    a, b = zarrlib.open(str(a_path))["v"], zarrlib.open(str(b_path))["v"]
    decoded_a = xr.open_zarr(a_path, consolidated=False).v.values.astype(np.float64)
    decoded_b = xr.open_zarr(b_path, consolidated=False).v.values.astype(np.float64)
    assert np.isnan(decoded_a).any()
    stats = whole_difference(a, b, block_bytes=20_000, a_cf=read_cf(a), b_cf=read_cf(b))
    _check(stats, _truth(decoded_a, decoded_b, "a-b"))
    assert stats == whole_difference(a, b, block_bytes=20_000)  # without a CF view: the attributes' coding
    stored_a = zarr.open_array(a_path / "v", mode="r")[...].astype(np.float64)
    stored_b = zarr.open_array(b_path / "v", mode="r")[...].astype(np.float64)
    _check(whole_difference(a, b, decoded=False, block_bytes=20_000), _truth(stored_a, stored_b, "a-b"))


def test_cancel_stops_between_chunks(stores: Path) -> None:
    cancel = CancelToken()
    reads = []

    def count(req: ByteRequest) -> None:
        if is_chunk_key(req.key):
            reads.append(req.key)
            if len(reads) == 5:
                cancel.cancel()

    store = CountingStore(LocalStore(stores), fail=count)
    g = zarrlib.open(store)
    seen: list[tuple[int, int]] = []
    with pytest.raises(ReadCancelled):
        whole_difference(g["a"], g["b"], block_bytes=20_000, cancel=cancel, progress=lambda d, t: seen.append((d, t)))
    total = plan_blocks(g["a"], g["b"], region_of(SHAPE, None), 20_000).total
    assert seen and len(seen) < total and len(reads) < 20


def test_the_job_reports_blocks_and_is_cancelled(stores: Path) -> None:
    g = zarrlib.open(str(stores))
    seen: list[tuple[int, int]] = []
    ctx = Context(CancelToken(), ChunkCache(1 << 20), progress=lambda d, t: seen.append((d, t)))
    stats = whole_job(g["a"], g["b"], block_bytes=50_000).work(ctx)
    assert stats.count == np.prod(SHAPE) and seen[-1][0] == seen[-1][1] == len(seen)
    ctx.cancel.cancel()
    with pytest.raises(ReadCancelled):
        whole_job(g["a"], g["b"]).work(ctx)


def test_unreadable_chunks_are_left_out(tmp_path: Path) -> None:
    g = zarr.open_group(tmp_path / "bad.zarr", mode="w")
    rng = np.random.default_rng(8)
    va, vb = rng.normal(size=(20, 30)), rng.normal(size=(20, 30))
    g.create_array("a", shape=(20, 30), chunks=(10, 10), dtype="f8")[...] = va
    g.create_array("b", shape=(20, 30), chunks=(10, 10), dtype="f8", compressors=None)[...] = vb
    (tmp_path / "bad.zarr" / "b" / "c" / "1" / "2").write_bytes(b"not a chunk")
    z = zarrlib.open(str(tmp_path / "bad.zarr"))
    failures: list[Any] = []
    stats = whole_difference(z["a"], z["b"], failures=failures, block_bytes=2_000)
    assert {f.key for f in failures} == {"b/c/1/2"}  # once per block it was read in
    assert stats.unread == 100 and "100 unread" in stats.text
    keep = np.ones((20, 30), bool)
    keep[10:20, 20:30] = False
    assert stats.count == 500 and stats.differ == int(np.sum(va[keep] != vb[keep]))
    assert stats.rms == pytest.approx(float(np.sqrt(np.mean((va[keep] - vb[keep]) ** 2))), rel=1e-12)


def test_different_shapes_are_refused_naming_both(tmp_path: Path, stores: Path) -> None:
    g = zarrlib.open(str(stores))
    with pytest.raises(ShapeMismatchError, match=r"\(37, 53, 29\).*\(37, 53\)"):
        whole_difference(g["a"], g["small"])
    from compare_datasets import daily_a, half_degree_b

    a = zarrlib.open(str(daily_a(tmp_path / "a.zarr")))["t"]
    b = zarrlib.open(str(half_degree_b(tmp_path / "b.zarr")))["t"]
    with pytest.raises(ShapeMismatchError, match="common coordinate window"):
        whole_job(a, b, a_cf=read_cf(a), b_cf=read_cf(b))


def test_memory_is_bounded_by_the_block(tmp_path: Path) -> None:
    """A 4096 × 4096 float32 pair (64 MiB each decoded), mostly fill: compared in 4 MiB blocks,
    the peak stays under a quarter of one array."""
    n, chunk = 4096, 256
    g = zarr.open_group(tmp_path / "big.zarr", mode="w")
    a = g.create_array("a", shape=(n, n), chunks=(chunk, chunk), dtype="f4", fill_value=0.0)
    b = g.create_array("b", shape=(n, n), chunks=(chunk, chunk), dtype="f4", fill_value=0.0)
    rng = np.random.default_rng(9)
    tiles = {(0, 0): rng.normal(size=(chunk, chunk)), (3, 7): rng.normal(size=(chunk, chunk)),
             (15, 15): rng.normal(size=(chunk, chunk))}
    for (r, c), tile in tiles.items():
        a[r * chunk:(r + 1) * chunk, c * chunk:(c + 1) * chunk] = tile
    b[3 * chunk:4 * chunk, 7 * chunk:8 * chunk] = tiles[(3, 7)] + 1.0
    z = zarrlib.open(str(tmp_path / "big.zarr"))
    tracemalloc.start()
    try:
        stats = whole_difference(z["a"], z["b"], block_bytes=4 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n * 4 // 4, f"peak {peak / 2**20:.1f} MiB"
    tile_a = {k: v.astype(np.float32).astype(np.float64) for k, v in tiles.items()}
    diffs = np.concatenate([tile_a[(0, 0)].ravel(), np.full(chunk * chunk, -1.0), tile_a[(15, 15)].ravel()])
    b_37 = (tiles[(3, 7)] + 1.0).astype(np.float32).astype(np.float64)
    diffs[chunk * chunk:2 * chunk * chunk] = (tile_a[(3, 7)] - b_37).ravel()
    assert stats.count == n * n and stats.differ == int(np.count_nonzero(diffs))
    assert stats.rms == pytest.approx(float(np.sqrt(np.sum(diffs ** 2) / (n * n))), rel=1e-12)
    assert stats.max_abs == float(np.max(np.abs(diffs)))
