"""Planning a read: which chunks a selection touches, refused at once when it cannot succeed.

A plan is one record per touched chunk, built before any I/O. Its cost is checked first,
from the selection alone: a result larger than the machine's memory, or more chunks than a
read may plan, fails in microseconds instead of after planning (or allocating) billions.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .errors import IndexingError, ZarrError
from .indexing import DimSelection, dim_chunks, full_shape, normalize, out_shape
from .limits import human, limits
from .metadata.model import ArrayMetadata
from .storage.base import ByteRequest


class ChunkProjection(NamedTuple):
    """One chunk of a read: its grid position, the part of it selected (``inner``) and where
    that part goes in the output (``out``)."""

    coords: tuple[int, ...]
    inner: tuple[slice, ...]
    out: tuple[slice, ...]


class Plan(NamedTuple):
    """A read before any I/O: the output's shape before integer indices drop dimensions, its
    final shape, and one projection per chunk the selection touches."""

    shape: tuple[int, ...]
    final_shape: tuple[int, ...]
    chunks: list[ChunkProjection]


class ChunkRead(NamedTuple):
    """A projection with where its bytes lie: ``req`` None where nothing is stored (the chunk
    reads as the fill value), ``error`` where it cannot be read at all (a broken shard index)."""

    chunk: ChunkProjection
    req: ByteRequest | None
    error: ZarrError | None = None


@dataclass(frozen=True)
class ChunkFailure:
    """A chunk that could not be read; its part of the result holds the fill value instead."""

    key: str
    coords: tuple[int, ...]  # read-chunk grid coordinates
    box: tuple[tuple[int, int], ...]  # [start, stop) per dimension, in array coordinates
    message: str
    #: the error itself, for callers that act on its kind (an access refusal the window can lift)
    error: ZarrError | None = field(default=None, compare=False, repr=False)


def _chunks_touched(d: DimSelection, chunk: int) -> int:
    """How many chunks of one dimension the selection touches (an upper bound, in O(1))."""
    count = d.length
    if count == 0:
        return 0
    last = d.start + (count - 1) * d.step
    return min(count, last // chunk - d.start // chunk + 1)


def plan(meta: ArrayMetadata, path: str, selection: Any) -> Plan:
    """The chunks ``selection`` touches, each with its part; refused at once when too large."""
    try:
        sel = normalize(selection, meta.shape)
    except IndexingError as e:
        raise IndexingError(f"{path}: {e}") from None
    shape = full_shape(sel)
    bound = limits()
    nbytes = math.prod(shape) * meta.dtype.itemsize
    if nbytes > bound.read_bytes:
        raise IndexingError(f"{path}: the selection holds {math.prod(shape)} elements ({human(nbytes)}), more than "
                            f"the {human(bound.read_bytes)} one read may return; select a smaller region")
    if math.prod(max(1, n) for n in shape) * meta.dtype.itemsize >= 2**63:  # numpy refuses even when empty
        raise IndexingError(f"{path}: a selection of shape {shape} cannot be held by numpy")
    grid = meta.read_grid
    if grid is None:
        touched = math.prod(_chunks_touched(d, c) for d, c in zip(sel, meta.read_shape))
    else:
        touched = math.prod(axis.touched(d) for d, axis in zip(sel, grid.axes))
    if touched > bound.chunks_per_read:
        raise IndexingError(f"{path}: the selection touches {touched} chunks, more than the {bound.chunks_per_read} "
                            "one read may plan; select a smaller region")
    if touched == 0:  # an empty selection: no dimension needs enumerating
        return Plan(shape, out_shape(sel), [])
    # each dimension's (chunk, inner, out) triples; ``zip(*combo)`` turns one combination into a
    # projection's (coords, inner, out) in C, about three times faster than a tuple per field
    # per chunk (planning runs on the calling thread before any worker starts)
    if grid is None:
        per_dim = [dim_chunks(d, c) for d, c in zip(sel, meta.read_shape)]  # (chunk, inner, out) tuples
    else:
        per_dim = [axis.dim_chunks(d) for d, axis in zip(sel, grid.axes)]
    if not per_dim:  # a 0-d array: its one chunk
        return Plan(shape, out_shape(sel), [ChunkProjection((), (), ())])
    chunks = [ChunkProjection(*zip(*combo)) for combo in itertools.product(*per_dim)]
    return Plan(shape, out_shape(sel), chunks)
