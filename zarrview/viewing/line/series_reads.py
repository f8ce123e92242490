"""Reading the values along one line of an array, block after block of the chunks it crosses.

A line through a (time, lat, lon) cube touches one chunk per step of its dimension's chunk
grid and nothing else, so its cost is the number of those chunks, not the array's size. When
the line crosses many chunks (a cube chunked one time step per chunk), reading them all before
drawing anything would leave the plot empty for seconds; they are read in blocks instead, each
handed to ``emit`` as soon as it is decoded, and the cancel token is checked between blocks
(zarrlib also checks it between chunks), so a moved point stops the old line at once.

The first blocks are small (as many chunks as the decode pool has cores, then doubling up to
the block size), so the first values show after a few chunks; a line whose chunks all fit in
one block is read in one go, which is fastest when there is nothing to show early.

Several lines through the same point, one per channel of a microscope image, are read together:
the channels that share a chunk along the channel axis are read in one selection, so each chunk
is read once whatever the number of channels in it, and a channel not asked for costs nothing
where it has chunks of its own.

Runs on a worker of the shared pool: nothing here touches the view model's state.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...scheduling import Context
from ...zarrlib import Array, ChunkCache, ChunkFailure, ZarrError
from ...zarrlib.decode_pool import cpus
from .array import as_numbers

Decode = Callable[[np.ndarray], np.ndarray]

#: the most chunks one block reads: bounds what a cancel can still cost and how long the plot
#: waits between updates, while leaving every decode worker busy
DEFAULT_BLOCK_CHUNKS = 32


@dataclass(frozen=True)
class LineJob:
    """Everything the worker needs, frozen on the GUI thread."""

    array: Array
    point: tuple[int, ...]
    dim: int
    decode: Decode | None = None
    block_chunks: int = DEFAULT_BLOCK_CHUNKS
    #: the dimension the lines are spread across (a channel axis), or None: one line through ``point``
    across: int | None = None
    #: the index along ``across`` of each line (``point``'s own index there is ignored)
    indices: tuple[int, ...] = ()

    @property
    def line_indices(self) -> tuple[int, ...]:
        """The index along ``across`` of every line; the point's own where there is one line."""
        return self.indices if self.across is not None and self.indices else (-1,)

    def groups(self) -> list[list[int]]:
        """The lines (positions in ``line_indices``) that share a chunk along ``across``, so that
        one read serves them all."""
        if self.across is None or not self.indices:
            return [[0]]
        chunk = max(1, self.array.typical_chunks[self.across])
        out: dict[int, list[int]] = {}
        for k, i in enumerate(self.indices):
            out.setdefault(i // chunk, []).append(k)
        return list(out.values())


@dataclass(frozen=True)
class LineBlock:
    """Values ``start:stop`` of every line (float64, NaN where a chunk failed; one row per line,
    in the job's order) and how far along they are."""

    start: int
    stop: int
    values: np.ndarray  # (lines, stop - start)
    done: int  # chunks of the lines read so far (failed ones included)
    total: int
    dates: bool = False  # values are seconds since 1970 (datetime64 data)
    failures: tuple[str, ...] = ()  # one message per chunk of this block that could not be read
    note: str | None = None  # the decoder failed: these are the stored values


@dataclass(frozen=True)
class LineSummary:
    chunks: int
    failures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def line_chunks(length: int, chunk: int) -> int:
    return -(-length // max(1, chunk)) if length > 0 else 0


def line_blocks(length: int, chunk: int, block_chunks: int, first: int) -> list[tuple[int, int, int]]:
    """(start, stop, chunks) of each block along a line of ``length`` in chunks of ``chunk``."""
    total = line_chunks(length, chunk)
    block_chunks = max(1, block_chunks)
    size = total if total <= block_chunks else max(1, min(first, block_chunks))
    out = []
    c = 0
    while c < total:
        n = min(size, total - c)
        out.append((c * chunk, min(length, (c + n) * chunk), n))
        c += n
        size = min(block_chunks, size * 2)
    return out


def worth_caching(arr: Array, chunks: int, cache: ChunkCache) -> bool:
    """Whether the line's decoded chunks fit in half the cache. Caching costs (each chunk is
    decoded into fresh memory, about 10 % of a cold read) and pays when the next click is on a
    neighbouring pixel, whose line crosses the same chunks; a line larger than that would only
    push out the chunks of the one before it, and its own first chunks before it ends."""
    return chunks * math.prod(arr.chunks) * arr.dtype.itemsize <= cache.max_bytes // 2


def line_selection(point: tuple[int, ...], dim: int, start: int, stop: int,
                   span: tuple[int, int, int] | None = None) -> tuple[int | slice, ...]:
    """``start:stop`` along ``dim`` through ``point``; ``span`` = (dimension, first, stop)
    widens it to the lines from ``first`` to ``stop`` along that dimension."""
    def one(d: int, p: int) -> int | slice:
        if d == dim:
            return slice(start, stop)
        if span is not None and d == span[0]:
            return slice(span[1], span[2])
        return int(p)

    return tuple(one(d, p) for d, p in enumerate(point))


def failure_message(f: ChunkFailure) -> str:
    """zarrlib's message names the chunk; one that does not is given its key."""
    return f.message if f.key in f.message else f"chunk {f.key}: {f.message}"


def read_line(job: LineJob, ctx: Context) -> LineSummary:
    """The series job's work: every block of the lines, each given to ``ctx.emit`` once read."""
    cancel, emit, progress, failures = ctx.cancel, ctx.emit, ctx.progress, ctx.failures
    arr, dim = job.array, job.dim
    length, chunk = arr.shape[dim], arr.typical_chunks[dim]
    blocks = line_blocks(length, chunk, job.block_chunks, len(cpus()) or 2)
    groups = job.groups()
    total = sum(n for _, _, n in blocks) * len(groups)
    cache = ctx.cache if ctx.cache is not None and worth_caching(arr, total, ctx.cache) else None
    decode = job.decode
    done = 0
    dates = False
    lost_all: list[str] = []
    notes: list[str] = []
    for start, stop, n in blocks:
        cancel.raise_if_cancelled()
        values = np.full((len(job.line_indices), stop - start), np.nan)
        messages: list[str] = []
        block_note = None
        for group in groups:
            lost: list[ChunkFailure] = []
            rows, selection = _group_selection(job, group, start, stop)
            try:
                raw = np.asarray(arr.read(selection, cancel=cancel, cache=cache, executor=ctx.executor,
                                          failures=lost))
            except ZarrError as e:
                if cancel.cancelled:
                    raise
                messages.append(f"elements {start}:{stop} along {_dim_name(arr, dim)} could not be read: {e}")
                continue
            numbers, dates, note = _numbers(_lines_first(raw, job), decode)
            if note is not None:
                notes.append(note)
                block_note = note
                decode = None
            values[group] = numbers[rows]
            for f in lost:
                a, b = f.box[dim]
                hit = [k for k in group if job.across is None
                       or f.box[job.across][0] <= job.line_indices[k] < f.box[job.across][1]]
                values[hit, max(a, start) - start:min(b, stop) - start] = np.nan
                messages.append(failure_message(f))
            failures.extend(lost)
        lost_all.extend(messages)
        done += n * len(groups)
        cancel.raise_if_cancelled()
        emit(LineBlock(start, stop, values, done, total, dates, tuple(messages), block_note))
        if progress is not None:
            progress(done, total)
    return LineSummary(total, tuple(lost_all), tuple(notes))


def _group_selection(job: LineJob, group: list[int], start: int, stop: int
                     ) -> tuple[list[int], tuple[int | slice, ...]]:
    """The selection that reads ``group``'s lines at once (the span of their indices) and the
    row of each line in what it reads."""
    if job.across is None or not job.indices:
        return [0], line_selection(job.point, job.dim, start, stop)
    indices = [job.indices[k] for k in group]
    lo, hi = min(indices), max(indices) + 1
    return [i - lo for i in indices], line_selection(job.point, job.dim, start, stop, (job.across, lo, hi))


def _lines_first(raw: np.ndarray, job: LineJob) -> np.ndarray:
    """What was read as (lines, values): a span across ``job.across`` comes in the array's order
    of the two dimensions; the one line becomes one row."""
    if job.across is None or not job.indices:
        return raw.reshape(1, -1)
    return raw if job.across < job.dim else raw.T


def _numbers(raw: np.ndarray, decode: Decode | None) -> tuple[np.ndarray, bool, str | None]:
    """Float64 values to plot (writable: failed chunks become NaN), decoded unless the decoder fails."""
    note = None
    if decode is not None:
        try:
            values, dates = as_numbers(np.asarray(decode(raw)))
            return np.require(values, "f8", "W"), dates, None
        except Exception as e:  # a bad decoder must not cost the stored values
            note = f"values shown as stored: decoding failed ({type(e).__name__}: {e})"
    values, dates = as_numbers(raw)
    return np.require(values, "f8", "W"), dates, note


def _dim_name(arr: Array, dim: int) -> str:
    names = arr.dimension_names
    name = names[dim] if names is not None and dim < len(names) else None
    return name or f"dimension {dim}"
