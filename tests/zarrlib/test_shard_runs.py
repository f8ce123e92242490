"""Locating a read's inner chunks: every chunk gets the range its shard's index names, in store
order, and a local store reads runs of byte-adjacent ranges as one.

Locating works on all of a read's inner chunks at once with array operations, so it is checked
here against the index bytes of shards that zarr-python wrote, parsed with numpy alone, for
selections that touch one shard, several, and empty ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.storage.coalesce import coalesce

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
def test_chunks_get_their_index_entries_in_store_order(sharded: Path, sel: tuple) -> None:
    reader = zl.open(sharded).reader
    chunks = reader.plan(sel).chunks
    reads = reader.locate(chunks)
    assert sorted(r.chunk.coords for r in reads) == sorted(c.coords for c in chunks)  # each chunk once
    for r in reads:
        want = _truth(sharded, r.chunk.coords)
        got = None if r.req is None else (r.req.key, r.req.start, r.req.stop)
        assert got == want and r.error is None, r.chunk.coords
    ranged = [r.req for r in reads if r.req is not None]
    assert [(q.key, q.start) for q in ranged] == sorted((q.key, q.start) for q in ranged)  # store order
    groups = coalesce(ranged, reader.store.coalescing)
    for g in groups:  # a folder reads touching ranges of one shard as one, and nothing else together
        members = [ranged[i] for i in g.members]
        assert len({q.key for q in members}) == 1
        assert all(a.stop == b.start for a, b in zip(members, members[1:]))
    if sel == (slice(None),) * 3:
        assert max(len(g.members) for g in groups) > 1  # zarr-python wrote some inner chunks back to back
    np.testing.assert_array_equal(reader.read(sel), zarr.open_array(sharded, mode="r")[sel])
