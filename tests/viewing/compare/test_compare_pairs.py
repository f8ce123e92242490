"""B taken from A itself (viewing/compare/pairs.py): A at another index of a dimension, its stored
values against its decoded ones, another level of its pyramid. Each pair's plane and difference
are held to numpy on the values zarr-python and xarray read, and a level pair's matching to a
brute-force nearest search over the positions the OME transforms give each pixel."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr
import zarr
from compare_datasets import write
from ome_stores import hand_image, ome_zarr_image

from zarrview import zarrlib
from zarrview.scheduling import Context
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.compare import pairs
from zarrview.viewing.compare.difference import plane_job
from zarrview.viewing.compare.errors import CompareError
from zarrview.viewing.decision import decide
from zarrview.viewing.image.state import ViewState
from zarrview.zarrlib import CancelToken, ChunkCache


def _run(job: Any) -> Any:
    return job.work(Context(CancelToken(), ChunkCache(1 << 22)))


def _differ(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.sum(~((a == b) | (np.isnan(a) & np.isnan(b)))))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """(t, c, y, x) float32 values, zarr-python-written, with NaN in places."""
    rng = np.random.default_rng(7)
    values = rng.normal(10.0, 3.0, (3, 4, 20, 30)).astype("f4")
    values[1, 2, 5:8, 4:9] = np.nan
    path = tmp_path_factory.mktemp("pairs") / "stack.zarr"
    g = zarr.open_group(path, mode="w", zarr_format=3)
    g.create_array("v", shape=values.shape, chunks=(1, 1, 10, 15), dtype="f4", fill_value=0,
                   dimension_names=("t", "c", "y", "x"))[...] = values
    return path, values


def _state(path: Path, name: str, plane: dict[int, int] | None = None) -> ViewState:
    arr = zarrlib.open(str(path))[name]
    shown = decide(arr, plane or {}, read=False)
    assert shown.state is not None
    return shown.state.with_(cf=read_cf(arr))


def test_a_offers_each_dimension_it_does_not_show(stack: tuple[Path, np.ndarray]) -> None:
    a = _state(stack[0], "v")
    offered = pairs.choices(a)
    assert [c.name for c in offered] == ["tree", "index:0", "index:1"]  # no CF coding, no pyramid
    assert [c.count for c in offered[1:]] == [3, 4]
    assert offered[2].label == "A at another c"


def test_another_channel_is_held_while_b_follows_a_elsewhere(stack: tuple[Path, np.ndarray]) -> None:
    path, values = stack
    a = _state(path, "v", {0: 1, 1: 0})
    against = pairs.chosen(a, "index:1")
    b = pairs.b_state(a, against, pairs.default_at(a, against))
    assert b.indices[:2] == (1, 1)  # the next channel after A's
    a = a.with_(indices=(2, 0, 0, 0))  # A's slider moves along t: B follows t, keeps its channel
    match = pairs.plane_pair(a, b, against)
    assert match.indices[:2] == (2, 1) and match.matched
    assert "held" in match.text
    b = b.with_(indices=match.indices)
    diff = _run(plane_job(a, b, match, "a-b"))
    want = values[2, 0].astype(np.float64) - values[2, 1].astype(np.float64)
    np.testing.assert_array_equal(diff.values, want)
    assert diff.stats.differ == _differ(values[2, 0], values[2, 1])
    assert diff.stats.max_abs == pytest.approx(float(np.nanmax(np.abs(want))))


def test_stored_against_decoded_is_xarrays_decoding_minus_the_stored_integers(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    t = (280 + rng.normal(0, 5, (2, 12, 16))).astype("f8")
    t[0, 3, 4] = np.nan
    ds = xr.Dataset({"t": (("time", "lat", "lon"), t)},
                    coords={"time": [0, 1], "lat": np.linspace(-5, 5, 12), "lon": np.linspace(0, 15, 16)})
    path = write(ds, tmp_path / "packed.zarr",
                 t={"dtype": "int16", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32768})
    a = _state(path, "t", {0: 0})
    offered = {c.name: c for c in pairs.choices(a)}
    assert offered["stored"].label == "A's stored values"
    b = pairs.b_state(a, offered["stored"], 0)
    assert b.raw and not a.raw
    match = pairs.plane_pair(a, b, offered["stored"])
    diff = _run(plane_job(a, b, match, "a-b"))
    decoded = xr.open_zarr(path, consolidated=False)["t"].isel(time=0).values
    stored = xr.open_zarr(path, consolidated=False, mask_and_scale=False)["t"].isel(time=0).values
    np.testing.assert_allclose(diff.values, decoded - stored.astype(np.float64), rtol=0, atol=1e-9)
    assert np.isnan(diff.values[3, 4])  # masked in A, the fill value in B
    assert "stored values · A: decoded" in pairs.describe(a, offered["stored"], b)
    shown_raw = a.with_(raw=True)
    assert {c.name: c.label for c in pairs.choices(shown_raw)}["stored"] == "A's decoded values"


def _nearest(p_from: np.ndarray, p_to: np.ndarray) -> np.ndarray:
    """For each position of ``p_from``, the index of ``p_to`` nearest it (the first of two as near), by brute force."""
    return np.argmin(np.abs(p_to[None, :] - p_from[:, None]), axis=1)


def _path(attrs: dict[str, Any], level: int) -> str:
    return str(attrs.get("ome", attrs)["multiscales"][0]["datasets"][level]["path"])


def _positions(attrs: dict[str, Any], level: int, axis: int, n: int) -> np.ndarray:
    ms = attrs.get("ome", attrs)["multiscales"][0]
    scale, shift = [0.0] * 5, [0.0] * 5
    for t in ms["datasets"][level]["coordinateTransformations"]:
        if t["type"] == "scale":
            scale = t["scale"]
        elif t["type"] == "translation":
            shift = t["translation"]
    return scale[axis] * np.arange(n) + shift[axis]


@pytest.mark.parametrize("a_level", [None, 1])
def test_two_levels_are_compared_by_position(tmp_path: Path, a_level: int | None) -> None:
    """Level 0 (or A's picked level 1) against level 2 of a pyramid with factor 3 and shifts."""
    path = hand_image(tmp_path / "img.zarr", "0.5", [((4, 27, 36), (2.0, 0.5, 0.5), None),
                                                     ((4, 9, 12), (2.0, 1.5, 1.5), (0.0, 0.5, 0.5)),
                                                     ((4, 3, 4), (2.0, 4.5, 4.5), (0.0, 2.0, 2.0))],
                      axes="zyx", dtype="float32")
    g = zarr.open_group(path, mode="r")
    levels = [np.asarray(g[str(k)][...], dtype=np.float64) for k in range(3)]
    shown = decide(zarrlib.open(str(path)), {0: 2})
    assert shown.state is not None
    a = shown.state.with_(level=a_level)
    offered = {c.name: c for c in pairs.choices(a)}
    assert offered["level"].count == 3
    b = pairs.b_state(a, offered["level"], 2)
    assert b.level == 2 and b.array is a.array  # drawn in level-0 space: side by side by position
    job = pairs.level_difference_job(a, b, "a-b")
    diff = _run(job)
    attrs = dict(g.attrs)
    la = a_level or 0
    mine = levels[la][2]
    rows = _nearest(_positions(attrs, la, 1, mine.shape[0]), _positions(attrs, 2, 1, 3))
    cols = _nearest(_positions(attrs, la, 2, mine.shape[1]), _positions(attrs, 2, 2, 4))
    want = mine - levels[2][2][np.ix_(rows, cols)]
    if la:  # drawn back in level-0 space: each level-0 pixel takes A's level's pixel nearest it
        back_r = _nearest(_positions(attrs, 0, 1, 27), _positions(attrs, la, 1, 9))
        back_c = _nearest(_positions(attrs, 0, 2, 36), _positions(attrs, la, 2, 12))
        drawn = want[np.ix_(back_r, back_c)]
    else:
        drawn = want
    assert diff.values.shape == (27, 36)
    np.testing.assert_array_equal(diff.values, drawn)
    assert diff.stats.count == want.size and diff.stats.differ == _differ(mine, levels[2][2][np.ix_(rows, cols)])
    assert diff.stats.rms == pytest.approx(float(np.sqrt(np.mean(want ** 2))))


def test_levels_written_by_ome_zarr_py(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    data = rng.integers(0, 1000, (2, 64, 48)).astype("uint16")
    path = ome_zarr_image(tmp_path / "o.zarr", "0.4", data, "cyx", scale_factors=(2, 4), chunks=(1, 32, 32))
    g = zarr.open_group(path, mode="r")
    shown = decide(zarrlib.open(str(path)), {0: 1})
    assert shown.state is not None
    a = shown.state
    against = pairs.chosen(a, "level")
    b = pairs.b_state(a, against, 1)
    job = pairs.level_difference_job(a, b, "a-b")
    diff = _run(job)
    attrs = dict(g.attrs)
    l0, l1 = (np.asarray(g[_path(attrs, k)][1], dtype=np.float64) for k in range(2))
    rows = _nearest(_positions(attrs, 0, 1, 64), _positions(attrs, 1, 1, l1.shape[0]))
    cols = _nearest(_positions(attrs, 0, 2, 48), _positions(attrs, 1, 2, l1.shape[1]))
    np.testing.assert_array_equal(diff.values, l0 - l1[np.ix_(rows, cols)])


def test_specs_round_trip_and_bad_ones_are_named() -> None:
    for text, parsed in (("stored", ("stored", None)), ("level@2", ("level", 2)), ("index:1@5", ("index:1", 5))):
        assert pairs.parse_spec(text) == parsed
    assert pairs.spec(pairs.Against(pairs.INDEX, "", 1, 6), 5) == "index:1@5"
    assert pairs.spec(pairs.Against(pairs.LEVEL, ""), 2) == "level@2"
    for bad in ("level", "index:x@1", "tree", "stored@1", ""):
        with pytest.raises(CompareError, match="not a way to take B"):
            pairs.parse_spec(bad)


def test_a_view_that_no_longer_offers_the_pair_is_not_derived(stack: tuple[Path, np.ndarray]) -> None:
    a = _state(stack[0], "v")
    against = pairs.chosen(a, "index:0")
    b = pairs.b_state(a, against, 2)
    assert pairs.still_derived(a, against, b)
    swapped = a.with_(y_dim=0, x_dim=3, indices=(0, 0, 0, 0))  # t is displayed now: nothing to hold
    assert not pairs.still_derived(swapped, against, b)
    assert pairs.chosen(swapped, "index:0") is pairs.PICKED


def test_a_saved_view_keeps_how_b_is_taken_and_names_a_bad_one() -> None:
    import argparse

    from zarrview.viewing.saved_views import (SavedView, ViewFileError, ViewLook, add_look_arguments, flags,
                                              from_json, saved_from_arguments, to_json)

    saved = SavedView(ViewLook("/data/s.zarr", "/v"), compare_mode="a-b", compare_against="index:1@3")
    assert from_json(to_json(saved)) == saved
    p = argparse.ArgumentParser()
    p.add_argument("location")
    add_look_arguments(p)
    assert saved_from_arguments(p.parse_args(flags(saved))) == saved
    with pytest.raises(ViewFileError, match="compare: 'level@x' is not a way to take B"):
        from_json(to_json(saved).replace("index:1@3", "level@x"), "v.zarrview")
    with pytest.raises(ViewFileError, match="--compare and --compare-against"):
        saved_from_arguments(p.parse_args(["/a", "--compare", "/b", "--compare-against", "stored"]))
    with pytest.raises(ViewFileError, match="--compare-mode goes with"):
        saved_from_arguments(p.parse_args(["/a", "--compare-mode", "a-b"]))


def test_whole_array_against_itself_at_another_channel(tmp_path: Path, stack: tuple[Path, np.ndarray]) -> None:
    """Every t of channel 0 against channel 2; a chunk of channel 2 that cannot be read leaves
    its place out, counted where A's box is."""
    from zarrview.viewing.compare.whole import whole_job

    path, values = stack
    a = _state(path, "v", {0: 0, 1: 0})
    against = pairs.chosen(a, "index:1")
    b = pairs.b_state(a, against, 2)
    stats = _run(whole_job(a.array, b.array, "a-b", **pairs.whole_options(a, against, b)))
    a64, b64 = values[:, 0].astype(np.float64), values[:, 2].astype(np.float64)
    want = a64 - b64
    assert stats.count == want.size and stats.differ == _differ(a64, b64)
    assert stats.max_abs == pytest.approx(float(np.nanmax(np.abs(want))))
    assert stats.rms == pytest.approx(float(np.sqrt(np.nanmean(want ** 2))))
    assert stats.where is not None and stats.where[1] == 0  # a place of A

    broken = tmp_path / "broken.zarr"
    shutil.copytree(path, broken)
    (broken / "v" / "c" / "1" / "2" / "0" / "1").write_bytes(b"not float32 bytes")  # t=1, c=2, rows 0:10, cols 15:30
    a = _state(broken, "v", {0: 0, 1: 0})
    b = pairs.b_state(a, against, 2)
    stats = _run(whole_job(a.array, b.array, "a-b", **pairs.whole_options(a, against, b)))
    keep = np.ones(a64.shape, dtype=bool)
    keep[1, 0:10, 15:30] = False
    assert stats.unread == 150 and stats.count == want.size - 150
    assert stats.differ == _differ(a64[keep], b64[keep])


def test_whole_array_decoded_against_stored(tmp_path: Path) -> None:
    from zarrview.viewing.compare.whole import whole_job

    rng = np.random.default_rng(4)
    t = (280 + rng.normal(0, 5, (3, 8, 10))).astype("f8")
    ds = xr.Dataset({"t": (("time", "lat", "lon"), t)})
    path = write(ds, tmp_path / "packed.zarr", t={"dtype": "int16", "scale_factor": 0.01, "add_offset": 280.0})
    a = _state(path, "t")
    against = pairs.chosen(a, "stored")
    b = pairs.b_state(a, against, 0)
    stats = _run(whole_job(a.array, b.array, "a-b", decoded=a.decoding is not None, a_cf=a.cf, b_cf=b.cf,
                           **pairs.whole_options(a, against, b)))
    decoded = xr.open_zarr(path, consolidated=False)["t"].values
    stored = xr.open_zarr(path, consolidated=False, mask_and_scale=False)["t"].values.astype(np.float64)
    assert stats.rms == pytest.approx(float(np.sqrt(np.mean((decoded - stored) ** 2))))
    assert stats.count == decoded.size


def test_the_title_names_a_held_time_by_its_date(tmp_path: Path) -> None:
    from compare_datasets import daily_a

    path = daily_a(tmp_path / "a.zarr")
    a = _state(path, "t", {0: 1})
    against = pairs.chosen(a, "index:0")
    b = pairs.b_state(a, against, 3)
    times = xr.open_zarr(path, consolidated=False)["time"].values
    title = pairs.describe(a, against, b)
    assert f"at time {str(times[3])[:10]}" in title and f"A: time {str(times[1])[:10]}" in title, title
    assert title.count("[3]") == 1 and title.count("[1]") == 1
