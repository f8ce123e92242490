"""Remote reads against a loopback server that misbehaves the ways real ones do.

The truth is what zarr-python wrote (the numpy data handed to it). Every test is bounded in
time: the reads use short per-try timeouts, and pytest-timeout stops anything that hangs.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import aiohttp
import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from http_server import Faults, serve
from remote_backends import backend  # noqa: F401  (runs every test on each backend)

pytestmark = pytest.mark.timeout(60)

DATA = np.arange(64 * 48, dtype="<u2").reshape(64, 48)
FAST = {"io_timeout": 1.0, "io_retries": 3}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("faults")
    a = zarr.create_array(root / "chunked.zarr", shape=DATA.shape, chunks=(16, 16), dtype="u2")
    a[...] = DATA
    b = zarr.create_array(root / "sharded.zarr", shape=DATA.shape, chunks=(8, 8), shards=(32, 24), dtype="u2")
    b[...] = DATA
    c = zarr.create_array(root / "v2.zarr", shape=DATA.shape, chunks=(16, 16), dtype="u2", zarr_format=2)
    c[...] = DATA
    return root


def gets(state, contains: str = "") -> list[tuple[str, str, str | None]]:  # type: ignore[no-untyped-def]
    return [r for r in state.requests("GET") if contains in r[1]]


@pytest.mark.parametrize("name,chunks", [("chunked.zarr", "/c/"), ("sharded.zarr", "/c/"), ("v2.zarr", "/1.")])
def test_transient_500s_are_retried(site: Path, name: str, chunks: str) -> None:
    faults = Faults(fail_5xx=2, fail_match=f"{name}{chunks}")
    with serve(site, faults) as (url, state):
        arr = zl.open(f"{url}/{name}", **FAST)
        np.testing.assert_array_equal(arr[...], DATA)
        assert faults.fail_5xx == 0, "the server should have failed two requests"


def test_persistent_500_names_the_key_and_the_attempts(site: Path) -> None:
    faults = Faults(fail_5xx=10**6, fail_match="/c/1/0")
    with serve(site, faults) as (url, state):
        arr = zl.open(f"{url}/chunked.zarr", **FAST)
        t0 = time.monotonic()
        with pytest.raises(zl.StoreError, match=r"chunked\.zarr/c/1/0: HTTP 500 after 3 attempts"):
            arr[16:32, 0:16]
        assert time.monotonic() - t0 < 5
        assert len(gets(state, "/c/1/0")) == 3


@pytest.mark.parametrize("options,within", [
    ({"io_timeout": 0.3, "io_retries": 2}, r"within 0\.3 s after 2 attempts"),
    # zarrlib turns aiohttp's own timers off when its per-try timeout is the tighter bound;
    # one the user set tighter in client_kwargs must still cut a slow answer short
    ({"io_timeout": 30, "io_retries": 1, "client_kwargs": {"timeout": aiohttp.ClientTimeout(total=0.3)}},
     r"within the client's timeout"),
], ids=["per-try timeout", "client timeout"])
def test_slow_server_times_out_and_names_the_key(site: Path, options: dict, within: str) -> None:
    faults = Faults(delay=3.0, delay_match="/c/")
    with serve(site, faults) as (url, _):
        arr = zl.open(f"{url}/chunked.zarr", **options)
        t0 = time.monotonic()
        with pytest.raises(zl.StoreError, match=r"chunked\.zarr/c/0/0: no answer " + within):
            arr[0:16, 0:16]
        assert time.monotonic() - t0 < 2.5


def test_a_request_gives_up_when_its_tries_together_take_the_limit(site: Path) -> None:
    """A server slower than every try: each try times out, and the request is abandoned once its
    tries together have taken ``request_seconds`` (2 tries of a 2 s timeout in 3 s), not after
    all 4 tries (8 s); the message says so and names the key."""
    old = zl.limits.configure(request_seconds=3)
    try:
        with serve(site, Faults(delay=8.0, delay_match="/c/0/0")) as (url, state):
            arr = zl.open(f"{url}/chunked.zarr", io_timeout=2, io_retries=4)
            with pytest.raises(zl.StoreError, match=r"chunked\.zarr/c/0/0: no complete answer within 3 s \((2 tries|one try)\)"):
                arr[0:16, 0:16]
            assert 1 <= len([r for r in state.requests("GET") if r[1].endswith("/c/0/0")]) <= 2
    finally:
        zl.limits.restore(old)


def test_connection_dropped_mid_body_is_retried(site: Path) -> None:
    faults = Faults(drop=3, drop_match="/c/")
    with serve(site, faults) as (url, _):
        np.testing.assert_array_equal(zl.open(f"{url}/chunked.zarr", **FAST)[...], DATA)
        assert faults.drop == 0


@pytest.mark.parametrize("name", ["chunked.zarr", "sharded.zarr"])
def test_server_ignoring_range_is_detected_and_each_object_fetched_once(site: Path, name: str, backend: str) -> None:
    with serve(site, Faults(ignore_range=True)) as (url, state):
        arr = zl.open(f"{url}/{name}", **FAST)
        np.testing.assert_array_equal(arr[...], DATA)
        np.testing.assert_array_equal(arr[5:40, 7:30], DATA[5:40, 7:30])
        chunk_gets = [r[1] for r in gets(state, f"{name}/c/")]
        if name == "sharded.zarr":
            # 2x2 shards: the answers to the index requests (suffix ranges, sent together) are the
            # whole shards; those are kept, so no shard is fetched again. obstore does not hand a
            # 200 to a range over: each shard is then asked for once more, whole, and kept
            whole = [r[1] for r in gets(state, f"{name}/c/") if r[2] is None]
            if backend == "obstore":
                assert sorted(whole) == sorted(set(whole)) and len(whole) == 4 and len(chunk_gets) <= 8
            else:
                assert sorted(chunk_gets) == sorted(set(chunk_gets)) and len(chunk_gets) == 4
            assert arr._h.store.ignores_ranges  # type: ignore[attr-defined]


def test_server_refusing_suffix_ranges(site: Path) -> None:
    with serve(site, Faults(refuse_suffix=True)) as (url, state):
        arr = zl.open(f"{url}/sharded.zarr", **FAST)
        np.testing.assert_array_equal(arr[...], DATA)
        suffix = [r for r in gets(state, "/c/") if r[2] and r[2].startswith("bytes=-")]
        assert len(suffix) <= 4, "at most the first, concurrent batch of index requests is refused"
        assert len(state.requests("HEAD")) == 4  # the sizes of the 4 shards, to range their ends
        state.clear()
        again = zl.open(f"{url}/sharded.zarr", **FAST)
        again._h.store.refuses_suffix = arr._h.store.refuses_suffix  # type: ignore[attr-defined]
        np.testing.assert_array_equal(again[0:8, 0:8], DATA[0:8, 0:8])
        assert not [r for r in gets(state) if r[2] and r[2].startswith("bytes=-")]


@pytest.mark.parametrize("status,error,text", [
    (404, zl.StoreNotFoundError, r"no Zarr metadata at http://127\.0\.0\.1:\d+/chunked\.zarr/zarr\.json \(404"),
    (403, zl.StoreAccessError, r"http://127\.0\.0\.1:\d+/chunked\.zarr/zarr\.json: access denied \(403\)"),
])
def test_metadata_refused(site: Path, status: int, error: type, text: str) -> None:
    faults = Faults(status={"chunked.zarr/zarr.json": status, "chunked.zarr/.zgroup": 404,
                            "chunked.zarr/.zarray": 404, "chunked.zarr/.zmetadata": 404})
    with serve(site, faults) as (url, _):
        with pytest.raises(error, match=text):
            zl.open(f"{url}/chunked.zarr", **FAST)


@pytest.mark.parametrize("name,bad", [("chunked.zarr", "/c/1/2"), ("sharded.zarr", "/c/0/1"), ("v2.zarr", "/1.2")])
def test_failed_chunk_is_reported_while_the_rest_reads(site: Path, name: str, bad: str) -> None:
    faults = Faults(fail_5xx=10**6, fail_match=f"{name}{bad}")
    with serve(site, faults) as (url, _):
        arr = zl.open(f"{url}/{name}", **FAST)
        failures: list[zl.ChunkFailure] = []
        got = arr.read(..., failures=failures)
        assert failures, "the failing object must be reported"
        mask = np.zeros(DATA.shape, bool)
        for f in failures:
            assert f.key.endswith(bad.lstrip("/")), f.key
            assert "HTTP 500" in f.message
            mask[tuple(slice(a, b) for a, b in f.box)] = True
        np.testing.assert_array_equal(got[~mask], DATA[~mask])
        assert (got[mask] == arr.fill_value).all()
        expected_cells = {"chunked.zarr": 16 * 16, "sharded.zarr": 32 * 24, "v2.zarr": 16 * 16}[name]
        assert mask.sum() == expected_cells
        with pytest.raises(zl.StoreError, match=bad.lstrip("/").replace(".", r"\.")):
            arr[...]


def test_cancel_abandons_a_slow_remote_read(site: Path) -> None:
    with serve(site, Faults(delay=5.0, delay_match="/c/")) as (url, _):
        arr = zl.open(f"{url}/chunked.zarr", io_timeout=30)
        token = zl.CancelToken()
        threading.Timer(0.2, token.cancel).start()
        t0 = time.monotonic()
        with pytest.raises(zl.ReadCancelled):
            arr.read(..., cancel=token)
        assert time.monotonic() - t0 < 1.5


def test_dead_server_is_a_clear_error(site: Path) -> None:
    with serve(site) as (url, _):
        pass  # the port is closed again
    t0 = time.monotonic()
    with pytest.raises(zl.StoreError, match=r"127\.0\.0\.1.*zarr\.json"):
        zl.open(f"{url}/chunked.zarr", io_timeout=1.0, io_retries=2)
    assert time.monotonic() - t0 < 5
