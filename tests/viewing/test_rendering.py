"""The pixels made for the screen equal numpy's own mapping of the same data: levels to a lookup
table's entries (truncated, clipped), NaN in its colour, a composite of windowed channels times
their colours, each at the reduction the screen asks (every k-th row and column)."""

from __future__ import annotations

import numpy as np
import pytest

from drawn import expected_rgba
from zarrview.viewing.image.channels import ChannelSetting
from zarrview.viewing.image.colour_maps import lookup_table
from zarrview.viewing.image.contrast import NAN_RGBA
from zarrview.viewing.image.pixels import unpack
from zarrview.viewing.image.rendering import FrameOrder, Look, histogram, make_frame, reduction, render_tile
from zarrview.viewing.image.scene import Tile

RNG = np.random.default_rng(7)


def _tile(image: np.ndarray, step: float = 1) -> Tile:
    return Tile(image, image, 0, 0, step, step, ("plane",))


def test_uint16_through_levels_and_a_colour_map_at_the_screen_reduction() -> None:
    plane = RNG.integers(0, 5000, (61, 47), dtype=np.uint16)
    table = lookup_table("viridis")
    tile = _tile(plane)
    step = reduction(tile, (0.3, 0.45))  # 3.3 and 2.2 data pixels per screen pixel
    assert step == (3, 2)
    got = unpack(render_tile(tile, Look((400.0, 4100.0), table), step).pixels)
    np.testing.assert_array_equal(got, expected_rgba(plane[::3, ::2], (400.0, 4100.0), table))


def test_float_with_nan_and_infinities_in_grey() -> None:
    plane = RNG.normal(0, 1, (40, 33)).astype(np.float32)
    plane[3, 4] = plane[20, 0] = np.nan
    plane[6, 8], plane[9, 12] = np.inf, -np.inf
    levels = (-1.5, 2.0)
    got = unpack(render_tile(_tile(plane), Look(levels), (3, 4)).pixels)
    v = plane[::3, ::4]
    assert np.isnan(v).any() and np.isinf(v).any()  # the strided sample keeps both
    want = expected_rgba(v, levels, None)
    assert (want[np.isnan(v)] == NAN_RGBA).all()
    np.testing.assert_array_equal(got, want)


def test_a_three_channel_composite() -> None:
    values = RNG.integers(0, 1000, (30, 36, 3), dtype=np.uint16)
    channels = (ChannelSetting(0, "r", (255, 0, 0), (100.0, 900.0)),
                ChannelSetting(1, "g", (0, 255, 0), (0.0, 500.0), inverted=True),
                ChannelSetting(2, "b", (0, 128, 255), (200.0, 800.0)))
    got = unpack(render_tile(_tile(values), Look((0.0, 1.0), channels=channels), (2, 3)).pixels)
    v = values[::2, ::3].astype(np.float64)
    rgb = np.zeros(v.shape[:2] + (3,))
    for c in channels:
        t = np.clip((v[..., c.index] - c.window[0]) / (c.window[1] - c.window[0]), 0, 1)
        rgb += (1 - t if c.inverted else t)[..., None] * np.array(c.color) / 255
    want = np.round(np.clip(rgb, 0, 1) * 255)
    assert np.abs(got[..., :3].astype(int) - want).max() <= 1  # float32 sums against float64
    assert (got[..., 3] == 255).all()


def test_a_tile_of_the_plane_before_keeps_its_colours_under_a_new_look() -> None:
    """The channel mode switched to composite while the tile on screen is a plane with the channel
    axis as columns (cyx shown as y by c): it stays drawn as it was until the new plane lands,
    never composited as if it had channels."""
    plane = RNG.integers(0, 1000, (64, 3), dtype=np.uint16)
    grey = Look((0.0, 1000.0))
    tile = _tile(plane)
    before = make_frame(FrameOrder(tile, None, grey, ((1, 1), (1, 1))))
    assert before.base is not None
    channels = tuple(ChannelSetting(i, str(i), (255, 255, 255), (0.0, 1000.0)) for i in range(3))
    after = make_frame(FrameOrder(tile, None, Look((0.0, 1.0), channels=channels), ((1, 1), (1, 1)),
                                  shown=(before.base, None)))
    assert after.base is before.base
    picture = _tile(RNG.integers(0, 1000, (8, 9, 5), dtype=np.uint16))  # five channels are no RGB(A)
    assert make_frame(FrameOrder(picture, None, grey, ((1, 1), (1, 1)))).base is None


def test_a_preview_tile_is_reduced_by_its_own_pixels_on_screen() -> None:
    tile = _tile(np.zeros((10, 10)), step=4)  # one sample every 4 data pixels
    assert reduction(tile, (0.1, 0.3)) == (2, 1)  # 0.4 and 1.2 screen pixels per tile pixel
    assert reduction(tile, (2.0, 2.0)) == (1, 1)


def test_histogram_counts_the_finite_values() -> None:
    plane = RNG.integers(10, 60, (50, 50)).astype(np.float64)
    plane[0, :5] = np.nan
    edges, counts = histogram(plane)
    finite = plane[np.isfinite(plane)]
    want, _ = np.histogram(finite, bins=len(edges), range=(finite.min(), finite.max()))
    np.testing.assert_array_equal(counts, want)
    assert counts.sum() == 50 * 50 - 5
    ints = RNG.integers(0, 40, (20, 20), dtype=np.uint16)
    edges, counts = histogram(ints)
    np.testing.assert_array_equal(counts, np.bincount(ints.ravel(), minlength=40)[edges.astype(int)])


def test_a_frame_keeps_what_it_showed_and_counts_only_a_new_tile() -> None:
    plane = RNG.integers(0, 100, (20, 20), dtype=np.uint8)
    tile, look = _tile(plane), Look((0.0, 100.0))
    first = make_frame(FrameOrder(tile, None, look, ((1, 1), (1, 1))))
    assert first.base is not None and first.histogram is not None and first.histogram_of is tile
    again = make_frame(FrameOrder(tile, None, look, ((1, 1), (1, 1)), (first.base, None), tile))
    assert again.base is first.base and again.histogram is None
    other = make_frame(FrameOrder(tile, None, Look((0.0, 50.0)), ((1, 1), (1, 1)), (first.base, None), tile))
    assert other.base is not first.base
    assert not np.array_equal(other.base.pixels, first.base.pixels)  # type: ignore[union-attr]


@pytest.mark.parametrize("dtype", ["u1", "i1", "u2", "i2", "i4", "f8"])
def test_every_integer_path_maps_like_the_float_one(dtype: str) -> None:
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    lo, hi = (info.min, info.max) if info is not None and info.bits <= 16 else (-30000, 30000)
    plane = RNG.integers(lo, hi, (17, 19), endpoint=True).astype(dtype)
    table = lookup_table("magma")
    levels = (float(lo) * 0.3 + 1.7, float(hi) * 0.6)
    got = unpack(render_tile(_tile(plane), Look(levels, table), (1, 1)).pixels)
    np.testing.assert_array_equal(got, expected_rgba(plane, levels, table))
