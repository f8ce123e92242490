"""Views of arrays on rectilinear chunk grids written by zarr-python 3.4.2: planes at full
resolution and as previews, lines, checked against zarr-python's own read of each array; a
preview stays within the chunk budget although the chunks differ in size."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.viewing import initial_state
from zarrview.zarrlib.storage.local import LocalStore
from rectilinear_arrays import write_arrays
from store_wrappers import CountingStore
from test_line import LineHarness
from view_harness import Harness, halving_levels

Written = tuple[Path, dict[str, Any]]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Written:
    root = tmp_path_factory.mktemp("rectilinear-views")
    return root, write_arrays(root)


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness(budget=1024)  # more than the 646 chunks of the largest plane
    yield harness
    harness.close()


@pytest.mark.parametrize("name", ["runs", "plane_mixed", "sharded", "sharded_edge", "transposed"])
def test_a_plane_at_full_resolution(written: Written, h: Harness, name: str) -> None:
    root, _ = written
    want = np.load(root / f"{name}.npy")
    scene = h.show(initial_state(zl.open(root / f"{name}.zarr")))  # type: ignore[arg-type]
    tile = scene.detail
    assert scene.message is None and tile is not None and tile.full_resolution
    assert (tile.r0, tile.c0) == (0, 0)
    np.testing.assert_array_equal(tile.values, want)


def test_a_plane_of_a_cube(written: Written, h: Harness) -> None:
    root, _ = written
    want = np.load(root / "cube.npy")
    scene = h.show(initial_state(zl.open(root / "cube.zarr"), {0: 4}))  # type: ignore[arg-type]
    assert scene.detail is not None
    np.testing.assert_array_equal(scene.detail.values, want[4])


def test_a_preview_keeps_to_the_budget(written: Written) -> None:
    """The runs array has 34 x 19 chunks of 1 to 40 elements: with a budget of 20 the view
    previews, and reads no more chunks than the budget."""
    root, manifest = written
    want = np.load(root / "runs.npy")
    store = CountingStore(LocalStore(root / "runs.zarr"))
    h = Harness(budget=20)
    try:
        scene = h.show(initial_state(zl.open(store)))  # type: ignore[arg-type]
        tile = scene.coarse or scene.detail
        assert tile is not None and not tile.full_resolution
        r0, c0, sr, sc = int(tile.r0), int(tile.c0), int(tile.step_r), int(tile.step_c)
        rows, cols = tile.values.shape
        np.testing.assert_array_equal(tile.values, want[r0:r0 + rows * sr:sr, c0:c0 + cols * sc:sc])
        assert rows * sr >= want.shape[0] - sr and cols * sc >= want.shape[1] - sc  # the whole plane
        assert 0 < len(set(store.chunk_keys())) <= 20
        assert len(store.chunk_keys()) == len(set(store.chunk_keys()))
    finally:
        h.close()
    assert len(manifest["runs"]["read"][0]) * len(manifest["runs"]["read"][1]) == 34 * 19


def test_a_line_reads_as_zarr_python(written: Written) -> None:
    root, _ = written
    for name in ("line", "line_overflow", "grown", "sharded_gzip"):
        want = np.load(root / f"{name}.npy")
        lh = LineHarness()
        try:
            lh.model.columns = 1000
            lh.show(zl.open(root / f"{name}.zarr"))
            plot = lh.settle()
            assert not plot.envelope and plot.y is not None, name
            np.testing.assert_array_equal(plot.y, want.astype(plot.y.dtype), err_msg=name)
        finally:
            lh.close()


def test_a_pyramid_of_rectilinear_levels(written: Written) -> None:
    """Zoomed out, only the coarse levels are read; zoomed into a corner, level 0's chunks that
    hold the tile read, and no other: the chunks zarr-python's grid puts under it."""
    root, _ = written
    data = [np.load(root / f"pyramid_{k}.npy") for k in range(3)]
    store = CountingStore(LocalStore(root / "pyramid.zarr"))
    levels = halving_levels(store, 3)
    h = Harness(budget=16)
    try:
        store.reset()
        state = initial_state(levels[0].array, pyramid=levels).with_(region=(0, 512, 0, 768), screen_scale=(0.2, 0.2))
        scene = h.show(state)  # a screen pixel is 5 of level 0: level 2 (factor 4) is fine enough
        assert {k.split("/")[0] for k in store.chunk_keys()} == {"2"}
        assert scene.detail is not None and scene.detail.level == 2
        np.testing.assert_array_equal(scene.detail.values, data[2][0])
        store.reset()
        scene = h.show(state.with_(screen_scale=(0.3, 0.3)))  # 3.3 pixels: level 1, all 12 of its chunks
        assert scene.detail is not None and scene.detail.level == 1 and scene.detail.step_r == 2
        np.testing.assert_array_equal(scene.detail.values, data[1][0])
        assert sorted(store.chunk_keys()) == sorted(f"1/c/0/{r}/{c}" for r in range(6) for c in range(2))
        store.reset()
        scene = h.show(state.with_(region=(90, 170, 590, 650), screen_scale=(2.0, 2.0)))
        tile = scene.detail
        assert tile is not None and tile.level == 0 and tile.full_resolution and tile.covers(90, 170, 590, 650)
        np.testing.assert_array_equal(tile.values, data[0][0, int(tile.r0):int(tile.r1), int(tile.c0):int(tile.c1)])
        rows, cols = np.cumsum([0, 100, 156, 64, 64, 64, 64]), np.cumsum([0, 200, 200, 200, 168])
        want = {f"0/c/0/{r}/{c}" for r in range(6) for c in range(4)
                if rows[r] < tile.r1 and rows[r + 1] > tile.r0 and cols[c] < tile.c1 and cols[c + 1] > tile.c0}
        assert set(store.chunk_keys()) == want and len(store.chunk_keys()) == len(want)
    finally:
        h.close()
