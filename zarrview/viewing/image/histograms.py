"""Each channel's histogram in a composite, for the channel panel to draw under its window.

The histograms describe the values on screen: the finest tile of the plane shown (the whole
plane, or the region zoomed into; a strided preview until full resolution lands), the same
values Auto contrast takes the windows from. They are counted on a worker (``histogram_job``)
over a fixed number of bins spanning each channel's finite values, so a widget only draws
counts. NaN and infinities are left out: they have no place on a value axis, and the composite
draws a NaN as nothing. Each histogram carries its channel's automatic window by the rule of
the whole image (``channels.window_of``: the 0.5 and 99.5 percentiles), so a channel's own
Auto costs the GUI thread nothing. ``HistogramsModel`` is their view model, run by a driver
(``scheduling.Driver``) like every other: each new tile of values is counted once.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...scheduling import Answer, Context, Job, ReadOnce
from .channels import window_of
from .contrast import displayable
from .scene import Scene, Tile
from .state import ViewState

#: bins of a channel's histogram: enough to see the shape of a distribution in a row 200 px wide
HISTOGRAM_BINS = 64


@dataclass(frozen=True, eq=False)  # compared by identity: they hold arrays
class ChannelHistogram:
    """The counts of one channel's finite values in ``len(counts)`` bins between ``edges``
    (len(counts) + 1 increasing values), and the window Auto gives that channel."""

    index: int
    edges: np.ndarray
    counts: np.ndarray
    auto: tuple[float, float]

    @property
    def span(self) -> tuple[float, float]:
        return float(self.edges[0]), float(self.edges[-1])


def value_range(values: np.ndarray) -> tuple[float, float]:
    """The range the bins span: the finite values' minimum and maximum; a unit range around a
    uniform channel's value; (0, 1) when no value is finite."""
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat[np.isfinite(flat)]
    if not flat.size:
        return 0.0, 1.0
    lo, hi = float(flat.min()), float(flat.max())
    return (lo, hi) if hi > lo else (lo - 0.5, lo + 0.5)


def channel_histogram(values: np.ndarray, index: int, bins: int = HISTOGRAM_BINS) -> ChannelHistogram:
    """The histogram of one channel plane (rows, columns) of displayable numbers."""
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat[np.isfinite(flat)]
    counts, edges = np.histogram(flat, bins=bins, range=value_range(flat))
    return ChannelHistogram(index, edges, counts, window_of(values))


def channel_histograms(values: np.ndarray, indices: Sequence[int], complex_mode: str = "magnitude",
                       bins: int = HISTOGRAM_BINS, ctx: Context | None = None) -> tuple[ChannelHistogram, ...]:
    """The histograms of the channels ``indices`` of ``values`` (rows, columns, channels) as
    read, reduced as the composite reduces them (``complex_mode``); a channel beyond the last
    has none. With ``ctx``, a cancelled job stops between channels (``ReadCancelled``)."""
    image = displayable(values, complex_mode)
    out = []
    for i in indices:
        if ctx is not None:
            ctx.cancel.raise_if_cancelled()  # a newer view wants its own histograms
        if 0 <= i < image.shape[-1]:
            out.append(channel_histogram(image[..., i], i, bins))
    return tuple(out)


def histogram_source(scene: Scene, state: ViewState) -> Tile | None:
    """The tile whose values the histograms describe: the finest of the plane shown (the one Auto
    contrast takes windows from), in composite mode only; None otherwise."""
    if not state.composite:
        return None
    current = [t for t in scene.tiles() if t.plane_key == state.plane_key() and t.values.ndim == 3]
    return current[-1] if current else None


def histogram_job(tile: Tile, state: ViewState, bins: int = HISTOGRAM_BINS) -> Job[tuple[ChannelHistogram, ...]]:
    """The job counting the histograms of ``tile``'s channels, with everything it needs bound."""
    values, indices, mode = tile.values, tuple(c.index for c in state.channels), state.complex_mode
    return Job(lambda ctx: channel_histograms(values, indices, mode, bins, ctx),
               f"histograms of the channels of {state.array.path}")


@dataclass(frozen=True, eq=False)
class HistogramAsk:
    """The state of the channel panel's histograms: a scene drawn for a view state."""

    scene: Scene
    state: ViewState


@dataclass(frozen=True, eq=False)
class HistogramRequest(ReadOnce):
    job: Job[tuple[ChannelHistogram, ...]]



class HistogramsModel:
    """Counts the histograms of each new tile of a composite's values (another plane, region,
    resolution or complex mode), once: the same values drawn again read nothing, and while they
    are being counted the count under way is the request."""

    def __init__(self) -> None:
        #: the values counted or being counted (held weakly: a tile may be dropped meanwhile),
        #: their complex mode, and the request counting them until it is answered
        self._counted: tuple[weakref.ref[Any], str] | None = None
        self._pending: HistogramRequest | None = None

    def request(self, ask: HistogramAsk) -> HistogramRequest | None:
        source = histogram_source(ask.scene, ask.state)
        if source is None:
            return None
        counted = self._counted
        if counted is not None and counted[0]() is source.values and counted[1] == ask.state.complex_mode:
            return self._pending
        self._counted = (weakref.ref(source.values), ask.state.complex_mode)
        self._pending = HistogramRequest(histogram_job(source, ask.state))
        return self._pending

    def waiting(self, request: HistogramRequest | None) -> tuple[ChannelHistogram, ...] | None:
        """The histograms drawn stay until the new ones are counted."""
        return None

    def apply(self, request: HistogramRequest, answer: Answer[tuple[ChannelHistogram, ...]]
              ) -> tuple[ChannelHistogram, ...] | None:
        """The histograms counted; None after a cancel or an error (the rows keep theirs)."""
        if request is self._pending:
            self._pending = None
        if not answer.ok:
            return None
        return answer.value or ()
