"""The view model without Qt: states in, scenes out, checked against zarr-python and numpy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing import initial_state
from zarrview.viewing.image.contrast import PERCENTILES

from view_harness import Harness

PEER = Path(__file__).resolve().parents[1] / "data" / "zarrs"


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.close()


def test_whole_plane_at_full_resolution(tmp_path: Path, h: Harness) -> None:
    data = np.random.default_rng(1).integers(0, 60000, (3, 200, 300), dtype="u2")
    zarr.create_array(tmp_path / "a", shape=data.shape, chunks=(1, 64, 64), dtype="u2")[...] = data
    arr = zl.open(tmp_path / "a")
    scene = h.show(initial_state(arr, {0: 2}))
    assert scene.message is None and scene.coarse is None and not scene.busy
    tile = scene.detail
    assert tile is not None and tile.full_resolution and (tile.r0, tile.c0, tile.r1, tile.c1) == (0, 0, 200, 300)
    np.testing.assert_array_equal(tile.values, data[2])
    flat = data[2].reshape(-1)
    assert scene.levels == pytest.approx(tuple(np.percentile(flat, PERCENTILES)))
    assert scene.status.startswith("Read /[2, :, :] in ")


def test_all_nan_plane_is_drawn_with_levels_and_says_so(h: Harness) -> None:
    arr = zl.open(str(PEER / "hierarchy.zarr") + "::/a/baz")  # float64, no chunk written, fill NaN
    state = initial_state(arr)
    scene = h.show(state.with_(region=(0, 1000, 0, 1000)))
    tiles = scene.tiles()
    assert tiles and all(np.isnan(t.values).all() for t in tiles)
    assert scene.levels == (0.0, 1.0) and scene.message is None
    assert "no finite value" in scene.status and "NaN" in scene.status and not scene.busy


def test_infinities_do_not_set_the_levels(tmp_path: Path, h: Harness) -> None:
    data = np.random.default_rng(2).normal(10, 2, (100, 100))
    data[::7, ::3] = np.inf
    data[1::9, ::4] = -np.inf
    data[2::5, 1::6] = np.nan
    zarr.create_array(tmp_path / "f", shape=data.shape, chunks=(50, 50), dtype="f8")[...] = data
    scene = h.show(initial_state(zl.open(tmp_path / "f")))
    finite = data[np.isfinite(data)]
    assert scene.levels == pytest.approx(tuple(np.percentile(finite, PERCENTILES)))
    assert "NaN" in scene.status and "inf" in scene.status


def test_a_zero_length_axis_says_empty_and_drops_the_previous_image(tmp_path: Path, h: Harness) -> None:
    zarr.create_array(tmp_path / "full", shape=(10, 10), chunks=(5, 5), dtype="u1")[...] = 7
    zarr.create_array(tmp_path / "empty", shape=(4, 0, 10), chunks=(1, 5, 5), dtype="u1")
    assert h.show(initial_state(zl.open(tmp_path / "full"))).detail is not None
    scene = h.show(initial_state(zl.open(tmp_path / "empty")))
    assert scene.tiles() == [] and scene.message is not None and "empty" in scene.message and "length 0" in scene.message
    assert not scene.busy


def test_an_error_replaces_the_previous_image(tmp_path: Path, h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b"):
        zarr.create_array(tmp_path / name, shape=(10, 10), chunks=(5, 5), dtype="u1")[...] = 7
    assert h.show(initial_state(zl.open(tmp_path / "a"))).detail is not None
    b = zl.open(tmp_path / "b")

    def gone(*args: object, **kwargs: object) -> None:
        raise zl.StoreError("http://example.invalid/b: connection refused")

    monkeypatch.setattr(b, "read", gone)
    scene = h.show(initial_state(b))
    assert scene.tiles() == [] and scene.message is not None and "connection refused" in scene.message
    assert scene.status.startswith("Error:") and not scene.busy


def test_stale_answers_are_dropped(tmp_path: Path, h: Harness) -> None:
    data = np.arange(20 * 64 * 64, dtype="u2").reshape(20, 64, 64)
    zarr.create_array(tmp_path / "a", shape=data.shape, chunks=(1, 8, 8), dtype="u2")[...] = data
    state = initial_state(zl.open(tmp_path / "a"))
    for z in range(20):  # twenty slider steps without waiting
        h.set_state(state.with_(indices=(z, 0, 0)))
    scene = h.settle()
    np.testing.assert_array_equal(scene.detail.values, data[19])  # type: ignore[union-attr]
    assert h.driver.lane.newest == 20 and not scene.busy


def test_cancel_is_answered_and_the_next_view_reads_again(tmp_path: Path, h: Harness) -> None:
    data = np.arange(4 * 256 * 256, dtype="u2").reshape(4, 256, 256)
    zarr.create_array(tmp_path / "a", shape=data.shape, chunks=(1, 16, 16), dtype="u2")[...] = data
    state = initial_state(zl.open(tmp_path / "a"))
    h.set_state(state)
    h.driver.cancel()
    scene = h.settle()
    if scene.detail is None:  # cancelled in time (usual): the view says so and is not busy
        assert "Cancelled" in scene.status and not scene.busy
    before = h.driver.requests
    scene = h.show(state.with_(indices=(1, 0, 0)))
    assert h.driver.requests == before + 1
    np.testing.assert_array_equal(scene.detail.values, data[1])  # type: ignore[union-attr]


def test_a_view_change_that_needs_no_read_reads_nothing(tmp_path: Path, h: Harness) -> None:
    zarr.create_array(tmp_path / "a", shape=(100, 100), chunks=(50, 50), dtype="u1")[...] = 3
    state = initial_state(zl.open(tmp_path / "a"))
    assert h.show(state).status.startswith("Read")
    scene = h.show(state.with_(region=(10, 20, 10, 20), screen_scale=(4.0, 4.0)))
    assert not scene.busy and h.driver.requests == 1


def test_a_superseded_read_leaves_no_reading_status(tmp_path: Path, h: Harness) -> None:
    data = np.arange(2 * 512 * 512, dtype="u2").reshape(2, 512, 512)
    zarr.create_array(tmp_path / "a", shape=data.shape, chunks=(1, 64, 64), dtype="u2")[...] = data
    state = initial_state(zl.open(tmp_path / "a"))
    h.show(state)
    h.set_state(state.with_(indices=(1, 0, 0)))  # starts reading plane 1 ...
    scene = h.ctl.scene
    assert scene.busy and scene.status.startswith("Reading")
    h.set_state(state)  # ... and back to plane 0, which is on screen
    scene = h.settle()
    assert not scene.busy and scene.status == ""
    np.testing.assert_array_equal(scene.detail.values, data[0])  # type: ignore[union-attr]


def test_switching_complex_mode_recomputes_the_levels(tmp_path: Path, h: Harness) -> None:
    rng = np.random.default_rng(3)
    data = (rng.normal(100, 5, (64, 64)) + 1j * rng.normal(-50, 1, (64, 64))).astype("c16")
    zarr.create_array(tmp_path / "c", shape=data.shape, chunks=(32, 32), dtype="c16")[...] = data
    state = initial_state(zl.open(tmp_path / "c"))
    scene = h.show(state)
    assert scene.levels == pytest.approx(tuple(np.percentile(np.abs(data), PERCENTILES)))
    scene = h.show(state.with_(complex_mode="imaginary"))
    assert scene.levels == pytest.approx(tuple(np.percentile(data.imag, PERCENTILES)))
    np.testing.assert_array_equal(scene.detail.image, data.imag)  # type: ignore[union-attr]
    assert h.driver.requests == 1  # no read again: only the display changed


def test_fixed_contrast_is_kept(tmp_path: Path, h: Harness) -> None:
    zarr.create_array(tmp_path / "a", shape=(4, 8, 8), chunks=(1, 8, 8), dtype="u1")[...] = np.arange(4)[:, None, None]
    state = initial_state(zl.open(tmp_path / "a")).with_(contrast=(0.0, 200.0))
    assert h.show(state).levels == (0.0, 200.0)
    assert h.show(state.with_(indices=(3, 0, 0))).levels == (0.0, 200.0)
