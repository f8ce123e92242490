"""What the screen shows of a scene, made on a worker: each tile reduced to about the pixels it
covers on screen, through the levels and lookup table (or the channels' composite), as 32-bit
ARGB words the GUI thread hands to Qt as they are, and the histogram of the values drawn.

The GUI thread thus never scales, looks up or composites a plane: a new plane costs it the
hand-over and a repaint of an image the size of the screen, not of the data. A tile is reduced
by keeping every ``k``-th row and column (``k`` the data pixels per screen pixel, rounded down),
which is what drawing the whole tile scaled down does with nearest-neighbour sampling.

``Rendering`` is the view model a driver (``scheduling.Driver``) runs for the image pane: one
frame is made at a time; what is asked meanwhile (a levels drag, the next plane, a zoom that
wants another reduction) is made next, newest only, and the image shown stays until it lands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...scheduling import Answer, Job, ReadOnce, call_job
from .channels import ChannelSetting, composite
from .pixels import argb, pack
from .scene import Tile

#: bins of the histogram beside a plane (integers: one bin per value where they are fewer)
HISTOGRAM_BINS = 500
#: values it counts at most (an even subsample of a larger plane): its shape, not its totals, is read
HISTOGRAM_SAMPLES = 1 << 16


@dataclass(frozen=True, eq=False)
class Look:
    """How values become colours: the levels and lookup table ((n, 3|4) uint8; None: grey), or
    the channels' composite (``channels`` non-empty; levels and table do not apply then)."""

    levels: tuple[float, float]
    table: np.ndarray | None = None
    channels: tuple[ChannelSetting, ...] = ()

    def key(self) -> tuple[Any, ...]:
        """Equal for looks that draw alike (the table by identity: it is made once per choice)."""
        if self.channels:
            return ("composite", self.channels)
        return (self.levels, id(self.table))


def reduction(tile: Tile, screen_scale: tuple[float, float]) -> tuple[int, int]:
    """Every how many rows and columns of ``tile`` one is kept: its pixels per screen pixel,
    rounded down (1 where a tile pixel takes a screen pixel or more)."""
    out = []
    for scale, step in zip(screen_scale, (tile.step_r, tile.step_c), strict=True):
        per_pixel = float(scale) * float(step)
        out.append(max(1, math.floor(1.0 / per_pixel)) if per_pixel > 0 and math.isfinite(per_pixel) else 1)
    return out[0], out[1]


@dataclass(frozen=True, eq=False)
class Rendered:
    """``tile`` as the screen shows it: ``pixels`` (rows, columns) premultiplied ARGB words of
    every ``step``-th row and column, drawn over ``rect`` (x, y, width, height, data coordinates)."""

    tile: Tile
    look_key: tuple[Any, ...]
    step: tuple[int, int]
    pixels: np.ndarray

    def rect(self) -> tuple[float, float, float, float]:
        h, w = self.pixels.shape
        kr, kc = self.step
        return (float(self.tile.c0), float(self.tile.r0), float(w * kc * self.tile.step_c),
                float(h * kr * self.tile.step_r))

    def shows(self, tile: Tile, look: Look, step: tuple[int, int]) -> bool:
        return self.tile is tile and self.look_key == look.key() and self.step == step


def fits(tile: Tile, look: Look) -> bool:
    """Whether ``look`` can draw ``tile``: a composite needs a tile with a channel dimension, and
    levels and a table draw a plane of values or an RGB(A) picture. A tile of the plane shown
    before (kept under the new one until it lands) may be neither, after the channel mode or the
    axes change; it keeps the colours it was drawn in."""
    if look.channels:
        return tile.image.ndim == 3
    return tile.image.ndim == 2 or (tile.image.ndim == 3 and tile.image.shape[-1] in (3, 4))


def render_tile(tile: Tile, look: Look, step: tuple[int, int]) -> Rendered:
    """The tile's image, every ``step``-th row and column, in the look's colours."""
    kr, kc = step
    image = tile.image[::kr, ::kc]
    if look.channels:
        rgb = np.round(composite(image, look.channels) * 255).astype(np.uint8)
        pixels = argb(rgb, (0.0, 255.0), None)
    else:
        pixels = argb(image, look.levels, look.table)
    return Rendered(tile, look.key(), step, np.ascontiguousarray(pixels, dtype=np.uint32))


def histogram(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(left bin edges, counts) of the finite values (an even subsample of a large plane; a
    colour plane's channels together), as the histogram beside a plane draws them (empty
    without a finite value)."""
    empty = np.zeros(0)
    flat = image.reshape(-1)
    if flat.size > HISTOGRAM_SAMPLES:
        flat = flat[:: -(-flat.size // HISTOGRAM_SAMPLES)]
    if flat.dtype.kind == "f":
        flat = flat[np.isfinite(flat)]
    if not flat.size:
        return empty, empty
    lo, hi = float(flat.min()), float(flat.max())
    if flat.dtype.kind in "iub" and flat.dtype.itemsize <= 4:  # bins of whole width, counted without a search
        width = max(1, math.ceil((hi - lo + 1) / HISTOGRAM_BINS))
        counts = np.bincount(((flat.astype(np.int64) - int(lo)) // width).astype(np.intp))
        edges = lo + width * np.arange(len(counts) + 1, dtype=np.float64)
    else:
        counts, edges = np.histogram(flat, bins=HISTOGRAM_BINS, range=(lo, hi if hi > lo else lo + 1.0))
    return edges[:-1], counts


@dataclass(frozen=True)
class Frame:
    """The rendered tiles of a scene (the coarse one under the detail), and the histogram of the
    tile it was taken from (None: unchanged)."""

    base: Rendered | None
    over: Rendered | None
    histogram: tuple[np.ndarray, np.ndarray] | None = None
    histogram_of: Tile | None = None


@dataclass(frozen=True)
class FrameOrder:
    """What a frame is made of, fixed on the GUI thread: the tiles, the look, the steps, what is
    already rendered (kept where it still shows the same), and which tile the histogram is of."""

    base: Tile | None
    over: Tile | None
    look: Look
    steps: tuple[tuple[int, int], tuple[int, int]]
    shown: tuple[Rendered | None, Rendered | None] = (None, None)
    histogram_of: Tile | None = None

    def same(self, other: FrameOrder | None) -> bool:
        return (other is not None and self.base is other.base and self.over is other.over
                and self.look.key() == other.look.key() and self.steps == other.steps)


def make_frame(order: FrameOrder) -> Frame:
    """Render what ``order`` asks (on a worker): a tile whose rendering is shown already as
    asked is kept; the histogram is counted where its tile is new."""
    out: list[Rendered | None] = []
    for tile, step, shown in zip((order.base, order.over), order.steps, order.shown, strict=True):
        if tile is None:
            out.append(None)
        elif shown is not None and shown.shows(tile, order.look, step):
            out.append(shown)
        elif not fits(tile, order.look):  # a tile of the plane before, kept until the new one lands
            out.append(shown if shown is not None and shown.tile is tile else None)
        else:
            out.append(render_tile(tile, order.look, step))
    counts, of = None, order.histogram_of
    if order.base is not None and order.base is not of and not order.look.channels:
        counts, of = histogram(order.base.image), order.base
    return Frame(out[0], out[1], counts, of)


@dataclass(frozen=True, eq=False)
class FrameRequest(ReadOnce):
    """The frame being made: its order, with what was shown when it was asked."""

    order: FrameOrder
    job: Job[Frame]



@dataclass(frozen=True, eq=False)
class Shown:
    """What the pane shows: ``frame`` (None: what is shown stays). ``made``: a frame was made,
    or could not be (``error``); ``newest``: it is the newest scene's (nothing newer is to be
    made), so what waits for the newest scene's pixels may go on."""

    frame: Frame | None
    made: bool = True
    error: BaseException | None = None
    newest: bool = True


#: a scene with no tiles: nothing shown
BLANK = Frame(None, None)


class Rendering:
    """Frames of the scenes asked (a ``FrameOrder``, None for a scene without tiles), one at a
    time: while a frame is made, asking for another leaves it to land, and the driver asks again
    for the newest order once it has; an order that draws as the frame made last makes nothing.
    What is shown (kept where it still shows the same) and which tile the histogram counts are
    remembered from the frames handed out."""

    def __init__(self) -> None:
        #: the newest order asked, the frame being made, the order made last (None once a
        #: scene without tiles cleared it)
        self._wanted: FrameOrder | None = None
        self._making: FrameRequest | None = None
        self._made: FrameOrder | None = None
        self._shown: tuple[Rendered | None, Rendered | None] = (None, None)
        self._histogram_of: Tile | None = None

    @property
    def making(self) -> bool:
        return self._making is not None

    def request(self, order: FrameOrder | None) -> FrameRequest | None:
        self._wanted = order
        if self._making is not None:
            return self._making  # one frame at a time: the newest is made once it lands
        if order is None or order.same(self._made):
            return None
        order = replace(order, shown=self._shown, histogram_of=self._histogram_of)
        self._making = FrameRequest(order, call_job(lambda: make_frame(order), label="rendering"))
        return self._making

    def waiting(self, request: FrameRequest | None) -> Shown | None:
        """The image shown stays until the frame lands; a scene without tiles shows nothing at once."""
        if request is None and self._wanted is None:
            self._made = None  # what is made next is shown anew
            return self._show(BLANK, made=False)
        return None

    def apply(self, request: FrameRequest, answer: Answer[Frame]) -> Shown:
        """The frame made is shown even where a newer one is wanted (a drag shows every frame made)."""
        if request is self._making:
            self._making = None
        self._made = request.order
        wanted = self._wanted
        newest = wanted is None or wanted.same(request.order)
        if answer.error is not None:
            return Shown(None, error=answer.error, newest=newest)
        if wanted is None:  # the scene has no tiles any more
            self._made = None
            return self._show(BLANK, newest=True)
        frame = answer.value
        return Shown(None, newest=newest) if frame is None else self._show(frame, newest=newest)

    def _show(self, frame: Frame, made: bool = True, newest: bool = True) -> Shown:
        self._shown = (frame.base, frame.over)
        if frame.histogram is not None:
            self._histogram_of = frame.histogram_of
        return Shown(frame, made=made, newest=newest)


__all__ = ["BLANK", "Frame", "FrameOrder", "FrameRequest", "HISTOGRAM_BINS", "HISTOGRAM_SAMPLES", "Look", "Rendered",
           "Rendering", "Shown", "fits", "histogram", "make_frame", "pack", "reduction", "render_tile"]
