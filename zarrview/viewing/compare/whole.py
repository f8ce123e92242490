"""The difference of two whole arrays (or of one N-D selection of both), read block by block.

Two arrays of a few hundred gigabytes are compared the way a projection reduces one: never
whole. The selection is cut into blocks aligned to A's chunk grid (whole chunks, or, where one
chunk alone passes the budget, parts of one along its outer dimensions), each at most
``block_bytes`` of work; the same box of both arrays is read (``Array.read`` with the job's
cancel token, cache, executor and failure list), decoded as the window shows the values (CF
masking and unpacking, ``ValueCoding``) where asked, and folded into one
``difference.DifferenceTally``: float64 sums of squares, exact counts, the maximum with its
place. Memory held: one block of each array as read, their float64 copies and the difference's
few block-sized arrays, whatever the arrays' size. B's chunks need not be A's: a chunk of B
that spans two blocks is read for each (the cache keeps it where the selection fits half of it).

Progress counts blocks (done, total) after each; the cancel token is checked between blocks
and, inside zarrlib, between chunks (``ReadCancelled``). A chunk of either array that cannot be
read, where a failure list is given, leaves its box out of every figure (``unread``) rather than
comparing the fill value it reads as.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from itertools import product
import numpy as np

from ...scheduling import Context, Job
from ...zarrlib import Array, CancelToken, ChunkCache, ChunkFailure
from ..cf.values import ValueCoding, value_coding
from ..cf.view import CFView
from ..image.planning import chunks_between
from ..line.series_reads import worth_caching
from .difference import DifferenceStats, DifferenceTally, check_mode
from .errors import CompareError, ShapeMismatchError

Progress = Callable[[int, int], None]
#: [start, stop) per dimension
Box = tuple[tuple[int, int], ...]

#: the most bytes one block's work may take (both arrays' values as read and as float64, the difference)
BLOCK_BYTES = 64 << 20
#: float64 arrays (and masks) of a block's size alive while it is compared, besides the values as read
_FLOAT_COPIES = 6


@dataclass(frozen=True)
class Blocks:
    """A selection's region cut into boxes of ``shape`` aligned to multiples of it."""

    region: Box
    shape: tuple[int, ...]

    @property
    def edges(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Each dimension's [start, stop) pieces."""
        out: list[tuple[tuple[int, int], ...]] = []
        for (lo, hi), b in zip(self.region, self.shape):
            if b >= hi - lo:  # one block covers it, wherever the chunk grid cuts it
                out.append(((lo, hi),))
                continue
            first = lo // b * b
            out.append(tuple((max(lo, s), min(hi, s + b)) for s in range(first, hi, b)))
        return tuple(out)

    @property
    def total(self) -> int:
        if any(hi <= lo for lo, hi in self.region):
            return 0
        return math.prod(len(e) for e in self.edges)

    def __iter__(self) -> Iterator[Box]:
        if self.total == 0:
            return iter(())
        return iter(product(*self.edges))


def region_of(shape: Sequence[int], selection: Sequence[int | slice] | None) -> Box:
    """The box ``selection`` (an index or a slice of step 1 per dimension; missing ones whole)
    covers in an array of ``shape``; CompareError for anything else."""
    sel = list(selection) if selection is not None else []
    if len(sel) > len(shape):
        raise CompareError(f"the selection has {len(sel)} dimensions for an array of {len(shape)}")
    sel += [slice(None)] * (len(shape) - len(sel))
    out: list[tuple[int, int]] = []
    for s, n in zip(sel, shape):
        if isinstance(s, slice):
            start, stop, step = s.indices(n)
            if step != 1:
                raise CompareError(f"a selection of step {step} is not compared; steps of 1 only")
            out.append((start, max(start, stop)))
        elif isinstance(s, int | np.integer) and not isinstance(s, bool):
            i = int(s) + n if s < 0 else int(s)
            if not 0 <= i < n:
                raise CompareError(f"index {int(s)} is outside a dimension of {n}")
            out.append((i, i + 1))
        else:
            raise CompareError(f"{s!r} is not an index or a slice")
    return tuple(out)


def block_shape(region: Box, chunks: Sequence[int], elements: int) -> tuple[int, ...]:
    """Blocks of whole chunks, grown along the inner dimensions first, of at most ``elements``;
    where one chunk has more, a chunk cut along its outer dimensions first."""
    extents = [max(1, hi - lo) for lo, hi in region]
    unit = [max(1, min(c, e)) for c, e in zip(chunks, extents)]
    elements = max(1, elements)
    if math.prod(unit) > elements:
        block = list(unit)
        for d in range(len(block)):
            others = math.prod(block) // block[d]
            if others * block[d] <= elements:
                break
            block[d] = max(1, elements // others)
        return tuple(block)
    block = list(unit)
    for d in reversed(range(len(block))):
        others = math.prod(block) // block[d]
        whole = -(-extents[d] // unit[d]) * unit[d]
        fit = elements // others // unit[d] * unit[d]
        if fit >= whole:
            block[d] = whole
            continue
        block[d] = max(unit[d], fit)
        break
    return tuple(block)


def plan_blocks(a: Array, b: Array, region: Box, block_bytes: int = BLOCK_BYTES) -> Blocks:
    """``region`` cut into blocks aligned to A's chunk grid, each costing at most about
    ``block_bytes`` to compare (both arrays' values as read, their float64 copies, the
    difference)."""
    per_element = np.dtype(a.dtype).itemsize + np.dtype(b.dtype).itemsize + 8 * _FLOAT_COPIES
    return Blocks(region, block_shape(region, a.chunks, block_bytes // per_element))


def check_shapes(a: Array, b: Array, a_cf: CFView | None = None, b_cf: CFView | None = None) -> None:
    """``ShapeMismatchError`` naming both shapes where A and B differ; where both have
    coordinates along a dimension whose lengths differ, it says to compare them on their common
    window instead."""
    if a.shape == b.shape:
        return
    message = f"A ({a.path}) has shape {a.shape} and B ({b.path}) {b.shape}: whole arrays are compared at equal shapes"
    if a.ndim == b.ndim and a_cf is not None and b_cf is not None:
        differing = [d for d in range(a.ndim) if a.shape[d] != b.shape[d]]
        if all(d in a_cf.axes and d in b_cf.axes for d in differing):
            message += "; both have coordinates there: compare their planes on the common coordinate window"
    raise ShapeMismatchError(message)


def _coding(arr: Array, cf: CFView | None, decoded: bool) -> ValueCoding | None:
    if not decoded:
        return None
    coding = cf.coding if cf is not None else value_coding(arr)
    return coding if coding.active else None


def whole_difference(a: Array, b: Array, mode: str = "a-b", *, selection: Sequence[int | slice] | None = None,
                     decoded: bool = True, a_cf: CFView | None = None, b_cf: CFView | None = None,
                     b_decoded: bool | None = None, b_shift: Mapping[int, int] | None = None,
                     block_bytes: int = BLOCK_BYTES, cancel: CancelToken | None = None,
                     progress: Progress | None = None, cache: ChunkCache | None = None,
                     executor: ThreadPoolExecutor | None = None,
                     failures: list[ChunkFailure] | None = None) -> DifferenceStats:
    """The difference statistics of A and B (equal shapes) over ``selection`` (whole by
    default; an index or a slice per dimension), read block by block on the calling thread.
    ``decoded``: values CF-decoded as the window shows them (each side's ``cf.coding``, else its
    attributes'); ``b_decoded``, where given, B's own choice (one array's stored values against
    its decoded ones). ``b_shift``: B's box is A's moved by this many along those dimensions (one
    array against itself at another channel or time). ``where`` is an index of A. Raises
    ``ShapeMismatchError`` before any read where the shapes differ, ``ReadCancelled`` once
    ``cancel`` is set; with a ``failures`` list, unreadable chunks are recorded there and left
    out (``unread``)."""
    check_mode(mode)
    check_shapes(a, b, a_cf, b_cf)
    shift = tuple((b_shift or {}).get(d, 0) for d in range(a.ndim))
    for which, arr in (("A", a), ("B", b)):
        if np.dtype(arr.dtype).kind not in "biuf":
            raise CompareError(f"{which} ({arr.path}) holds {arr.dtype} values, not real numbers")
    region = region_of(a.shape, selection)
    for (lo, hi), n, step in zip(region, b.shape, shift):
        if lo + step < 0 or hi + step > n:
            raise CompareError(f"B's part, A's moved by {step}, lies outside a dimension of {n}")
    layout = plan_blocks(a, b, region, block_bytes)
    total = layout.total
    if cache is not None:
        chunks = math.prod(chunks_between(lo, hi, c) for (lo, hi), c in zip(region, a.chunks))
        if not worth_caching(a, chunks, cache):
            cache = None
    codings = (_coding(a, a_cf, decoded), _coding(b, b_cf, decoded if b_decoded is None else b_decoded))
    tally = DifferenceTally(mode)
    for done, box in enumerate(layout, start=1):
        if cancel is not None:
            cancel.raise_if_cancelled()
        moved = tuple((lo + step, hi + step) for (lo, hi), step in zip(box, shift))
        before = len(failures) if failures is not None else 0
        values, failed = [], []
        for arr, coding, where in zip((a, b), codings, (box, moved)):
            raw = arr.read(tuple(slice(lo, hi) for lo, hi in where), cancel=cancel, cache=cache, executor=executor,
                           failures=failures)
            values.append(raw if coding is None else coding.decode(raw, inplace=True))
            if failures is not None:  # B's failures are placed in A's box
                failed += [f if where is box else _moved_back(f, shift) for f in failures[before:]]
                before = len(failures)
        keep = _read_mask(box, failed) if failures is not None else None
        tally.add(values[0], values[1], origin=[lo for lo, _ in box], keep=keep)
        del values
        if progress is not None:
            progress(done, total)
    return tally.stats()


def _moved_back(failure: ChunkFailure, shift: Sequence[int]) -> ChunkFailure:
    """A failure of B's box, placed in A's."""
    if not any(shift):
        return failure
    return replace(failure, box=tuple((lo - s, hi - s) for (lo, hi), s in zip(failure.box, shift)))


def _read_mask(box: Box, failed: Sequence[ChunkFailure]) -> np.ndarray | None:
    """False inside ``box`` where a chunk of ``failed`` lies; None where none failed."""
    if not failed:
        return None
    keep = np.ones(tuple(hi - lo for lo, hi in box), dtype=bool)
    for f in failed:
        cut = tuple(slice(max(f0, lo) - lo, max(min(f1, hi) - lo, 0)) for (f0, f1), (lo, hi) in zip(f.box, box))
        keep[cut] = False
    return keep


def whole_job(a: Array, b: Array, mode: str = "a-b", *, selection: Sequence[int | slice] | None = None,
              decoded: bool = True, a_cf: CFView | None = None, b_cf: CFView | None = None,
              b_decoded: bool | None = None, b_shift: Mapping[int, int] | None = None,
              block_bytes: int = BLOCK_BYTES) -> Job[DifferenceStats]:
    """The job of ``whole_difference``, run with its context's cancel token, progress (blocks),
    cache, executor and failure list. The shapes and the mode are checked here, on the thread
    that builds it, so a refusal is said at once."""
    check_mode(mode)
    check_shapes(a, b, a_cf, b_cf)

    def work(ctx: Context) -> DifferenceStats:
        return whole_difference(a, b, mode, selection=selection, decoded=decoded, a_cf=a_cf, b_cf=b_cf,
                                b_decoded=b_decoded, b_shift=b_shift, block_bytes=block_bytes, cancel=ctx.cancel,
                                progress=ctx.progress, cache=ctx.cache, executor=ctx.executor, failures=ctx.failures)

    return Job(work, f"difference of {a.path} and {b.path}")


def describe(stats: DifferenceStats, names: Sequence[str] | None = None) -> str:
    """``stats.text`` with the place of the maximum named by ``names`` (a dimension name per
    index) where given: ``at (time=3, lat=10, lon=4)``."""
    if names is None or stats.where is None or len(names) != len(stats.where):
        return stats.text
    plain = f"({', '.join(str(i) for i in stats.where)})"
    named = f"({', '.join(f'{n}={i}' for n, i in zip(names, stats.where))})"
    return stats.text.replace(plain, named, 1)
