"""Colour maps come from cmap itself; the default follows the data."""

from __future__ import annotations

import numpy as np
import pytest

from zarrview.viewing.image.colour_maps import CHOICES, DIVERGING, GREY, PERCEPTUAL, default_map, lookup_table, symmetric


@pytest.mark.parametrize("name", [n for n in CHOICES if n != GREY])
def test_tables_are_cmaps_own(name: str) -> None:
    import cmap

    truth = (np.asarray(cmap.Colormap(name).lut(256)) * 255).round().astype(np.uint8)
    np.testing.assert_array_equal(lookup_table(name), truth)
    np.testing.assert_array_equal(lookup_table(name, reverse=True), truth[::-1])


def test_grey_is_a_ramp_and_unknown_names_are_refused() -> None:
    grey = lookup_table(GREY)
    assert grey.shape == (256, 4) and grey[0, :3].tolist() == [0, 0, 0] and grey[-1, :3].tolist() == [255, 255, 255]
    with pytest.raises(ValueError, match="not one of the colour maps"):
        lookup_table("jet")


@pytest.mark.parametrize(("levels", "field", "want"), [
    ((-3.0, 3.0), False, DIVERGING), ((-1.0, 1.9), True, DIVERGING), ((-1.0, 5.0), True, PERCEPTUAL),
    ((0.0, 255.0), False, GREY), ((250.0, 310.0), True, PERCEPTUAL), (None, False, GREY)])
def test_the_default_follows_the_data(levels: tuple[float, float] | None, field: bool, want: str) -> None:
    assert default_map(levels, field) == want
    assert symmetric(levels) == (want == DIVERGING)
