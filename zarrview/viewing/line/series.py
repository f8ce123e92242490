"""The values of a variable along one dimension at a clicked point (a time series, a profile).

Clicking a pixel of a (time, lat, lon) field asks for the line through it along time: the
view model answers with a ``Series`` that fills in as the worker reads the line's chunks
(``series_reads``), so a long line shows its first values early. The reads run on the series'
own lane: a click elsewhere, another dimension or Cancel makes whatever the old line still had
in flight stale, while the image's lane reads on undisturbed (a click never cancels the image,
a slider move never cancels the series). The pool's decoded-chunk cache keeps the line's
chunks, so a click on a neighbouring pixel, whose line crosses the same chunks, is answered
without reading.

Bad input (a point outside the array, a coordinate of the wrong length, a decoder that fails)
becomes a message or a note on the series; nothing here raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...scheduling import Answer, Job, Lane, Post, WorkerPool
from ...zarrlib import Array
from .array import as_numbers
from .series_reads import DEFAULT_BLOCK_CHUNKS, Decode, LineBlock, LineJob, LineSummary, line_chunks, read_line

Format = Callable[[float], str]

#: element kinds a line can plot (numbers, booleans, complex as magnitude, dates)
PLOTTABLE = "biufcmM"


@dataclass(frozen=True)
class LineAxis:
    """What the caller knows of one dimension: its name, coordinate values and how to print one."""

    name: str
    values: np.ndarray | None = None
    format: Format | None = None

    def label(self, index: int) -> str:
        """``lat=45.25 °N``, or ``lat=3`` (the index) where no value can be given."""
        return f"{self.name}={_value_text(self.values, self.format, index)}"


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

    def axis(self, d: int) -> LineAxis:
        if d < len(self.axes):
            return self.axes[d]
        names = self.array.dimension_names
        name = names[d] if names is not None and d < len(names) and names[d] else f"dim_{d}"
        return LineAxis(str(name))


@dataclass(frozen=True)
class Series:
    """What the plot shows. ``y`` is filled in place on the GUI thread as blocks land (NaN until
    read): draw it when it is published."""

    x: np.ndarray | None = None
    y: np.ndarray | None = None
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


class SeriesModel:
    """Point queries in, ``Series`` out through ``on_series``, on the thread ``post`` runs on."""

    def __init__(self, pool: WorkerPool, post: Post, on_series: Callable[[Series], None], *,
                 block_chunks: int = DEFAULT_BLOCK_CHUNKS) -> None:
        self.pool = pool
        self.lane: Lane[LineSummary] = Lane(pool, post, "series")
        self.on_series = on_series
        self.block_chunks = block_chunks
        self.query: PointQuery | None = None
        self.series = Series()
        #: names the series published (bumped by every query, cancel and clear), so the view
        #: tells a new line from more of the same one; stale answers are the lane's business
        self.generation = 0

    # -- what the view asks -------------------------------------------------------------------
    def request(self, query: PointQuery) -> None:
        """Plot ``query``'s line, cancelling the line being read (its late answers are dropped)."""
        self.generation += 1
        self.query = query
        problem = _problem(query)
        if problem is not None:
            self.lane.discard()
            self._publish(Series(title=query.variable or query.array.path, dim=query.dim, message=problem,
                                 generation=self.generation))
            return
        title = _title(query)
        arr, dim = query.array, query.dim
        n = arr.shape[dim]
        x, x_format, notes = _x_axis(query)
        total = line_chunks(n, arr.typical_chunks[dim])
        y = np.full(n, np.nan)
        gen = self.generation
        self._publish(Series(x, y, x_format, query.axis(dim).name, query.y_label, title, dim, total=total, busy=True,
                             status=f"Reading {title}: 0 of {total} chunks", notes=notes, generation=gen))
        line = LineJob(arr, tuple(int(p) for p in query.point), dim, query.decode, self.block_chunks)
        job = Job(lambda ctx: read_line(line, ctx.emit, ctx.cancel, ctx.cache, ctx.progress, ctx.failures), title)
        self.lane.submit(job, self.apply, on_partial=self._block)

    def along(self, dim: int) -> None:
        """The same point, plotted along another dimension."""
        if self.query is not None and dim != self.query.dim:
            self.request(replace(self.query, dim=dim))

    def cancel(self) -> None:
        """Stop reading; the values read so far stay."""
        if not self.series.busy:
            return
        self.lane.discard()
        self.generation += 1
        s = self.series
        self._publish(replace(s, busy=False, generation=self.generation,
                              status=f"Cancelled {s.title}: {s.done} of {s.total} chunks read"))

    def clear(self) -> None:
        self.lane.discard()
        self.generation += 1
        self.query = None
        self._publish(Series(generation=self.generation))

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """For tests: block until the pool has nothing left (its answers may still be posted)."""
        return self.pool.wait_until_idle(timeout)

    # -- answers, on the GUI thread -----------------------------------------------------------
    def _block(self, block: LineBlock) -> None:
        s = self.series
        if s.y is None:
            return
        s.y[block.start:block.stop] = block.values
        notes = s.notes + block.failures + ((block.note,) if block.note else ())
        self._publish(replace(s, dates=block.dates, done=block.done, total=block.total, notes=notes,
                              status=f"Reading {s.title}: {block.done} of {block.total} chunks"))

    def apply(self, result: Answer[LineSummary]) -> None:
        """The line is read (or failed, or was cancelled): say so; a stale answer is of a line
        no longer shown."""
        s = self.series
        if result.stale:
            return
        if result.cancelled:
            self._publish(replace(s, busy=False, status=f"Cancelled {s.title}: {s.done} of {s.total} chunks read"))
            return
        if result.error is not None:
            what = f"{type(result.error).__name__}: {result.error}"
            self._publish(replace(s, busy=False, status=f"Error reading {s.title}", message=f"Cannot read {s.title}: {what}"))
            return
        summary = result.value
        assert summary is not None
        ms = f"{result.seconds * 1000:.0f} ms"
        status = f"{s.title}: {len(s.y) if s.y is not None else 0:,} values from {summary.chunks} chunks in {ms}"
        if summary.failures:
            n = len(summary.failures)
            status += f"; {n} chunk{'s' if n > 1 else ''} could not be read: {summary.failures[0]}"
        self._publish(replace(s, busy=False, done=summary.chunks, status=status))

    def _publish(self, series: Series) -> None:
        self.series = series
        self.on_series(series)


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
    others = [q.axis(d).label(int(p)) for d, p in enumerate(q.point) if d != q.dim and d < len(q.array.shape)]
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

