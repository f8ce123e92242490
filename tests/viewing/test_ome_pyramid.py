"""Pyramid arithmetic on hand-built levels: the level a zoom needs, regions and indices carried
between levels (factors other than 2, per-axis factors, Z-downsampled levels, translations)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrview.viewing.ome import Level
from zarrview.viewing.ome.pyramid import (
    choose_level,
    covering,
    factors,
    from_level,
    map_index,
    map_region,
    pixel_size,
    to_level,
)

READABLE = object()  # choose_level only asks whether a level has an array


def lv(index: int, shape: Sequence[int], scale: Sequence[float], translation: Sequence[float] | None = None,
       readable: bool = True) -> Level:
    return Level(index, str(index), READABLE if readable else None, tuple(scale),  # type: ignore[arg-type]
                 tuple(translation or (0.0,) * len(scale)), tuple(shape))


def centred(shape0: Sequence[int], steps: Sequence[Sequence[float]], scale0: Sequence[float]) -> list[Level]:
    """Levels as ome-zarr-py writes them: level k's pixel centred over the level-0 pixels it covers."""
    out = []
    for k, f in enumerate(steps):
        scale = [s * x for s, x in zip(scale0, f)]
        out.append(lv(k, [int(n // x) for n, x in zip(shape0, f)], scale, [(x - 1) / 2 * s for s, x in zip(scale0, f)]))
    return out


TWO = centred((4096, 4096), [(1, 1), (2, 2), (4, 4), (8, 8)], (0.5, 0.5))


@pytest.mark.parametrize("zoom, level", [(0.25, 0), (1, 0), (1.99, 0), (2, 1), (3.9, 1), (4, 2), (7.5, 2), (8, 3),
                                         (1000, 3)])
def test_choose_level_factor_2(zoom: float, level: int) -> None:
    assert choose_level(TWO, {0: zoom, 1: zoom}) == level


@pytest.mark.parametrize("zoom, level", [(2.9, 0), (3, 1), (8.9, 1), (9, 2), (27, 2)])
def test_choose_level_factor_3(zoom: float, level: int) -> None:
    levels = centred((729, 729), [(1, 1), (3, 3), (9, 9)], (1, 1))
    assert choose_level(levels, {0: zoom, 1: zoom}) == level


def test_choose_level_per_axis_factors() -> None:
    """A level halved in y and quartered in x serves a view only where x is zoomed out 4x too."""
    levels = [lv(0, (1000, 1000), (1, 1)), lv(1, (500, 250), (2, 4))]
    assert choose_level(levels, {0: 2, 1: 2}) == 0
    assert choose_level(levels, {0: 2, 1: 4}) == 1
    assert choose_level(levels, {0: 1, 1: 8}) == 0


def test_choose_level_is_in_physical_space_and_skips_unreadable_levels() -> None:
    # an anisotropic level 0 (z 2 um, y/x 0.5 um): factors are relative to it, whatever the units
    levels = [lv(0, (64, 1024, 1024), (2, 0.5, 0.5)), lv(1, (64, 512, 512), (2, 1, 1), readable=False),
              lv(2, (32, 256, 256), (4, 2, 2))]
    assert choose_level(levels, {1: 2, 2: 2}) == 0          # level 1 would do, but cannot be read
    assert choose_level(levels, {1: 4, 2: 4}) == 2          # Z does not matter to an XY view
    assert choose_level(levels, {0: 1, 2: 4}) == 0          # an XZ view at full Z resolution
    assert choose_level(levels, {0: 2, 2: 4}) == 2
    assert choose_level([lv(0, (8, 8), (1, 1), readable=False)], {0: 4, 1: 4}) == 0


def test_pixel_sizes_and_factors() -> None:
    levels = [lv(0, (10, 300, 300), (3, 0.2, 0.2)), lv(1, (10, 100, 100), (3, 0.6, 0.6)),
              lv(2, (5, 50, 50), (6, 1.2, 1.2))]
    assert pixel_size(levels[2]) == (6, 1.2, 1.2)
    assert [tuple(round(x, 9) for x in f) for f in factors(levels)] == [(1, 1, 1), (1, 3, 3), (2, 6, 6)]


def test_regions_between_centred_levels_are_exact() -> None:
    assert to_level(TWO, 1, ((0, 4096), (0, 4096))) == ((0, 2048), (0, 2048))
    assert to_level(TWO, 3, ((1024, 2048), (8, 16))) == ((128, 256), (1, 2))
    assert from_level(TWO, 2, ((10, 20), (0, 1))) == ((40, 80), (0, 4))
    assert covering(TWO[3], to_level(TWO, 3, ((1000, 1100), (5, 4096)))) == ((125, 138), (0, 512))


def test_regions_without_translations() -> None:
    """Levels with scales only: level 1's pixel centres sit on level 0's even pixel centres, so
    the region shifts by a quarter pixel; the covering pixels still cover it."""
    levels = [lv(0, (64,), (1,)), lv(1, (32,), (2,))]
    assert to_level(levels, 1, ((0, 64),)) == ((0.25, 32.25),)
    assert covering(levels[1], to_level(levels, 1, ((0, 64),))) == ((0, 32),)
    assert covering(levels[1], to_level(levels, 1, ((10, 20),))) == ((5, 11),)


def test_z_downsampled_and_non_integer_factors() -> None:
    levels = [lv(0, (30, 300, 300), (1, 1, 1)), lv(1, (10, 200, 200), (3, 1.5, 1.5), (1, 0.25, 0.25))]
    region = to_level(levels, 1, ((0, 30), (0, 300), (30, 60)))
    assert region == ((0, 10), (0, 200), (20, 40))
    assert [map_index(levels[0], levels[1], 0, z) for z in range(30)] == [z // 3 for z in range(30)]
    assert map_index(levels[1], levels[0], 0, 4) == 13          # the centre of level 1's z 4 is level 0's z 13
    assert map_index(levels[0], levels[1], 0, 10_000) == 9      # clipped


@given(st.lists(st.tuples(st.floats(0.1, 10), st.floats(-50, 50), st.floats(0.1, 10), st.floats(-50, 50),
                          st.floats(-1000, 1000), st.floats(0, 1000)), min_size=1, max_size=3))
def test_map_region_round_trips(axes: list[tuple[float, float, float, float, float, float]]) -> None:
    a = lv(0, [10] * len(axes), [x[0] for x in axes], [x[1] for x in axes])
    b = lv(1, [10] * len(axes), [x[2] for x in axes], [x[3] for x in axes])
    region = tuple((x[4], x[4] + x[5]) for x in axes)
    back = map_region(b, a, map_region(a, b, region))
    for (lo, hi), (lo2, hi2) in zip(region, back):
        assert lo2 == pytest.approx(lo, abs=1e-6) and hi2 == pytest.approx(hi, abs=1e-6)
