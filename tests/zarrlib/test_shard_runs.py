"""Locating a read's inner chunks: every item gets the range its shard's index names, and the
fetches are runs of byte-adjacent ranges in store order.

``ShardIndexes.locate`` works on all of a read's inner chunks at once with array operations
(issue 15), so it is checked here against the index bytes of shards that zarr-python wrote,
parsed with numpy alone, for selections that touch one shard, several, and empty ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _bad_helpers import read_shard_index  # noqa: E402

SHAPE, INNER, SHARD = (8, 48, 40), (1, 8, 8), (4, 16, 24)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs") / "s.zarr"
    data = np.arange(np.prod(SHAPE), dtype="<u2").reshape(SHAPE)
    data[:, 16:32, :] = 0  # whole inner chunks of fill value: zarr-python stores none of them
    z = zarr.create_array(root, shape=SHAPE, chunks=INNER, shards=SHARD, dtype=data.dtype, fill_value=0)
    z[...] = data
    return root


def _truth(root: Path, coords: tuple[int, ...]) -> tuple[str, int, int] | None:
    """(key, start, stop) of an inner chunk from its shard file, None where it is not stored."""
    shard = tuple(c * i // s for c, i, s in zip(coords, INNER, SHARD))
    path = root / "c" / "/".join(map(str, shard))
    if not path.exists():
        return None
    per = [s // i for s, i in zip(SHARD, INNER)]
    index = read_shard_index(path.read_bytes(), int(np.prod(per)))
    local = tuple(c % p for c, p in zip(coords, per))
    offset, nbytes = (int(v) for v in index[np.ravel_multi_index(local, per)])
    if offset == nbytes == 2**64 - 1:
        return None
    return "c/" + "/".join(map(str, shard)), offset, offset + nbytes


@pytest.mark.parametrize("sel", [
    (slice(None), 40, slice(None)),  # an XZ section across shards
    (slice(None), 20, slice(None)),  # one whose inner chunks are all empty
    (3, slice(None), slice(None)),  # a plane
    (slice(None), slice(None), slice(None)),
    (slice(1, 3), slice(5, 9), slice(30, 34)),  # one shard, few chunks
], ids=["xz", "xz_empty", "xy", "all", "small"])
def test_items_get_their_index_entries_in_runs_of_adjacent_ranges(sharded: Path, sel: tuple) -> None:
    reader = zl.open(sharded).reader
    _, _, items = reader.plan(sel)
    units = reader._shards.locate(items)
    assert sorted(id(it) for u in units for it in u) == sorted(id(it) for it in items)  # each item once
    for item in items:
        want = _truth(sharded, item.coords)
        got = None if item.req is None else (item.req.key, item.req.start, item.req.stop)
        assert got == want and item.error is None, item.coords
    ranged = [u for u in units if u[0].req is not None]
    for unit in ranged:
        assert len({it.req.key for it in unit}) == 1
        assert all(a.req.stop == b.req.start for a, b in zip(unit, unit[1:]))  # byte-adjacent
    firsts = [(u[0].req.key, u[0].req.start) for u in ranged]
    assert firsts == sorted(firsts)  # store order
    for a, b in zip(ranged, ranged[1:]):  # a run ends where the next range does not follow it
        assert a[-1].req.key != b[0].req.key or a[-1].req.stop != b[0].req.start
    if sel == (slice(None),) * 3:
        assert max(len(u) for u in units) > 1  # zarr-python wrote some inner chunks back to back
    np.testing.assert_array_equal(reader.read(sel), zarr.open_array(sharded, mode="r")[sel])
