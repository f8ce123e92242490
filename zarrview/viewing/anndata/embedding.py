"""An embedding of an AnnData store (``obsm/X_umap``: one row of coordinates per cell) as the
points of a scatter plot, coloured by a column of the cells' dataframe.

Only the two coordinates drawn and the colour column are read. Past ``MAX_POINTS`` cells every
``step``-th cell is drawn (a strided selection: the output, not the store, bounds the memory),
and the plot says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...zarrlib import Array, Group, Node
from .encoding import AnnDataError, encoding_of
from .frame import Column, Frame

#: cells drawn at most; more are drawn every ``step``-th
MAX_POINTS = 250_000
#: one colour per category, in order (a categorical of more repeats them)
PALETTE = np.array([
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
    (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207), (174, 199, 232), (255, 187, 120),
    (152, 223, 138), (255, 152, 150), (197, 176, 213), (196, 156, 148), (247, 182, 210), (199, 199, 199),
    (219, 219, 141), (158, 218, 229)], dtype=np.uint8)
#: viridis, sampled: numbers from low to high
VIRIDIS = np.array([(68, 1, 84), (72, 40, 120), (62, 74, 137), (49, 104, 142), (38, 130, 142), (31, 158, 137),
                    (53, 183, 121), (109, 205, 89), (180, 222, 44), (253, 231, 37)], dtype=np.float64)
MISSING_COLOUR = (190, 190, 190)
#: steps of a numeric colouring: points of one step share a colour, so a plot draws a few sets
COLOUR_STEPS = 32


@dataclass(frozen=True)
class Points:
    """What a scatter plot draws: ``x``, ``y`` (cells ``0:n:step``), one RGB colour per point,
    and the legend (label, colour) of a categorical colouring or the range of a numeric one."""

    x: np.ndarray
    y: np.ndarray
    colours: np.ndarray  # (n, 3) uint8
    step: int
    total: int
    legend: tuple[tuple[str, tuple[int, int, int]], ...] = ()
    value_range: tuple[float, float] | None = None
    title: str = ""

    def groups(self) -> list[tuple[tuple[int, int, int], np.ndarray]]:
        """The points by colour: (RGB, their indices), one set a colour for a plot to draw."""
        if not self.x.size:
            return []
        keys = self.colours.astype(np.uint32) @ np.array([1 << 16, 1 << 8, 1], np.uint32)
        uniq, inverse = np.unique(keys, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
        return [((int(k >> 16), int(k >> 8 & 255), int(k & 255)), order[bounds[i]:bounds[i + 1]])
                for i, k in enumerate(uniq)]


def is_embedding(arr: Node) -> bool:
    """A two-dimensional array of 2 or 3 coordinates a row, in a group named ``obsm``."""
    return (isinstance(arr, Array) and arr.ndim == 2 and arr.shape[1] in (2, 3) and arr.dtype.kind in "iuf"
            and arr.path.rsplit("/", 2)[-2:-1] == ["obsm"])


def anndata_root(arr: Array) -> Group | None:
    """The AnnData group that holds an embedding's ``obsm`` (reads two group documents)."""
    root = arr.ancestor(2)
    enc = encoding_of(root)
    return root if enc is not None and enc.type == "anndata" else None


def read_points(arr: Array, dims: tuple[int, int], colour: Column | None, max_points: int = MAX_POINTS,
                **read: Any) -> Points:
    """Columns ``dims`` of ``arr`` and the colours of ``colour`` (None: one colour), at most
    ``max_points`` of them; ``read``: ``Array.read``'s keywords."""
    n = arr.shape[0]
    if any(not 0 <= d < arr.shape[1] for d in dims):
        raise AnnDataError(f"{arr.path} has {arr.shape[1]} coordinates, not {max(dims) + 1}")
    if colour is not None and colour.rows != n:
        raise AnnDataError(f"{colour.node.path} has {colour.rows:,} rows where {arr.path} has {n:,}")
    step = max(1, math.ceil(n / max(1, max_points)))
    rows = slice(0, n, step)
    x = arr.read((rows, dims[0]), **read).astype(np.float64, copy=False)
    y = arr.read((rows, dims[1]), **read).astype(np.float64, copy=False)
    title = f"{arr.path} [{dims[0]}, {dims[1]}]" + (f" every {step}th cell" if step > 1 else "")
    if colour is None:
        return Points(x, y, np.tile(np.array(PALETTE[0]), (x.size, 1)), step, n, title=title)
    if colour.is_categorical:
        return _categorical(x, y, colour, rows, step, n, title, **read)
    values = colour.read(rows, **read)
    v = values.values.astype(np.float64) if values.values.dtype.kind in "biuf" else np.full(x.size, np.nan)
    if values.missing is not None:
        v[values.missing] = np.nan
    return _numeric(x, y, v, step, n, title)


def _categorical(x: np.ndarray, y: np.ndarray, colour: Column, rows: slice, step: int, n: int, title: str,
                 **read: Any) -> Points:
    labels = colour.labels(**read)
    codes = colour.codes(rows, **read).astype(np.int64, copy=False)
    colours = np.empty((codes.size, 3), np.uint8)
    known = (codes >= 0) & (codes < len(labels))
    colours[known] = PALETTE[codes[known] % len(PALETTE)]
    colours[~known] = MISSING_COLOUR
    legend = tuple((str(label), tuple(int(c) for c in PALETTE[i % len(PALETTE)])) for i, label in enumerate(labels))
    if not known.all():
        legend += (("NA", MISSING_COLOUR),)
    return Points(x, y, colours, step, n, legend, title=title)  # type: ignore[arg-type]


def _numeric(x: np.ndarray, y: np.ndarray, v: np.ndarray, step: int, n: int, title: str) -> Points:
    finite = np.isfinite(v)
    lo, hi = (float(v[finite].min()), float(v[finite].max())) if finite.any() else (0.0, 1.0)
    colours = np.empty((v.size, 3), np.uint8)
    colours[~finite] = MISSING_COLOUR
    colours[finite] = colour_map(v[finite], lo, hi)
    return Points(x, y, colours, step, n, value_range=(lo, hi), title=title)


def colour_map(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Numbers ``lo`` … ``hi`` as viridis RGB, in ``COLOUR_STEPS`` steps."""
    t = np.clip((v - lo) / (hi - lo), 0.0, 1.0) if hi > lo else np.zeros_like(v)
    t = np.floor(t * (COLOUR_STEPS - 1) + 0.5) / (COLOUR_STEPS - 1)
    pos = t * (len(VIRIDIS) - 1)
    i = np.minimum(pos.astype(np.int64), len(VIRIDIS) - 2)
    f = (pos - i)[:, None]
    return np.round(VIRIDIS[i] * (1 - f) + VIRIDIS[i + 1] * f).astype(np.uint8)


#: categories a colouring tells apart at most (a legend of more is no help)
MAX_LEGEND = 200


def colour_columns(frame: Frame) -> list[str]:
    """The columns a scatter can be coloured by: categoricals of at most ``MAX_LEGEND``
    categories (their shape alone says, no read), and numbers."""
    return [c.name for c in frame.columns
            if c.numeric or (c.is_categorical and c.categories is not None and c.categories.shape[0] <= MAX_LEGEND)]
