"""Channels in colour: what each channel of an image looks like, and the composite of them.

An OME-Zarr image's ``omero`` block gives every channel a ``color`` (RRGGBB), a ``window``
(``start``/``end`` within ``min``/``max``), a ``label`` and whether it is ``active`` and
``inverted``; an image without it gets a palette (one channel grey; two to seven the usual
microscopy set, green first; more: evenly spaced hues). The composite adds the active channels,
each mapped through its window (``start`` black, ``end`` full colour; reversed when inverted)
and multiplied by its colour, and clips the sum to [0, 1]. A NaN contributes nothing.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .contrast import summarize

if TYPE_CHECKING:  # the OME model (and its JSON schemas) is not needed to composite a plain array
    from ..ome.model import Axis, Omero

RGB = tuple[int, int, int]
CHANNEL_MODES = ("composite", "single")
#: dimension names that make a dimension the channel axis when no OME axis type says so
CHANNEL_AXIS_NAMES = frozenset({"c", "ch", "channel", "channels"})
#: two to seven channels: green, magenta, cyan, yellow, red, blue, white
MICROSCOPY = ((0, 255, 0), (255, 0, 255), (0, 255, 255), (255, 255, 0), (255, 0, 0), (0, 0, 255), (255, 255, 255))
GREY = (255, 255, 255)


@dataclass(frozen=True)
class ChannelSetting:
    """One channel: ``index`` along the channel axis, its ``window`` (values mapped to black and
    to full colour; None: taken from the data when it is first shown) and ``limits`` (the
    omero ``min``/``max``: the range a window is chosen in, when known)."""

    index: int
    label: str
    color: RGB = GREY
    window: tuple[float, float] | None = None
    active: bool = True
    inverted: bool = False
    limits: tuple[float, float] | None = None

    @property
    def hex(self) -> str:
        return "{:02X}{:02X}{:02X}".format(*self.color)

    def with_(self, **changes: Any) -> ChannelSetting:
        return replace(self, **changes)


def palette(n: int) -> list[RGB]:
    """Colours for ``n`` channels without rendering settings."""
    if n <= 1:
        return [GREY] * n
    if n <= len(MICROSCOPY):
        return list(MICROSCOPY[:n])
    out = []
    for i in range(n):
        r, g, b = colorsys.hsv_to_rgb(i / n, 1.0, 1.0)
        out.append((round(r * 255), round(g * 255), round(b * 255)))
    return out


def default_settings(n: int) -> tuple[ChannelSetting, ...]:
    return tuple(ChannelSetting(i, f"channel {i}", c) for i, c in enumerate(palette(n)))


def settings_from_omero(omero: Omero | None, n: int) -> tuple[ChannelSetting, ...]:
    """A setting for each of the ``n`` channels of the image: from ``omero`` where it describes
    the channel (its colour, window, label, active and inverted; what is missing or bad takes
    the specification's defaults: active, not inverted, the palette's colour, a window from the
    data), from the palette for channels it does not describe."""
    base = default_settings(n)
    if omero is None:
        return base
    out = []
    for i, s in enumerate(base):
        if i >= len(omero.channels):
            out.append(s)
            continue
        ch = omero.channels[i]
        window = limits = None
        if ch.window is not None:
            w = ch.window
            if w.start is not None and w.end is not None:
                window = (w.start, w.end)
            if w.min is not None and w.max is not None and w.max >= w.min:
                limits = (w.min, w.max)
        out.append(ChannelSetting(i, ch.label or s.label, ch.rgb or s.color, window, ch.active, ch.inverted, limits))
    return tuple(out)


def channel_axis(axes: Sequence[Axis] | None, names: Sequence[str | None] | None = None) -> int | None:
    """The channel axis: the OME axis of type ``channel``, else a dimension named ``c`` or ``channel``."""
    for i, a in enumerate(axes or ()):
        if a.type == "channel":
            return i
    for i, n in enumerate(names or ()):
        if n and str(n).lower() in CHANNEL_AXIS_NAMES:
            return i
    return None


def initial_mode(omero: Omero | None, n: int) -> str:
    """``rdefs.model`` "greyscale" opens one channel at a time; otherwise several channels (or one
    with a stated colour) open as a composite."""
    if omero is not None and omero.rdefs.model == "greyscale":
        return "single"
    return "composite" if n > 1 or (omero is not None and omero.channels) else "single"


def window_of(values: np.ndarray) -> tuple[float, float]:
    """The 0.5 and 99.5 percentiles of one channel's finite values."""
    return summarize(values).levels


def auto_windows(values: np.ndarray, settings: Sequence[ChannelSetting], *, only_missing: bool = False
                 ) -> tuple[ChannelSetting, ...]:
    """Every channel's window from its own values (``values``: rows, columns, channels); with
    ``only_missing``, only the windows not set yet."""
    out = []
    for s in settings:
        if (s.window is None or not only_missing) and s.index < values.shape[-1]:
            s = s.with_(window=window_of(values[..., s.index]))
        out.append(s)
    return tuple(out)


def composite(values: np.ndarray, settings: Sequence[ChannelSetting]) -> np.ndarray:
    """An RGB image (rows, columns, 3) of float32 in [0, 1]: the sum of the active channels of
    ``values`` (rows, columns, channels), each through its window (inverted where asked) times
    its colour, clipped. One pass per channel; a channel without a window takes its own."""
    rows, cols = values.shape[:2]
    out = np.zeros((rows, cols, 3), np.float32)
    for s in settings:
        if not s.active or s.index >= values.shape[-1]:
            continue
        v = np.asarray(values[..., s.index], dtype=np.float32)
        lo, hi = s.window if s.window is not None else window_of(v)
        if hi > lo:
            t = (v - np.float32(lo)) * np.float32(1.0 / (hi - lo))
        else:  # a window of no width: a step at its value
            t = (v > lo).astype(np.float32)
        np.clip(t, 0.0, 1.0, out=t)
        if s.inverted:
            t = 1.0 - t
        if v.dtype.kind == "f":
            t[np.isnan(v)] = 0.0  # a NaN adds nothing, inverted or not
        out += t[..., None] * (np.asarray(s.color, np.float32) / 255.0)
    np.clip(out, 0.0, 1.0, out=out)
    return out
