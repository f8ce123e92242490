"""A hostile HTTP server costs a clear error after a bounded read, never a hang or the memory.

The loopback server makes up answers (``Body``): a metadata document that never ends, a
chunk answered with far more than asked, a Content-Length of terabytes, a gzip bomb. It
counts every body byte it hands to the kernel, so these tests check the read was cut off
near the bound, not only that an error came in the end. The truth for the parts that do
read is the numpy data zarr-python wrote.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from http_server import Body, Faults, serve
from remote_backends import backend  # noqa: F401  (runs every test on each backend)
from zarrview.zarrlib.storage import backend as backends

pytestmark = pytest.mark.timeout(60)

DATA = np.arange(64 * 48, dtype="<u2").reshape(64, 48)
#: the bound on metadata documents and whole objects during these tests
BOUND = 256 << 10
#: what may be sent past the bound before the client hangs up: the server's send buffer,
#: the client's socket receive buffer and aiohttp's read-ahead (measured ~330 KiB on a quiet
#: machine, 2.4 MiB under load, as the kernel grows loopback buffers up to tcp_rmem's maximum);
#: an unbounded read takes the whole made-up body (256 MiB) or times out
SLACK = 32 << 20
FAST = {"io_timeout": 5.0, "io_retries": 3}
TIB10 = 10 << 40


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bounds")
    a = zarr.create_array(root / "chunked.zarr", shape=DATA.shape, chunks=(16, 16), dtype="u2")
    a[...] = DATA
    b = zarr.create_array(root / "sharded.zarr", shape=DATA.shape, chunks=(8, 8), shards=(32, 24),
                          dtype="u2", compressors=None)
    b[...] = DATA
    c = zarr.create_array(root / "raw.zarr", shape=DATA.shape, chunks=(32, 48), dtype="u2", compressors=None)
    c[...] = DATA
    return root


@pytest.fixture
def small_limits() -> Iterator[None]:
    old = zl.limits.configure(metadata_bytes=BOUND, object_bytes=BOUND)
    try:
        yield
    finally:
        zl.limits.restore(old)


def gets(state, contains: str = "") -> list[tuple[str, str, str | None]]:  # type: ignore[no-untyped-def]
    return [r for r in state.requests("GET") if contains in r[1]]


def sent_once_quiet(state, contains: str) -> int:  # type: ignore[no-untyped-def]
    """Body bytes the server sent to matching paths, once it has stopped sending.

    obstore does not always close a connection whose answer it drops unread (1 in about 30 in
    a loop of refusals stayed open past 10 s, until the client's idle timeout): the body is
    still never read, so the server, blocked on the full socket, can send no more than the
    socket buffers hold. Through fsspec the client hangs up every time."""
    lingers = backends.PREFERRED != "fsspec"
    quiet = state.wait_quiet(timeout=2.0 if lingers else 10.0)
    assert quiet or lingers, "the server is still sending: the client never hung up"
    if not quiet:
        sent = state.sent_to(contains)
        time.sleep(0.3)
        assert state.sent_to(contains) == sent, "the client kept reading a refused answer"
    return state.sent_to(contains)


@pytest.mark.parametrize("body", [
    Body(),  # chunked, endless
    Body(send=64 << 20),  # chunked, far longer than any document
    Body(length=64 << 20),  # a stated length over the bound
    Body(gzip=True, send=64 << 20),  # 64 KiB on the wire, 64 MiB decoded
], ids=["endless", "long-unstated", "long-stated", "gzip-bomb"])
def test_metadata_with_a_body_past_the_bound(site: Path, small_limits: None, body: Body, backend: str) -> None:
    with serve(site, Faults(bodies={"chunked.zarr/zarr.json": body})) as (url, state):
        t0 = time.monotonic()
        # a body of unstated size, or compressed for the wire (which obstore would hand over as
        # sent), is read by the fsspec route under obstore too, to its bound, decoded
        with pytest.raises(zl.TooLargeError, match=rf"{url}/chunked\.zarr/zarr\.json: .*256 KiB"):
            zl.open(f"{url}/chunked.zarr", **FAST)
        assert time.monotonic() - t0 < 4.5  # io_timeout is 5 s: no try timed out
        # a body too large is final, not retried; obstore drops such an answer unread and hands
        # the server to the fsspec route, which asks once more
        handed = backend == "obstore" and (body.length is None or body.gzip)
        assert len(gets(state, "zarr.json")) == 1 + handed
        assert sent_once_quiet(state, "zarr.json") <= BOUND + SLACK


@pytest.mark.parametrize("send", [1000, None], ids=["short body", "endless body"])
def test_content_length_of_terabytes_is_refused_unread(site: Path, small_limits: None, send: int | None) -> None:
    with serve(site, Faults(bodies={"chunked.zarr/zarr.json": Body(length=TIB10, send=send)})) as (url, state):
        t0 = time.monotonic()
        with pytest.raises(zl.TooLargeError, match=rf"{url}/chunked\.zarr/zarr\.json: 10 TiB, more than the 256 KiB"):
            zl.open(f"{url}/chunked.zarr", **FAST)
        assert time.monotonic() - t0 < 4.5  # a short body is not waited for
        assert len(gets(state, "zarr.json")) == 1
        # refused on the header: only what the socket buffers took before the client hung up
        assert sent_once_quiet(state, "zarr.json") <= SLACK


# (array, the object that misbehaves, its answer, the most body bytes a bounded read takes, cells it covers)
CHUNK_CASES = {
    "whole chunk, endless": ("chunked.zarr", "/c/1/2", Body(), BOUND, 16 * 16),
    "whole chunk, 10 TiB stated": ("chunked.zarr", "/c/1/2", Body(length=TIB10), 0, 16 * 16),
    "inner chunks, 206 with 64 MiB stated": (
        "sharded.zarr", "/c/0/1", Body(status=206, length=64 << 20, ranges="explicit"), 0, 32 * 24),
    "inner chunks, 206 endless": ("sharded.zarr", "/c/0/1", Body(status=206, ranges="explicit"), 12 * 128, 32 * 24),
    "shard index, 206 endless": ("sharded.zarr", "/c/0/1", Body(status=206, ranges="suffix"), 12 * 16 + 4, 32 * 24),
    "shard index, Range ignored, endless": ("sharded.zarr", "/c/0/1", Body(ranges="suffix"), BOUND, 32 * 24),
}


@pytest.mark.parametrize("case", list(CHUNK_CASES))
def test_chunk_answered_with_far_more_than_asked(site: Path, small_limits: None, case: str, backend: str) -> None:
    name, bad, body, most, cells = CHUNK_CASES[case]
    with serve(site, Faults(bodies={f"{name}{bad}": body})) as (url, state):
        arr = zl.open(f"{url}/{name}", **FAST)
        failures: list[zl.ChunkFailure] = []
        t0 = time.monotonic()
        got = arr.read(..., failures=failures)
        assert time.monotonic() - t0 < 4.5  # io_timeout is 5 s: no try timed out
        if backend == "obstore" and body.status == 200 and body.ranges == "suffix":
            # obstore drops a 200 to a range unread and asks for the object whole, which this
            # server sends as it is: every value reads, after a bounded exchange
            assert not failures
            np.testing.assert_array_equal(got, DATA)
            assert sent_once_quiet(state, bad) <= most + SLACK
            return
        assert failures, "the object past its bound must be reported"
        mask = np.zeros(DATA.shape, bool)
        for f in failures:
            assert f.key.endswith(bad.lstrip("/")), f.key
            assert f"{url}/{name}{bad}" in f.message, f.message
            mask[tuple(slice(a, b) for a, b in f.box)] = True
        assert mask.sum() == cells
        np.testing.assert_array_equal(got[~mask], DATA[~mask])
        assert (got[mask] == arr.fill_value).all()
        # obstore drops an answer that states no size (or a range of an unknown total) unread and
        # hands the server to the fsspec route, which asks once more and reads to the bound
        handed = backend == "obstore" and (body.length is None or body.status == 206)
        asked = [(p, r) for _, p, r in gets(state, bad)]
        assert max(Counter(asked).values()) == 1 + handed, f"retried: {asked}"
        assert sent_once_quiet(state, bad) <= most + SLACK
        # a suffix answered with "bytes 0-196/*" is other bytes than asked before it is too many
        error = zl.StoreError if case == "shard index, 206 endless" else zl.TooLargeError
        with pytest.raises(error, match=rf"{url}/{name}{bad}"):
            arr[...]


@pytest.mark.parametrize("name", ["chunked.zarr", "sharded.zarr", "raw.zarr"])
def test_bounds_cost_no_requests(site: Path, name: str) -> None:
    """Reading within small bounds costs exactly the requests it costs with the defaults."""
    logs = []
    for bounded in (False, True):
        old = zl.limits.configure(metadata_bytes=BOUND, object_bytes=BOUND) if bounded else None
        try:
            with serve(site) as (url, state):
                arr = zl.open(f"{url}/{name}", **FAST)
                np.testing.assert_array_equal(arr[...], DATA)
                np.testing.assert_array_equal(arr[3:40, 5:30], DATA[3:40, 5:30])
                logs.append(sorted(state.requests()))
        finally:
            if old is not None:
                zl.limits.restore(old)
    assert logs[0] == logs[1]


def test_object_bound_is_inclusive_and_refused_before_reading(site: Path) -> None:
    """raw.zarr's two chunks are 3072 bytes each: a bound of 3072 reads them, 3071 refuses
    both on their Content-Length, each in one request."""
    size = (site / "raw.zarr" / "c" / "0" / "0").stat().st_size
    assert size == 32 * 48 * 2
    with serve(site) as (url, state):
        for bound, ok in ((size, True), (size - 1, False)):
            old = zl.limits.configure(object_bytes=bound)
            try:
                state.clear()
                arr = zl.open(f"{url}/raw.zarr", **FAST)
                failures: list[zl.ChunkFailure] = []
                got = arr.read(..., failures=failures)
            finally:
                zl.limits.restore(old)
            if ok:
                assert not failures
                np.testing.assert_array_equal(got, DATA)
            else:
                assert sorted(f.key for f in failures) == ["c/0/0", "c/1/0"]
                assert all("3 KiB, more than the" in f.message and "one stored object" in f.message for f in failures)
            assert len(gets(state, "/c/")) == 2


def test_range_ignored_whole_object_past_the_bound_is_not_kept(site: Path) -> None:
    """Shards read by range fit a small object bound; a server that ignores Range sends each
    whole shard instead, which is then refused rather than kept."""
    shard = (site / "sharded.zarr" / "c" / "0" / "0").stat().st_size
    old = zl.limits.configure(object_bytes=shard - 1)
    try:
        with serve(site) as (url, _):
            np.testing.assert_array_equal(zl.open(f"{url}/sharded.zarr", **FAST)[...], DATA)
        with serve(site, Faults(ignore_range=True)) as (url, state):
            arr = zl.open(f"{url}/sharded.zarr", **FAST)
            failures: list[zl.ChunkFailure] = []
            arr.read(..., failures=failures)
            assert {f.key for f in failures} == {"c/0/0", "c/0/1", "c/1/0", "c/1/1"}
            assert all(isinstance(f.message, str) and "one stored object" in f.message for f in failures)
            store = arr._h.store  # type: ignore[attr-defined]
            assert not store._whole and not store.ignores_ranges
    finally:
        zl.limits.restore(old)


def test_object_store_checks_after_reading(site: Path) -> None:
    """Filesystems other than HTTP (here fsspec's memory one, standing in for s3 and gcs)
    are checked after the read: a chunk over the bound is a failed chunk, the rest reads."""
    import fsspec

    fs = fsspec.filesystem("memory")
    base = f"/bounds-{uuid.uuid4().hex}/raw.zarr"
    fs.put(str(site / "raw.zarr"), base, recursive=True)
    old = zl.limits.configure(object_bytes=3071)
    try:
        arr = zl.open(f"memory://{base}")
        failures: list[zl.ChunkFailure] = []
        arr.read(..., failures=failures)
        assert sorted(f.key for f in failures) == ["c/0/0", "c/1/0"]
        assert all(f"memory://{base}/c/" in f.message for f in failures), failures
        with pytest.raises(zl.TooLargeError):
            arr[0:1, 0:1]
        zl.limits.restore(old)
        np.testing.assert_array_equal(zl.open(f"memory://{base}")[...], DATA)
    finally:
        zl.limits.restore(old)
        fs.rm(base.rsplit("/", 1)[0], recursive=True)
