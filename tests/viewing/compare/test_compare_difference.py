"""The difference of two planes and its figures (viewing/compare/difference.py), held to numpy
computed directly on the same values: NaN, inf and zeros in both."""

from __future__ import annotations

import numpy as np
import pytest

from zarrview.viewing.compare.difference import DifferenceTally, plane_difference
from zarrview.viewing.compare.errors import CompareError, ShapeMismatchError


def _planes(seed: int, shape: tuple[int, int] = (120, 170), dtype: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """A and B mostly equal, with differences, NaN, ±inf and zeros sprinkled in each, some at the same places."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0.0, 5.0, shape)
    b = a.copy()
    moved = rng.random(shape) < 0.3
    b[moved] += rng.normal(0.0, 1.0, int(moved.sum()))
    for arr in (a, b):
        arr[rng.random(shape) < 0.05] = np.nan
        arr[rng.random(shape) < 0.01] = np.inf
        arr[rng.random(shape) < 0.01] = -np.inf
        arr[rng.random(shape) < 0.03] = 0.0
    both = rng.random(shape) < 0.02
    a[both], b[both] = np.nan, np.nan
    same_inf = rng.random(shape) < 0.005
    a[same_inf], b[same_inf] = np.inf, np.inf
    return a.astype(dtype), b.astype(dtype)


def _differ(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.sum(~((a == b) | (np.isnan(a) & np.isnan(b)))))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_minus_b_is_numpys(dtype: type) -> None:
    a, b = _planes(1, dtype=dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = a64 - b64
    result = plane_difference(a, b, "a-b")
    stats = result.stats
    np.testing.assert_array_equal(result.values, diff)
    assert stats.max_abs == np.nanmax(np.abs(diff)) == np.inf  # an inf in one plane only
    assert stats.where == np.unravel_index(np.nanargmax(np.abs(diff)), diff.shape)
    finite = np.isfinite(a64) & np.isfinite(b64)
    assert stats.finite == int(finite.sum())
    assert stats.rms == pytest.approx(np.sqrt(np.nanmean(np.where(finite, diff, np.nan) ** 2)), rel=1e-13)
    assert stats.differ == _differ(a, b)
    assert stats.count == a.size
    assert (stats.nan_a, stats.nan_b) == (int(np.isnan(a).sum()), int(np.isnan(b).sum()))
    reach = np.max(np.abs(diff[np.isfinite(diff)]))
    assert stats.display_range == (-reach, reach)
    assert stats.statistic in stats.text and "RMSE" in stats.text and f"{stats.differ:,} of" in stats.text


def test_a_over_b_is_numpys() -> None:
    a, b = _planes(2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b == 0, np.nan, a / b)
    result = plane_difference(a, b, "a/b")
    stats = result.stats
    np.testing.assert_array_equal(result.values, ratio)
    assert not np.isinf(result.values[b == 0]).any()
    departure = np.abs(ratio - 1.0)
    assert stats.max_abs == np.nanmax(departure)
    assert stats.where == np.unravel_index(np.nanargmax(departure), departure.shape)
    finite = np.isfinite(ratio)
    assert stats.finite == int(finite.sum())
    assert stats.rms == pytest.approx(np.sqrt(np.mean(departure[finite] ** 2)), rel=1e-13)
    assert stats.zero_denominator == int(np.sum((b == 0) & ~np.isnan(a))) > 0
    assert stats.differ == _differ(a, b)
    reach = np.max(departure[np.isfinite(departure)])
    assert stats.display_range == (1.0 - reach, 1.0 + reach)
    assert "max |A/B−1|" in stats.text and "B is 0 at" in stats.text


def test_blocks_fold_to_the_whole_plane() -> None:
    a, b = _planes(3, (97, 131))
    whole = plane_difference(a, b).stats
    for mode in ("a-b", "a/b"):
        whole = plane_difference(a, b, mode).stats
        tally = DifferenceTally(mode)
        for r in range(0, 97, 20):
            for c in range(0, 131, 33):
                tally.add(a[r:r + 20, c:c + 33], b[r:r + 20, c:c + 33], origin=(r, c))
        folded = tally.stats()
        assert folded.rms == pytest.approx(whole.rms, rel=1e-12)
        assert (folded.max_abs, folded.where, folded.differ, folded.count, folded.finite, folded.zero_denominator) == \
            (whole.max_abs, whole.where, whole.differ, whole.count, whole.finite, whole.zero_denominator)


def test_finite_maximum_and_its_values() -> None:
    rng = np.random.default_rng(4)
    a = rng.normal(size=(40, 50))
    b = a + rng.normal(scale=1e-3, size=a.shape)
    b[7, 9] = a[7, 9] + 2.5
    b[30, 1] = a[30, 1] - 2.5  # as large: the first in C order is named
    stats = plane_difference(a, b).stats
    assert stats.where == (7, 9) and stats.max_abs == pytest.approx(2.5)
    assert (stats.a_value, stats.b_value) == (a[7, 9], b[7, 9])
    assert stats.display_range == (-stats.max_abs, stats.max_abs)


def test_identical_with_nan_is_array_equal() -> None:
    a, _ = _planes(5)
    stats = plane_difference(a, a.copy()).stats
    assert stats.identical == np.array_equal(a, a.copy(), equal_nan=True) is True
    assert stats.differ == 0 and stats.text.startswith("identical")
    assert stats.display_range == (-1.0, 1.0)


def test_nothing_but_nan() -> None:
    nan = np.full((3, 4), np.nan)
    stats = plane_difference(nan, nan).stats
    assert (stats.max_abs, stats.where, stats.rms, stats.differ, stats.finite) == (None, None, None, 0, 0)
    stats = plane_difference(nan, np.zeros((3, 4))).stats
    assert stats.max_abs is None and stats.differ == 12


def test_refusals() -> None:
    with pytest.raises(ShapeMismatchError, match=r"\(2, 3\).*\(3, 2\)"):
        plane_difference(np.zeros((2, 3)), np.zeros((3, 2)))
    with pytest.raises(CompareError, match="mode"):
        plane_difference(np.zeros((2, 3)), np.zeros((2, 3)), "a+b")
    with pytest.raises(CompareError, match="complex"):
        plane_difference(np.zeros((2, 3), complex), np.zeros((2, 3)))


def test_integers_are_compared_as_numbers() -> None:
    a = np.arange(12, dtype=np.uint16).reshape(3, 4)
    b = a.astype(np.int32)
    b[1, 2] = 100
    stats = plane_difference(a, b).stats
    assert stats.differ == 1 and stats.max_abs == 100 - 6 and stats.where == (1, 2)
