"""Computing a projection chunk by chunk, in bounded memory, on the thread that calls it.

The range of the reduced dimension is cut at its chunk boundaries into slabs one chunk thick
(the first and last may be thinner where the range is not chunk-aligned), so every chunk of the
range is read exactly once, by one ``Array.read`` of whole chunks that zarrlib decodes on its
pool. Each slab is folded into the partial result (``ops.Partial``) before the next is read
into the same memory (a fresh 128 MiB array for every slab costs a page fault per 4 KiB, about
a seventh of the reading time of a (512, 2048, 2048) uint16 stack). Where one slab of the whole
plane would exceed ``slab_bytes``, the plane is cut into chunk-aligned tiles (along its outer
dimensions first) each with its own partial result, so a (512, 64, 64)-chunked cube reduced
along its first dimension still reads a bounded slab.

Memory held at once: one slab (at most ``slab_bytes``, or one chunk where a single chunk is
larger), zarrlib's decode buffers (about one chunk per worker), the slab's CF-decoded copy where
decoding changes the type, the partial results (one to three planes, ``ops``), at most two
float64 planes of scratch for ``std``, and, where the plane was tiled, the assembled output
plane; plus whatever the caller's chunk cache holds (it is used only when the range's chunks fit
in half of it, as the line view does: a repeated projection with another operation is then free,
and a larger one would only push out what the views cached).

Progress counts chunks over the whole projection, monotonically; the cancel token is checked
between slabs and, inside zarrlib, between chunks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from ...zarrlib import CancelToken, ChunkCache, ChunkFailure
from ..image.planning import chunks_between
from ..line.series_reads import worth_caching
from .ops import Partial
from .spec import Projection

Progress = Callable[[int, int], None]

#: the most bytes one slab read may hold (stored plus decoded values)
SLAB_BYTES = 256 << 20


@dataclass(frozen=True)
class Piece:
    """One read: indices ``r0:r1`` of the reduced dimension over plane tile ``tile`` (of ``tiles``)."""

    r0: int
    r1: int
    tile: int
    box: tuple[slice, ...]
    chunks: int


@dataclass(frozen=True)
class Plan:
    pieces: tuple[Piece, ...]
    #: the tiles of the plane, each a box over the result's dimensions
    tiles: tuple[tuple[slice, ...], ...]

    @property
    def chunks(self) -> int:
        return sum(p.chunks for p in self.pieces)


def element_bytes(p: Projection) -> int:
    """Bytes one element of a slab costs while it is reduced: as read, plus its decoded copy."""
    read = np.dtype(p.array.dtype).itemsize
    decoded = p.decoding.decoded_dtype.itemsize if p.decoding is not None and p.decoding.active else 0
    return read + decoded


def plan(p: Projection, slab_bytes: int = SLAB_BYTES) -> Plan:
    """The slabs and tiles of ``p``, slab after slab, each slab's tiles in order."""
    arr, dim = p.array, p.dim
    chunk_r = arr.chunks[dim]
    dims = p.plane_dims
    shape = [arr.shape[d] for d in dims]
    thickness = min(chunk_r, p.stop - p.start)
    tile = _tile(shape, [arr.chunks[d] for d in dims], thickness * element_bytes(p), slab_bytes)
    tiles = tuple(tuple(slice(o, min(o + t, n)) for o, t, n in zip(origin, tile, shape))
                  for origin in product(*(range(0, n, max(1, t)) for n, t in zip(shape, tile))))
    pieces: list[Piece] = []
    for r0, r1 in slabs(p.start, p.stop, chunk_r):
        for i, box in enumerate(tiles):
            count = chunks_between(r0, r1, chunk_r) * math.prod(
                chunks_between(b.start, b.stop, arr.chunks[d]) for d, b in zip(dims, box))
            pieces.append(Piece(r0, r1, i, box, count))
    return Plan(tuple(pieces), tiles)


def slabs(start: int, stop: int, chunk: int) -> Iterator[tuple[int, int]]:
    """``start:stop`` cut at the multiples of ``chunk``."""
    lo = start
    while lo < stop:
        hi = min(stop, (lo // chunk + 1) * chunk)
        yield lo, hi
        lo = hi


def _tile(shape: list[int], chunks: list[int], unit_bytes: int, budget: int) -> list[int]:
    """The extent of a tile along each plane dimension: the whole plane where one slab of it fits
    ``budget``, else whole chunks along the outer dimensions first, down to one chunk."""
    tile = list(shape)
    for j in range(len(tile)):
        if unit_bytes * math.prod(tile) <= budget:
            break
        per_index = unit_bytes * math.prod(tile[:j]) * math.prod(tile[j + 1:])
        fit = budget // max(1, per_index)
        tile[j] = min(tile[j], max(chunks[j], fit // chunks[j] * chunks[j]))
    return tile


def read_selection(p: Projection, piece: Piece) -> tuple[int | slice, ...]:
    """What one piece reads: its slab of the reduced dimension, its tile of the plane, the fixed indices."""
    boxes = dict(zip(p.plane_dims, piece.box))
    return tuple(slice(piece.r0, piece.r1) if d == p.dim else boxes.get(d, s) for d, s in enumerate(p.selection))


def read_shape(p: Projection, piece: Piece) -> tuple[int, ...]:
    """The shape of what one piece reads: the slab's thickness and the tile's extents, in the array's order."""
    boxes = dict(zip(p.plane_dims, piece.box))
    return tuple(piece.r1 - piece.r0 if d == p.dim else boxes[d].stop - boxes[d].start
                 for d in range(p.array.ndim) if d == p.dim or d in boxes)


def fold(p: Projection, pieces: Sequence[Piece], partials: dict[int, Partial], *, cancel: CancelToken | None = None,
         cache: ChunkCache | None = None, progress: Progress | None = None, done: int = 0, total: int = 0,
         failures: list[ChunkFailure] | None = None, executor: ThreadPoolExecutor | None = None) -> int:
    """Read ``pieces`` one after another and fold each into its tile's partial result; returns
    the chunks counted, ``done`` included."""
    axis = sum(1 for d in p.plane_dims if d < p.dim)  # where the reduced dimension is among the read's
    decode = p.decoding.decode if p.decoding is not None and p.decoding.active else None
    buffer: np.ndarray | None = None  # one slab's memory, reused while slabs keep their shape
    for piece in pieces:
        if cancel is not None:
            cancel.raise_if_cancelled()
        base = done
        report = None if progress is None else _offset(progress, base, piece.chunks, total)
        shape = read_shape(p, piece)
        if buffer is None or buffer.shape != shape:
            buffer = None  # the old one goes before the new one is made
            buffer = np.empty(shape, p.array.dtype)
        data = p.array.read(read_selection(p, piece), cancel=cancel, cache=cache, progress=report,
                            executor=executor, failures=failures, out=buffer)
        values: np.ndarray = data if decode is None else decode(data, inplace=True)
        del data
        partials.setdefault(piece.tile, Partial(p.op)).add(np.moveaxis(values, axis, 0))
        del values
        done = base + piece.chunks
        if progress is not None:
            progress(done, total)
    return done


def _offset(progress: Progress, base: int, chunks: int, total: int) -> Progress:
    """One read's progress as the projection's: its ``chunks`` counted after ``base`` of ``total``."""
    return lambda done, _total: progress(base + min(done, chunks), total)


def assemble(p: Projection, layout: Plan, partials: dict[int, Partial]) -> np.ndarray:
    """The projected plane from each tile's partial result."""
    if len(layout.tiles) == 1:
        return partials[0].result(p.ddof)
    out = np.empty(p.shape, p.dtype)
    for i, box in enumerate(layout.tiles):
        out[box] = partials[i].result(p.ddof)
    return out


def project(p: Projection, *, cancel: CancelToken | None = None, cache: ChunkCache | None = None,
            progress: Progress | None = None, failures: list[ChunkFailure] | None = None,
            executor: ThreadPoolExecutor | None = None, slab_bytes: int = SLAB_BYTES) -> np.ndarray:
    """The projected plane of ``p`` (shape ``p.shape``, type ``p.dtype``), read slab by slab.
    ``progress(done, total)`` counts chunks; with a ``failures`` list, a chunk that cannot be
    read is recorded there and counts as the fill value (without one, its error is raised)."""
    if math.prod(p.shape) == 0:
        return np.empty(p.shape, p.dtype)
    layout = plan(p, slab_bytes)
    total = layout.chunks
    if cache is not None and not worth_caching(p.array, total, cache):
        cache = None
    partials: dict[int, Partial] = {}
    fold(p, layout.pieces, partials, cancel=cancel, cache=cache, progress=progress, total=total,
         failures=failures, executor=executor)
    return assemble(p, layout, partials)


def compute(p: Projection, **options: Any) -> Callable[[CancelToken, ChunkCache | None, Progress | None,
                                                         list[ChunkFailure]], np.ndarray]:
    """``project(p)`` as a ``scheduling.Compute`` (the job's cancel, cache, progress and failures)."""
    def run(cancel: CancelToken, cache: ChunkCache | None, progress: Progress | None,
            failures: list[ChunkFailure]) -> np.ndarray:
        return project(p, cancel=cancel, cache=cache, progress=progress, failures=failures, **options)

    return run
