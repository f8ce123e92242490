"""Rectilinear chunk grids: chunk extents that vary along each dimension.

A dimension's chunk edges are held as runs of equal edges (edge, count), the form the
``rectilinear`` grid's JSON spells, and never expanded: a run of 10**12 one-element chunks
costs one entry. Runs are cut where the array ends (chunks that start past it are never
read), so every lookup is a binary search over at most as many runs as the document holds,
and a read of any selection visits only the chunks it touches.

The regular grid does not use this module: its reads keep their arithmetic in ``indexing``.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass
from collections.abc import Iterator
from typing import Any

import numpy as np

from .errors import MetadataError, UnsupportedFeatureError, short
from .indexing import DimChunk, DimSelection, dim_chunks
from .limits import limits

MAX_EDGE = 2**62


@dataclass(frozen=True)
class Axis:
    """One dimension's chunks: runs of ``counts[r]`` chunks of ``edges[r]`` elements, the first
    of them chunk ``firsts[r]``, starting at element ``starts[r]``; ``n`` chunks cover ``extent``."""

    edges: array[int]
    counts: array[int]
    firsts: array[int]
    starts: array[int]
    n: int
    extent: int
    #: the first declared edge: the chunk extent of a dimension of length 0, which has no chunk
    declared: int = 1

    def _run_of_chunk(self, c: int) -> int:
        return bisect.bisect_right(self.firsts, c) - 1

    def chunk_of(self, i: int) -> int:
        """The chunk holding element ``i`` (0 <= i < extent)."""
        r = bisect.bisect_right(self.starts, i) - 1
        return self.firsts[r] + (i - self.starts[r]) // self.edges[r]

    def edge(self, c: int) -> int:
        """Chunk ``c``'s declared extent: its decoded size, past the array's end for the last."""
        return self.edges[self._run_of_chunk(c)]

    def span(self, c: int) -> tuple[int, int]:
        """[start, stop) of chunk ``c`` in array coordinates, cut at the array's end."""
        r = self._run_of_chunk(c)
        start = self.starts[r] + (c - self.firsts[r]) * self.edges[r]
        return start, min(start + self.edges[r], self.extent)

    @property
    def largest(self) -> int:
        return max(self.edges, default=self.declared)

    def text(self, runs: int = 40) -> str:
        """The edges as the JSON's run-length form reads (``3×4, 5, 6``), the first ``runs`` of them."""
        shown = ", ".join(f"{e}×{n}" if n > 1 else str(e) for e, n in zip(self.edges[:runs], self.counts[:runs]))
        return (shown + ", …" if len(self.edges) > runs else shown) or "none"

    def touched(self, d: DimSelection) -> int:
        """How many chunks a selection of this dimension touches (an upper bound)."""
        if d.length == 0:
            return 0
        last = d.start + (d.length - 1) * d.step
        return min(d.length, self.chunk_of(last) - self.chunk_of(d.start) + 1)

    def dim_chunks(self, d: DimSelection) -> list[DimChunk]:
        """``indexing.dim_chunks`` over varying edges: each run of equal edges is a regular grid
        of its own, entered at the next selected element (runs without one are skipped)."""
        out: list[DimChunk] = []
        if d.length == 0:
            return out
        start, step = d.start, d.step
        last = start + (d.length - 1) * step
        e = start
        while e <= last:
            r = bisect.bisect_right(self.starts, e) - 1
            origin, edge, base, count = self.starts[r], self.edges[r], self.firsts[r], self.counts[r]
            end = min(origin + edge * count, last + 1)
            k0 = (e - start) // step
            n = (end - 1 - e) // step + 1
            if count == 1:  # one chunk (an irregular edge): its part without walking a grid
                out.append(DimChunk(base, slice(e - origin, e - origin + (n - 1) * step + 1, step), slice(k0, k0 + n)))
            else:
                sub = DimSelection(e - origin, e - origin + (n - 1) * step + 1, step, False, n)
                out.extend(DimChunk(base + c, inner, slice(o.start + k0, o.stop + k0))
                           for c, inner, o in dim_chunks(sub, edge))
            e += n * step
        return out


@dataclass(frozen=True)
class RectilinearGrid:
    """A rectilinear chunk grid cut to an array's shape, with the JSON it came from."""

    axes: tuple[Axis, ...]
    document: Any

    @property
    def largest(self) -> tuple[int, ...]:
        """The largest chunk extent of each dimension: what bounds a chunk's memory."""
        return tuple(a.largest for a in self.axes)

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(a.n for a in self.axes)

    def chunk_shape(self, coords: tuple[int, ...]) -> tuple[int, ...]:
        """The declared (decoded) shape of the chunk at ``coords``."""
        return tuple(a.edge(c) for a, c in zip(self.axes, coords))

    def box(self, coords: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        """The chunk's [start, stop) per dimension, in array coordinates."""
        return tuple(a.span(c) for a, c in zip(self.axes, coords))

    def inner_positions(self, coords: np.ndarray, inner: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For rows of global inner-chunk coordinates (every edge a multiple of ``inner``): the
        shard of each, its position within that shard, and that shard's chunks per dimension."""
        shards, local, cps = (np.empty_like(coords) for _ in range(3))
        for d, (axis, size) in enumerate(zip(self.axes, inner)):
            starts, edges = np.frombuffer(axis.starts, np.int64), np.frombuffer(axis.edges, np.int64)
            x = coords[:, d] * size
            r = np.searchsorted(starts, x, side="right") - 1
            k = (x - starts[r]) // edges[r]
            shards[:, d] = np.frombuffer(axis.firsts, np.int64)[r] + k
            local[:, d] = (x - starts[r] - k * edges[r]) // size
            cps[:, d] = edges[r] // size
        return shards, local, cps


def parse_rectilinear(config: dict[str, Any], shape: tuple[int, ...], where: str) -> RectilinearGrid:
    """The ``rectilinear`` grid's configuration, checked and cut to ``shape``."""
    kind = config.get("kind")
    if kind != "inline":
        if isinstance(kind, str):
            raise UnsupportedFeatureError(f"rectilinear chunk grid kind {short(kind)} in {where} is not supported "
                                          "(only 'inline')")
        raise MetadataError(f"rectilinear chunk grid in {where} needs kind 'inline', not {short(kind)}")
    shapes = config.get("chunk_shapes")
    if not isinstance(shapes, list) or len(shapes) != len(shape):
        raise MetadataError(f"chunk_shapes {short(shapes)} in {where} must list one entry for each of the "
                            f"{len(shape)} dimensions of shape {list(shape)}")
    return RectilinearGrid(tuple(_axis(spec, n, d, where) for d, (spec, n) in enumerate(zip(shapes, shape))), shapes)


def _positive(value: Any, what: str, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_EDGE:
        raise MetadataError(f"{what} in {where} must be an integer from 1 to 2**62, not {short(value)}")
    return value


def _run(item: Any, i: int, what: str, where: str) -> tuple[int, int]:
    """One entry of an edge list: an edge, or a run [edge, count]."""
    if isinstance(item, list):
        if len(item) != 2:
            raise MetadataError(f"{what}[{i}] in {where} must be a run [edge, count], not {short(item)}")
        return _positive(item[0], f"{what}[{i}] edge", where), _positive(item[1], f"{what}[{i}] count", where)
    return _positive(item, f"{what}[{i}]", where), 1


def _axis(spec: Any, extent: int, d: int, where: str) -> Axis:
    what = f"chunk_shapes[{d}]"
    runs: Iterator[tuple[int, int]]
    if isinstance(spec, list):
        bound = limits().grid_edges
        if len(spec) > bound:
            raise UnsupportedFeatureError(f"{what} in {where} lists {len(spec):,} edges; at most {bound:,} are "
                                          "supported for one dimension")
        fast = _plain_edges(spec, extent)
        if fast is not None:
            return fast
        runs = (_run(item, i, what, where) for i, item in enumerate(spec))
    elif isinstance(spec, int) and not isinstance(spec, bool):
        edge = _positive(spec, what, where)
        runs = iter([(edge, -(-extent // edge))])
    else:
        raise MetadataError(f"{what} in {where} must be an edge length or a list of them, not {short(spec)}")
    # int64 arrays, not lists: a dimension of a million irregular chunks costs 32 MB, not 200
    edges, counts, firsts, starts = (array("q") for _ in range(4))
    n = covered = 0
    declared = 0
    for edge, count in runs:  # every entry is checked, also those past the extent
        declared = declared or edge
        if covered >= extent:
            continue
        take = min(count, -(-(extent - covered) // edge))
        if edges and edges[-1] == edge:
            counts[-1] += take
        else:
            edges.append(edge)
            counts.append(take)
            firsts.append(n)
            starts.append(covered)
        n += take
        covered += take * edge
    if covered < extent:
        raise MetadataError(f"{what} {short(spec)} in {where} covers {covered} elements, fewer than the "
                            f"{extent} of dimension {d}")
    return Axis(edges, counts, firsts, starts, n, extent, declared or 1)


def _plain_edges(spec: list[Any], extent: int) -> Axis | None:
    """A list of plain edges (the form of a long irregular dimension) cut and run-length
    compressed with numpy: a million edges in milliseconds, where a loop takes seconds. None
    where the list holds runs or anything the checked loop must name."""
    if not spec or extent == 0 or set(map(type, spec)) != {int}:
        return None
    values = np.array(spec)
    if values.dtype != np.int64 or values.min() < 1 or values.max() > MAX_EDGE:
        return None
    # values before the first one that reaches the extent are each below it, so the running sum
    # is exact up to there; whatever it does after is never looked at
    reach = np.flatnonzero(np.cumsum(np.minimum(values, extent)) >= extent)
    if not len(reach):
        return None  # short of the extent: the loop says by how much
    kept = values[: reach[0] + 1]
    firsts = np.flatnonzero(np.concatenate([[True], kept[1:] != kept[:-1]]))
    counts = np.diff(np.append(firsts, len(kept)))
    starts = np.concatenate([[0], np.cumsum(kept[:-1])])[firsts]
    edges, runs, first, start = (_int64s(a) for a in (kept[firsts], counts, firsts, starts))
    return Axis(edges, runs, first, start, len(kept), extent, int(values[0]))


def _int64s(values: np.ndarray) -> array[int]:
    out = array("q")
    out.frombytes(values.astype(np.int64).tobytes())
    return out


def check_shard_edges(grid: RectilinearGrid, codecs: Any, where: str) -> None:
    """Every shard edge a multiple of the inner chunk's, as sharding requires: the inner chunks
    then form one regular grid over the array, and each shard holds whole ones. (A malformed
    sharding configuration is left for the codec to name.)"""
    first = codecs[0] if isinstance(codecs, list) and codecs else None
    if not isinstance(first, dict) or first.get("name") != "sharding_indexed":
        return
    config = first.get("configuration")
    inner = config.get("chunk_shape") if isinstance(config, dict) else None
    if not isinstance(inner, list) or len(inner) != len(grid.axes):
        return
    for d, (axis, size) in enumerate(zip(grid.axes, inner)):
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            return
        for edge in axis.edges:
            if edge % size:
                raise MetadataError(f"sharding_indexed in {where}: shard edge {edge} in dimension {d} of the "
                                    f"rectilinear grid is not a multiple of the inner chunk's {size}")
