"""An array's storage audit (``zarrlib/audit.py``) as a person reads it: aligned lines, size
classes as bars, and the map of stored chunks as rows of shades. The command line prints it and
the window's Storage tab shows it, so both say the same of the same array."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .metadata import human_bytes
from ..zarrlib import Array, Group
from ..zarrlib.audit import ArrayAudit

#: the widest map drawn, in characters (a grid of more cells is drawn coarser)
MAP_WIDTH = 64
MAP_HEIGHT = 24
#: fill of a map cell, from empty to full
SHADES = " ░▒▓█"


def describe(a: ArrayAudit) -> str:
    """The audit as text: a few aligned lines and the map."""
    lines = [f"{a.path}  {' × '.join(map(str, a.shape)) or 'scalar'}, "
             f"{' × '.join(map(str, a.grid_shape)) or '1'} chunks of {human_bytes(a.chunk_nbytes)}"]
    if not a.listed:
        lines.append("  stored    unknown: the store cannot list (a plain HTTP server)")
        return "\n".join(lines)
    assert a.chunks_stored is not None and a.stored_bytes is not None
    missing = a.chunks_expected - a.chunks_stored
    share = f" ({100 * a.chunks_stored / a.chunks_expected:.3g} %)" if a.chunks_expected else ""
    lines.append(f"  chunks    {a.chunks_stored:,} of {a.chunks_expected:,} stored{share}, {missing:,} missing "
                 "(read as the fill value)")
    ratio = "" if a.ratio is None else f", compression ratio {a.ratio:.3g}"
    lines.append(f"  bytes     {human_bytes(a.stored_bytes)} stored ({a.stored_bytes:,}) of "
                 f"{human_bytes(a.logical_bytes)} logical{ratio}")
    if a.shards_expected is not None:
        fill = "" if not a.shards_stored or not a.chunks_per_shard else \
            f", {100 * (a.inner_chunks_stored or 0) / (a.shards_stored * a.chunks_per_shard):.3g} % full on average"
        lines.append(f"  shards    {a.shards_stored:,} of {a.shards_expected:,} stored, "
                     f"{a.chunks_per_shard:,} chunks each{fill}")
    sizes = [(k, n) for k, n in enumerate(a.size_classes) if n]
    if sizes:
        width = max(n for _, n in sizes)
        for k, n in sizes:
            label = "empty" if k == 0 else f"< {human_bytes(1 << k)}"
            lines.append(f"  {'sizes' if k == sizes[0][0] else '':<8}  {label:>11}  {'█' * max(1, 30 * n // width)} {n:,}")
    if a.stray_objects:
        named = ", ".join(a.stray_keys[:3]) + (", …" if a.stray_objects > 3 else "")
        lines.append(f"  strays    {a.stray_objects:,} objects are no key of the grid: {named}")
    for error in a.errors[:5]:
        lines.append(f"  error     {error}")
    if len(a.errors) > 5:
        lines.append(f"  error     … and {len(a.errors) - 5:,} more")
    lines.extend(f"  {row}" for row in map_rows(a))
    return "\n".join(lines)


def map_rows(a: ArrayAudit) -> list[str]:
    """The stored map as rows of shades (each the share of its cell's chunks that are stored),
    the last two dimensions of the grid across and down, earlier ones summed; framed, with
    how many chunks one character stands for."""
    if a.stored_map is None or a.map_cell is None or not a.chunks_expected:
        return []
    counts = a.stored_map.astype(np.float64)
    capacity = np.ones(counts.shape)
    for d, (g, c) in enumerate(zip(a.grid_shape, a.map_cell)):
        extent = np.minimum(c, g - np.arange(counts.shape[d]) * c).astype(np.float64)
        capacity = capacity * extent.reshape([-1 if i == d else 1 for i in range(counts.ndim)])
    while counts.ndim < 2:
        counts, capacity = counts[np.newaxis], capacity[np.newaxis]
    if counts.ndim > 2:
        counts, capacity = counts.sum(axis=tuple(range(counts.ndim - 2))), capacity.sum(axis=tuple(range(capacity.ndim - 2)))
    step = (max(1, -(-counts.shape[0] // MAP_HEIGHT)), max(1, -(-counts.shape[1] // MAP_WIDTH)))
    counts, capacity = _blocks(counts, step), _blocks(capacity, step)
    share = np.divide(counts, capacity, out=np.zeros_like(counts), where=capacity > 0)
    shade = np.where(counts == 0, 0, np.clip(np.ceil(share * (len(SHADES) - 2)), 1, len(SHADES) - 2)).astype(int)
    shade[(counts > 0) & (counts == capacity)] = len(SHADES) - 1
    cells = a.map_cell[-2:] if len(a.map_cell) >= 2 else (1, *a.map_cell)
    per = f"{cells[0] * step[0]} × {cells[1] * step[1]} chunks" if cells[0] * step[0] * cells[1] * step[1] > 1 \
        else "one chunk"
    rows = [f"map       one character: {per}; '{SHADES[-1]}' all stored, ' ' none"]
    rows.append("┌" + "─" * shade.shape[1] + "┐")
    rows.extend("│" + "".join(SHADES[v] for v in row) + "│" for row in shade.tolist())
    rows.append("└" + "─" * shade.shape[1] + "┘")
    return rows


def _blocks(values: np.ndarray, step: tuple[int, int]) -> np.ndarray:
    """``values`` summed over blocks of ``step`` (edge blocks smaller)."""
    rows = np.add.reduceat(values, np.arange(0, values.shape[0], step[0]), axis=0)
    return np.add.reduceat(rows, np.arange(0, values.shape[1], step[1]), axis=1)


def arrays_below(node: Any) -> Iterator[Any]:
    """``node`` if it is an array, else every array below it, in path order."""
    if isinstance(node, Array):
        yield node
        return
    if isinstance(node, Group):
        for child in sorted(node.members(), key=lambda n: n.path):
            yield from arrays_below(child)
