"""Line profiles and region statistics checked against numpy on the arrays zarr-python wrote
(nearest-neighbour samples of the same line; nanmin/nanmax/nanmean/nanstd and NaN and fill
counts of the same rectangle) and against xarray's decoding of a CF-packed variable."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Context
from zarrview.viewing import initial_state
from zarrview.viewing.analysis import profile, stats
from zarrview.viewing.analysis.plane import AnalysisError, Block
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.image.state import ViewState
from zarrview.zarrlib import CancelToken, ChunkCache

from cf_datasets import write_cf_dataset


def _run(job: Any, cancel: CancelToken | None = None) -> Any:
    return job.work(Context(cancel or CancelToken(), ChunkCache(1 << 24)))


def _state(path: Path, data: np.ndarray, chunks: tuple[int, ...], fill_value: Any = None,
           plane: dict[int, int] | None = None) -> ViewState:
    arr = zarr.create_array(path, shape=data.shape, chunks=chunks, dtype=data.dtype, fill_value=fill_value)
    arr[...] = data
    return initial_state(zl.open(path), plane)  # type: ignore[arg-type]


def _truth_profile(data: np.ndarray, line: profile.Line) -> np.ndarray:
    """numpy's nearest-neighbour samples, one per pixel of length: the element holding each point."""
    (r0, c0), (r1, c1) = line
    n = max(2, math.ceil(math.hypot(r1 - r0, c1 - c0)) + 1)
    t = np.linspace(0, 1, n)
    r, c = np.floor(r0 + t * (r1 - r0)).astype(int), np.floor(c0 + t * (c1 - c0)).astype(int)
    ok = (r >= 0) & (r < data.shape[0]) & (c >= 0) & (c < data.shape[1])
    return data[r[ok], c[ok]]


@pytest.mark.parametrize("line", [((0.5, 0.5), (44.2, 61.7)), ((40.0, 3.3), (2.0, 60.9)),
                                  ((10.5, -5.0), (10.5, 80.0)), ((3.0, 7.0), (3.2, 7.1))])
def test_a_profile_holds_numpys_nearest_neighbour_samples(tmp_path: Path, line: profile.Line) -> None:
    data = np.random.default_rng(3).integers(0, 60000, (2, 45, 62), dtype="u2")
    state = _state(tmp_path / "a", data, (1, 16, 16), plane={0: 1})
    got = _run(profile.request(state, line))
    truth = _truth_profile(data[1], line)
    np.testing.assert_array_equal(got.values, truth)
    assert got.distance_unit == "pixels" and got.distance[0] >= 0
    assert np.all(np.diff(got.distance) <= 1.0 + 1e-9)  # about one sample per pixel


def test_a_profile_measures_in_the_pixel_size_and_rejects_a_line_outside(tmp_path: Path) -> None:
    data = np.arange(30 * 40, dtype="f4").reshape(30, 40)
    state = _state(tmp_path / "a", data, (10, 10))
    got = _run(profile.request(state, ((0.0, 0.0), (24.0, 32.0)), ((0.5, 0.5), "µm")))
    assert got.distance_unit == "µm" and got.distance[-1] == pytest.approx(20.0)  # 40 pixels of 0.5 µm
    with pytest.raises(AnalysisError):
        _run(profile.request(state, ((-9.0, -9.0), (-1.0, -3.0))))


def _truth_stats(values: np.ndarray, raw: np.ndarray, fills: list[float]) -> dict[str, Any]:
    return {"min": np.nanmin(values), "max": np.nanmax(values), "mean": np.nanmean(values.astype("f8")),
            "std": np.nanstd(values.astype("f8")), "nan": int(np.isnan(values).sum()) if values.dtype.kind == "f" else 0,
            "fill": int(np.isin(raw, fills).sum())}


def _assert_stats(got: stats.RegionStats, want: dict[str, Any], rtol: float = 1e-12) -> None:
    assert got.minimum == pytest.approx(want["min"], rel=rtol) and got.maximum == pytest.approx(want["max"], rel=rtol)
    assert got.mean == pytest.approx(want["mean"], rel=rtol) and got.std == pytest.approx(want["std"], rel=1e-9)
    assert got.nan == want["nan"] and got.fill == want["fill"]


@pytest.mark.parametrize("box", [Block(3, 57, 5, 70), Block(0, 60, 0, 75), Block(40, 60, 60, 75), Block(7, 8, 9, 10)])
def test_uint16_statistics_equal_numpys_over_chunks_and_edge_chunks(tmp_path: Path, box: Block) -> None:
    data = np.random.default_rng(5).integers(30000, 30004, (60, 75), dtype="u2")  # a spread of ~1 around 30,000
    data[::7, ::3] = 7  # the fill value
    state = _state(tmp_path / "a", data, (16, 16), fill_value=7)
    got = _run(stats.request(state, box, limit=300))  # blocks of one chunk: the read is in many pieces
    part = data[box.r0:box.r1, box.c0:box.c1]
    _assert_stats(got, _truth_stats(part, part, [7]))
    assert got.count == part.size and isinstance(got.minimum, int)


def test_float_statistics_count_nan_and_fill_values(tmp_path: Path) -> None:
    data = np.random.default_rng(6).normal(5.0, 2.0, (50, 41)).astype("f4")
    data[::5, ::4] = np.nan
    data[1::9, 2::7] = -9999.0
    state = _state(tmp_path / "a", data, (12, 10), fill_value=-9999.0)
    box = Block(2, 49, 3, 38)
    got = _run(stats.request(state, box, limit=500))
    part = data[2:49, 3:38]
    _assert_stats(got, _truth_stats(part, part, [-9999.0]), rtol=1e-6)
    assert got.count == int(np.isfinite(part).sum()) and got.total == part.size


def test_statistics_leave_out_chunks_that_failed_and_say_how_many_values(tmp_path: Path) -> None:
    data = np.random.default_rng(8).normal(5.0, 2.0, (40, 40)).astype("f4")
    state = _state(tmp_path / "a", data, (10, 10), fill_value=0.0)
    (tmp_path / "a" / "c" / "1" / "2").write_bytes(b"not a chunk")  # rows 10:20, columns 20:30
    box = Block(5, 35, 15, 38)
    got = _run(stats.request(state, box, limit=120))
    part = data[5:35, 15:38].astype("f8").copy()
    part[5:15, 5:15] = np.nan  # the failed chunk's part of the rectangle, as numpy sees what was read
    read = part[~np.isnan(part)]
    assert got.unread == 100 and got.count == read.size and got.fill == 0
    assert got.mean == pytest.approx(read.mean(), rel=1e-6) and got.std == pytest.approx(read.std(), rel=1e-6)
    assert got.minimum == pytest.approx(read.min()) and got.maximum == pytest.approx(read.max())
    assert ("unread", "100 (chunks that failed, left out)") in stats.rows_of(got)


def test_blocks_stay_bounded_and_cover_the_box(tmp_path: Path) -> None:
    state = _state(tmp_path / "a", np.zeros((100, 100), "u1"), (64, 64))
    for limit in (10, 4096, 50000):
        parts = stats.blocks(state, Block(5, 99, 1, 97), limit)
        assert max(p.size for p in parts) <= max(limit, 1) and sum(p.size for p in parts) == 94 * 96


def test_statistics_of_a_cf_packed_variable_are_in_xarrays_decoded_units(tmp_path: Path) -> None:
    store = write_cf_dataset(tmp_path / "cf.zarr", 2, consolidated=False)
    arr = zl.open(store)["t2m"]
    state = initial_state(arr).with_(cf=read_cf(arr))  # type: ignore[arg-type]
    decoded = xr.open_zarr(store, consolidated=False)["t2m"].values
    raw = zarr.open_array(store / "t2m")[...]
    box = Block(1, 5, 2, 7)
    got = _run(stats.request(state, box, limit=4))
    want = _truth_stats(decoded[1:5, 2:7], raw[1:5, 2:7], [-32767])
    _assert_stats(got, want, rtol=1e-9)
    assert got.value_unit == "K" and ("mean", f"{want['mean']:.6g} K") in stats.rows_of(got)


def test_a_cancelled_read_stops_between_blocks(tmp_path: Path) -> None:
    state = _state(tmp_path / "a", np.ones((40, 40), "f4"), (10, 10))
    token = CancelToken()
    token.cancel()
    with pytest.raises(zl.ReadCancelled):
        _run(stats.request(state, Block(0, 40, 0, 40), limit=100), token)


def test_a_profile_of_a_projected_grid_runs_in_metres_and_decoded_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    temps = np.round(rng.uniform(270.0, 300.0, (20, 30)), 2)
    ds = xr.Dataset({"t": (("y", "x"), temps, {"units": "K"}),
                     "g": (("lat", "lon"), temps, {"units": "K"})},
                    coords={"y": ("y", 5000.0 - 30.0 * np.arange(20), {"units": "m"}),
                            "x": ("x", 100.0 + 30.0 * np.arange(30), {"units": "m"}),
                            "lat": ("lat", np.linspace(40, 45, 20), {"units": "degrees_north"}),
                            "lon": ("lon", np.linspace(0, 8, 30), {"units": "degrees_east"})})
    ds.to_zarr(tmp_path / "p.zarr", encoding={"t": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 285.0}},
               zarr_format=2, consolidated=False)
    decoded = xr.open_zarr(tmp_path / "p.zarr", consolidated=False)["t"].values
    root = zl.open(tmp_path / "p.zarr")
    state = initial_state(root["t"]).with_(cf=read_cf(root["t"]))  # type: ignore[arg-type]
    line = ((3.5, 2.5), (15.5, 18.5))  # 12 rows and 16 columns of 30 m: 600 m
    got = _run(profile.request(state, line))
    np.testing.assert_allclose(got.values, _truth_profile(decoded, line), rtol=1e-12)
    assert got.distance_unit == "m" and got.distance[-1] == pytest.approx(600.0) and got.value_unit == "K"
    geo = initial_state(root["g"]).with_(cf=read_cf(root["g"]))  # type: ignore[arg-type]
    assert _run(profile.request(geo, line)).distance_unit == "pixels"  # degrees north and east are no one unit


def test_each_channel_of_a_picture_has_numpys_statistics_and_all_of_them_together(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    data = np.stack([rng.integers(0, 40, (45, 52)), rng.integers(100, 256, (45, 52)),
                     rng.integers(60, 61, (45, 52))], axis=-1).astype("u1")
    data[::6, ::5, 0] = 3  # the fill value, in the red channel only
    state = _state(tmp_path / "a", data, (16, 16, 3), fill_value=3)
    assert state.channel_dim == 2
    box = Block(4, 41, 2, 50)
    got = _run(stats.request(state, box, limit=400))
    part = data[4:41, 2:50]
    assert [c.name for c in got.by_channel] == ["red", "green", "blue"]
    for k, channel in enumerate(got.by_channel):
        want = _truth_stats(part[..., k], part[..., k], [3])
        assert (channel.minimum, channel.maximum, channel.nan, channel.fill) == (want["min"], want["max"], 0, want["fill"])
        assert channel.mean == pytest.approx(want["mean"], rel=1e-12) and channel.std == pytest.approx(want["std"], rel=1e-9)
        assert channel.count == part[..., k].size
    _assert_stats(got, _truth_stats(part, part, [3]))  # the three together, merged from each one's totals
    assert got.count == part.size and got.channels == 3
    table = dict(stats.channel_rows(got))
    assert table["max"] == (str(part[..., 0].max()), str(part[..., 1].max()), "60", str(part.max()))
    assert table["std"][2] == "0"


def test_each_channel_of_a_composite_is_named_by_its_label_and_counts_its_own_nan(tmp_path: Path) -> None:
    pytest.importorskip("ome_zarr")
    from ome_stores import ome_zarr_image

    from zarrview.viewing.ome import OmeImage, detect
    from zarrview.viewing.ome.view import image_state

    rng = np.random.default_rng(10)
    data = rng.normal(100.0, 30.0, (2, 30, 34)).astype("f4")
    data[1, :4, :6] = np.nan
    ome_zarr_image(tmp_path / "img.zarr", "0.5", data, "cyx", scale_factors=(), chunks=(1, 16, 16))
    img = detect(zl.open(str(tmp_path / "img.zarr")))
    assert isinstance(img, OmeImage)
    state = image_state(img)
    assert state is not None and state.composite
    got = _run(stats.request(state, Block(0, 30, 0, 34), limit=200))
    labels = [c.label for c in sorted(state.channels, key=lambda c: c.index)]
    assert [c.name for c in got.by_channel] == labels
    for k, channel in enumerate(got.by_channel):
        plane = data[k].astype("f8")
        assert channel.nan == int(np.isnan(plane).sum()) and channel.count == int(np.isfinite(plane).sum())
        assert channel.mean == pytest.approx(np.nanmean(plane), rel=1e-9)
        assert channel.std == pytest.approx(np.nanstd(plane), rel=1e-9)
        assert channel.minimum == pytest.approx(np.nanmin(plane)) and channel.maximum == pytest.approx(np.nanmax(plane))
    assert got.nan == 24 and got.mean == pytest.approx(np.nanmean(data.astype("f8")), rel=1e-9)
