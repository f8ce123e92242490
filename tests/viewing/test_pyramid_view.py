"""Pyramids in the view model: the level is chosen by zoom, the coarsest is drawn first, only the
chosen level's visible chunks are read, and every level's tiles lie exactly over level 0.

Levels are written with zarr-python from numpy block means (the truth) and described by hand as
``ome.model.Level`` values with ome-zarr-py's convention (``physical = scale * i + translation``
is the centre of pixel ``i``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing import initial_state
from zarrview.viewing.ome.model import Level
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore
from view_harness import Harness, halving_levels

N = 2048


def _mean(data: np.ndarray, f: int) -> np.ndarray:
    z, h, w = data.shape
    return data.reshape(z, h // f, f, w // f, f).mean(axis=(2, 4)).astype(data.dtype)


@pytest.fixture(scope="module")
def pyramid(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[np.ndarray]]:
    root = tmp_path_factory.mktemp("pyr") / "img.zarr"
    rng = np.random.default_rng(3)
    base = rng.integers(0, 60000, (2, N, N), dtype="u2")
    data = [base, _mean(base, 2), _mean(base, 4), _mean(base, 8)]
    group = zarr.open_group(root, mode="w")
    for k, d in enumerate(data):
        group.create_array(str(k), shape=d.shape, chunks=(1, 256, 256), dtype="u2")[...] = d
    return root, data


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness(budget=16)  # level 0 (64 chunks a plane) is never read whole
    yield harness
    harness.close()


def _levels_read(store: CountingStore) -> set[str]:
    return {k.split("/")[0] for k in store.chunk_keys()}


def test_a_zoomed_out_view_reads_only_the_coarsest_adequate_level(pyramid, h: Harness) -> None:  # type: ignore[no-untyped-def]
    root, data = pyramid
    store = CountingStore(LocalStore(root))
    levels = halving_levels(store, 4)
    store.reset()
    # the whole 2048^2 plane in a 300-pixel view: one screen pixel is 6.8 level-0 pixels
    state = initial_state(levels[0].array, {0: 1}, pyramid=levels).with_(region=(0, N, 0, N),
                                                                          screen_scale=(300 / N, 300 / N))
    scene = h.show(state)
    # factor 4 is as fine as the screen (8 is coarser), after the coarsest level, drawn first
    assert _levels_read(store) == {"2", "3"} and store.chunk_keys()[0].startswith("3/")
    assert [t.level for t in (s.coarse for s in h.scenes) if t is not None][:1] == [3]
    tile = scene.detail
    assert tile is not None and tile.level == 2
    assert (tile.r0, tile.c0, tile.step_r, tile.step_c) == (0, 0, 4, 4) and (tile.r1, tile.c1) == (N, N)
    np.testing.assert_array_equal(tile.values, data[2][1])


def test_the_whole_plane_zoomed_far_out_reads_only_the_coarsest_level(pyramid, h: Harness) -> None:  # type: ignore[no-untyped-def]
    root, data = pyramid
    store = CountingStore(LocalStore(root))
    levels = halving_levels(store, 4)
    store.reset()
    state = initial_state(levels[0].array, pyramid=levels).with_(region=(0, N, 0, N), screen_scale=(0.1, 0.1))
    scene = h.show(state)
    assert _levels_read(store) == {"3"} and h.driver.requests == 1
    np.testing.assert_array_equal(scene.detail.values, data[3][0])  # type: ignore[union-attr]


def test_a_level_over_the_budget_gives_way_to_the_finest_coarser_level_that_fits(pyramid, h: Harness) -> None:  # type: ignore[no-untyped-def]
    """The whole plane at a zoom that asks for level 0 (64 chunks in view, over the 16 of the
    budget): level 1, whose 16 chunks fit, is read whole as the detail, not a preview of level 0
    (one pixel of each of 16 chunks)."""
    root, data = pyramid
    store = CountingStore(LocalStore(root))
    levels = halving_levels(store, 4)
    store.reset()
    state = initial_state(levels[0].array, pyramid=levels).with_(region=(0, N, 0, N), screen_scale=(0.9, 0.9))
    scene = h.show(state)
    tile = scene.detail
    assert tile is not None and tile.level == 1 and (tile.step_r, tile.step_c) == (2, 2)
    assert (tile.r0, tile.c0, tile.r1, tile.c1) == (0, 0, N, N)
    np.testing.assert_array_equal(tile.values, data[1][0])
    assert _levels_read(store) == {"1", "3"}  # the coarsest first, then level 1; nothing of level 0
    assert h.ctl.needed(state) is None  # and that is the view: no preview of level 0 follows


def test_zoomed_into_a_corner_reads_only_the_level_0_chunks_in_view(pyramid, h: Harness) -> None:  # type: ignore[no-untyped-def]
    root, data = pyramid
    store = CountingStore(LocalStore(root))
    levels = halving_levels(store, 4)
    state = initial_state(levels[0].array, pyramid=levels).with_(region=(0, N, 0, N), screen_scale=(0.1, 0.1))
    assert h.show(state).detail is not None  # the whole plane, from the coarsest level
    store.reset()
    scene = h.show(state.with_(region=(10, 400, 20, 500), screen_scale=(1.5, 1.5)))
    keys = store.chunk_keys()
    assert keys and {k.split("/")[0] for k in keys} == {"0"}
    assert {tuple(int(v) for v in k.split("/")[3:]) for k in keys} == {(r, c) for r in range(2) for c in range(2)}
    tile = scene.detail
    assert tile is not None and tile.full_resolution and tile.covers(10, 400, 20, 500)
    np.testing.assert_array_equal(tile.values, data[0][0, tile.r0:tile.r1, tile.c0:tile.c1])
    assert scene.coarse is not None and scene.coarse.level == 3  # the earlier level-3 view stays beneath
    assert h.ctl.readout(123, 456) == f"dim 1 123, dim 2 456 (dim 0 0): {data[0][0, 123, 456]}"


def test_opened_in_a_corner_draws_the_coarsest_level_first(pyramid, h: Harness) -> None:  # type: ignore[no-untyped-def]
    root, data = pyramid
    store = CountingStore(LocalStore(root))
    levels = halving_levels(store, 4)
    store.reset()
    state = initial_state(levels[0].array, pyramid=levels).with_(region=(1000, 1200, 1000, 1300), screen_scale=(1, 1))
    scene = h.show(state)
    assert [s.coarse.level for s in h.scenes if s.coarse is not None][:1] == [3]
    assert scene.detail is not None and scene.detail.level == 0
    assert [k.split("/")[0] for k in store.chunk_keys()][0] == "3"  # the coarsest level's chunks came first
    value, exact = scene.value_at(1100, 1100)  # type: ignore[misc]
    assert exact and value == data[0][0, 1100, 1100]


def test_levels_with_other_factors_and_translations_lie_over_level_0(tmp_path: Path, h: Harness) -> None:
    base = np.arange(90 * 90, dtype="f4").reshape(1, 90, 90)
    coarse = base.reshape(1, 30, 3, 30, 3).mean(axis=(2, 4)).astype("f4")  # factor 3
    zarr.create_array(tmp_path / "l0", shape=base.shape, chunks=(1, 30, 30), dtype="f4")[...] = base
    zarr.create_array(tmp_path / "l1", shape=coarse.shape, chunks=(1, 30, 30), dtype="f4")[...] = coarse
    l0, l1 = zl.open(tmp_path / "l0"), zl.open(tmp_path / "l1")
    # level 1's pixel centres sit 1 level-0 pixel in from its edges: translation 1 (pixel-centre convention)
    levels = (Level(0, "l0", l0, (1.0, 0.5, 0.5), (0.0, 0.0, 0.0), l0.shape),
              Level(1, "l1", l1, (1.0, 1.5, 1.5), (0.0, 0.5, 0.5), l1.shape))
    state = initial_state(l0, pyramid=levels).with_(region=(0, 90, 0, 90), screen_scale=(1 / 3, 1 / 3))
    tile = h.show(state).detail
    assert tile is not None and tile.level == 1 and (tile.r0, tile.c0, tile.step_r, tile.step_c) == (0, 0, 3, 3)
    for r, c in [(0, 0), (4, 7), (89, 89), (44, 3)]:
        assert tile.value_at(r, c) == coarse[0, r // 3, c // 3]  # each level-0 pixel under its block's mean
