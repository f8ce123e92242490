"""Statistics of a rectangle of the plane, read at full resolution from level 0 in bounded blocks.

A rectangle can be the whole of a 100,000-pixel-wide plane, so it is never read at once: it is
cut into blocks of whole chunks (at most ``BLOCK_ELEMENTS`` elements each, split further where
one chunk is bigger), read one after another, and folded into running totals. The mean and
spread are merged per block by Chan's pairwise rule (count, mean and the sum of squared
deviations, as a projection merges its slabs) rather than from a running sum of squares, which loses every digit of a standard
deviation of 1 around a mean of 30,000 in float64.

The values are those the view shows: CF-decoded where it decodes (a masked value is then NaN),
complex reduced by its mode. A colour dimension's channels (a composite's stains, a picture's
red, green and blue) are each counted on their own and then together: a mean over DAPI and GFP
at once answers nothing. ``count`` is the
values that are not NaN (the min, max, mean and std are of these), ``nan`` those that are;
``fill`` counts the stored values equal to a fill value (the array's ``fill_value`` and the CF
``_FillValue`` and ``missing_value``, NaN fills excepted: those are NaN), decoded or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...scheduling import Context, Job
from ...zarrlib import ChunkFailure
from ..cf.values import value_coding
from ..image.readout import format_value
from ..image.state import ViewState
from ..projection.ops import Partial
from .plane import AnalysisError, Block, channel_names, plane_name, read_block, value_heading

#: the most elements one block of a rectangle holds (16 MB as float64, which the spread is taken in)
BLOCK_ELEMENTS = 1 << 21


@dataclass
class Running:
    """Totals folded block by block: exact min and max in the values' own type, and each block's
    count, mean and squared deviations merged by the projections' Chan rule (``projection.ops``)."""

    count: int = 0
    nan: int = 0
    fill: int = 0
    minimum: float | int | None = None
    maximum: float | int | None = None
    spread: Partial = field(default_factory=lambda: Partial("std"))

    def add(self, shown: np.ndarray, fills: int) -> None:
        flat = shown.reshape(-1)
        self.fill += fills
        if flat.dtype.kind == "f":
            missing = np.isnan(flat)
            nans = int(missing.sum())
            self.nan += nans
            if nans:
                flat = flat[~missing]
        n = int(flat.size)
        if not n:
            return
        lo, hi = flat.min().item(), flat.max().item()
        self.minimum = lo if self.minimum is None else min(self.minimum, lo)
        self.maximum = hi if self.maximum is None else max(self.maximum, hi)
        with np.errstate(invalid="ignore", over="ignore"):
            deviations = flat.astype(np.float64)
            mean = float(deviations.mean())
            deviations -= mean
            m2 = float(np.dot(deviations, deviations))  # the sum of squares, without another block-sized array
        self.spread.merge(Partial("std", np.array(mean), n, np.array(m2)))
        self.count += n

    def merge(self, other: Running) -> None:
        """Fold in the totals of other values (another channel's)."""
        self.count += other.count
        self.nan += other.nan
        self.fill += other.fill
        for mine, theirs, pick in (("minimum", other.minimum, min), ("maximum", other.maximum, max)):
            if theirs is not None:
                current = getattr(self, mine)
                setattr(self, mine, theirs if current is None else pick(current, theirs))
        if other.spread.value is not None:
            self.spread.merge(Partial("std", np.array(other.spread.value), other.spread.count,
                                      None if other.spread.m2 is None else np.array(other.spread.m2)))

    @property
    def mean(self) -> float | None:
        return None if self.spread.value is None else float(self.spread.value)

    @property
    def std(self) -> float | None:
        """The population standard deviation (``ddof`` 0, as numpy's ``nanstd``)."""
        return None if self.spread.value is None else float(self.spread.result())


@dataclass(frozen=True)
class Figures:
    """What is known of some values: those counted (not NaN) and their min, max, mean and
    population standard deviation (numpy's ``nanstd``, ``ddof=0``), the NaN and the fill values."""

    count: int
    nan: int
    fill: int
    minimum: float | int | None
    maximum: float | int | None
    mean: float | None
    std: float | None


def _figures(running: Running) -> dict[str, Any]:
    """The ``Figures`` fields of ``running``'s totals."""
    return {"count": running.count, "nan": running.nan, "fill": running.fill, "minimum": running.minimum,
            "maximum": running.maximum, "mean": running.mean, "std": running.std}


@dataclass(frozen=True)
class ChannelStats(Figures):
    """The figures of one channel of a colour dimension."""

    name: str = ""


@dataclass(frozen=True)
class RegionStats(Figures):
    """The figures of a rectangle (of all its channels together), what it is of and where."""

    block: Block = Block(0, 0, 0, 0)
    title: str = ""
    value_name: str = ""
    value_unit: str = ""
    fill_values: tuple[float | int, ...] = field(default=())
    #: the channels of a colour dimension (the figures above are of all of them together)
    channels: int = 1
    #: values of the rectangle in chunks that could not be read, left out of every figure
    unread: int = 0
    #: each channel's own figures, in the order of the colour dimension (empty without one)
    by_channel: tuple[ChannelStats, ...] = ()

    @property
    def total(self) -> int:
        return self.count + self.nan


def fill_values(state: ViewState) -> tuple[float | int, ...]:
    """The stored values counted as fill: the array's ``fill_value`` and its CF fills, no NaN."""
    arr = state.array
    found: list[float | int] = []
    candidates = [arr.fill_value, *value_coding(arr).fill_values]
    for value in candidates:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            continue
        if isinstance(value, (float, np.floating)) and math.isnan(value):
            continue
        if value not in found:
            found.append(value.item() if isinstance(value, np.generic) else value)
    return tuple(found)


def count_fills(raw: np.ndarray, fills: tuple[float | int, ...]) -> int:
    """Stored values of ``raw`` equal to one of ``fills``; a fill beyond a signed type's range
    is matched against its unsigned reading (a CF ``_Unsigned`` byte's 255)."""
    if raw.dtype.kind not in "iuf" or not fills:
        return 0
    hit = np.zeros(raw.shape, bool)
    for fill in fills:
        data = raw
        if raw.dtype.kind == "i" and not np.iinfo(raw.dtype).min <= fill <= np.iinfo(raw.dtype).max:
            data = raw.view(raw.dtype.str.replace("i", "u"))
            if not 0 <= fill <= np.iinfo(data.dtype).max:
                continue
        elif raw.dtype.kind == "u" and not 0 <= fill <= np.iinfo(raw.dtype).max:
            continue
        hit |= data == fill
    return int(hit.sum())


def blocks(state: ViewState, box: Block, limit: int = BLOCK_ELEMENTS) -> list[Block]:
    """``box`` cut along chunk boundaries into blocks of at most ``limit`` elements (per channel
    of a colour dimension, whose channels each block reads whole)."""
    chunks = state.array.typical_chunks
    channels = 1 if state.channel_dim is None else max(1, state.array.shape[state.channel_dim])
    limit = max(1, limit // channels)
    cy, cx = max(1, chunks[state.y_dim]), max(1, chunks[state.x_dim])
    if cy * cx > limit:  # one chunk is already too big: rows of it (or parts of rows)
        cx = min(cx, limit)
        cy = max(1, limit // cx)
    else:
        k = max(1, math.isqrt(limit // (cy * cx)))
        cy, cx = cy * k, cx * max(1, limit // (cy * k * cx))
    out = []
    for r in range((box.r0 // cy) * cy, box.r1, cy):
        for c in range((box.c0 // cx) * cx, box.c1, cx):
            out.append(Block(max(r, box.r0), min(r + cy, box.r1), max(c, box.c0), min(c + cx, box.c1)))
    return out


def clamp(state: ViewState, box: Block) -> Block:
    """``box`` within the plane; AnalysisError where nothing of it is inside."""
    rows, cols = state.plane_shape
    inside = Block(max(0, box.r0), min(rows, box.r1), max(0, box.c0), min(cols, box.c1))
    if inside.r1 <= inside.r0 or inside.c1 <= inside.c0:
        raise AnalysisError("the rectangle lies outside the plane")
    return inside


def read_mask(state: ViewState, block: Block, failed: list[ChunkFailure]) -> np.ndarray | None:
    """Which (row, column) of ``block`` were read, False inside the boxes of ``failed`` chunks;
    None when every chunk was read."""
    if not failed:
        return None
    keep = np.ones((block.r1 - block.r0, block.c1 - block.c0), dtype=bool)
    for f in failed:
        (r0, r1), (c0, c1) = f.box[state.y_dim], f.box[state.x_dim]
        keep[max(r0, block.r0) - block.r0:max(min(r1, block.r1) - block.r0, 0),
             max(c0, block.c0) - block.c0:max(min(c1, block.c1) - block.c0, 0)] = False
    return keep


def request(state: ViewState, box: Block, limit: int = BLOCK_ELEMENTS) -> Job[RegionStats]:
    """A job reading rows ``box.r0:box.r1`` and columns ``box.c0:box.c1`` of the plane (clamped
    to it) block by block, reporting progress per block and stopping between blocks on cancel."""
    name, unit = value_heading(state)
    title = plane_name(state)
    fills = fill_values(state)
    channels = 1 if state.channel_dim is None else state.array.shape[state.channel_dim]
    names = channel_names(state)

    def work(ctx: Context) -> RegionStats:
        inside = clamp(state, box)
        parts = blocks(state, inside, limit)
        each = [Running() for _ in range(channels)]
        unread = 0
        for done, block in enumerate(parts):
            ctx.cancel.raise_if_cancelled()
            before = len(ctx.failures)
            raw, shown = read_block(state, block, ctx)
            keep = read_mask(state, block, ctx.failures[before:])
            if keep is not None:  # a chunk that could not be read holds fill values, not data
                unread += int(keep.size - keep.sum()) * channels
                raw, shown = raw[keep], shown[keep]
            if state.channel_dim is None:
                each[0].add(shown, count_fills(raw, fills))
            else:
                for k, running in enumerate(each):
                    running.add(shown[..., k], count_fills(raw[..., k], fills))
            if ctx.progress is not None:
                ctx.progress(done + 1, len(parts))
        total = Running()
        for running in each:
            total.merge(running)
        by_channel = () if state.channel_dim is None else tuple(
            ChannelStats(**_figures(r), name=names[k]) for k, r in enumerate(each))
        return RegionStats(**_figures(total), block=inside, title=title, value_name=name, value_unit=unit,
                           fill_values=fills, channels=channels, unread=unread, by_channel=by_channel)

    return Job(work, f"statistics of {title}[{box.r0}:{box.r1}, {box.c0}:{box.c1}]")


def _number(v: float | int | None, unit: str) -> str:
    if v is None:
        return "–"
    return (format_value(v) if isinstance(v, int) else f"{v:.6g}") + unit


def channel_rows(stats: RegionStats) -> list[tuple[str, tuple[str, ...]]]:
    """The panel's table of a colour dimension: (what, each channel's figure, then all channels')."""
    unit = f" {stats.value_unit}" if stats.value_unit else ""
    fills = ", ".join(format_value(f) for f in stats.fill_values) or "none"
    columns: list[Any] = [*stats.by_channel, stats]
    return [("min", tuple(_number(c.minimum, unit) for c in columns)),
            ("max", tuple(_number(c.maximum, unit) for c in columns)),
            ("mean", tuple(_number(c.mean, unit) for c in columns)),
            ("std", tuple(_number(c.std, unit) for c in columns)),
            ("values", tuple(f"{c.count:,}" for c in columns)),
            ("NaN", tuple(f"{c.nan:,}" for c in columns)),
            (f"fill ({fills})", tuple(f"{c.fill:,}" for c in columns))]


def rows_of(stats: RegionStats) -> list[tuple[str, str]]:
    """The panel's lines: (what, value with its units)."""
    unit = f" {stats.value_unit}" if stats.value_unit else ""

    def number(v: float | int | None) -> str:
        return _number(v, unit)

    b = stats.block
    fills = ", ".join(format_value(f) for f in stats.fill_values) or "none"
    return [("region", f"rows {b.r0:,}–{b.r1 - 1:,}, columns {b.c0:,}–{b.c1 - 1:,}"),
            ("min", number(stats.minimum)), ("max", number(stats.maximum)),
            ("mean", number(stats.mean)), ("std", number(stats.std)),
            ("values", f"{stats.count:,}" + (f" ({stats.channels} channels)" if stats.channels > 1 else "")), ("NaN", f"{stats.nan:,}"),
            (f"fill ({fills})", f"{stats.fill:,}")] + \
        ([("unread", f"{stats.unread:,} (chunks that failed, left out)")] if stats.unread else [])
