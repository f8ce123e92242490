"""A hostile HTTP server costs a StoreError naming the key and what the server did, in bounded time and memory.

``hostile_http`` serves stores written by zarr-python from raw sockets on 127.0.0.1 and answers
chosen keys (the metadata document, one chunk, every chunk, a shard's index or its inner
chunks) with one hostile behaviour each: a body without end (chunked, or ended by closing), a
body cut short of its Content-Length, a Content-Length smaller than the body, a garbage status
line, 200 KiB of headers, a flood of 1xx answers, a redirect loop, a body dripped a byte a
second, a gzip bomb, a 206 of other bytes than asked or of more. Each read runs in a worker
process under an address-space limit (``hostile_reader``): on a regression an unbounded read
costs that process a MemoryError, never this machine's memory. Each case is read through
fsspec, through obstore (the two the ``backend`` fixture names) and through the choice an open
that names no backend takes (obstore, handing a server whose answers state no size to fsspec).

Every case checks, against truths independent of zarrlib:

* the outcome: an exception that is a ``StoreError`` (``accept="store"``) whose message names
  the key's URL and says what the server did (``says``, a pattern: a redirect loop says
  "redirect"); a chunk read with ``failures=[]`` (the viewer's way) returns, records each
  hostile chunk and only those as a failure carrying that error, and every other value equals
  the numpy data handed to zarr-python, the failed cells the fill value. A body shorter than
  its stated Content-Length is a ``StoreError``; the one case that accepts any ``ZarrError``
  naming the key (``accept="named"``) is a Content-Length smaller than the body, which HTTP's
  framing makes the body: what it cuts off cannot be told from the next answer's start;
* the time, waited for by the parent with a deadline (no sleeps): at most 10x the same read
  of an unhostile server, floored at 0.5 s, plus the backoff between tries; a server that
  sends its answer slowly enough can only be cut off by the per-try timeout, so those cases
  (``timed``) may also take every try's ``io_timeout``;
* the memory: the worker's peak RSS during the read grows by at most ``MEMORY`` plus a few
  times the bound per hostile key, and the server hands the kernel at most ``bound + SLACK``
  body bytes per hostile answer (``SLACK`` as in test_remote_bounds: socket buffers and
  read-ahead, never the 256 MiB an endless body sends a client that reads it all).

Two answers the client libraries hide until the per-try timeout may pass, so those reads may
end at the timeouts and say the server gave no answer: a flood of 1xx interim answers (hyper
and aiohttp skip any number of them, as RFC 9110 lets a client, and report nothing until the
final answer), and on obstore an error answer with a large body that is not text (object_store
reads the whole body of an error answer into its message, thirty characters a byte, before it
answers at all, and then has lost the status: ``UPSTREAM_MEMORY`` allows that pair the memory
it takes). A flood ends at its cap and then
sends the right answer: a client that reads past it in time must read the right values.

"""

from __future__ import annotations

import re
import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

from hostile_http import METADATA, Hostile, HostileState, serve_hostile, self_signed
from hostile_reader import Reader
from remote_backends import backend  # noqa: F401  (the backend each read takes)

pytestmark = pytest.mark.timeout(180)

DATA = np.arange(64 * 48, dtype="<u2").reshape(64, 48)
#: the bound on metadata documents and whole objects during these tests
BOUND = 256 << 10
#: the bound for the gzip bombs: their 2 MiB on the wire are within it, their 2 GiB decoded not
BOMB_BOUND = 4 << 20
#: bytes the server may hand the kernel past a bound before the client hangs up (see
#: test_remote_bounds: the server's send buffer, the client's receive buffer and read-ahead,
#: grown by the kernel under load); an unbounded read takes the 256 MiB an endless body sends
SLACK = 32 << 20
#: the most the worker's peak RSS may grow during one case, beyond what the bounds allow each
#: hostile answer in flight (``PER_ANSWER`` times its bound: the body as received, decoded and
#: copied once): a bounded read of 12 gzip bombs at once measured up to 142 MiB over 12 x 4 MiB;
#: an unbounded one takes the whole body (256 MiB, or 2 GiB decoded) per answer
MEMORY = 64 << 20
PER_ANSWER = 4
IO = {"io_timeout": 1.0, "io_retries": 3}
#: the backoff between three tries is at most 0.1 + 0.2 s (RetryPolicy), with margin
BACKOFF = 0.5
#: the least a quiet read counts as, for the time bound: a loaded machine (four test workers on
#: two cores) takes a few hundred ms to schedule a read that takes 20 ms alone
QUIET_FLOOR = 0.5


@dataclass(frozen=True)
class Target:
    store: str
    pattern: str  # searched in the request's path
    ranges: str = "any"  # which requests of a matching path (Hostile.ranges)
    mode: str = "both"  # how the worker reads (hostile_reader): "open" for metadata, else "both"


TARGETS = {
    "metadata": Target("chunked.zarr", r"/chunked\.zarr/" + METADATA, mode="open"),
    "one chunk": Target("chunked.zarr", r"/chunked\.zarr/c/1/2$"),
    "every chunk": Target("chunked.zarr", r"/chunked\.zarr/c/"),
    "shard index": Target("sharded.zarr", r"/sharded\.zarr/c/0/1$", ranges="suffix"),
    "inner chunks": Target("sharded.zarr", r"/sharded\.zarr/c/0/1$", ranges="explicit"),
    "shard": Target("sharded.zarr", r"/sharded\.zarr/c/0/1$"),
}


@dataclass(frozen=True)
class Case:
    kind: str
    target: str
    says: str  # a pattern (any case) the message must match: what the server did
    accept: str = "store"  # "store": a StoreError; "named": any ZarrError naming the key
    timed: bool = False  # may take every try's io_timeout (the server is slow, not wrong)
    #: the backends whose client shows nothing of this answer before each try's timeout passes:
    #: there the read is ``timed`` and may say it had no answer
    hidden_on: tuple[str, ...] = ()
    #: what the read says there instead of ``says``
    says_hidden: str = r"no answer within"
    #: the decoded size of a bomb, where not ``Hostile``'s (2 GiB)
    size: int | None = None
    #: the right answer follows the hostile part (a flood ends at ``ENDLESS_CAP``), so a client
    #: that reads past it in time reads the right values, which it must then be
    arrives: bool = False
    code: int | None = None  # the status of a "status" answer

    def says_on(self, backend: str) -> str:
        return f"{self.says}|{self.says_hidden}" if backend in self.hidden_on else self.says

    def timed_on(self, backend: str) -> bool:
        return self.timed or backend in self.hidden_on

    @property
    def id(self) -> str:
        return f"{self.kind}{'' if self.code is None else f' {self.code}'}, {self.target}"


#: the backends each case is read through: the two the ``backend`` fixture names, and the
#: automatic choice an open that names none takes (obstore, handing a server whose answers
#: state no size over to fsspec)
BACKENDS = ("fsspec", "obstore", "auto")
#: the backends reading through obstore
OBSTORE = ("obstore", "auto")
SAYS_SILENT = r"no answer within"
SAYS_TOO_LONG = r"ran past|more than|does not state its size|no Content-Length|without end"
SAYS_BOMB = r"gzip|encod|decod|ran past|more than|does not state its size"
CASES = {c.id: c for c in [
    *(Case(k, t, SAYS_TOO_LONG) for k in ("endless_chunked", "endless_close")
      for t in ("metadata", "one chunk", "every chunk")),
    *(Case("truncated", t, r"closed|short|incomplete|not completed|not enough data|truncat|fewer|before (the|its) end")
      for t in ("metadata", "one chunk")),
    *(Case("short_length", t, r"", accept="named") for t in ("metadata", "one chunk")),
    *(Case("garbage_status", t, r"status line|not HTTP|malformed|invalid HTTP") for t in ("metadata", "one chunk")),
    *(Case("huge_headers", t, r"header") for t in ("metadata", "one chunk")),
    *(Case("interim_flood", t, SAYS_SILENT, timed=True, arrives=True) for t in ("metadata", "one chunk")),
    *(Case(k, t, r"redirect") for k in ("redirect_self", "redirect_pair") for t in ("metadata", "one chunk")),
    *(Case("slow_drip", t, r"no answer within|timed? ?out", timed=True) for t in ("metadata", "one chunk")),
    *(Case(k, t, SAYS_BOMB) for k in ("gzip_bomb", "gzip_bomb_chunked") for t in ("metadata", "one chunk", "every chunk")),
    *(Case("wrong_range", t, r"Content-Range|other bytes|requested .* got") for t in ("shard index", "inner chunks")),
    *(Case("range_overflow", t, r"range|more than|requested .* got") for t in ("shard index", "inner chunks")),
    # an error answer is an error, not a missing object (only a 404 says "missing")
    Case("status", "one chunk", r"\b405\b", code=405),
    Case("status", "shard", r"\b501\b", code=501),
    # an error answer's body is not read past a small bound, however it is encoded
    # (256 MiB of zeros, 256 KiB on the wire: obstore formats all of it into its message, which
    # for 2 MiB took the I/O runtime long enough to time a loaded machine's other reads out)
    Case("error_bomb", "one chunk", r"\b502\b", hidden_on=OBSTORE,
         says_hidden=r"no answer within|an error whose body is not text", size=256 << 20),
]}

#: every case on every backend
PAIRS = [(c, b) for c in CASES for b in BACKENDS]


#: the memory a client library, not zarrview, takes beyond the bound, by pair: object_store
#: reads an error answer's whole body and puts a body that is not text into its message as a list
#: of its bytes, about thirty characters a byte (here 256 KiB of gzip, 8 MB of message a try)
UPSTREAM_MEMORY = {("error_bomb, one chunk", b): 40 * (256 << 10) for b in OBSTORE}


def pairs(ids: list[tuple[str, str]]) -> list[Any]:
    return [pytest.param(CASES[c], b, id=f"{c}-{b}") for c, b in ids]


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    a = zarr.create_array(root / "chunked.zarr", shape=DATA.shape, chunks=(16, 16), dtype="u2")  # zstd
    a[...] = DATA
    # raw inner chunks: the bytes of a range are the values, so a wrong range is not caught by a codec
    b = zarr.create_array(root / "sharded.zarr", shape=DATA.shape, chunks=(8, 8), shards=(32, 24),
                          dtype="u2", compressors=None)
    b[...] = DATA
    np.save(root / "truth.npy", DATA)
    return root


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    with Reader(tmp_path_factory.mktemp("reader") / "worker.log") as r:
        r.start()
        yield r


@pytest.fixture(scope="module")
def quiet(site: Path, reader: Reader) -> Any:
    """The seconds of a read of an unhostile server, per (backend, store, mode), measured by
    the same worker once warm (the second of two reads)."""
    seen: dict[tuple[str, str, str], float] = {}

    def measure(backend: str, store: str, mode: str) -> float:
        key = (backend, store, mode)
        if key not in seen:
            with serve_hostile(site) as (url, _):
                for _ in range(2):
                    r = reader.run(job(site, url, store, backend, mode, BOUND), 120)
                    assert r["outcome"] == "ok" and r.get("equal", True), r
            seen[key] = r["waited"]
        return seen[key]

    return measure


def job(site: Path, url: str, store: str, backend: str, mode: str, bound: int) -> dict[str, Any]:
    return {"url": f"{url}/{store}", "options": IO, "backend": backend, "mode": mode,
            "limits": {"metadata_bytes": bound, "object_bytes": bound}, "expected": str(site / "truth.npy")}


def chunk_keys(site: Path, store: str) -> list[str]:
    base = site / store
    return sorted(p.relative_to(base).as_posix() for p in (base / "c").rglob("*") if p.is_file())


def cells(store: str, keys: set[str]) -> int:
    per = {"chunked.zarr": 16 * 16, "sharded.zarr": 32 * 24}[store]
    return per * len(keys)


def settle(state: HostileState, backend: str) -> None:
    """Wait until the server has stopped writing made-up answers, so its counts are final.

    obstore (which the automatic choice takes for a server that states sizes) does not always close a connection whose answer it drops unread (test_remote_bounds):
    the server, blocked on the full socket, then sends no more than the buffers hold, which the
    counts must show staying put."""
    quiet = state.wait_quiet(timeout=2.0 if backend in OBSTORE else 10.0)
    if not quiet:
        assert backend in OBSTORE, "the server is still sending: the client never hung up"
        sent = state.body_sent()
        state.wait_quiet(timeout=0.3)
        assert state.body_sent() == sent, "the client kept reading an answer it refused"


def describe(r: dict[str, Any]) -> str:
    keep = ("outcome", "type", "message", "waited", "seconds", "failures", "equal", "fill_in_failures")
    return repr({k: r[k] for k in keep if k in r}) + ("\n" + r["stacks"][-4000:] if r.get("stacks") else "")


def says(pattern: str, message: str, url: str) -> bool:
    """Whether ``message``, its URLs aside (their port numbers would match), matches ``pattern``."""
    text = re.sub(r"https?://127\.0\.0\.1:\d+\S*", "URL", message.replace(url, "URL"))
    return bool(re.search(pattern, text, re.I))


def check_error(r: dict[str, Any], case: Case, names: list[str], url: str, pattern: str) -> None:
    """A raised error: of the kind the case accepts, naming one of ``names``, saying ``pattern``."""
    assert r["outcome"] == "error", f"the read ended {r['outcome']}, not with an error: {describe(r)}"
    if case.accept == "store":
        assert r["store_error"], f"{r['type']} is not a StoreError: {r['message']}"
    else:
        assert r["zarr_error"], f"{r['type']} is not a ZarrError: {r['message']}"
    assert any(n in r["message"] for n in names), f"names none of {names[:3]}...: {r['message']}"
    assert says(pattern, r["message"], url), f"does not say what the server did ({pattern}): {r['message']}"


@dataclass
class Observed:
    """One hostile read: the worker's report, what the server sent, and the bounds it is held to."""

    case: Case
    backend: str
    url: str
    result: dict[str, Any]
    answers: list[Any]  # hostile_http.Record of each hostile answer
    budget: float  # seconds
    bound: int  # bytes of one object
    keys: set[str]  # the chunk (or shard) keys answered with hostility

    @property
    def grew(self) -> int:
        return int(self.result.get("rss_peak", 0) - self.result.get("rss_before", 0))


def observe(case: Case, backend: str, site: Path, reader: Reader, quiet: Any) -> Observed:
    target = TARGETS[case.target]
    bound = BOMB_BOUND if case.kind.startswith("gzip_bomb") else BOUND
    reads = 1 if target.mode == "open" else 2
    budget = 10 * max(quiet(backend, target.store, target.mode), QUIET_FLOOR) + reads * BACKOFF
    if case.timed_on(backend):
        budget += reads * IO["io_retries"] * IO["io_timeout"]
    keys = {k for k in chunk_keys(site, target.store) if re.search(target.pattern, f"/{target.store}/{k}")}
    given = {"code": case.code, "size": case.size}
    hostile = Hostile(case.kind, ranges=target.ranges, **{k: v for k, v in given.items() if v is not None})
    with serve_hostile(site, {target.pattern: hostile}) as (url, state):
        r = reader.run(job(site, url, target.store, backend, target.mode, bound), 3 * budget + 30)
        settle(state, backend)
        answers = state.matching(hostile=True)
    return Observed(case, backend, url, r, answers, budget, bound, keys)


def verify(o: Observed) -> None:
    case, r, url, keys = o.case, o.result, o.url, o.keys
    target = TARGETS[case.target]
    pattern = case.says_on(o.backend)
    assert r["outcome"] not in ("hang", "died", "memory"), describe(r)
    assert o.answers, "no request met the hostile answer"
    # the time, from the parent's side: the read's whole exchange, worker round trip included
    assert r["waited"] <= o.budget, f"took {r['waited']:.2f} s, more than {o.budget:.2f} s: {describe(r)}"
    # the memory: the worker's peak RSS, and what the server was allowed to send
    allowed = MEMORY + PER_ANSWER * o.bound * max(1, len(keys)) + UPSTREAM_MEMORY.get((case.id, o.backend), 0)
    assert o.grew <= allowed, f"peak RSS grew by {o.grew >> 20} MiB, more than {allowed >> 20} MiB: {describe(r)}"
    for a in o.answers:
        assert a.body <= o.bound + SLACK, f"{a.target}: {a.body} body bytes sent before the client hung up"
    # the outcome
    if target.mode == "open":
        if not (case.arrives and r["outcome"] == "ok"):
            check_error(r, case, [f"{url}/{target.store}/zarr.json"], url, pattern)
        return
    urls = [f"{url}/{target.store}/{k}" for k in sorted(keys)]
    if case.arrives and r["outcome"] == "ok":  # the right answer came after the hostile part
        assert r["equal"], "a read that did not fail read other values than zarr-python wrote"
    else:
        check_error(r, case, urls if case.accept == "store" else urls + sorted(keys), url, pattern)
    viewer = r["viewer"]
    assert viewer["outcome"] == "ok", f"read(failures=[]) raised: {describe(viewer)}"
    failed = {f["key"] for f in viewer["failures"]}
    assert failed == keys or case.arrives and failed < keys, \
        f"failures recorded for {sorted(failed)}, the hostile keys are {sorted(keys)}"
    for f in viewer["failures"]:
        if case.accept == "store":
            assert f["store_error"], f"{f['key']}: {f['type']} is not a StoreError: {f['message']}"
            assert f"{url}/{target.store}/{f['key']}" in f["message"], f["message"]
        else:
            assert f["zarr_error"] and f["key"] in f["message"], f
        assert says(pattern, f["message"], url), f"does not say what the server did: {f['message']}"
    assert viewer["equal"], "values outside the failed chunks differ from what zarr-python wrote"
    assert viewer["fill_in_failures"] and viewer["failed_cells"] == cells(target.store, failed)


def run_case(case: Case, backend: str, site: Path, reader: Reader, quiet: Any) -> None:
    verify(observe(case, backend, site, reader, quiet))


@pytest.mark.parametrize("case,backend", pairs(PAIRS), indirect=["backend"])
def test_hostile_answer_is_a_clear_bounded_error(case: Case, backend: str, site: Path, reader: Reader,
                                                 quiet: Any) -> None:
    run_case(case, backend, site, reader, quiet)


TLS = {
    # an https:// URL whose server speaks plain HTTP (it answers the ClientHello with a 400)
    "plain server": (False, r"SSL|TLS|wrong version|handshake"),
    # a certificate signed by its own key, which no trust store holds
    "self-signed": (True, r"certificate|SSL|TLS"),
}


def run_tls(which: str, backend: str, site: Path, reader: Reader, tmp_path: Path) -> None:
    signed, pattern = TLS[which]
    with serve_hostile(site, tls=self_signed(tmp_path) if signed else None) as (url, state):
        https = url.replace("http://", "https://")
        r = reader.run(job(site, https, "chunked.zarr", backend, "open", BOUND), 60)
        assert r["outcome"] == "error", describe(r)
        assert r["store_error"], f"{r['type']}: {r['message']}"
        assert f"{https}/chunked.zarr/zarr.json" in r["message"], r["message"]
        assert says(pattern, r["message"], https), f"does not say what failed ({pattern}): {r['message']}"
        assert r["waited"] <= 10 * QUIET_FLOOR + BACKOFF, f"took {r['waited']:.2f} s"
        assert not [a for a in state.matching() if a.kind is None], "a request was answered over a connection not trusted"


@pytest.mark.parametrize("which,backend", [pytest.param(w, b, id=f"{w}-{b}") for w in TLS for b in BACKENDS],
                         indirect=["backend"])
def test_tls_that_fails_is_refused(which: str, backend: str, site: Path, reader: Reader, tmp_path: Path) -> None:
    run_tls(which, backend, site, reader, tmp_path)


# -- the harness: the server is an honest witness, and the worker reports every bad outcome -------

def _exchange(url: str, request: bytes, limit: int = 64 << 20) -> bytes:
    """What a raw client receives for ``request`` until the server closes or ``limit`` bytes."""
    host, port = url.rsplit("/", 1)[-1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(request)
        got = bytearray()
        while len(got) < limit:
            piece = s.recv(1 << 20)
            if not piece:
                break
            got += piece
        return bytes(got)


def _get(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}\r\n".encode()


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_server_answers_as_each_behaviour_says(site: Path, backend: str) -> None:
    shard = (site / "sharded.zarr" / "c" / "0" / "1").read_bytes()
    chunk = (site / "chunked.zarr" / "c" / "1" / "2").read_bytes()
    rules = {"/trunc/": Hostile("truncated"), "/short/": Hostile("short_length"),
             "/wrong/": Hostile("wrong_range"), "/over/": Hostile("range_overflow"),
             "/endless/": Hostile("endless_close", cap=1 << 20), "/chunked/": Hostile("endless_chunked", cap=1 << 20),
             "/self/": Hostile("redirect_self"), "/pair/": Hostile("redirect_pair"), "/bomb/": Hostile("gzip_bomb", size=64 << 20)}
    links = site / "witness"
    for name in ("trunc", "short", "wrong", "over", "endless", "chunked", "self", "pair", "bomb", "plain"):
        (links / name).mkdir(parents=True, exist_ok=True)
        (links / name / "chunk").write_bytes(chunk)
        (links / name / "shard").write_bytes(shard)
    with serve_hostile(links, rules) as (url, state):
        plain = _exchange(url, _get("/plain/chunk"))
        assert plain.endswith(b"\r\n\r\n" + chunk) and f"Content-Length: {len(chunk)}".encode() in plain
        part = _exchange(url, _get("/plain/shard", "Range: bytes=10-19\r\n"))
        assert part.endswith(b"\r\n\r\n" + shard[10:20]) and f"bytes 10-19/{len(shard)}".encode() in part
        trunc = _exchange(url, _get("/trunc/chunk"))
        assert trunc.endswith(b"\r\n\r\n" + chunk) and f"Content-Length: {len(chunk) + 4096}".encode() in trunc
        short = _exchange(url, _get("/short/chunk"))
        assert short.endswith(b"\r\n\r\n" + chunk) and f"Content-Length: {len(chunk) // 2}\r\n".encode() in short
        wrong = _exchange(url, _get("/wrong/shard", "Range: bytes=100-199\r\n"))
        assert b"Content-Range: bytes 150-249/" in wrong and wrong.endswith(b"\r\n\r\n" + shard[150:250])
        wrong_end = _exchange(url, _get("/wrong/shard", "Range: bytes=-196\r\n"))
        n = len(shard)
        assert f"bytes {n - 196 - 98}-{n - 98 - 1}/".encode() in wrong_end
        assert wrong_end.endswith(b"\r\n\r\n" + shard[n - 196 - 98:n - 98])
        over = _exchange(url, _get("/over/shard", "Range: bytes=-196\r\n"))
        assert over.endswith(b"\r\n\r\n" + shard[max(0, n - 196 - 4096):]) and b"206 Partial Content" in over
        endless = _exchange(url, _get("/endless/chunk"))
        assert endless.endswith(bytes(1 << 20)) and b"Content-Length" not in endless.split(b"\r\n\r\n")[0]
        body = _exchange(url, _get("/chunked/chunk")).split(b"\r\n\r\n", 1)[1]
        assert body.startswith(b"10000\r\n") and not body.endswith(b"0\r\n\r\n")
        assert b"Location: /self/chunk\r\n" in _exchange(url, _get("/self/chunk"))
        assert b"Location: /pair/chunk?hop=b\r\n" in _exchange(url, _get("/pair/chunk"))
        assert b"Location: /pair/chunk\r\n" in _exchange(url, _get("/pair/chunk?hop=b"))
        import zlib
        bomb = _exchange(url, _get("/bomb/chunk")).split(b"\r\n\r\n", 1)[1]
        assert len(bomb) < 1 << 20 and len(zlib.decompress(bomb, 31)) == 64 << 20
        assert state.wait_quiet(5)
        sent = {a.target: a.body for a in state.matching()}
        assert sent["/endless/chunk"] == 1 << 20 and sent["/trunc/chunk"] == len(chunk)
        assert state.body_sent("/wrong/") == 100 + 196  # both ranges: what was sent, counted exactly
        assert _exchange(url, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03").startswith(b"HTTP/1.1 400 ")


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_server_stops_at_once_under_a_client_that_neither_reads_nor_hangs_up(site: Path, backend: str) -> None:
    stuck = []
    with serve_hostile(site, {"/c/": Hostile("endless_chunked"), "zarr.json": Hostile("slow_drip", interval=60)}) as (url, state):
        host, port = url.rsplit("/", 1)[-1].split(":")
        for path in ("/chunked.zarr/c/0/0", "/chunked.zarr/zarr.json"):
            s = socket.create_connection((host, int(port)))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(_get(path))
            stuck.append(s)
        assert state.wait_sending(2), "both answers are being sent to clients that do not read"
        assert not state.wait_quiet(0.5), "and they stay unfinished"
        t0 = time.monotonic()
    took = time.monotonic() - t0
    for s in stuck:
        s.close()
    assert took < 3, f"teardown took {took:.1f} s"
    assert all(a.ended == "stopped" or a.ended == "client" for a in state.matching(hostile=True))


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_worker_reports_every_bad_outcome(site: Path, backend: str, tmp_path: Path) -> None:
    """A harness that cannot fail passes for the wrong reason: a hang, a MemoryError, another
    exception and wrong values returned as success are each reported as such."""
    with Reader(tmp_path / "worker.log", selftest=True) as r, serve_hostile(site) as (url, _):
        base = job(site, url, "chunked.zarr", backend, "raise", BOUND)
        assert r.run(base, 120)["equal"]
        silent = r.run({**base, "inject": "silent"}, 60)
        assert silent["outcome"] == "ok" and not silent["equal"]
        other = r.run({**base, "inject": "exception"}, 60)
        assert other["outcome"] == "error" and not other["zarr_error"] and other["type"] == "RuntimeError"
        assert r.run({**base, "inject": "memory"}, 60)["outcome"] in ("memory", "died")
        hang = r.run({**base, "inject": "hang"}, 3)
        assert hang["outcome"] == "hang" and "run_job" in hang["stacks"]
        assert r.run(base, 120)["equal"], "a fresh worker replaced the one that hung"
    with Reader(tmp_path / "plain.log") as r, serve_hostile(site) as (url, _):
        base = job(site, url, "chunked.zarr", backend, "raise", BOUND)
        assert r.run({**base, "inject": "silent"}, 120)["equal"], "injection is for the harness's checks only"


def test_tls_server_context_is_refused_by_default(tmp_path: Path) -> None:
    """The self-signed certificate is not trusted by Python's default context either: the TLS
    cases are refused for the certificate, not for a server that cannot speak TLS."""
    with serve_hostile(tmp_path, tls=self_signed(tmp_path / "certs")) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with pytest.raises(ssl.SSLCertVerificationError):
                ssl.create_default_context().wrap_socket(raw, server_hostname="127.0.0.1")
        trusting = ssl.create_default_context(cafile=str(tmp_path / "certs" / "cert.pem"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with trusting.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                s.sendall(_get("/nothing"))
                assert s.recv(100).startswith(b"HTTP/1.1 404 ")
