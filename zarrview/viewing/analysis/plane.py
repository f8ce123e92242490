"""What a measurement of the plane reads: a block of rows and columns of level 0 (the view's
data coordinates are level-0 pixels), the values as the view shows them (CF-decoded where it
decodes, complex reduced as it draws them), and the words and units for both axes.

Every measurement reads the array itself rather than the tiles on screen: a preview or a coarse
pyramid level stands for several elements per pixel, and a statistic or profile of those would
be of another, smoothed image.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...scheduling import Context
from ..image.axes import dim_names
from ..image.contrast import displayable
from ..image.state import ViewState

#: a pixel size along rows and columns with its unit (an OME-Zarr image's level 0), or None
PixelSize = tuple[tuple[float, float], str] | None


class AnalysisError(ValueError):
    """A measurement that cannot be made of the plane shown (a line or box outside it)."""


@dataclass(frozen=True)
class Block:
    """Rows ``r0:r1`` and columns ``c0:c1`` of the plane shown."""

    r0: int
    r1: int
    c0: int
    c1: int

    @property
    def size(self) -> int:
        return max(0, self.r1 - self.r0) * max(0, self.c1 - self.c0)


def selection(state: ViewState, block: Block) -> tuple[Any, ...]:
    """The array selection of ``block`` of ``state``'s plane: the colour dimension whole, every
    other dimension at its slider's index."""
    out: list[Any] = []
    for d, i in enumerate(state.indices):
        if d == state.y_dim:
            out.append(slice(block.r0, block.r1))
        elif d == state.x_dim:
            out.append(slice(block.c0, block.c1))
        elif d == state.channel_dim:
            out.append(slice(None))
        else:
            out.append(i)
    return tuple(out)


#: channel names of an RGB(A) colour dimension
RGBA_NAMES = ("red", "green", "blue", "alpha")


def channel_names(state: ViewState) -> tuple[str, ...]:
    """The names of the colour dimension's channels: a composite's own labels, red, green, blue
    (and alpha) for a picture, else "channel i"; empty without a colour dimension."""
    if state.channel_dim is None:
        return ()
    n = state.array.shape[state.channel_dim]
    if state.composite:
        labels = {c.index: c.label for c in state.channels}
        return tuple(labels.get(i) or f"channel {i}" for i in range(n))
    return RGBA_NAMES[:n] if n in (3, 4) else tuple(f"channel {i}" for i in range(n))


def read_block(state: ViewState, block: Block, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """(stored values, values as shown) of ``block``, each with axes (rows, columns[, channels])."""
    raw = state.array.read(selection(state, block), cancel=ctx.cancel, cache=ctx.cache, executor=ctx.executor,
                           failures=ctx.failures)
    kept = [d for d in state.plane_dims]  # the dimensions a selection keeps, in the array's order
    order = [kept.index(state.y_dim), kept.index(state.x_dim)]
    if state.channel_dim is not None:
        order.append(kept.index(state.channel_dim))
    raw = np.transpose(raw, order)
    return raw, shown_values(state, raw)


def shown_values(state: ViewState, raw: np.ndarray) -> np.ndarray:
    """``raw`` as the view draws it: decoded where the view decodes, complex reduced by its mode."""
    decoding = state.decoding
    return displayable(raw if decoding is None else decoding.decode(raw), state.complex_mode)


def value_heading(state: ViewState) -> tuple[str, str]:
    """(what the values are, their units or ""): the CF title and units where the view decodes or
    the array has no coding, else the array's name ("stored" where the view shows stored values)."""
    cf = state.cf
    name = state.array.name or state.array.path
    if cf is None:
        return name, ""
    units = cf.units if cf.units and cf.units != "1" else ""
    if cf.coding.active and state.decoding is None:
        return f"{cf.title} (stored)", ""
    return cf.title, units


@dataclass(frozen=True)
class Distances:
    """How far along a line each sample lies, and in what unit ("pixels" where none is known)."""

    values: np.ndarray
    unit: str


def distances(state: ViewState, rows: np.ndarray, cols: np.ndarray, pixel: PixelSize = None) -> Distances:
    """Distances along the path through the continuous plane positions (``rows``, ``cols``)
    (pixel ``i`` spans ``[i, i+1)``): in the CF coordinates' units where both displayed
    dimensions have numeric coordinates in one unit (projected metres, say; latitude and longitude
    do not share one), else in ``pixel``'s unit (an OME-Zarr image's pixel size), else in pixels."""
    coords = _coordinates(state, (state.y_dim, state.x_dim))
    if coords is not None:
        (ys, xs), unit = coords
        y = np.interp(rows - 0.5, np.arange(len(ys)), ys)  # a coordinate names a pixel's centre
        x = np.interp(cols - 0.5, np.arange(len(xs)), xs)
        return Distances(_along(y, x), unit)
    if pixel is not None and all(s > 0 and math.isfinite(s) for s in pixel[0]):
        (sy, sx), unit = pixel
        return Distances(_along(rows * sy, cols * sx), unit or "pixels")
    return Distances(_along(rows, cols), "pixels")


def _along(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    steps = np.hypot(np.diff(y), np.diff(x))
    return np.concatenate(([0.0], np.cumsum(steps)))


def _coordinates(state: ViewState, dims: Sequence[int]) -> tuple[list[np.ndarray], str] | None:
    cf = state.cf
    if cf is None:
        return None
    axes = [cf.axes.get(d) for d in dims]
    if any(a is None or a.time is not None or a.values.dtype.kind not in "iuf" or len(a) < 2 for a in axes):
        return None
    units = {a.units for a in axes if a is not None}
    unit = units.pop() if len(units) == 1 else None
    if not unit:
        return None
    return [a.numeric() for a in axes if a is not None], unit


def plane_name(state: ViewState) -> str:
    """``/temp[t=3]``: the array and the indices of its plane, for titles."""
    names = dim_names(state.array, state.axis_names)
    fixed = ", ".join(f"{names[d]}={i}" for d, i in sorted(state.fixed().items()))
    return f"{state.array.path}[{fixed}]" if fixed else state.array.path
