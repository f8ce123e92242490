"""Planning what a view reads: never more chunks than the budget, counted by the real reader."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing.image.planning import plan_plane


@pytest.mark.parametrize("budget", [1, 4, 16, 100, 10_000])
@pytest.mark.parametrize("region", [None, (0, 1000, 0, 700), (123, 456, 50, 699), (999, 1000, 0, 1)])
def test_plan_never_exceeds_budget(tmp_path, budget, region) -> None:  # type: ignore[no-untyped-def]
    a = zarr.create_array(tmp_path / "a", shape=(3, 1000, 700), chunks=(1, 30, 40), dtype="u1", fill_value=0)
    arr = zl.open(tmp_path / "a")
    plan = plan_plane(arr.shape, arr.chunks, (1, 2), {0: 2}, region, budget)
    touched = arr.reader.chunk_coords(plan.selection)
    assert len(touched) == plan.chunks <= max(1, budget)
    assert len(set(touched)) == len(touched)
    r0, r1, c0, c1 = region or (0, 1000, 0, 700)
    if not plan.preview:  # full resolution: exactly the chunks of the region
        expect = {(2, r // 30, c // 40) for r in range(r0, r1) for c in range(c0, c1)}
        assert set(touched) == expect
    data = arr[plan.selection]
    assert data.shape == (len(range(r0, r1, plan.step_r)), len(range(c0, c1, plan.step_c)))
    del a


def test_preview_samples_the_right_elements(tmp_path) -> None:  # type: ignore[no-untyped-def]
    values = np.arange(200 * 300, dtype="i4").reshape(200, 300)
    a = zarr.create_array(tmp_path / "b", shape=values.shape, chunks=(10, 10), dtype="i4")
    a[...] = values
    arr = zl.open(tmp_path / "b")
    plan = plan_plane(arr.shape, arr.chunks, (0, 1), {}, None, 50)
    assert plan.preview
    np.testing.assert_array_equal(arr[plan.selection], values[::plan.step_r, ::plan.step_c])
