"""The values of a variable along one dimension at a clicked point (a time series, a profile).

Clicking a pixel of a (time, lat, lon) field asks for the line through it along time: the
view model answers with a ``Series`` that fills in as the worker reads the line's chunks
(``series_reads``), so a long line shows its first values early. The model owns no lane: a
driver (``scheduling.Driver``) of its own runs its reads, so a click elsewhere, another
dimension or Cancel makes whatever the old line still had in flight stale, while the image's
driver reads on undisturbed (a click never cancels the image,
a slider move never cancels the series). The pool's decoded-chunk cache keeps the line's
chunks, so a click on a neighbouring pixel, whose line crosses the same chunks, is answered
without reading.

A query may ask for several lines through the point, one per channel of a microscope image:
they are read together and published as the lines of one ``Series``, each with its channel's
name and colour, so a z stack of three channels is three lines over the same x axis.

Bad input (a point outside the array, a coordinate of the wrong length, a decoder that fails)
becomes a message or a note on the series; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace

import numpy as np

from ...scheduling import Answer, Job
from ...zarrlib import Array
from .array import as_numbers
from .series_reads import DEFAULT_BLOCK_CHUNKS, Decode, LineBlock, LineJob, LineSummary, line_chunks, read_line

Format = Callable[[float], str]
RGB = tuple[int, int, int]

#: element kinds a line can plot (numbers, booleans, complex as magnitude, dates)
PLOTTABLE = "biufcmM"


@dataclass(frozen=True)
class LineAxis:
    """What the caller knows of one dimension: its name, coordinate values and how to print one."""

    name: str
    values: np.ndarray | None = None
    format: Format | None = None
    #: the unit of ``values`` where the axis names it apart from them ("µm"): said after the
    #: axis's name on the plot and after a value in a title
    unit: str = ""

    def label(self, index: int) -> str:
        """``lat=45.25 °N``, ``z=14 µm``, or ``lat=3`` (the index) where no value can be given."""
        if self.unit and self.format is None and self.values is not None and 0 <= index < len(self.values):
            return f"{self.name}={_value_text(self.values, _number_text, index)} {self.unit}"
        return f"{self.name}={_value_text(self.values, self.format, index)}"

    @property
    def heading(self) -> str:
        """The x axis's label: ``z (µm)``, or the name alone."""
        return f"{self.name} ({self.unit})" if self.unit else self.name


@dataclass(frozen=True)
class ChannelLine:
    """One line of a query across channels: its ``index`` along the channel axis, the name it is
    shown with and its colour (None: the plot's own)."""

    index: int
    label: str
    color: RGB | None = None


@dataclass(frozen=True)
class PointQuery:
    """A line to plot: the array, every dimension's index at the point, and the line's dimension."""

    array: Array
    point: tuple[int, ...]
    dim: int
    decode: Decode | None = None
    #: one per dimension, in the array's order (empty: names from the array, x is the index)
    axes: tuple[LineAxis, ...] = ()
    variable: str = ""  # "t2m"; the array's name when empty
    y_label: str = ""  # "2 metre temperature (K)"
    #: the title of a line along a dimension, where the caller words it; else from ``axes``
    title: Callable[[int], str] | None = None
    #: the channels shown, along ``across`` (a channel axis): one line each where the series runs
    #: along another dimension; along ``across`` itself, or without them, the one line through ``point``
    across: int | None = None
    lines: tuple[ChannelLine, ...] = ()

    @property
    def spread(self) -> bool:
        """Whether the series is one line per channel (kept when the picker moves it to
        another dimension and back)."""
        return self.across is not None and bool(self.lines) and self.across != self.dim

    def axis(self, d: int) -> LineAxis:
        if d < len(self.axes):
            return self.axes[d]
        names = self.array.dimension_names
        name = names[d] if names is not None and d < len(names) and names[d] else f"dim_{d}"
        return LineAxis(str(name))


@dataclass(frozen=True)
class SeriesLine:
    """One line of a series: its values (filled in place as blocks land, NaN until read), the
    name it is shown with (empty for the one line of a plain series) and its colour (None: the
    plot's own)."""

    y: np.ndarray
    label: str = ""
    color: RGB | None = None


@dataclass(frozen=True)
class Series:
    """What the plot shows: ``lines`` over one ``x``, filled in place on the GUI thread as blocks
    land (NaN until read): draw them when the series is published."""

    x: np.ndarray | None = None
    lines: tuple[SeriesLine, ...] = ()
    x_format: Format | None = None
    x_label: str = ""
    y_label: str = ""
    title: str = ""
    dim: int = 0
    dates: bool = False  # y values are seconds since 1970
    done: int = 0  # chunks read
    total: int = 0  # chunks on the line
    busy: bool = False
    status: str = ""
    message: str | None = None  # why nothing (more) can be shown
    notes: tuple[str, ...] = ()  # what was wrong with the input or some chunks; the rest is shown
    #: the lane's number of the job this series belongs to (0: none)
    generation: int = 0

    @property
    def y(self) -> np.ndarray | None:
        """The first line's values (the only line of a series not spread over channels), or None."""
        return self.lines[0].y if self.lines else None


@dataclass(frozen=True)
class SeriesRequest:
    """The read of one query's lines: its job, and the series drawn while it fills in."""

    job: Job[LineSummary]
    first: Series

    @property
    def read(self) -> Hashable:
        """Every query is a read of its own (its generation)."""
        return self.first.generation


class SeriesModel:
    """Point queries in, ``Series`` out; run by a driver, whose partial results (blocks of the
    line) it fills in as they arrive."""

    def __init__(self, *, block_chunks: int = DEFAULT_BLOCK_CHUNKS) -> None:
        self.block_chunks = block_chunks
        self.query: PointQuery | None = None
        self.series = Series()
        #: names the series published (bumped by every query, cancel and clear), so the view
        #: tells a new line from more of the same one; stale answers are the driver's business
        self.generation = 0
        #: the series a query that cannot be read shows (said once, by ``waiting``)
        self._refused: Series | None = None

    # -- what the view asks -------------------------------------------------------------------
    def request(self, query: PointQuery) -> SeriesRequest | None:
        """The read of ``query``'s line; None for the query already asked (the driver asking
        for more of it) and for one that cannot be read (``waiting`` says why)."""
        if query is self.query:
            return None
        self.generation += 1
        self.query = query
        problem = _problem(query)
        if problem is not None:
            self._refused = Series(title=query.variable or query.array.path, dim=query.dim, message=problem,
                                   generation=self.generation)
            return None
        title = _title(query)
        arr, dim = query.array, query.dim
        n = arr.shape[dim]
        x, x_format, notes = _x_axis(query)
        spread = query.spread
        line = LineJob(arr, tuple(int(p) for p in query.point), dim, query.decode, self.block_chunks,
                       query.across if spread else None, tuple(c.index for c in query.lines) if spread else ())
        total = line_chunks(n, arr.typical_chunks[dim]) * len(line.groups())
        lines = tuple(SeriesLine(np.full(n, np.nan), c.label, c.color) for c in query.lines) if spread \
            else (SeriesLine(np.full(n, np.nan)),)
        first = Series(x, lines, x_format, query.axis(dim).heading, query.y_label, title, dim, total=total,
                       busy=True, status=f"Reading {title}: 0 of {total} chunks", notes=notes,
                       generation=self.generation)
        job = Job(lambda ctx: read_line(line, ctx), title)
        return SeriesRequest(job, first)

    def waiting(self, request: SeriesRequest | None) -> Series | None:
        """The empty line drawn while ``request`` is read, or why a query cannot be read."""
        if request is None:
            refused, self._refused = self._refused, None
            return None if refused is None else self._keep(refused)
        return self._keep(request.first)

    def along(self, dim: int) -> PointQuery | None:
        """The same point along another dimension: the query for the driver to show."""
        if self.query is not None and dim != self.query.dim:
            return replace(self.query, dim=dim)
        return None

    def cancelled(self) -> Series | None:
        """The series once its read is stopped (the driver drops the rest): the values read so
        far stay; None where nothing was being read."""
        if not self.series.busy:
            return None
        self.generation += 1
        s = self.series
        return self._keep(replace(s, busy=False, generation=self.generation,
                                  status=f"Cancelled {s.title}: {s.done} of {s.total} chunks read"))

    def clear(self) -> Series:
        self.generation += 1
        self.query = None
        return self._keep(Series(generation=self.generation))

    # -- answers, on the GUI thread -----------------------------------------------------------
    def part(self, request: SeriesRequest, block: LineBlock) -> Series | None:
        """The series with one more block of its lines filled in."""
        s = self.series
        if not s.lines or s.generation != request.first.generation:
            return None
        for line, values in zip(s.lines, block.values):
            line.y[block.start:block.stop] = values
        notes = s.notes + block.failures + ((block.note,) if block.note else ())
        return self._keep(replace(s, dates=block.dates, done=block.done, total=block.total, notes=notes,
                                  status=f"Reading {s.title}: {block.done} of {block.total} chunks"))

    def apply(self, request: SeriesRequest, result: Answer[LineSummary]) -> Series | None:
        """The line is read (or failed, or was cancelled): say so."""
        s = self.series
        if s.generation != request.first.generation:
            return None  # stopped by Cancel: said then
        if result.cancelled:
            return self._keep(replace(s, busy=False, status=f"Cancelled {s.title}: {s.done} of {s.total} chunks read"))
        if result.error is not None:
            what = f"{type(result.error).__name__}: {result.error}"
            return self._keep(replace(s, busy=False, status=f"Error reading {s.title}",
                                      message=f"Cannot read {s.title}: {what}"))
        summary = result.value
        assert summary is not None
        ms = f"{result.seconds * 1000:.0f} ms"
        each = len(s.y) if s.y is not None else 0
        values = f"{each:,} values" if len(s.lines) <= 1 else f"{len(s.lines)} lines of {each:,} values"
        status = f"{s.title}: {values} from {summary.chunks} chunks in {ms}"
        if summary.failures:
            n = len(summary.failures)
            status += f"; {n} chunk{'s' if n > 1 else ''} could not be read: {summary.failures[0]}"
        return self._keep(replace(s, busy=False, done=summary.chunks, status=status))

    def _keep(self, series: Series) -> Series:
        self.series = series
        return series


def _problem(q: PointQuery) -> str | None:
    """Why this query cannot be read, or None."""
    arr = q.array
    shape = arr.shape
    if not 0 <= q.dim < len(shape):
        return f"{arr.path} has no dimension {q.dim}: it has {len(shape)}"
    if len(q.point) != len(shape):
        return f"the point {tuple(q.point)} has {len(q.point)} indices; {arr.path} has {len(shape)} dimensions"
    for d, (p, n) in enumerate(zip(q.point, shape)):
        if not isinstance(p, (int, np.integer)):
            return f"index {p!r} of {q.axis(d).name} is not a whole number"
        if d != q.dim and not 0 <= int(p) < n:
            return f"index {p} of {q.axis(d).name} is outside {arr.path}, whose length there is {n}"
    if shape[q.dim] == 0:
        return f"{arr.path} has length 0 along {q.axis(q.dim).name}"
    if arr.dtype.kind not in PLOTTABLE:
        return f"{arr.path} holds {arr.dtype} values, which cannot be plotted"
    c = q.across
    if q.spread and c is not None:
        if not 0 <= c < len(shape):
            return f"{arr.path} has no dimension {c} to spread the lines across: it has {len(shape)}"
        outside = [line.index for line in q.lines if not 0 <= line.index < shape[c]]
        if outside:
            return f"channel {outside[0]} is outside {arr.path}, which has {shape[c]} along {q.axis(c).name}"
    return None


def _title(q: PointQuery) -> str:
    if q.title is not None:
        try:
            return str(q.title(q.dim))
        except Exception as e:  # the caller's wording failed: say so in our own
            return f"{_own_title(q)} (title: {type(e).__name__}: {e})"
    return _own_title(q)


def _own_title(q: PointQuery) -> str:
    """``t2m at lat=45.25 °N, lon=12.5 °E``."""
    name = q.variable or q.array.name or q.array.path
    spread = q.across if q.spread else None  # the lines name their channels themselves
    others = [q.axis(d).label(int(p)) for d, p in enumerate(q.point)
              if d not in (q.dim, spread) and d < len(q.array.shape)]
    return f"{name} at {', '.join(others)}" if others else name


def _x_axis(q: PointQuery) -> tuple[np.ndarray, Format | None, tuple[str, ...]]:
    """The x values (coordinate or index) and their format; a note where the coordinate is unusable."""
    n = q.array.shape[q.dim]
    axis = q.axis(q.dim)
    index = np.arange(n, dtype="f8")
    if axis.values is None:
        return index, None, ()
    values = np.asarray(axis.values)
    if values.shape != (n,):
        return index, None, (f"coordinate {axis.name} has shape {values.shape}, not ({n},): the index is shown",)
    if values.dtype.kind not in "biufmM":
        return index, None, (f"coordinate {axis.name} holds {values.dtype} values: the index is shown",)
    x, dates = as_numbers(values)
    fmt = axis.format if axis.format is not None else (date_text if dates else None)
    return x, fmt, ()


def _number_text(value: float) -> str:
    """A coordinate computed from a scale, without the float's noise (0.6, not 0.6000000000000001)."""
    return f"{value:.6g}"


def date_text(seconds: float) -> str:
    if not np.isfinite(seconds):
        return ""
    return str(np.datetime64(int(round(seconds)), "s")).replace("T", " ")


def _value_text(values: np.ndarray | None, fmt: Format | None, index: int) -> str:
    if values is None or not 0 <= index < len(values):
        return str(index)
    try:
        v = values[index]
        if fmt is not None:
            return fmt(float(as_numbers(np.asarray([v]))[0][0]))
        return str(v)
    except Exception:  # a coordinate that cannot be printed is named by its index
        return str(index)

