"""Colour maps for a plane of numbers, from ``cmap`` (the colour map library napari and ndv
use): the perceptual maps, cmocean's for geoscience, CET's, and the default each kind of data
is best read in.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["AUTO", "CHOICES", "GREY", "PERCEPTUAL", "DIVERGING", "default_map", "lookup_table", "symmetric"]

AUTO = "by the data"
GREY = "grey"
PERCEPTUAL = "viridis"
DIVERGING = "cmocean:balance"
#: the maps offered, in the order a menu lists them
CHOICES = (GREY, "viridis", "magma", "inferno", "plasma", "cividis", "turbo", "twilight", "cmocean:thermal",
           "cmocean:haline", "cmocean:deep", "cmocean:ice", "cmocean:balance", "cmocean:curl", "cmocean:delta",
           "colorcet:CET_L17", "colorcet:CET_D1", "colorbrewer:RdBu")


def symmetric(levels: tuple[float, float] | None) -> bool:
    """Whether display levels straddle 0 about evenly (an anomaly, a velocity, a difference):
    the lower end at least half and at most twice as far below 0 as the upper is above."""
    if levels is None:
        return False
    lo, hi = float(levels[0]), float(levels[1])
    return lo < 0 < hi and 0.5 <= -lo / hi <= 2.0


def default_map(levels: tuple[float, float] | None, scalar_field: bool) -> str:
    """Diverging for data symmetric around 0, perceptual for a physical field (a variable with
    units), grey otherwise (microscopy's convention: an intensity is a brightness)."""
    if symmetric(levels):
        return DIVERGING
    return PERCEPTUAL if scalar_field else GREY


@lru_cache(maxsize=64)
def _table(name: str, reverse: bool, n: int) -> np.ndarray:
    if name == GREY:
        ramp = np.linspace(0, 255, n).round().astype(np.uint8)
        table = np.stack([ramp, ramp, ramp, np.full(n, 255, np.uint8)], axis=1)
    else:
        import cmap

        table = (np.asarray(cmap.Colormap(name).lut(n), dtype=np.float64) * 255).round().clip(0, 255).astype(np.uint8)
    table = table[::-1] if reverse else table
    table.setflags(write=False)
    return table


def lookup_table(name: str, reverse: bool = False, n: int = 256) -> np.ndarray:
    """(n, 4) uint8 RGBA, low values first (last first, ``reverse``); ValueError for a name not offered."""
    if name not in CHOICES:
        raise ValueError(f"{name!r} is not one of the colour maps offered")
    return _table(name, reverse, n)
