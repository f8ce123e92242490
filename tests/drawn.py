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
