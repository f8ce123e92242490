"""Automatic levels from the values on screen, without Qt: the tiles cut to the region in view
give numpy's 0.5 and 99.5 percentiles of that very part of the data, and with ``auto_per_plane``
every new plane takes its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing import Tile, ViewState, initial_state
from zarrview.viewing.image.contrast import PERCENTILES
from zarrview.viewing.image.visible import visible_levels, visible_tile, visible_values

from view_harness import Harness

#: a plane whose left half is dim and right half bright, with a few NaN: any sub-area's
#: percentiles differ from the whole plane's
PLANE = np.concatenate([np.linspace(0, 10, 60 * 40).reshape(60, 40),
                        np.linspace(500, 1000, 60 * 40).reshape(60, 40)], axis=1)
PLANE[3, 5] = PLANE[50, 70] = np.nan


def _tile(values: np.ndarray, r0: float = 0, c0: float = 0, step: float = 1) -> Tile:
    return Tile(values, values, r0, c0, step, step, ("plane",))


def _levels(tiles: list[Tile], region: tuple[float, float, float, float] | None) -> tuple[float, float]:
    levels = visible_levels(tiles, region, PLANE.shape)
    assert levels is not None
    return levels


def _values(tiles: list[Tile], region: tuple[float, float, float, float]) -> tuple[Tile, np.ndarray]:
    found = visible_values(tiles, region, PLANE.shape)
    assert found is not None
    return found


def _state(h: Harness) -> ViewState:
    assert h.ctl.state is not None
    return h.ctl.state


def _rule(values: np.ndarray) -> np.ndarray:
    flat = values[np.isfinite(values)]
    return np.percentile(flat, PERCENTILES)


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.close()


def test_the_region_in_view_sets_the_levels_not_the_whole_plane() -> None:
    whole = _tile(PLANE)
    region = (10.0, 40.0, 5.0, 30.0)  # rows 10:40, columns 5:30: the dim half only
    levels = _levels([whole], region)
    np.testing.assert_allclose(levels, _rule(PLANE[10:40, 5:30]), rtol=1e-12)
    assert not np.allclose(levels, _rule(PLANE))
    # an element partly on screen counts: rows 10.5 to 20.2 show rows 10 to 20
    np.testing.assert_allclose(_levels([whole], (10.5, 20.2, 35.5, 44.9)),
                               _rule(PLANE[10:21, 35:45]), rtol=1e-12)
    # zoomed out past the plane's edges, or no region known yet: the whole plane
    for wide in ((-30.0, 90.0, -40.0, 120.0), None):
        np.testing.assert_allclose(_levels([whole], wide), _rule(PLANE), rtol=1e-12)


def test_the_finest_tile_covering_the_view_is_cut_else_the_preview() -> None:
    preview = _tile(PLANE[::4, ::4], step=4)
    detail = _tile(PLANE[8:48, 20:60], r0=8, c0=20)  # the full-resolution region read for an earlier zoom
    region = (16.0, 32.0, 24.0, 56.0)
    tile, values = _values([preview, detail], region)
    assert tile is detail
    np.testing.assert_array_equal(values, PLANE[16:32, 24:56])
    # panned past the detail: the preview covers the view, sampled every 4 elements
    panned = (0.0, 24.0, 0.0, 40.0)
    tile, values = _values([preview, detail], panned)
    assert tile is preview
    np.testing.assert_array_equal(values, PLANE[0:24:4, 0:40:4])
    np.testing.assert_allclose(_levels([preview, detail], panned), _rule(PLANE[0:24:4, 0:40:4]))
    # neither covers it (a preview of another area): the tile showing most of it
    most = visible_tile([_tile(PLANE[0:10, 0:10]), _tile(PLANE[0:30, 0:30])], (5.0, 40.0, 5.0, 40.0), PLANE.shape)
    assert most is not None and most.r1 == 30
    assert visible_levels([], region, PLANE.shape) is None


def _stack(tmp_path: Path, planes: np.ndarray) -> zl.Array:
    zarr.create_array(tmp_path / "a", shape=planes.shape, chunks=(1, 32, 32), dtype=planes.dtype)[...] = planes
    arr = zl.open(tmp_path / "a")
    assert isinstance(arr, zl.Array)
    return arr


def test_auto_contrast_of_a_zoomed_view_reads_nothing_and_takes_the_region(tmp_path: Path, h: Harness) -> None:
    arr = _stack(tmp_path, PLANE[None].astype("f4"))
    scene = h.show(initial_state(arr))
    np.testing.assert_allclose(scene.levels, _rule(PLANE.astype("f4")), rtol=1e-6)
    h.show(_state(h).with_(region=(20.0, 50.0, 50.0, 75.0), screen_scale=(10.0, 10.0)))
    h.auto_contrast()
    np.testing.assert_allclose(h.ctl.scene.levels, _rule(PLANE.astype("f4")[20:50, 50:75]), rtol=1e-6)
    assert h.driver.requests == 1  # the loaded plane covers the zoom: nothing read again


def test_auto_per_plane_takes_each_new_planes_levels(tmp_path: Path, h: Harness) -> None:
    planes = np.stack([PLANE, PLANE * 1000 + 5e6, PLANE / 100]).astype("f4")
    arr = _stack(tmp_path, planes)
    state = initial_state(arr)
    first = _rule(planes[0])
    np.testing.assert_allclose(h.show(state).levels, first, rtol=1e-6)
    # off (the default): another plane keeps the levels
    np.testing.assert_allclose(h.show(state.with_(indices=(1, 0, 0))).levels, first, rtol=1e-6)
    # turned on: the plane shown takes its own at once, and each plane stepped to its own
    state = _state(h).with_(auto_per_plane=True)
    np.testing.assert_allclose(h.show(state).levels, _rule(planes[1]), rtol=1e-6)
    np.testing.assert_allclose(h.show(state.with_(indices=(2, 0, 0))).levels, _rule(planes[2]), rtol=1e-6)
    # levels typed for a plane stay for it, and give way to the next plane's own
    state = _state(h).with_(contrast=(0.0, 1.0))
    assert h.show(state).levels == (0.0, 1.0)
    scene = h.show(state.with_(indices=(0, 0, 0), region=(0.0, 30.0, 0.0, 30.0)))
    np.testing.assert_allclose(scene.levels, _rule(planes[0][0:30, 0:30]), rtol=1e-6)  # the region in view
    assert _state(h).contrast is None


def test_auto_per_plane_takes_them_again_at_full_resolution(tmp_path: Path) -> None:
    big = np.random.default_rng(3).normal(0, 1, (2, 256, 256)).astype("f4")
    big[1] = big[1] * 50 + 1000
    arr = _stack(tmp_path, big)
    h = Harness(budget=4)  # a preview first: the plane has 64 chunks
    try:
        state = initial_state(arr).with_(auto_per_plane=True, region=(0.0, 256.0, 0.0, 256.0), screen_scale=(1.0, 1.0))
        scene = h.show(state.with_(indices=(1, 0, 0)))
        assert scene.coarse is not None and scene.detail is None
        np.testing.assert_allclose(scene.levels, _rule(scene.coarse.image), rtol=1e-6)  # the preview's
        zoom = (64.0, 96.0, 32.0, 64.0)  # one chunk: read at full resolution
        scene = h.show(_state(h).with_(region=zoom, screen_scale=(8.0, 8.0)))
        assert scene.detail is not None and scene.detail.full_resolution
        np.testing.assert_allclose(scene.levels, _rule(big[1, 64:96, 32:64]), rtol=1e-6)
        # on the same plane a later pan keeps them
        scene = h.show(_state(h).with_(region=(96.0, 128.0, 32.0, 64.0)))
        np.testing.assert_allclose(scene.levels, _rule(big[1, 64:96, 32:64]), rtol=1e-6)
    finally:
        h.close()
