"""Only what is visible is read: chunk counts planned against what the reader touches, and
requests counted at a loopback HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrview.zarrlib as zl
from zarrview.viewing import initial_state
from zarrview.viewing.image.planning import plan_view

from http_server import serve
from view_harness import Harness

BIG = 65536
REGION = (9000, 9512, 9000, 9768)  # 512 x 768: 3 x 4 chunks of 256 x 256


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """A 65536x65536 uint8 array (4 GiB declared) with only the chunks around REGION written."""
    root = tmp_path_factory.mktemp("big") / "big.zarr"
    a = zarr.create_array(root, shape=(BIG, BIG), chunks=(256, 256), dtype="u1", fill_value=0)
    block = np.random.default_rng(5).integers(1, 255, (1024, 1280), dtype="u1")
    a[8960:9984, 8960:10240] = block
    return root, block


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.close()


def test_a_region_of_a_huge_array_reads_only_its_chunks_over_http(big: tuple[Path, np.ndarray], h: Harness) -> None:
    root, block = big
    with serve(root.parent) as (url, log):
        arr = zl.open(f"{url}/{root.name}")
        log.clear()
        r0, r1, c0, c1 = REGION
        state = initial_state(arr).with_(region=(r0, r1, c0, c1), screen_scale=(1.0, 1.0))
        scene = h.show(state)
        chunk_gets = [r for r in log.requests("GET") if "/c/" in r[1]]
        assert 12 <= len(chunk_gets) <= 48, len(chunk_gets)
    tile = scene.detail
    assert tile is not None and tile.full_resolution and tile.covers(r0, r1, c0, c1)
    rows = slice(r0 - tile.r0, r1 - tile.r0)
    cols = slice(c0 - tile.c0, c1 - tile.c0)
    np.testing.assert_array_equal(tile.values[rows, cols], block[r0 - 8960:r1 - 8960, c0 - 8960:c1 - 8960])


def test_the_whole_huge_plane_stays_within_the_budget(big: tuple[Path, np.ndarray], h: Harness) -> None:
    root, block = big
    arr = zl.open(root)
    scene = h.show(initial_state(arr))
    tile = scene.coarse
    assert scene.detail is None and tile is not None and not tile.full_resolution
    assert tile.chunks <= h.ctl.budget
    # each sample is the element the preview says it is
    rows = np.arange(tile.r0, tile.r1, tile.step_r)
    cols = np.arange(tile.c0, tile.c1, tile.step_c)
    truth = zarr.open_array(root, mode="r")
    np.testing.assert_array_equal(tile.values, truth.get_orthogonal_selection((rows, cols)))


def test_zooming_in_reads_the_visible_region_at_full_resolution_over_the_preview(big: tuple[Path, np.ndarray],
                                                                                   h: Harness) -> None:
    root, block = big
    arr = zl.open(root)
    state = initial_state(arr)
    assert h.show(state).coarse is not None
    scene = h.show(state.with_(region=REGION, screen_scale=(1.5, 1.5)))
    assert scene.coarse is not None and scene.detail is not None  # detail drawn over the preview
    assert scene.detail.covers(*REGION) and scene.detail.full_resolution
    value, exact = scene.value_at(9100, 9200)  # type: ignore[misc]
    assert exact and value == block[9100 - 8960, 9200 - 8960]


def test_a_zoomed_out_region_is_previewed_at_screen_resolution(big: tuple[Path, np.ndarray], h: Harness) -> None:
    root, _ = big
    arr = zl.open(root)
    region = (0.0, 20000.0, 0.0, 30000.0)  # 79 x 118 chunks: too many for the budget
    state = initial_state(arr).with_(region=region, screen_scale=(600 / 20000, 900 / 30000))
    scene = h.show(state)
    tile = scene.coarse
    assert tile is not None and tile.covers(*region) and tile.chunks <= h.ctl.budget
    assert tile.r1 <= BIG and tile.c1 <= BIG
    # never the whole plane when zoomed into part of it
    assert tile.values.shape[0] * tile.step_r < BIG and tile.values.shape[1] * tile.step_c < BIG


@settings(max_examples=150, deadline=None)
@given(rows=st.integers(1, 5000), cols=st.integers(1, 5000), cy=st.integers(1, 700), cx=st.integers(1, 700),
       budget=st.integers(1, 400), data=st.data())
def test_planned_chunks_are_the_chunks_the_reader_touches(rows: int, cols: int, cy: int, cx: int, budget: int,
                                                           data: st.DataObject) -> None:
    r0 = data.draw(st.floats(-100, rows))
    r1 = data.draw(st.floats(r0, rows + 100))
    c0 = data.draw(st.floats(-100, cols))
    c1 = data.draw(st.floats(c0, cols + 100))
    scale = data.draw(st.floats(0.001, 8))
    plan = plan_view((2, rows, cols), (1, cy, cx), (1, 2), {0: 1}, (r0, r1, c0, c1), (scale, scale), budget)
    assert plan.chunks <= max(1, budget)
    sel = plan.selection
    touched_rows = {i // cy for i in range(sel[1].start, sel[1].stop, sel[1].step)}
    touched_cols = {j // cx for j in range(sel[2].start, sel[2].stop, sel[2].step)}
    assert len(touched_rows) * len(touched_cols) == plan.chunks
    # what is visible of the plane is inside what is read
    assert plan.r0 <= max(0, r0) and plan.c0 <= max(0, c0)
    assert plan.r1 >= min(rows, r1) - 1 and plan.c1 >= min(cols, c1) - 1
