"""Property tests of a rectilinear grid's arithmetic against brute force over its expanded edges.

Random edge lists (single edges and [edge, count] runs, regular dimensions as a bare integer,
chunks past the end), random slices and integers: each chunk a selection touches, the part of
it selected and where that part goes in the output must be exactly what numpy finds by mapping
every selected element to its chunk through the cumulative edges (the specification's rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrview.zarrlib.grid import parse_rectilinear
from zarrview.zarrlib.indexing import normalize

SETTINGS = settings(max_examples=300, deadline=None)

runs = st.lists(st.one_of(st.integers(1, 9), st.tuples(st.integers(1, 9), st.integers(1, 6)).map(list)),
                min_size=1, max_size=8)


def _expand(spec: Any, extent: int) -> list[int]:
    if isinstance(spec, int):
        return [spec] * -(-extent // spec)
    return [e for item in spec for e in ([item[0]] * item[1] if isinstance(item, list) else [item])]


@st.composite
def axes(draw: st.DrawFn) -> tuple[Any, int, Any]:
    """(spec, extent, selection) with the spec covering the extent."""
    if draw(st.booleans()):
        spec: Any = draw(runs)
        total = sum(_expand(spec, 0))
        extent = draw(st.integers(max(0, total - 12), total))  # up to a few chunks past the end
    else:
        spec = draw(st.integers(1, 9))
        extent = draw(st.integers(0, 60))
    if extent and draw(st.booleans()):
        selection: Any = draw(st.integers(-extent, extent - 1))
    else:
        selection = slice(draw(st.none() | st.integers(-70, 70)), draw(st.none() | st.integers(-70, 70)),
                          draw(st.none() | st.integers(1, 12)))
    return spec, extent, selection


@SETTINGS
@given(axes())
def test_each_touched_chunk_and_its_parts_are_what_brute_force_finds(case: tuple[Any, int, Any]) -> None:
    spec, extent, selection = case
    axis = parse_rectilinear({"kind": "inline", "chunk_shapes": [spec]}, (extent,), "/a/zarr.json").axes[0]
    edges = _expand(spec, extent)
    bounds = np.concatenate([[0], np.cumsum(edges)])
    (d,) = normalize(selection, (extent,))
    got = axis.dim_chunks(d)
    idx = np.arange(extent)[selection]
    idx = np.atleast_1d(idx)
    chunk_of = np.searchsorted(bounds[1:], idx, side="right")
    want = []
    for c in np.unique(chunk_of).tolist():
        at = np.flatnonzero(chunk_of == c)
        want.append((c, (idx[at] - bounds[c]).tolist(), at.tolist()))
    assert [(dc.chunk, list(range(edges[dc.chunk]))[dc.inner], list(range(len(idx)))[dc.out]) for dc in got] == want
    assert axis.touched(d) >= len(want)  # the planning bound never undercounts
    assert axis.n == int(np.searchsorted(bounds, extent, side="left")) if extent else axis.n == 0
    for c in range(axis.n):
        assert axis.span(c) == (int(bounds[c]), min(int(bounds[c + 1]), extent))
        assert axis.edge(c) == edges[c]
    for i in range(extent):
        assert axis.chunk_of(i) == int(np.searchsorted(bounds[1:], i, side="right"))


def test_a_million_plain_edges() -> None:
    """A long irregular dimension (a list of plain edges, parsed without a loop per edge):
    the same chunks as brute force, at any place of the list."""
    rng = np.random.default_rng(1)
    edges = rng.integers(1, 4, 1_000_000)
    edges[500_000:600_000] = 2  # a long run among the irregular edges
    bounds = np.concatenate([[0], np.cumsum(edges)])
    extent = int(bounds[-1]) - 1  # the last chunk runs past the end
    axis = parse_rectilinear({"kind": "inline", "chunk_shapes": [edges.tolist()]}, (extent,), "/a").axes[0]
    assert axis.n == len(edges) and len(axis.edges) < len(edges)
    for c in rng.integers(0, len(edges), 200).tolist() + [0, len(edges) - 1]:
        assert axis.span(c) == (int(bounds[c]), min(int(bounds[c + 1]), extent)) and axis.edge(c) == edges[c]
    (d,) = normalize(slice(123_456, 1_999_999, 7), (extent,))
    idx = np.arange(extent)[123_456:1_999_999:7]
    want = np.unique(np.searchsorted(bounds[1:], idx, side="right")).tolist()
    assert [dc.chunk for dc in axis.dim_chunks(d)] == want
