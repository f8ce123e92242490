"""Planning a read: which chunks a selection touches, refused at once when it cannot succeed.

A plan is one record per touched chunk, built before any I/O. Its cost is checked first,
from the selection alone: a result larger than the machine's memory, or more chunks than a
read may plan, fails in microseconds instead of after planning (or allocating) billions.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from .errors import IndexingError, ZarrError
from .indexing import DimSelection, dim_chunks, full_shape, normalize, out_shape
from .limits import human, limits
from .metadata.model import ArrayMetadata
from .storage.base import ByteRequest


@dataclass(slots=True)
class ReadItem:
    """One chunk of a read: where its part lies inside the chunk and inside the output."""

    coords: tuple[int, ...]
    inner: tuple[slice, ...]
    out: tuple[slice, ...]
    req: ByteRequest | None = None  # None: known to be missing (empty in its shard)
    data: Any = None
    error: ZarrError | None = None  # fetching failed (kept when the caller collects failures)
    alt: bool = False  # missing under its key: try the v2 nested-key spelling


@dataclass(frozen=True)
class ChunkFailure:
    """A chunk that could not be read; its part of the result holds the fill value instead."""

    key: str
    coords: tuple[int, ...]  # read-chunk grid coordinates
    box: tuple[tuple[int, int], ...]  # [start, stop) per dimension, in array coordinates
    message: str


def _chunks_touched(d: DimSelection, chunk: int) -> int:
    """How many chunks of one dimension the selection touches (an upper bound, in O(1))."""
    count = d.count
    if count == 0:
        return 0
    last = d.start + (count - 1) * d.step
    return min(count, last // chunk - d.start // chunk + 1)


def plan(meta: ArrayMetadata, path: str, selection: Any) -> tuple[tuple[int, ...], tuple[int, ...], list[ReadItem]]:
    """(output shape before integer indices drop dimensions, final shape, one item per chunk)."""
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
    touched = math.prod(_chunks_touched(d, c) for d, c in zip(sel, meta.read_shape))
    if touched > bound.chunks_per_read:
        raise IndexingError(f"{path}: the selection touches {touched} chunks, more than the {bound.chunks_per_read} "
                            "one read may plan; select a smaller region")
    if touched == 0:  # an empty selection: no dimension needs enumerating
        return shape, out_shape(sel), []
    # each dimension's (chunk, inner, out) triples; ``zip(*combo)`` turns one combination into an
    # item's (coords, inner, out) in C, about three times faster than a tuple per field per item
    # (planning runs on the calling thread before any worker starts: issue 15)
    per_dim = [dim_chunks(d, c) for d, c in zip(sel, meta.read_shape)]  # (chunk, inner, out) tuples
    if not per_dim:  # a 0-d array: its one chunk
        return shape, out_shape(sel), [ReadItem((), (), ())]
    items = [ReadItem(*zip(*combo)) for combo in itertools.product(*per_dim)]
    return shape, out_shape(sel), items


def merge_ranges(reqs: list[ByteRequest]) -> list[tuple[ByteRequest, list[int]]]:
    """Group requests into fetches: byte-adjacent or overlapping ranges of one key become one."""
    order = sorted(range(len(reqs)), key=lambda i: (reqs[i].key, reqs[i].start if reqs[i].start is not None else -1))
    groups: list[tuple[ByteRequest, list[int]]] = []
    for i in order:
        r = reqs[i]
        if groups:
            g, members = groups[-1]
            if (g.key == r.key and g.start is not None and r.start is not None and r.start >= 0
                    and g.stop is not None and r.stop is not None and r.start <= g.stop):
                groups[-1] = (ByteRequest(g.key, g.start, max(g.stop, r.stop)), members + [i])
                continue
        groups.append((r, [i]))
    return groups
