"""What the image view draws: the values behind the pixels in its image items.

The items hold rendered colours (``viewing.image.rendering``); a test that checks which values
are on screen reads the tile those colours were made from, and ``drawn_pixels`` checks that the
colours are that tile's, through the levels and lookup table at the reduction the item shows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrview.viewing.image.pixels import unpack


def drawn_item(data_view: Any, slot: str = "base") -> Any:
    """The image item of a data view's base (coarse, or the only) tile or of its detail tile."""
    pane = data_view.image
    return pane.getImageItem() if slot == "base" else pane.detail


def drawn(data_view: Any, slot: str = "base") -> np.ndarray | None:
    """The image (displayable values) of the tile drawn in the base or detail item, or None."""
    rendered = drawn_item(data_view, slot).rendered
    return None if rendered is None else rendered.tile.image


def drawn_rgba(data_view: Any, slot: str = "base") -> np.ndarray:
    """The colours in the item, as (rows, columns, 4) RGBA bytes."""
    rendered = drawn_item(data_view, slot).rendered
    assert rendered is not None, "nothing drawn there"
    return unpack(rendered.pixels)


def expected_rgba(values: np.ndarray, levels: tuple[float, float], table: np.ndarray | None) -> np.ndarray:
    """numpy's own mapping, written from the rule: ``floor((v - lo) / (hi - lo) * n)`` clipped to
    the table's entries (256 greys over 255 steps without a table), NaN magenta."""
    n, top = (256, 255) if table is None else (len(table), len(table))
    if table is None:
        ramp = np.arange(256, dtype=np.uint8)
        table = np.stack([ramp, ramp, ramp, np.full(256, 255, np.uint8)], axis=1)
    elif table.shape[1] == 3:
        table = np.concatenate([table, np.full((n, 1), 255, np.uint8)], axis=1)
    v = np.asarray(values, dtype=np.float64)
    x = np.floor((v - levels[0]) / (levels[1] - levels[0]) * top)
    x = np.nan_to_num(x, nan=0.0, posinf=n - 1, neginf=0.0)
    out = table[np.clip(x, 0, n - 1).astype(int)].copy()
    out[np.isnan(v)] = (255, 0, 255, 255)
    return out
