"""Orthogonal sections in the view model: the XZ and YZ sections through a point are numpy's
``arr[:, y, :]`` and ``arr[:, :, x]`` (with the sliders' other indices) of zarr-python-written
arrays, strided to a bounded size for a long axis, CF-decoded like the plane, read from the
pyramid level that fits and placed over level 0."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Answer, Lane, WorkerPool
from zarrview.viewing import initial_state
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.image import orthogonal as ortho
from zarrview.viewing.image.state import ViewState

from view_harness import halving_levels

RNG = np.random.default_rng(7)
VOL = RNG.integers(0, 1000, (6, 20, 30)).astype("i2")
HYPER = RNG.standard_normal((3, 5, 12, 14)).astype("f4")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ortho") / "s.zarr"
    g = zarr.open_group(path, mode="w")
    g.create_array("vol", shape=VOL.shape, chunks=(2, 8, 8), dtype="i2", dimension_names=["z", "y", "x"])[...] = VOL
    g.create_array("hyper", shape=HYPER.shape, chunks=(1, 2, 5, 5), dtype="f4",
                   dimension_names=["t", "z", "y", "x"])[...] = HYPER
    return path


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    p = WorkerPool(threads=2)
    yield p
    p.close()


def run(pool: WorkerPool, req: ortho.SectionRequest) -> ortho.Sections:
    answers: list[Answer[Any]] = []
    Lane(pool, name="sections").submit(req.job, answers.append)
    assert pool.wait_until_idle(30)
    out = ortho.apply(req, answers[0])
    assert out is not None and out.message is None, out and out.message
    return out


def test_sections_of_a_3d_array_are_numpys(root: Path, pool: WorkerPool) -> None:
    arr = zl.open(root)["vol"]  # type: ignore[index]
    state = initial_state(arr, {0: 2})
    assert (state.y_dim, state.x_dim) == (1, 2) and ortho.default_z(state) == 0
    req = ortho.request(state, (13, 21, 4), 0)
    got = run(pool, req)
    np.testing.assert_array_equal(got.xz, VOL[:, 13, :])  # rows z, columns x
    np.testing.assert_array_equal(got.yz, VOL[:, :, 21].T)  # rows y, columns z
    assert got.xz_rect == (0.0, 0.0, 30.0, 6.0) and got.yz_rect == (0.0, 0.0, 6.0, 20.0)
    assert req.point == (13, 21, 4)


def test_sections_of_a_4d_array_keep_the_other_sliders(root: Path, pool: WorkerPool) -> None:
    arr = zl.open(root)["hyper"]  # type: ignore[index]
    state = initial_state(arr, {0: 2, 1: 3})
    assert ortho.z_choices(state) == [0, 1] and ortho.default_z(state) == 1  # named z first
    got = run(pool, ortho.request(state, (7, 9, 3), 1))
    np.testing.assert_array_equal(got.xz, HYPER[2, :, 7, :])
    np.testing.assert_array_equal(got.yz, HYPER[2, :, :, 9].T)
    along_t = run(pool, ortho.request(state, (7, 9, 2), 0))  # sections along t, at z 3
    np.testing.assert_array_equal(along_t.xz, HYPER[:, 3, 7, :])
    np.testing.assert_array_equal(along_t.yz, HYPER[:, 3, :, 9].T)
    clipped = run(pool, ortho.request(state, (99, -5, 0), 1))  # a point off the plane: its edge
    np.testing.assert_array_equal(clipped.xz, HYPER[2, :, 11, :])
    np.testing.assert_array_equal(clipped.yz, HYPER[2, :, :, 0].T)


def test_a_long_axis_is_read_with_a_stride(tmp_path: Path, pool: WorkerPool) -> None:
    """Z of 2100 and x of 2200: a stride of 3 keeps each section under 1024 pixels along both;
    only the band of rows read is written (the rest is the fill value, zero)."""
    truth = np.zeros((2100, 3, 2200), "u1")
    truth[:, 1, :] = RNG.integers(1, 255, (2100, 2200), dtype="u1")
    a = zarr.create_array(tmp_path / "big", shape=truth.shape, chunks=(512, 1, 512), dtype="u1", fill_value=0)
    a[:, 1, :] = truth[:, 1, :]
    state = initial_state(zl.open(tmp_path / "big"), {0: 0})
    req = ortho.request(state, (1, 1234, 0), 0)
    assert (req.xz.step_r, req.xz.step_c) == (3, 3)
    got = run(pool, req)
    assert max(got.xz.shape) <= ortho.MAX_SECTION_PX and max(got.yz.shape) <= ortho.MAX_SECTION_PX
    np.testing.assert_array_equal(got.xz, truth[::3, 1, ::3])
    np.testing.assert_array_equal(got.yz, truth[::3, :, 1234].T)
    assert got.xz_rect == (0.0, 0.0, 3.0 * got.xz.shape[1], 3.0 * got.xz.shape[0])  # over the whole extent
    small = run(pool, ortho.request(state, (1, 1234, 0), 0, max_px=100))
    np.testing.assert_array_equal(small.xz, truth[::21, 1, ::22])


def test_a_chunk_budget_coarsens_a_section_of_many_chunks(root: Path, pool: WorkerPool) -> None:
    arr = zl.open(root)["vol"]  # type: ignore[index]
    state = initial_state(arr, {0: 0})
    req = ortho.request(state, (3, 4, 0), 0, budget=2)  # 3 x 4 chunks along (z, x): sampled
    got = run(pool, req)
    assert req.xz.step_r > 1 or req.xz.step_c > 1
    np.testing.assert_array_equal(got.xz, VOL[::req.xz.step_r, 3, ::req.xz.step_c])


def test_sections_are_cf_decoded_like_the_plane(tmp_path: Path, pool: WorkerPool) -> None:
    raw = RNG.integers(0, 100, (4, 6, 8)).astype("i2")
    raw[1, 2, 3] = -1
    a = zarr.create_array(tmp_path / "packed", shape=raw.shape, chunks=(2, 3, 4), dtype="i2",
                          attributes={"scale_factor": 0.5, "add_offset": 10.0, "_FillValue": -1})
    a[...] = raw
    arr = zl.open(tmp_path / "packed")
    state: ViewState = initial_state(arr, {0: 0}).with_(cf=read_cf(arr))
    assert state.decoding is not None
    got = run(pool, ortho.request(state, (2, 3, 0), 0))
    decoded = np.where(raw == -1, np.nan, raw * 0.5 + 10.0)
    np.testing.assert_allclose(got.xz, decoded[:, 2, :])
    np.testing.assert_allclose(got.yz, decoded[:, :, 3].T)
    assert np.isnan(got.xz[1, 3]) and np.isnan(got.yz[2, 1])


def test_a_pyramid_is_read_at_the_level_that_fits_and_placed_over_level_0(tmp_path: Path, pool: WorkerPool) -> None:
    base = RNG.integers(0, 200, (4, 64, 64)).astype("u1")
    levels = [base, base[:, ::2, ::2], base[:, ::4, ::4]]
    g = zarr.open_group(tmp_path / "pyr", mode="w")
    for k, d in enumerate(levels):
        g.create_array(str(k), shape=d.shape, chunks=(1, 16, 16), dtype="u1")[...] = d
    pyramid = halving_levels(tmp_path / "pyr", 3)
    state = initial_state(pyramid[0].array, {0: 1}, pyramid=pyramid)
    req = ortho.request(state, (40, 21, 2), 0, max_px=20)  # only level 2 (16 x 16) fits
    assert req.level == 2
    got = run(pool, req)
    np.testing.assert_array_equal(got.xz, levels[2][:, 40 // 4, :])
    np.testing.assert_array_equal(got.yz, levels[2][:, :, 21 // 4].T)
    # level 2's pixel 0 covers level-0 columns 0 to 4 (ome-zarr-py's translation of 1.5)
    assert got.xz_rect == pytest.approx((0.0, 0.0, 64.0, 4.0))
    assert got.yz_rect == pytest.approx((0.0, 0.0, 4.0, 64.0))
    assert run(pool, ortho.request(state, (40, 21, 2), 0)).xz.shape == (4, 64)  # level 0 fits 1024


def test_a_dimension_on_screen_is_no_z(root: Path) -> None:
    state = initial_state(zl.open(root)["vol"], {0: 0})  # type: ignore[index]
    with pytest.raises(ValueError):
        ortho.request(state, (0, 0, 0), 2)


def test_z_is_in_proportion_only_in_the_planes_unit(root: Path) -> None:
    from zarrview.viewing.ome.model import Level

    arr = zl.open(root)["vol"]  # type: ignore[index]
    pyramid = (Level(0, "0", arr, (4.0, 0.5, 0.25), (0.0, 0.0, 0.0), arr.shape),)
    state = initial_state(arr, {0: 0}, pyramid=pyramid)
    um = ("micrometer",) * 3
    assert ortho.proportions(state, 0, um) == ortho.Proportions(0.5, 0.25, 4.0, "micrometer")
    assert ortho.proportions(state, 0, ("second", "micrometer", "micrometer")) == ortho.Proportions(0.5, 0.25, 0.25)
    assert ortho.proportions(state, 0) == ortho.Proportions(0.5, 0.25, 0.25)
    assert ortho.proportions(initial_state(arr, {0: 0}), 0, um) == ortho.Proportions()


def test_the_readout_on_a_section_names_its_place_and_numpys_value(root: Path, pool: WorkerPool) -> None:
    from zarrview.viewing.image.section_readout import XZ, YZ, section_readout

    arr = zl.open(root)["hyper"]  # type: ignore[index]
    state = initial_state(arr, {0: 2, 1: 3})
    got = run(pool, ortho.request(state, (7, 9, 3), 1))
    # XZ: x across, z down, at row 7; YZ: z across, y down, at column 9; t stays at 2
    assert section_readout(got, XZ, 4.5, 1.2) == f"x 4, z 1 (t 2, y 7): {HYPER[2, 1, 7, 4]!s}"
    assert section_readout(got, YZ, 3.9, 10.1) == f"y 10, z 3 (t 2, x 9): {HYPER[2, 3, 10, 9]!s}"
    assert section_readout(got, XZ, 14.5, 1.0) == ""  # beyond the last column
    assert section_readout(got, YZ, -0.5, 2.0) == ""


def test_the_readout_of_a_strided_section_says_it_is_a_sample_and_decodes_cf(tmp_path: Path, pool: WorkerPool) -> None:
    from zarrview.viewing.image.section_readout import XZ, section_readout

    truth = RNG.integers(1, 100, (2100, 3, 40)).astype("i2")
    a = zarr.create_array(tmp_path / "packed", shape=truth.shape, chunks=(512, 1, 40), dtype="i2",
                          attributes={"scale_factor": 0.5, "add_offset": 10.0, "units": "K"},
                          dimension_names=["z", "y", "x"])
    a[...] = truth
    arr = zl.open(tmp_path / "packed")
    state: ViewState = initial_state(arr, {0: 0}).with_(cf=read_cf(arr))
    req = ortho.request(state, (1, 20, 0), 0)
    assert req.xz.step_r == 3 and req.xz.step_c == 1
    got = run(pool, req)
    text = section_readout(got, XZ, 5.5, 1001.7)  # z 1001 lies in the sample of z 999 (one in three)
    value = truth[999, 1, 5] * 0.5 + 10.0
    assert text.startswith(f"x 5, z 1,001 (y 1): ≈ {value:g} K") and "one element in 1 x 3" in text
