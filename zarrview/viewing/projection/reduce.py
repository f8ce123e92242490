"""Computing a projection chunk by chunk, in bounded memory, on the thread that calls it.

The range of the reduced dimension is cut at its chunk boundaries into slabs one chunk thick
(the first and last may be thinner where the range is not chunk-aligned), so every chunk of the
range is read exactly once. Each slab is one ``Array.visit``: zarrlib decodes its chunks on the
executor given (a job's: its worker pool's decode threads) and hands each chunk's part, on the
worker that decoded it, to ``Folding``, which folds it into the partial result (``ops.Partial``)
of that chunk's footprint on the plane, under that footprint's lock (chunks of other footprints
fold at the same time). No slab is ever held: a
(512, 2048, 2048) uint16 stack chunked (16, 512, 512) used to read 128 MiB slabs whole before
folding them on one thread; now the decode buffers hold one chunk per worker and the folding
runs on every worker. Where one slab of the whole plane would cover more than ``slab_bytes``,
the plane is cut into chunk-aligned tiles (along its outer dimensions first), so one read never
plans more than zarrlib's bounds on a read allow.

Memory held at once: the partial results (one to three planes, ``ops``; for ``max``/``min`` one
plane of the array's type), zarrlib's decode buffers (one decoded chunk and its stored bytes per
worker), each folding worker's CF-decoded copy of its chunk where decoding changes the type, at
most two float64 chunk footprints of scratch for ``std``, and the assembled plane, into which
the partial results are moved one by one (so about one plane, not two, at the end); plus
whatever the caller's chunk cache holds (it is used only when the range's chunks fit in half of
it, as the line view does: a repeated projection with another operation is then free, and a
larger one would only push out what the views cached).

Folding order across slabs follows the decode workers, so a float ``sum``, ``mean`` or ``std``
may differ from numpy's in the last bits (numpy's own pairwise sums differ from a running sum
as much); ``max`` and ``min`` and integer sums are exact.

Progress counts chunks over the whole projection, monotonically; the cancel token is checked
between slabs and, inside zarrlib, between chunks.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import product

import numpy as np

from ...zarrlib import CancelToken, ChunkCache, ChunkFailure
from ...zarrlib.sink import Visit
from ..image.planning import chunks_between
from ..line.series_reads import worth_caching
from .ops import Partial
from .spec import Projection

Progress = Callable[[int, int], None]

#: the most bytes one read may cover (stored plus decoded values): it bounds what one read plans
SLAB_BYTES = 256 << 20
#: a partial result's box on the plane: (start, stop) per plane dimension
Key = tuple[tuple[int, int], ...]


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


class Folding:
    """Folds chunk parts of ``p`` into ``partials``, one partial result per chunk footprint on the
    plane (keyed by its box, ``Key``), from several decode workers at once."""

    def __init__(self, p: Projection, partials: dict[Key, Partial]) -> None:
        self.p = p
        self.partials = partials
        self.axis = sum(1 for d in p.plane_dims if d < p.dim)  # where the reduced dimension is among the plane's
        #: drops the fixed dimensions, which a read keeps one element long
        self.fixed = tuple(slice(None) if d == p.dim or isinstance(s, slice) else 0 for d, s in enumerate(p.selection))
        self.decode = p.decoding.decode if p.decoding is not None and p.decoding.active else None
        self.locks: dict[Key, threading.Lock] = {}
        self.guard = threading.Lock()

    def visitor(self, piece: Piece) -> Visit:
        """What ``Array.visit`` calls for each chunk part of ``piece`` (its box's origin added)."""
        origin = [(d, b.start) for d, b in zip(self.p.plane_dims, piece.box)]

        def visit(index: tuple[slice, ...], values: np.ndarray) -> None:
            key = tuple((o + index[d].start, o + index[d].stop) for d, o in origin)
            part = values[self.fixed]
            if self.decode is not None:  # a new array: never the worker's buffer or a cached chunk changed
                part = self.decode(part)
            self.add(key, np.moveaxis(part, self.axis, 0))

        return visit

    def add(self, key: Key, values: np.ndarray) -> None:
        with self.guard:
            lock = self.locks.setdefault(key, threading.Lock())
            partial = self.partials.setdefault(key, Partial(self.p.op))
        with lock:
            partial.add(values)


def fold(p: Projection, pieces: Sequence[Piece], partials: dict[Key, Partial], *, cancel: CancelToken | None = None,
         cache: ChunkCache | None = None, progress: Progress | None = None, done: int = 0, total: int = 0,
         failures: list[ChunkFailure] | None = None, executor: ThreadPoolExecutor | None = None) -> int:
    """Read ``pieces`` one after another, each chunk folded into its footprint's partial result
    as it is decoded; returns the chunks counted, ``done`` included."""
    folding = Folding(p, partials)
    for piece in pieces:
        if cancel is not None:
            cancel.raise_if_cancelled()
        base = done
        report = None if progress is None else _offset(progress, base, piece.chunks, total)
        p.array.visit(read_selection(p, piece), folding.visitor(piece), cancel=cancel, cache=cache,
                      progress=report, executor=executor, failures=failures)
        done = base + piece.chunks
        if progress is not None:
            progress(done, total)
    return done


def _offset(progress: Progress, base: int, chunks: int, total: int) -> Progress:
    """One read's progress as the projection's: its ``chunks`` counted after ``base`` of ``total``."""
    return lambda done, _total: progress(base + min(done, chunks), total)


def assemble(p: Projection, partials: dict[Key, Partial]) -> np.ndarray:
    """The projected plane from each footprint's partial result, each dropped once it is copied."""
    whole = tuple((0, n) for n in p.shape)
    if list(partials) == [whole]:
        return partials.pop(whole).result(p.ddof)
    out = np.empty(p.shape, p.dtype)
    for key in list(partials):
        out[tuple(slice(a, b) for a, b in key)] = partials.pop(key).result(p.ddof)
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
    partials: dict[Key, Partial] = {}
    fold(p, layout.pieces, partials, cancel=cancel, cache=cache, progress=progress, total=total,
         failures=failures, executor=executor)
    return assemble(p, partials)

