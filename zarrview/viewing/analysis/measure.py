"""The measuring tools' view model: a line profile or a region's statistics of the plane shown.

An ask names the view state and the line or rectangle in the plane's data coordinates; the
request reads level 0 on a worker (``profile.request``, ``stats.request``), so what is said is
of the data, not of the preview on screen. Run by a driver (``scheduling.Driver``) like every
view model: a newer ask cancels the read before it, and only the newest answer is applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...scheduling import Answer, Job, ReadOnce
from ..image.state import ViewState
from . import profile, stats
from .plane import Block, PixelSize, channel_names

RGB = tuple[int, int, int]


@dataclass(frozen=True, eq=False)
class Measure:
    """What to measure: the profile along ``line`` or the statistics of ``box`` (one of them)
    of ``state``'s plane; ``pixel``: level 0's pixel size where CF coordinates give no distance."""

    state: ViewState
    line: profile.Line | None = None
    box: Block | None = None
    pixel: PixelSize = None


@dataclass(frozen=True, eq=False)
class MeasureRequest(ReadOnce):
    job: Job[Any]
    ask: Measure



@dataclass(frozen=True, eq=False)
class Measured:
    """What the panel shows: a profile's curves (named and coloured by their channels), a
    region's statistics, or only ``said`` (cancelled, or why nothing can be measured)."""

    said: str = ""
    #: the newest result (a ``profile.Profile`` or ``stats.RegionStats``), None with ``said``
    result: Any = None
    plot: profile.ProfilePlot | None = None
    colours: tuple[RGB, ...] = ()
    #: chunks that could not be read: their fill value counts instead
    unread_chunks: int = 0


def channel_styles(state: ViewState) -> tuple[tuple[str, ...], tuple[RGB, ...]]:
    """Names and curve colours of the colour dimension's channels: a composite's own labels and
    colours, red, green and blue for an RGB picture, none otherwise."""
    if state.channel_dim is None:
        return (), ()
    names = channel_names(state)
    if state.composite:
        by_index = {c.index: c for c in state.channels}
        found = [by_index.get(i) for i in range(len(names))]
        colours = tuple((int(c.color[0]), int(c.color[1]), int(c.color[2])) if c is not None else (128, 128, 128)
                        for c in found)
        return names, colours
    return names, ()


class MeasureModel:
    def __init__(self) -> None:
        self._asked: Measure | None = None

    def request(self, ask: Measure) -> MeasureRequest | None:
        """The read ``ask`` needs; None for the ask already measured (or one with nothing to measure)."""
        if ask is self._asked:
            return None
        self._asked = ask
        if ask.line is not None:
            return MeasureRequest(profile.request(ask.state, ask.line, ask.pixel), ask)
        if ask.box is not None:
            return MeasureRequest(stats.request(ask.state, ask.box), ask)
        return None

    def waiting(self, request: MeasureRequest | None) -> Measured | None:
        """What was measured stays on screen while the new read runs."""
        return None

    def apply(self, request: MeasureRequest, answer: Answer[Any]) -> Measured:
        unread = len(answer.failures)
        if answer.cancelled:
            return Measured(f"Cancelled the {answer.label}.")
        if answer.error is not None:
            return Measured(f"Cannot measure: {answer.error}")
        value = answer.value
        if isinstance(value, profile.Profile):
            names, colours = channel_styles(request.ask.state)
            return Measured(result=value, plot=profile.plot_of(value, names), colours=colours, unread_chunks=unread)
        return Measured(result=value, unread_chunks=unread)
