"""Exactly how many requests a remote read costs, counted by the loopback server.

Latency, not bandwidth, rules remote viewing, so the request counts are the contract:
opening a v3 array is one request, a plane of a chunked array is one request per chunk
(sent together), a region of a sharded array is one index request per shard (then cached)
plus one ranged request per run of byte-adjacent inner chunks. Expected counts come from
the chunk grid and from the shard indexes as zarr-python wrote them, read here with numpy.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from http_server import serve
from remote_backends import backend  # noqa: F401  (runs every test on each backend)

pytestmark = pytest.mark.timeout(60)

DATA = np.arange(4 * 64 * 48, dtype="<u2").reshape(4, 64, 48)
SHARDS, INNER = (2, 32, 24), (1, 8, 8)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("requests")
    a = zarr.create_array(root / "chunked.zarr", shape=DATA.shape, chunks=(1, 16, 16), dtype="u2")
    a[...] = DATA
    b = zarr.create_array(root / "sharded.zarr", shape=DATA.shape, chunks=INNER, shards=SHARDS, dtype="u2")
    b[...] = DATA
    c = zarr.create_array(root / "v2.zarr", shape=DATA.shape, chunks=(1, 16, 16), dtype="u2", zarr_format=2)
    c[...] = DATA
    g = zarr.open_group(root / "group.zarr", mode="w")
    g.create_array("x", shape=(3,), dtype="i1")[...] = [1, 2, 3]
    zarr.consolidate_metadata(root / "group.zarr")
    return root


def _index(site: Path, shard: tuple[int, ...]) -> np.ndarray:
    """(offset, nbytes) per inner chunk, from the shard's trailing index (crc32c after it)."""
    raw = (site / "sharded.zarr" / "c" / "/".join(map(str, shard))).read_bytes()
    n = int(np.prod([s // i for s, i in zip(SHARDS, INNER)]))
    return np.frombuffer(raw[-(16 * n + 4):-4], dtype="<u8").reshape(n, 2)


#: a network store reads ranges of one shard at most this far apart as one request (zarr-python's
#: ``get_ranges`` default), as long as the merged request stays within ``MERGED`` and at least
#: ``USEFUL`` of it is asked for
GAP, MERGED, USEFUL = 1 << 20, 16 << 20, 0.5


def _useful_bytes(site: Path, sel: tuple[slice, ...]) -> int:
    """The stored bytes of the inner chunks the selection touches."""
    per_dim = [range(s.start // c, -(-s.stop // c)) for s, c in zip(sel, INNER)]
    cps = [s // i for s, i in zip(SHARDS, INNER)]
    total = 0
    for coords in itertools.product(*per_dim):
        shard = tuple(c // n for c, n in zip(coords, cps))
        total += int(_index(site, shard)[int(np.ravel_multi_index(tuple(c % n for c, n in zip(coords, cps)), cps))][1])
    return total


def _expected_ranges(site: Path, sel: tuple[slice, ...]) -> int:
    """Requests for the inner chunks the selection touches, over all shards: ranges in offset
    order, a new request wherever the next starts more than ``GAP`` after the current ends,
    would take it past ``MERGED`` bytes or leave less than ``USEFUL`` of it asked for."""
    per_dim = [range(s.start // c, -(-s.stop // c)) for s, c in zip(sel, INNER)]
    cps = [s // i for s, i in zip(SHARDS, INNER)]
    by_shard: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for coords in itertools.product(*per_dim):
        shard = tuple(c // n for c, n in zip(coords, cps))
        pos = int(np.ravel_multi_index(tuple(c % n for c, n in zip(coords, cps)), cps))
        off, size = _index(site, shard)[pos]
        by_shard.setdefault(shard, []).append((int(off), int(off + size)))
    requests = 0
    for spans in by_shard.values():
        spans.sort()
        first, end = spans[0]
        useful = end - first
        requests += 1
        for start, stop in spans[1:]:
            merged = max(end, stop) - first
            if start > end + GAP or merged > MERGED or useful + stop - start < USEFUL * merged:
                requests += 1
                first, end, useful = start, stop, stop - start
            else:
                end = max(end, stop)
                useful += stop - start
    return requests


def test_opening_a_v3_array_is_one_request(site: Path) -> None:
    with serve(site) as (url, state):
        arr = zl.open(f"{url}/sharded.zarr")
        assert arr.shape == DATA.shape
        assert state.requests() == [("GET", "/sharded.zarr/zarr.json", None)]


def test_opening_a_v2_array_is_at_most_three_requests(site: Path) -> None:
    with serve(site) as (url, state):
        zl.open(f"{url}/v2.zarr")
        paths = [r[1] for r in state.requests()]
        assert len(paths) <= 3, paths
        assert "/v2.zarr/.zarray" in paths



def test_opening_a_v2_array_waits_two_round_trips_not_three(site: Path) -> None:
    from http_server import Faults

    delay = 0.3  # every answer about this store takes one "round trip"
    with serve(site, Faults(delay=delay, delay_match="/v2.zarr/")) as (url, _):
        t0 = time.perf_counter()
        zl.open(f"{url}/v2.zarr")  # zarr.json (404), then .zarray and .zattrs together
        assert time.perf_counter() - t0 < 2.6 * delay


def test_consolidated_group_lists_without_more_requests(site: Path) -> None:
    with serve(site) as (url, state):
        root = zl.open(f"{url}/group.zarr")
        assert [m.name for m in root.members()] == ["x"]
        assert len(state.requests()) == 1
        np.testing.assert_array_equal(root["x"][...], [1, 2, 3])


@pytest.mark.parametrize("name", ["chunked.zarr", "v2.zarr"])
def test_a_plane_is_one_request_per_chunk(site: Path, name: str) -> None:
    with serve(site) as (url, state):
        arr = zl.open(f"{url}/{name}")
        state.clear()
        np.testing.assert_array_equal(arr[2], DATA[2])
        chunk_gets = state.requests("GET")
        assert len(chunk_gets) == (64 // 16) * (48 // 16)
        # whole objects: no range (fsspec), or obstore's one call for a chunk, its first bytes up to its bound
        assert all(r[2] is None or r[2].startswith("bytes=0-") for r in chunk_gets), chunk_gets
        assert not state.requests("HEAD")


@pytest.mark.parametrize("sel", [
    (slice(0, 1), slice(0, 8), slice(0, 24)),  # one run in one shard
    (slice(0, 1), slice(0, 16), slice(0, 8)),  # two separate inner chunks
    (slice(1, 2), slice(0, 64), slice(0, 48)),  # a plane across four shards
    (slice(0, 4), slice(20, 44), slice(10, 30)),  # a box across every shard
])
def test_a_sharded_region_is_one_index_per_shard_plus_its_coalesced_ranges(site: Path, sel: tuple[slice, ...]) -> None:
    with serve(site) as (url, state):
        arr = zl.open(f"{url}/sharded.zarr")
        state.clear()
        np.testing.assert_array_equal(arr[sel], DATA[sel])
        shards = {tuple(c // s for c, s in zip(coords, SHARDS))
                  for coords in itertools.product(*[range(s.start, s.stop) for s in sel])}
        suffix = [r for r in state.requests("GET") if r[2] and r[2].startswith("bytes=-")]
        ranged = [r for r in state.requests("GET") if r[2] and not r[2].startswith("bytes=-")]
        assert len(suffix) == len(shards)
        assert len(ranged) == _expected_ranges(site, sel)
        assert len(state.requests()) == len(suffix) + len(ranged)
        # gaps read with the chunks never outweigh the chunks (the inner chunks of the other
        # planes lie between those of a plane)
        index_bytes = len(shards) * (16 * int(np.prod([s // i for s, i in zip(SHARDS, INNER)])) + 4)
        assert state.sent_to("/sharded.zarr/c/") - index_bytes <= 2 * _useful_bytes(site, sel)
        state.clear()
        np.testing.assert_array_equal(arr[sel], DATA[sel])  # indexes cached: ranges only
        assert len(state.requests()) == _expected_ranges(site, sel)


def test_chunks_are_fetched_concurrently_over_kept_alive_connections(site: Path) -> None:
    from http_server import Faults

    delay = 0.25
    with serve(site, Faults(delay=delay, delay_match="/c/")) as (url, state):
        arr = zl.open(f"{url}/chunked.zarr")
        t0 = time.perf_counter()
        np.testing.assert_array_equal(arr[1], DATA[1])  # 12 chunks, each answered after 0.25 s
        elapsed = time.perf_counter() - t0
        assert elapsed < 4 * delay, f"{elapsed:.2f} s: the 12 chunk requests were not in flight together"
        first = len(state.connections)
        for plane in (2, 3):
            np.testing.assert_array_equal(arr[plane], DATA[plane])
        assert len(state.requests("GET")) == 1 + 3 * 12
        assert len(state.connections) == first <= 13, "later reads reuse the open connections"


def test_missing_v2_chunks_cost_one_request_once_the_key_spelling_is_known(tmp_path: Path) -> None:
    a = zarr.create_array(tmp_path / "sparse.zarr", shape=(64, 48), chunks=(16, 16), dtype="i2", zarr_format=2,
                          fill_value=-1)
    a[0:16, :] = 7  # one row of chunks written; the other nine chunks are missing
    meta = tmp_path / "sparse.zarr" / ".zarray"  # as older writers left it: no separator declared,
    doc = json.loads(meta.read_text())          # so a missing "i.j" might be stored as "i/j"
    doc.pop("dimension_separator", None)
    meta.write_text(json.dumps(doc))
    expected = np.full((64, 48), -1, "i2")
    expected[0:16, :] = 7
    with serve(tmp_path) as (url, state):
        arr = zl.open(f"{url}/sparse.zarr")
        np.testing.assert_array_equal(arr[...], expected)
        state.clear()
        np.testing.assert_array_equal(arr[...], expected)
        # 12 chunks, one request each: no probing of the nested "0/0" spelling for the missing ones
        assert sorted(r[1].rsplit("/", 1)[1] for r in state.requests()) == sorted(
            f"{i}.{j}" for i in range(4) for j in range(3))


def test_undeclared_nested_v2_keys_found_while_other_answers_are_late(tmp_path: Path) -> None:
    """A v2 array stored with '/' keys but no dimension_separator: every declared ('.') key
    answers 404 and each chunk is then tried under its nested key. When one of those 404s
    arrives only after another chunk was already found nested, it must still be tried nested
    (it was once taken for a missing chunk and shown as fill)."""
    from http_server import Faults

    values = np.arange(5 * 6, dtype="<i2").reshape(5, 6)
    c = zarr.create_array(tmp_path / "n.zarr", shape=values.shape, chunks=(2, 4), dtype="i2", zarr_format=2,
                          fill_value=-1, compressors=None, chunk_key_encoding={"name": "v2", "separator": "/"})
    c[...] = values
    meta = json.loads((tmp_path / "n.zarr" / ".zarray").read_text())
    meta.pop("dimension_separator")
    (tmp_path / "n.zarr" / ".zarray").write_text(json.dumps(meta))
    assert (tmp_path / "n.zarr" / "2" / "0").is_file() and not (tmp_path / "n.zarr" / "2.0").exists()
    with serve(tmp_path, Faults(delay=0.4, delay_match="/n.zarr/2.0")) as (url, state):
        arr = zl.open(f"{url}/n.zarr")
        state.clear()
        np.testing.assert_array_equal(arr[...], values)
        paths = [r[1] for r in state.requests("GET")]
        assert "/n.zarr/2/0" in paths and paths.index("/n.zarr/2/0") > paths.index("/n.zarr/0/0")
