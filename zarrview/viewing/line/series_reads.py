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

Runs on a worker of the shared pool: nothing here touches the view model's state.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...zarrlib import Array, CancelToken, ChunkCache, ChunkFailure, ZarrError
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


@dataclass(frozen=True)
class LineBlock:
    """Values ``start:stop`` of the line (float64, NaN where a chunk failed) and how far along it is."""

    start: int
    stop: int
    values: np.ndarray
    done: int  # chunks of the line read so far (failed ones included)
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


def line_selection(point: tuple[int, ...], dim: int, start: int, stop: int) -> tuple[int | slice, ...]:
    return tuple(slice(start, stop) if d == dim else int(p) for d, p in enumerate(point))


def failure_message(f: ChunkFailure) -> str:
    """zarrlib's message names the chunk; one that does not is given its key."""
    return f.message if f.key in f.message else f"chunk {f.key}: {f.message}"


def read_line(job: LineJob, emit: Callable[[LineBlock], None], cancel: CancelToken, cache: ChunkCache | None,
              progress: Callable[[int, int], None] | None, failures: list[ChunkFailure]) -> LineSummary:
    """The series job's work: every block of the line, each given to ``emit`` once read."""
    arr, dim = job.array, job.dim
    length, chunk = arr.shape[dim], arr.typical_chunks[dim]
    blocks = line_blocks(length, chunk, job.block_chunks, len(cpus()) or 2)
    total = sum(n for _, _, n in blocks)
    cache = cache if cache is not None and worth_caching(arr, total, cache) else None
    decode = job.decode
    done = 0
    lost_all: list[str] = []
    notes: list[str] = []
    for start, stop, n in blocks:
        cancel.raise_if_cancelled()
        lost: list[ChunkFailure] = []
        messages: list[str] = []
        try:
            raw = np.asarray(arr.read(line_selection(job.point, dim, start, stop), cancel=cancel, cache=cache,
                                      failures=lost))
        except ZarrError as e:
            if cancel.cancelled:
                raise
            raw = None
            messages.append(f"elements {start}:{stop} along {_dim_name(arr, dim)} could not be read: {e}")
        note = None
        if raw is None:
            values, dates = np.full(stop - start, np.nan), False
        else:
            values, dates, note = _numbers(raw, decode)
            if note is not None:
                notes.append(note)
                decode = None
            for f in lost:
                a, b = f.box[dim]
                values[max(a, start) - start:min(b, stop) - start] = np.nan
                messages.append(failure_message(f))
        failures.extend(lost)
        lost_all.extend(messages)
        done += n
        cancel.raise_if_cancelled()
        emit(LineBlock(start, stop, values, done, total, dates, tuple(messages), note))
        if progress is not None:
            progress(done, total)
    return LineSummary(total, tuple(lost_all), tuple(notes))


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
