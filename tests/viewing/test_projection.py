"""Projections of a dimension, computed slab by slab: the truth is numpy's reductions (its
nan-functions for floats) of the values zarr-python wrote, and xarray's for CF-coded values."""

from __future__ import annotations

import threading
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr
import zarr

import zarrview.zarrlib as zl
from store_wrappers import CountingStore
from zarrview.scheduling import Driver, WorkerPool
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.image.state import initial_state
from zarrview.viewing.projection.ops import Partial
from zarrview.viewing.projection.reduce import plan, project
from zarrview.viewing.projection.spec import Projection, ProjectionSpecError, ReduceText, projection
from zarrview.viewing.projection.view import ProjectedPlane, ProjectionAsk, ProjectionModel, projection_of

rng = np.random.default_rng(7)
CUBE = rng.normal(100.0, 30.0, (23, 19, 17)).astype("f4")
CUBE[rng.random(CUBE.shape) < 0.15] = np.nan
CUBE[:, 2, 3] = np.nan  # a pixel NaN all along z: NaN in max/min/mean/std, 0 in sum

LAYOUTS = {
    "v2": dict(chunks=(4, 8, 8), zarr_format=2),
    "v3": dict(chunks=(5, 7, 6), dimension_names=("z", "y", "x")),
    "sharded": dict(chunks=(2, 4, 4), shards=(6, 8, 8), dimension_names=("z", "y", "x")),
    "one-per-plane": dict(chunks=(1, 19, 17), dimension_names=("z", "y", "x")),
}


def truth(op: str, values: np.ndarray, axis: int, ddof: int = 0) -> np.ndarray:
    """numpy's answer, with the result types the projection documents."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices
        if values.dtype.kind != "f":
            fn: dict[str, Callable[[], np.ndarray]] = {
                "max": lambda: np.max(values, axis), "min": lambda: np.min(values, axis),
                "sum": lambda: np.sum(values, axis, dtype=np.uint64 if values.dtype.kind == "u" else np.int64),
                "mean": lambda: np.mean(values, axis, dtype=np.float64),
                "std": lambda: np.std(values, axis, dtype=np.float64, ddof=ddof)}
        else:
            fn = {"max": lambda: np.nanmax(values, axis), "min": lambda: np.nanmin(values, axis),
                  "sum": lambda: np.nansum(values, axis, dtype=np.float64),
                  "mean": lambda: np.nanmean(values, axis, dtype=np.float64),
                  # numpy's nanvar keeps the deviations in the input's type: given float64 values here
                  "std": lambda: np.nanstd(values.astype(np.float64), axis, ddof=ddof)}
        return fn[op]()


def write(path: Path, values: np.ndarray, **layout: Any) -> Path:
    z = zarr.create_array(path, shape=values.shape, dtype=values.dtype, **layout)
    z[...] = values
    return path


def check(got: np.ndarray, want: np.ndarray, op: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if op in ("max", "min") or want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)  # exactly numpy's values, NaN where numpy has NaN
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", ["max", "min", "sum", "mean", "std"])
def test_every_op_equals_numpy_over_a_range_not_aligned_to_chunks(tmp_path: Path, layout: str, op: str) -> None:
    arr = zl.open(write(tmp_path / "a.zarr", CUBE, **LAYOUTS[layout]))
    p = projection(arr, (0, slice(None), slice(None)), ReduceText(op, 0, 3, 21))
    check(project(p), truth(op, zarr.open_array(tmp_path / "a.zarr", mode="r")[3:21], 0), op)


@pytest.mark.parametrize("op", ["max", "mean", "std"])
@pytest.mark.parametrize("dim, selection", [(1, (slice(None), 0, slice(None))), (2, (slice(None), slice(None), 0))])
def test_an_inner_dimension_reduced_keeps_the_plane_in_array_order(tmp_path: Path, op: str, dim: int,
                                                                    selection: tuple[Any, ...]) -> None:
    arr = zl.open(write(tmp_path / "a.zarr", CUBE, **LAYOUTS["v3"]))
    p = projection(arr, selection, ReduceText(op, "yx"[dim - 1], 2, 15))
    want = truth(op, CUBE[(slice(None),) * dim + (slice(2, 15),)], dim)
    check(project(p), want, op)


def test_the_other_dimensions_stay_at_their_index(tmp_path: Path) -> None:
    values = rng.integers(0, 1000, (3, 11, 6, 9), dtype="i2")
    arr = zl.open(write(tmp_path / "a.zarr", values, chunks=(1, 4, 3, 4), dimension_names=("t", "z", "y", "x")))
    p = projection(arr, (2, 0, slice(None), slice(None)), ReduceText("max", "z"))
    np.testing.assert_array_equal(project(p), values[2].max(axis=0))


@pytest.mark.parametrize("dtype", ["u2", "i1", "u8", "?"])
def test_integer_sums_do_not_overflow_where_numpy_widens(tmp_path: Path, dtype: str) -> None:
    info = np.iinfo(dtype) if dtype != "?" else None
    hi = 2 if info is None else min(int(info.max), 1 << 40)
    values = rng.integers(0 if info is None else info.min, hi, (40, 5, 6)).astype(dtype)
    values[:, 0, 0] = hi - 1  # 40 * 65535 overflows uint16, 40 * 127 overflows int8
    arr = zl.open(write(tmp_path / "a.zarr", values, chunks=(7, 5, 3)))
    for op in ("sum", "mean", "std", "max"):
        check(project(projection(arr, (0, slice(None), slice(None)), ReduceText(op, 0))), truth(op, values, 0), op)


def test_std_is_stable_far_from_zero_and_merges_like_one_pass(tmp_path: Path) -> None:
    values = (1e6 + rng.normal(0, 1e-3, (50, 4, 4))).astype("f8")
    naive = np.sqrt(np.abs((values ** 2).mean(0) - values.mean(0) ** 2))  # the sum of squares cancels
    assert not np.allclose(naive, np.std(values, 0), rtol=1e-2)
    arr = zl.open(write(tmp_path / "a.zarr", values, chunks=(3, 4, 4)))
    p = projection(arr, (0, slice(None), slice(None)), ReduceText("std", 0))
    np.testing.assert_allclose(project(p), np.std(values, 0), rtol=1e-6)
    halves = [Partial("std"), Partial("std")]
    halves[0].add(values[:17])
    halves[1].add(values[17:])
    halves[0].merge(halves[1])  # Chan's rule, as partial results from a cluster merge
    np.testing.assert_allclose(halves[0].result(1), np.std(values, 0, ddof=1), rtol=1e-6)


def test_each_chunk_is_read_once(tmp_path: Path) -> None:
    path = write(tmp_path / "a.zarr", CUBE, chunks=(4, 8, 8), dimension_names=("z", "y", "x"))
    store = CountingStore(zl.open(path).store)
    arr = zl.open(store)
    assert isinstance(arr, zl.Array)
    p = projection(arr, (0, slice(None), slice(None)), ReduceText("mean", "z", 1, 22))
    project(p, slab_bytes=4 * 8 * 8 * 4 * 2)  # tiles of one chunk: many reads
    keys = store.chunk_keys()
    assert len(keys) == len(set(keys)) == 6 * 3 * 3  # z chunks 0..5 over 3 x 3 plane chunks


def test_a_plane_larger_than_the_budget_is_tiled_and_memory_stays_bounded(tmp_path: Path) -> None:
    values = rng.integers(0, 60000, (64, 384, 384), dtype="u2")
    arr = zl.open(write(tmp_path / "big.zarr", values, chunks=(16, 64, 64)))
    p = projection(arr, (0, slice(None), slice(None)), ReduceText("max", 0))
    slab = 1 << 20  # one slab of the whole plane is 4.5 MiB: cut into tiles of 16 x 32 x 384... here 1 MiB
    assert len(plan(p, slab).tiles) > 1
    plane = 384 * 384 * 2
    chunk = 16 * 64 * 64 * 2
    project(p, slab_bytes=slab)  # warm: imports, decode pool, buffers
    tracemalloc.start()
    try:
        got = project(p, slab_bytes=slab)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, values.max(axis=0))
    # documented bound: the partial results and the assembled plane, a decoded chunk per worker; no slab
    assert peak < 2 * plane + 4 * chunk, peak
    assert peak < values.nbytes / 16


def test_progress_is_monotonic_and_cancel_stops_early(tmp_path: Path) -> None:
    arr = zl.open(write(tmp_path / "a.zarr", CUBE, chunks=(1, 19, 17)))
    p = projection(arr, (0, slice(None), slice(None)), ReduceText("sum", 0))
    seen: list[tuple[int, int]] = []
    project(p, progress=lambda d, t: seen.append((d, t)))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1] == (23, 23)
    token = zl.CancelToken()
    seen.clear()

    def stop_after_five(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 5:
            token.cancel()

    with pytest.raises(zl.ReadCancelled):
        project(p, progress=stop_after_five, cancel=token)
    assert max(d for d, _ in seen) < 10


def test_bad_requests_are_refused_by_name(tmp_path: Path) -> None:
    arr = zl.open(write(tmp_path / "a.zarr", CUBE, **LAYOUTS["v3"]))
    sel = (0, slice(None), slice(None))
    for request, words in [(ReduceText("max", "q"), "no dimension 'q' (its dimensions: z, y, x)"),
                           (ReduceText("max", 5), "no dimension 5"),
                           (ReduceText("max", "y"), "y of / is an axis of the plane"),
                           (ReduceText("max", "z", 0, 24), "range [0:24] is outside z of / (size 23"),
                           (ReduceText("max", "z", 5, 5), "range [5:5]"),
                           (ReduceText("max", "z", -1, 4), "range [-1:4]")]:
        with pytest.raises(ProjectionSpecError, match=None) as e:
            projection(arr, sel, request)
        assert words in str(e.value)
    text = zl.open(write(tmp_path / "t.zarr", np.zeros((3, 2, 2), "c8"), chunks=(1, 2, 2)))
    with pytest.raises(ProjectionSpecError, match="complex64 cannot be reduced"):
        projection(text, sel, ReduceText("mean", 0))


def test_cf_values_are_reduced_decoded_as_xarray_reduces_them(tmp_path: Path) -> None:
    temps = np.round(rng.uniform(230.0, 310.0, (12, 9, 10)), 2)
    temps[rng.random(temps.shape) < 0.2] = np.nan
    ds = xr.Dataset({"t2m": (("time", "lat", "lon"), temps)})
    encoding = {"t2m": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32767,
                        "chunks": (5, 4, 10)}}
    ds.to_zarr(tmp_path / "cf.zarr", zarr_format=2, consolidated=False, encoding=encoding, mode="w")
    arr = zl.open(tmp_path / "cf.zarr::/t2m")
    assert isinstance(arr, zl.Array)
    state = initial_state(arr).with_(cf=read_cf(arr))
    assert state.decoding is not None
    oracle = xr.open_zarr(tmp_path / "cf.zarr", consolidated=False)["t2m"].isel(time=slice(2, 11))
    for op in ("max", "mean", "std", "sum"):
        want = getattr(oracle, op)("time").values
        np.testing.assert_allclose(project(projection_of(state, "time", op, 2, 11)), want, rtol=1e-6, equal_nan=True)
    raw = project(projection_of(state.with_(raw=True), "time", "max", 2, 11))
    np.testing.assert_array_equal(raw, zarr.open_array(tmp_path / "cf.zarr/t2m", mode="r")[2:11].max(axis=0))


def test_the_view_model_answers_the_newest_projection_off_the_calling_thread(tmp_path: Path) -> None:
    arr = zl.open(write(tmp_path / "a.zarr", CUBE, **LAYOUTS["v3"]))
    assert isinstance(arr, zl.Array)
    pool = WorkerPool(threads=2)
    planes: list[ProjectedPlane] = []
    threads: list[str] = []
    progress: list[int] = []
    model = ProjectionModel()
    driver = Driver(model, pool, planes.append, name="projection",
                    on_progress=lambda d, _t: (progress.append(d), threads.append(threading.current_thread().name)))
    try:
        state = initial_state(arr).with_(y_dim=2, x_dim=0, indices=(0, 4, 0))  # plane (x, z): rows x, columns z
        ask = ProjectionAsk(state, "y", "max", 1, 18)
        driver.show(ask)
        req = driver.inflight
        assert req is not None and pool.wait_until_idle()
        assert len(planes) == 1 and planes[0].message is None and planes[0].image is not None
        np.testing.assert_array_equal(planes[0].image, truth("max", CUBE[:, 1:18, :], 1).T)
        assert "max over y[1:18]" in planes[0].status and req.label in planes[0].status
        assert threads and all(name.startswith("zarrview-worker") for name in threads)
        driver.show(ask)
        assert driver.requests == 1 and len(planes) == 1  # the projection on screen is not computed again
        with pytest.raises(ProjectionSpecError):
            driver.show(ProjectionAsk(state, "x", "max"))  # an axis of the plane: refused before any job
        assert driver.requests == 1
    finally:
        pool.close()


def test_projection_checks_its_own_fields(tmp_path: Path) -> None:
    arr = zl.open(write(tmp_path / "a.zarr", CUBE, **LAYOUTS["v3"]))
    assert isinstance(arr, zl.Array)
    with pytest.raises(ValueError):
        Projection(arr, (slice(None), slice(None), slice(None)), 0, 0, 5, "max")
    with pytest.raises(ValueError):
        Projection(arr, (0, slice(None), slice(None)), 0, 0, 99, "max")


def test_cancel_answers_the_view_model_as_cancelled(tmp_path: Path) -> None:
    path = write(tmp_path / "a.zarr", CUBE, chunks=(1, 19, 17), dimension_names=("z", "y", "x"))
    slow = CountingStore(zl.open(path).store, latency=0.05)  # 23 slabs: about a second
    arr = zl.open(slow)
    assert isinstance(arr, zl.Array)
    pool = WorkerPool(threads=2)
    planes: list[ProjectedPlane] = []
    started = threading.Event()
    driver = Driver(ProjectionModel(), pool, planes.append, on_progress=lambda _d, _t: started.set())
    try:
        driver.show(ProjectionAsk(initial_state(arr), "z", "mean"))
        assert started.wait(10)
        driver.cancel()
        assert pool.wait_until_idle()
        assert len(planes) == 1 and planes[0].image is None and planes[0].status.startswith("Cancelled mean over z")
        assert slow.chunk_reads() < 23
    finally:
        pool.close()


def test_the_label_names_the_dimension_by_the_names_given(tmp_path: Path) -> None:
    arr = zl.open(write(tmp_path / "a.zarr", CUBE, **LAYOUTS["v2"]))  # no dimension names of its own
    assert isinstance(arr, zl.Array)
    sel = (0, slice(None), slice(None))
    assert projection(arr, sel, ReduceText("max", 0, 2, 9)).label == "max over dimension 0[2:9] of /[:, :]"
    named = projection(arr, sel, ReduceText("max", "z", 2, 9), names=("z", "y", "x"))  # OME axes, say
    assert named.label == "max over z[2:9] of /[:, :]"
