"""1-D arrays as a line at screen resolution: exact values when few enough are visible, else
the minimum and maximum of every screen column (an envelope), as oscilloscopes and Panoply
draw long series.

A 20-million-element series cannot be drawn point by point (pyqtgraph would hold and paint
every sample) and must not be read whole at once (that is memory the view does not need).
The envelope is computed on a worker of the shared pool, block by block of whole chunks, each block
reduced to per-column minima and maxima and dropped, so memory stays at one block whatever
the length. Where the visible chunks exceed the budget, every k-th chunk is read and the plot
says the envelope is sampled.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...scheduling import Answer, Context, Job
from ...zarrlib import Array
from ..cf.decoded import Decoding, Format
from ..cf.coords import CoordAxis
from ..cf.view import CFView
from ..image.contrast import displayable
from ..image.readout import format_value, request_label

#: screen columns an envelope has when the widget has not said how wide it is
DEFAULT_COLUMNS = 2000
#: at most this many elements are read and reduced at a time (32 MiB of float64)
BLOCK_ELEMENTS = 1 << 22
DEFAULT_CHUNK_BUDGET = 1024


@dataclass(frozen=True)
class LinePlot:
    """``x`` and ``y`` as drawn: for an envelope, x repeats each column's centre and y holds its
    (min, max) pair, to be drawn as vertical segments (``pairs``)."""

    x: np.ndarray | None = None
    y: np.ndarray | None = None
    envelope: bool = False
    dates: bool = False  # y values are seconds since 1970 (datetime64 data)
    x0: int = 0
    x1: int = 0
    status: str = ""
    message: str | None = None
    busy: bool = False
    #: the words of an x position (a coordinate's: dates, ``45.25 °N``) and of a y value (dates
    #: of a time variable), else None for plain numbers
    x_format: Format | None = None
    y_format: Format | None = None
    title: str = ""
    x_label: str = ""
    y_label: str = ""
    units: str | None = None
    #: a value's own text (a packed value to its packing's decimals), else None
    text: Callable[[Any], str | None] | None = None

    def readout(self, x: float) -> str:
        """The point drawn nearest ``x`` in words: ``time 2001-03-04 06:00: 1.5 degC``."""
        if self.x is None or self.y is None or not len(self.x) or not math.isfinite(x):
            return ""
        distance = np.abs(self.x - x)
        if not np.isfinite(distance).any():
            return ""
        i = int(np.nanargmin(distance))
        where = self.x_format(float(self.x[i])) if self.x_format is not None else f"{self.x[i]:g}"
        if self.envelope:
            lo, hi = self.y[i - i % 2], self.y[i - i % 2 + 1]
            value = f"{self._value(lo)} … {self._value(hi)}"
        else:
            value = self._value(self.y[i])
        return f"{self.x_label or 'index'} {where}: {value}"

    def _value(self, v: float) -> str:
        if not math.isfinite(v):
            return "missing"
        if self.y_format is not None:
            return self.y_format(float(v))
        if self.dates:
            return str(np.datetime64(int(round(v)), "s")).replace("T", " ")
        own = None if self.text is None else self.text(np.float64(v))
        text = format_value(np.float64(v)) if own is None else own
        return f"{text} {self.units}" if self.units and self.units != "1" else text


@dataclass(frozen=True)
class LinePlan:
    x0: int
    x1: int
    columns: int  # 0: exact values
    stride: int  # read every stride-th chunk


def plan_line(length: int, chunk: int, x0: float, x1: float, columns: int, budget: int) -> LinePlan:
    lo, hi = max(0, math.floor(x0)), min(length, math.ceil(x1))
    hi = max(lo, hi)
    nchunks = 0 if hi == lo else (hi - 1) // chunk - lo // chunk + 1
    stride = max(1, -(-nchunks // max(1, budget)))
    if hi - lo <= 2 * columns and stride == 1:
        return LinePlan(lo, hi, 0, 1)
    return LinePlan(lo, hi, max(1, min(columns, hi - lo)), stride)


def as_numbers(data: np.ndarray) -> tuple[np.ndarray, bool]:
    """Float values for plotting; datetime64 as seconds since 1970 (NaT as NaN), flagged as dates."""
    if data.dtype.kind == "M":
        secs = data.astype("datetime64[s]")
        out = secs.view("i8").astype("f8")
        out[np.isnat(secs)] = np.nan
        return out, True
    return np.asarray(displayable(data), dtype="f8"), False


def envelope(arr: Array, plan: LinePlan, ctx: Context,
             numbers: Callable[[np.ndarray], tuple[np.ndarray, bool]] = as_numbers) -> tuple[np.ndarray, bool]:
    """(columns, 3) rows of (centre, min, max) over ``plan.x0:plan.x1``; NaN where a column saw no
    finite value. ``numbers`` turns each block read into the values drawn (decoded)."""
    edges = np.unique(np.linspace(plan.x0, plan.x1, plan.columns + 1).round().astype(np.int64))
    n = len(edges) - 1
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    chunk = arr.typical_chunks[0]
    first, last = plan.x0 // chunk, (plan.x1 - 1) // chunk
    if plan.stride == 1:
        per = max(1, BLOCK_ELEMENTS // chunk)
        blocks = [(c, min(last + 1, c + per)) for c in range(first, last + 1, per)]
    else:
        blocks = [(c, c + 1) for c in range(first, last + 1, plan.stride)]
    dates = False
    for i, (c0, c1) in enumerate(blocks):
        ctx.cancel.raise_if_cancelled()
        a, b = max(plan.x0, c0 * chunk), min(plan.x1, c1 * chunk)
        values, dates = numbers(arr.read((slice(a, b),), cancel=ctx.cancel, executor=ctx.executor,
                                         failures=ctx.failures))
        start = int(np.searchsorted(edges, a, side="right")) - 1
        cuts = edges[(edges > a) & (edges < b)] - a
        seg = np.concatenate([[0], cuts]).astype(np.int64)
        bins = start + np.arange(len(seg))
        with np.errstate(invalid="ignore"):
            finite = np.where(np.isfinite(values), values, np.nan)
            seg_lo = np.fmin.reduceat(finite, seg)
            seg_hi = np.fmax.reduceat(finite, seg)
        lo[bins] = np.fmin(lo[bins], seg_lo)
        hi[bins] = np.fmax(hi[bins], seg_hi)
        if ctx.progress is not None:
            ctx.progress(i + 1, len(blocks))
    lo[np.isinf(lo)] = np.nan
    hi[np.isinf(hi)] = np.nan
    centres = (edges[:-1] + edges[1:] - 1) / 2.0
    return np.column_stack([centres, lo, hi]), dates


def _index_label(axis: CoordAxis, x: float) -> str:
    i = int(round(x))
    return axis.label(i) if 0 <= i < len(axis) else ""


def _read_numbers(arr: Array, sel: tuple[slice], numbers: Callable[[np.ndarray], tuple[np.ndarray, bool]],
                  ctx: Context) -> tuple[np.ndarray, bool]:
    """``sel`` of ``arr`` read and turned into the values drawn, on the worker."""
    return numbers(np.asarray(arr.read(sel, cancel=ctx.cancel, cache=ctx.cache, progress=ctx.progress,
                                       executor=ctx.executor, failures=ctx.failures)))


@dataclass(frozen=True)
class LineRequest:
    """A read the line model asked for: its job and the plan its answer is drawn by."""

    job: Job[Any]
    plan: LinePlan

    @property
    def label(self) -> str:
        return self.job.label

    @property
    def read(self) -> Hashable:
        return self.plan


@dataclass(frozen=True)
class LineRange:
    """The state of a line view: the indices ``x0``..``x1`` in view, over ``columns`` screen
    columns (None: as wide as before)."""

    x0: float
    x1: float
    columns: int | None = None


class LineModel:
    """States (the visible range of the array shown) in, ``LinePlot`` out, run by a driver
    (``scheduling.Driver``) as the image's model is: it owns no lane and calls nobody back.

    With the array's CF view (``show(arr, cf)``) the line is the image's values: decoded (packing
    undone, fill values as gaps, times as dates) and drawn against the dimension's coordinate
    variable (dates for a time), titled with the long name and units. Ranges stay indices inside
    the model: a visible x range in coordinate values is turned back into one."""

    def __init__(self, budget: int = DEFAULT_CHUNK_BUDGET) -> None:
        self.budget = budget
        self.array: Array | None = None
        self.plot = LinePlot()
        self.columns = DEFAULT_COLUMNS
        self.decoding: Decoding | None = None
        #: the x position of each index (the coordinate's, increasing or decreasing), else None
        self.positions: np.ndarray | None = None
        self._look = LinePlot()

    def clear(self) -> None:
        self.array = None
        self.plot = LinePlot()
        self.decoding = self.positions = None
        self._look = LinePlot()

    def show(self, arr: Array, cf: CFView | None = None) -> LineRange:
        """Plot ``arr``, decoded and against its coordinate as ``cf`` (read on a worker) says:
        the state of the whole line, for the driver to show."""
        self.clear()
        self.array = arr
        self._describe(arr, cf)
        return LineRange(0, arr.shape[0])

    def _describe(self, arr: Array, cf: CFView | None) -> None:
        dec = None if cf is None else cf.decoding
        self.decoding = dec if dec is not None and dec.active and not arr.dtype.names else None
        y_format = None
        if self.decoding is not None and self.decoding.times is not None:  # at the resolution of all the times
            own = None if cf is None or cf.own is None else cf.own.time
            y_format = own.format if own is not None else self.decoding.plotted(np.zeros(1, arr.dtype))[1]
        axis = None if cf is None else cf.axes.get(0)
        x_format, x_label = None, (arr.dimension_names or (None,))[0] or "index"
        if cf is not None and cf.own is not None:  # a coordinate variable itself: its values are y, x its index
            x_label = f"{x_label} (index)"
        elif axis is not None:
            xs = axis.numeric()
            steps = np.diff(xs)
            x_label = axis.name.rsplit("/", 1)[-1]
            if len(xs) == arr.shape[0] and np.isfinite(xs).all() and (np.all(steps > 0) or np.all(steps < 0)):
                self.positions, x_format = xs, axis.format
            else:  # unordered (station ids) or with gaps: drawn by index, each named by its value
                x_format = functools.partial(_index_label, axis)
        units = None if cf is None or y_format is not None else cf.units  # a time's units are its dates
        title = cf.title if cf is not None else ""
        self._look = LinePlot(x_format=x_format, y_format=y_format, title=title, x_label=x_label,
                              y_label=units or "", units=units,
                              text=None if self.decoding is None else self.decoding.text)

    def range_of(self, x0: float, x1: float, columns: int | None = None) -> LineRange:
        """The state of a plot that shows ``x0``..``x1`` (coordinate values where it is drawn
        against them)."""
        xs = self.positions
        if xs is not None:
            index = np.arange(len(xs), dtype=np.float64)
            ordered, at = (xs, index) if xs[-1] >= xs[0] else (xs[::-1], index[::-1])
            x0, x1 = sorted(float(np.interp(x, ordered, at, left=at[0] - 1, right=at[-1] + 1)) for x in (x0, x1))
            x0, x1 = x0, x1 + 1  # the element under the right edge is in view
        return LineRange(x0, x1, columns)

    def numbers(self, raw: np.ndarray) -> tuple[np.ndarray, bool]:
        """The values drawn for stored ``raw``: decoded (times as days of their calendar), else
        as ``as_numbers`` draws them."""
        if self.decoding is None:
            return as_numbers(raw)
        return np.require(self.decoding.plotted(raw)[0], np.float64, "W"), False

    def request(self, state: LineRange) -> LineRequest | None:
        """The read that ``state``'s range needs, or None where the plot has it (or the array is
        empty: ``waiting`` says so)."""
        arr = self.array
        if arr is None:
            return None
        self.columns = max(16, state.columns or self.columns)
        plan = plan_line(arr.shape[0], arr.typical_chunks[0], state.x0, state.x1, self.columns, self.budget)
        if plan.x1 <= plan.x0 or self._covers(plan):
            return None
        sel = (slice(plan.x0, plan.x1),)
        label = request_label(arr.path, sel, arr.shape)
        if plan.columns:
            return LineRequest(Job(functools.partial(envelope, arr, plan, numbers=self.numbers), label), plan)
        return LineRequest(Job(functools.partial(_read_numbers, arr, sel, self.numbers), label), plan)

    def _covers(self, plan: LinePlan) -> bool:
        p = self.plot
        return (p.y is not None and not p.envelope and p.x0 <= plan.x0 and plan.x1 <= p.x1 and not p.busy)

    def waiting(self, request: LineRequest | None) -> LinePlot | None:
        """The plot drawn while ``request`` is read: the one shown, saying so (an empty array
        says it is empty; nothing new where nothing is read)."""
        if self.array is not None and self.array.shape[0] == 0:
            return self._keep(LinePlot(message=f"{self.array.path} is empty: it has length 0"))
        if request is None:
            return None
        return self._keep(dataclasses.replace(self.plot, status=f"Reading {request.label}…", message=None, busy=True))

    def _x(self, index: np.ndarray) -> np.ndarray:
        """x positions of (fractional) indices: the coordinate's, else the indices."""
        xs = self.positions
        return index if xs is None else np.interp(index, np.arange(len(xs), dtype=np.float64), xs)

    def apply(self, req: LineRequest, result: Answer[Any]) -> LinePlot | None:
        """The plot of the answer to ``req`` (None where no array is shown any more)."""
        if self.array is None:
            return None
        if result.cancelled:
            return self._keep(dataclasses.replace(self.plot, status=f"Cancelled reading {req.label}", busy=False))
        if result.error is not None:
            return self._keep(LinePlot(status=f"Error: {result.error}", message=f"Cannot show {req.label}:\n{result.error}"))
        plan = req.plan
        ms = f"{result.seconds * 1000:.0f} ms"
        assert result.value is not None
        if plan.columns:
            table, dates = result.value
            x = self._x(np.repeat(table[:, 0], 2))
            y = table[:, 1:].reshape(-1)
            how = "every chunk" if plan.stride == 1 else f"one chunk in {plan.stride} (sampled)"
            status = (f"{req.label}: minimum and maximum of {len(table):,} columns from {how}, "
                      f"{plan.x1 - plan.x0:,} elements, in {ms}")
            plot = dataclasses.replace(self._look, x=x, y=y, envelope=True, dates=dates, x0=plan.x0, x1=plan.x1,
                                       status=status)
        else:
            y, dates = result.value
            x = self._x(np.arange(plan.x0, plan.x1, dtype="f8"))
            plot = dataclasses.replace(self._look, x=x, y=y, dates=dates, x0=plan.x0, x1=plan.x1,
                                       status=f"Read {req.label} in {ms}")
        if result.failures:
            n = len(result.failures)
            plot = dataclasses.replace(plot, status=f"{n} chunk{'s' if n > 1 else ''} of {req.label} could not be "
                                                    f"read: {result.failures[0].message}")
        return self._keep(plot)

    def _keep(self, plot: LinePlot) -> LinePlot:
        self.plot = plot
        return plot
