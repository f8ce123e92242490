"""Basic selections (ints, slices with positive steps, Ellipsis) and their chunk projections.

For each dimension we compute which chunks hold selected elements and, per chunk, the
slice inside the chunk and the slice of the output it fills; the reader takes the product.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

from .errors import IndexingError


class DimSelection(NamedTuple):
    """One dimension of a selection (a named tuple: made and read on every read)."""

    start: int
    stop: int  # exclusive, already clipped
    step: int
    dropped: bool  # an integer index removes the dimension from the output
    length: int  # selected elements (not `count`, which would hide tuple.count)


def _dim(start: int, stop: int, step: int, dropped: bool) -> DimSelection:
    return DimSelection(start, stop, step, dropped, max(0, -(-(stop - start) // step)))


class DimChunk(NamedTuple):
    chunk: int
    inner: slice  # within the chunk
    out: slice  # within the output dimension


def normalize(selection: Any, shape: tuple[int, ...]) -> tuple[DimSelection, ...]:
    sel = selection if isinstance(selection, tuple) else (selection,)
    n_ellipsis = sum(1 for s in sel if s is Ellipsis)
    if n_ellipsis > 1:
        raise IndexingError("an index can only have a single Ellipsis ('...')")
    explicit = len(sel) - n_ellipsis
    if explicit > len(shape):
        raise IndexingError(f"too many indices ({explicit}) for an array of {len(shape)} dimensions")
    if n_ellipsis:
        i = next(i for i, s in enumerate(sel) if s is Ellipsis)
        sel = sel[:i] + (slice(None),) * (len(shape) - explicit) + sel[i + 1:]
    else:
        sel = sel + (slice(None),) * (len(shape) - len(sel))
    return tuple(_one(s, n, d) for d, (s, n) in enumerate(zip(sel, shape)))


def _one(s: Any, n: int, dim: int) -> DimSelection:
    if isinstance(s, slice):
        step = 1 if s.step is None else _int(s.step, dim)
        if step < 1:
            raise IndexingError(f"slice step {step} in dimension {dim} is not supported (steps must be >= 1)")
        start, stop, _ = slice(None if s.start is None else _int(s.start, dim),
                               None if s.stop is None else _int(s.stop, dim), step).indices(n)
        return _dim(start, max(start, stop), step, False)
    i = _int(s, dim)
    if not -n <= i < n:
        raise IndexingError(f"index {i} is out of bounds for dimension {dim} of size {n}")
    i = i + n if i < 0 else i
    return _dim(i, i + 1, 1, True)


def _int(v: Any, dim: int) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise IndexingError(f"unsupported index {v!r} in dimension {dim}: use integers, slices or '...'") from None


def out_shape(sel: tuple[DimSelection, ...]) -> tuple[int, ...]:
    return tuple(d.length for d in sel if not d.dropped)


def full_shape(sel: tuple[DimSelection, ...]) -> tuple[int, ...]:
    """Output shape before integer-indexed dimensions are dropped."""
    return tuple(d.length for d in sel)


def dim_chunks(d: DimSelection, chunk: int) -> list[DimChunk]:
    """The chunks of one dimension that hold selected elements."""
    out: list[DimChunk] = []
    start, step, count = d.start, d.step, d.length
    if count == 0:
        return out
    last = start + (count - 1) * step
    c = start // chunk
    while c * chunk <= last:
        lo, hi = c * chunk, (c + 1) * chunk
        first_k = max(0, -(-(lo - start) // step))
        first = start + first_k * step
        if first >= hi or first > last:
            c = (first // chunk) if first <= last else c + 1
            if first > last:
                break
            continue
        last_k = min(count - 1, (min(hi, last + 1) - 1 - start) // step)
        n = last_k - first_k + 1
        out.append(DimChunk(c, slice(first - lo, first - lo + (n - 1) * step + 1, step), slice(first_k, first_k + n)))
        c += 1
    return out
