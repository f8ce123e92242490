"""The series a click on an image asks for: along which dimension, which lines, and in what units.

A microscopist who clicks a cell of a (t, c, z, y, x) image wants its intensity over time, or
through the stack when there is no time: never across the three channels, which are not a
dimension one moves along. So the series runs along time where the image has more than one time
point, else along z, else along another dimension on a slider; the channel axis only when it is
the only dimension with more than one element left to plot along. Along anything but the
channels, a multi-channel image gives one line per channel it shows (every active channel of a
composite, the current one of a single-channel view), each in its channel's colour and named
with its label; an RGB picture gives its red, green and blue (and alpha) as lines of their own.

The x axis is in physical units where the image says them: an OME axis's level-0 ``scale`` and
``translation`` (``scale * index + translation``, the centre of the pixel) with its unit, so a
z stack of 2 µm planes is plotted over µm and a time axis over seconds. Plain arrays keep their
CF coordinates (dates, pressure levels, latitudes), which come first where both are present.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..image.axes import dim_names
from ..image.state import ViewState
from ..ome.model import Axis
from ..ome.view import symbol
from .series import ChannelLine, Format, LineAxis, PointQuery

#: dimension names that make a dimension of a plain array time, or depth (z)
TIME_NAMES = frozenset({"t", "time"})
Z_NAMES = frozenset({"z", "depth"})
#: what a dimension is to the choice of the series' dimension, most wanted first
KINDS = ("time", "z", "other", "channel")
#: the lines of an RGB(A) picture's colour dimension: its components in their own colours
RGB_LINES = (("red", (220, 0, 0)), ("green", (0, 160, 0)), ("blue", (0, 0, 230)), ("alpha", (128, 128, 128)))


def dim_kind(state: ViewState, d: int, axes: Sequence[Axis] | None = None) -> str:
    """``time``, ``z``, ``channel`` or ``other``: from the OME axis (its type; a space axis off
    the screen is z), else the CF coordinate (time, vertical), else the dimension's name."""
    if d in (state.channel_axis, state.channel_dim):
        return "channel"
    axis = _axis(state, axes, d)
    if axis is not None:
        if axis.type in ("time", "channel"):
            return axis.type
        if axis.type == "space" or axis.name.lower() in Z_NAMES:
            return "z"
        return "other"
    cf = state.cf.axes.get(d) if state.cf is not None else None
    if cf is not None and cf.kind in ("time", "vertical"):
        return "time" if cf.kind == "time" else "z"
    name = dim_names(state.array, state.axis_names)[d].lower()
    return "time" if name in TIME_NAMES else "z" if name in Z_NAMES else "other"


def series_dim(state: ViewState, axes: Sequence[Axis] | None = None) -> int | None:
    """The dimension a series at a point runs along by default: of the dimensions not on screen,
    those with more than one element first, and among them time, then z, then any other, the
    channel axis last; None where every dimension is on screen."""
    shape = state.array.shape
    free = [d for d in range(state.array.ndim) if d not in (state.y_dim, state.x_dim)]
    if not free:
        return None
    return min(free, key=lambda d: (shape[d] <= 1, KINDS.index(dim_kind(state, d, axes)), d))


def shown_channels(state: ViewState) -> tuple[ChannelLine, ...]:
    """The channels the image shows, as lines: every active channel of a composite, else the
    channel on the slider; none where the image has no channel settings."""
    c = state.channel_axis
    if c is None or not state.channels or c in (state.y_dim, state.x_dim):
        return ()
    n = state.array.shape[c]
    if state.composite:
        chosen = [s for s in state.channels if s.active and 0 <= s.index < n]
    else:
        chosen = [s for s in state.channels if s.index == state.indices[c]]
    return tuple(ChannelLine(s.index, s.label, s.color) for s in chosen)


def line_axes(state: ViewState, axes: Sequence[Axis] | None = None) -> tuple[LineAxis, ...]:
    """Every dimension's name and values: CF coordinates where the array has them, else the OME
    axis's physical positions in its unit, else indices; the channel axis of an image with
    channel settings is ticked with the channels' labels."""
    arr = state.array
    names = dim_names(arr, state.axis_names)
    cf = state.cf
    out = []
    for d in range(arr.ndim):
        coord = None if cf is None else cf.axes.get(d)
        if coord is not None:
            out.append(LineAxis(str(names[d]), coord.numeric(), coord.format))
        elif d == state.channel_axis and state.channels:
            out.append(LineAxis(str(names[d]), np.arange(arr.shape[d], dtype="f8"), _channel_names(state)))
        else:
            out.append(physical_axis(state, d, axes) or LineAxis(str(names[d])))
    return tuple(out)


def physical_axis(state: ViewState, d: int, axes: Sequence[Axis] | None = None) -> LineAxis | None:
    """Dimension ``d`` in physical units: ``scale * index + translation`` from level 0 of the
    image's pyramid, with the OME axis's unit; None for a plain array, a channel axis, or a
    scale that is not a finite positive number."""
    axis = _axis(state, axes, d)
    if axis is None or axis.type == "channel" or d == state.channel_axis or not state.pyramid:
        return None
    scale, translation = state.pyramid[0].scale, state.pyramid[0].translation
    if d >= len(scale) or not (np.isfinite(scale[d]) and scale[d] > 0):
        return None
    offset = float(translation[d]) if d < len(translation) and np.isfinite(translation[d]) else 0.0
    values = float(scale[d]) * np.arange(state.array.shape[d], dtype="f8") + offset
    return LineAxis(axis.name, values, unit=symbol(axis.unit))


def point_query(state: ViewState, row: int, col: int, axes: Sequence[Axis] | None = None, *,
                dim: int | None = None, variable: str = "") -> PointQuery | None:
    """The series through pixel (``row``, ``col``) of ``state``'s plane along ``dim`` (where it
    is not on screen; else the default ``series_dim``), with the channels shown (one line each
    along any dimension but theirs); ``axes`` are the OME image's, one per dimension (None for a
    plain array); ``variable`` names the image in the title (the array's name where empty).
    None where every dimension is on screen."""
    arr = state.array
    default = series_dim(state, axes)
    if default is None:
        return None
    along = dim if dim is not None and 0 <= dim < arr.ndim and dim not in (state.y_dim, state.x_dim) else default
    point = list(state.indices)
    point[state.y_dim], point[state.x_dim] = row, col
    lines = shown_channels(state)
    across = state.channel_axis if lines else None
    if not lines and state.channel_dim is not None and not state.composite:
        lines, across = colour_lines(state), state.channel_dim
    decoding = state.decoding
    cf = state.cf
    return PointQuery(arr, tuple(point), along, None if decoding is None else decoding.decode, line_axes(state, axes),
                      variable or arr.name, "" if cf is None else cf.heading, across=across, lines=lines)


def colour_lines(state: ViewState) -> tuple[ChannelLine, ...]:
    """The components of an RGB(A) picture's colour dimension as lines (red, green, blue, alpha)."""
    c = state.channel_dim
    n = 0 if c is None else state.array.shape[c]
    return tuple(ChannelLine(i, name, colour) for i, (name, colour) in enumerate(RGB_LINES[:n]))


def _axis(state: ViewState, axes: Sequence[Axis] | None, d: int) -> Axis | None:
    """The OME axis of dimension ``d``, where the image's axes match the array's dimensions."""
    if axes is None or len(axes) != state.array.ndim:
        return None
    return axes[d]


def _channel_names(state: ViewState) -> Format:
    """Tick words for the channel axis: a channel's label at its index, nothing between two."""
    labels = {s.index: s.label for s in state.channels}

    def name(value: float) -> str:
        i = round(value)
        return labels.get(i, str(i)) if abs(value - i) < 1e-6 else ""

    return name
