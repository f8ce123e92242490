"""What a read records into an I/O log, against the test HTTP server's own count of requests
and bytes, the files on disk, and the cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import zarr

import zarrview.zarrlib as zl
from http_server import serve
from zarrview.zarrlib.io_log import IoLog, current, recording


def _array(root: Path) -> Path:
    a = zarr.create_array(root / "a.zarr", shape=(40, 60), chunks=(10, 10), dtype="u2", fill_value=0)
    a[:25, :] = np.arange(25 * 60).reshape(25, 60)
    return root / "a.zarr"


def test_requests_and_bytes_are_the_servers(tmp_path: Path) -> None:
    path = _array(tmp_path)
    stored = {p.relative_to(path).as_posix(): p.stat().st_size for p in path.rglob("*") if p.is_file()
              and p.name != "zarr.json"}
    with serve(tmp_path) as (url, state):
        arr = zl.open(f"{url}/a.zarr")
        state.clear()
        with recording(IoLog("plane")) as log:
            got = arr[...]
        gets = [p for m, p, _ in state.requests("GET") if "/c/" in p]
    np.testing.assert_array_equal(got, zarr.open_array(path, mode="r")[...])
    assert log.request_count == len(gets) == 24  # every chunk asked for, stored or not
    assert sorted(r.key for r in log.requests) == sorted(p.split("/a.zarr/", 1)[1] for p in gets)
    assert log.bytes == sum(stored.values()) == state.sent_to("/a.zarr/c/")
    outcomes = {r.key: r.outcome for r in log.requests}
    assert {k for k, o in outcomes.items() if o == "stored"} == set(stored)
    assert sum(o == "missing" for o in outcomes.values()) == 24 - len(stored)
    assert log.chunks_decoded == len(stored) and log.cache_hits == 0
    assert log.first_chunk is not None and log.last_chunk is not None and log.first_chunk <= log.last_chunk
    assert all(r.seconds >= 0 for r in log.requests) and log.decode_seconds > 0


def test_cache_hits_cost_no_request(tmp_path: Path) -> None:
    arr = zl.open(_array(tmp_path))
    cache = zl.ChunkCache(64 << 20)
    with recording(IoLog()) as first:
        arr.read((slice(0, 20), slice(0, 30)), cache=cache)
    with recording(IoLog()) as second:
        arr.read((slice(0, 20), slice(0, 30)), cache=cache)
    assert first.request_count == 6 and first.chunks_decoded == 6 and first.cache_hits == 0
    assert second.request_count == 0 and second.cache_hits == 6 and second.active


def test_nothing_is_recorded_outside_a_recording(tmp_path: Path) -> None:
    arr = zl.open(_array(tmp_path))
    log = IoLog()
    assert current() is None
    arr[...]
    with recording(log):
        assert current() is log
    assert current() is None and not log.active


def test_a_request_tried_again_is_counted_with_its_tries(tmp_path: Path) -> None:
    """The server answers the first two requests for one chunk with 503: the store tries it a
    third time, and the log says so for that chunk alone."""
    from http_server import Faults

    path = _array(tmp_path)
    faults = Faults(fail_5xx=2, fail_match="/a.zarr/c/1/2", fail_status=503)
    with serve(tmp_path, faults) as (url, state):
        arr = zl.open(f"{url}/a.zarr", io_retries=4)
        state.clear()
        with recording(IoLog()) as log:
            got = arr[...]
        tried = [p for m, p, _ in state.requests("GET") if p.endswith("/a.zarr/c/1/2")]
    np.testing.assert_array_equal(got, zarr.open_array(path, mode="r")[...])
    assert len(tried) == 3 and log.tries == {"c/1/2": 3} and log.retried == 1
