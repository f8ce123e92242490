"""HTTP read benchmark: zarrlib against tensorstore and zarr-python through a local web server.

Why this exists
---------------
A viewer pointed at a URL spends its time waiting on requests, not decoding. zarrlib gathers
every range of a read on its one I/O event loop (64 requests in flight by default) and merges
byte-adjacent inner chunks of a shard into one range. This script checks
that this is enough: over a real web server, a read should cost about what tensorstore's
``http`` kvstore costs, with no more requests, and on a slow link a whole plane should load
in about one round trip of latency plus the transfer -- not one round trip per chunk.

Targets (no added latency):

* ``zarrlib / tensorstore <= 1.25`` for ``v3_chunked`` and ``v2_blosc``, ``<= 1.6`` for
  ``v3_sharded`` (median of the per-round ratios);
* zarrlib makes no more requests than tensorstore, for a warm read and for a cold one.

With ``--latency-ms L``: a zarrlib read costs at most about one round trip more than the
same read without latency (two on a cold sharded read: shard index, then data).

What is measured
----------------
The data and layouts are those of ``bench_read.py`` (imported from it, written by it if
missing, shared on disk under ``bench/_data/``): a (64, 2048, 2048) uint16 stack as
``v3_chunked``, ``v3_sharded`` and ``v2_blosc``. Cases: ``xy_plane`` ``[32, :, :]``,
``viewport`` ``[32, 700:1212, 900:1412]`` (512x512, not chunk-aligned) and ``xz``
``[:, 1000, :]`` (a section across every plane).

Readers: zarrlib as ``zarrlib.open(url)`` reads by default (``zarrlib``; for http(s) that is
obstore, the fsspec route taking over only for a server obstore cannot read), zarrlib through
its fsspec route (``zarrlib-fsspec``: ``backend="fsspec"``, fsspec's HTTP filesystem on
aiohttp), tensorstore's ``http`` kvstore, zarr-python through fsspec (``zarr-python``) and
through obstore (``zarr-obstore``: ``zarr.storage.ObjectStore`` over
``obstore.store.HTTPStore``). The store class each zarrlib reader ended up with is printed and
kept in the JSON. A second table sets zarrlib as it reads by default against tensorstore and
zarr-python on obstore, with zarrlib's fsspec route beside it: targets zarrlib/tensorstore <= 1.0
and zarr-python on obstore at least 1.3x slower than zarrlib, direct and, with ``--latency-ms``,
warm and cold.

``--baseline CHECKOUT`` adds reader ``baseline``: the zarrlib of another checkout (a worktree
of an older commit), imported beside this one and opened the same way as ``zarrlib`` -- with
its own defaults, no ``backend`` option, since the default is what its users got. A table then
gives zarrlib/baseline per case for every timed mode: direct and, with ``--latency-ms``, warm
and cold through the proxy. Target: with latency, zarrlib at most ``BASELINE_SLACK`` (1.05) times
the baseline's time; on loopback the ratios are reported, not judged.

The server is Debian's nginx when installed (started here with a generated config on
127.0.0.1 and a free port: ``sendfile``, keep-alive, byte ranges, no directory listing, an
access log with the request line, the ``Range`` header, the status and the bytes sent);
otherwise a Python ``ThreadingHTTPServer`` with byte ranges. Warm OS page cache, cold
decoder cache: zarrlib's plain ``a[...]`` and zarr-python keep no chunks, tensorstore's
``cache_pool`` is 0 bytes. Arrays are opened once per reader (opening is not timed), read
once untimed (checked against the generated data; this also warms the page cache and the
connection pools), then timed interleaved: every round each reader reads once, in an order
that rotates between rounds. We report medians and the median of the per-round ratios.

Request counts come from the server's log, on dedicated untimed reads without latency:
*cold* is the first read after a fresh open (zarrlib then also fetches the shard indexes),
*warm* is the next read of the same opened array (zarrlib keeps shard indexes for the
lifetime of the array; tensorstore with a 0-byte cache pool and zarr-python fetch them
again every time). The requests of the open itself are listed separately.

Latency (``--latency-ms L``) comes from a TCP proxy in a child process (its own event loop,
so it does not compete with the readers for the GIL). Each data segment is forwarded
``L/2`` after it arrived, in each direction, in order per connection, while the proxy keeps
reading -- so a request/response round trip costs ``L`` and bandwidth is not throttled. The
first segment of a new connection is held back one more ``L``, as a TCP handshake would
cost. Every reader is timed direct (no latency), warm through the proxy, and cold through
the proxy (a fresh open, untimed, then the timed first read). The table gives each time in
round trips and the extra serial round trips over the direct read, ``(t_L - t_0) / L``.

Usage
-----
::

    python bench/bench_http.py                    # full stack, 7 rounds, no added latency
    python bench/bench_http.py --latency-ms 50    # the same through a 50 ms round-trip proxy
    python bench/bench_http.py --quick --rounds 3 --server python
    python bench/bench_http.py --baseline /tmp/base --readers zl,zlf,baseline,ts,zo --latency-ms 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import bench_read as br  # noqa: E402  (shared data, layouts, cases and checks)
import numpy as np  # noqa: E402

HTTP_CASES = ("xy_plane", "viewport", "xz")
TARGET_UNSHARDED = 1.25  # zarrlib/tensorstore, v3_chunked and v2_blosc
TARGET_SHARDED = 1.6  # zarrlib/tensorstore, v3_sharded
LATENCY_SLACK_RTT = 0.5  # "about one round trip": at most 1.5 (2.5 cold sharded) extra round trips
BASELINE_SLACK = 1.05  # with --baseline and latency: zarrlib/baseline at most this, warm and cold
#: zarrlib as it opens by default ("zarrlib": obstore for http(s)) and through its fsspec route
#: ("zarrlib-fsspec": backend="fsspec", aiohttp); zarr-python through fsspec ("zarr-python") and
#: through obstore ("zarr-obstore": zarr.storage.ObjectStore)
READERS = ("zarrlib", "zarrlib-fsspec", "tensorstore", "zarr-python", "zarr-obstore")
#: "zlo"/"zarrlib-obstore" name the default reader, which reads http(s) through obstore
READER_ALIASES = {**br.READER_ALIASES, "zlf": "zarrlib-fsspec", "zarrlib-fsspec": "zarrlib-fsspec",
                  "zarrlib-aiohttp": "zarrlib-fsspec", "zlo": "zarrlib", "zarrlib-obstore": "zarrlib",
                  "zo": "zarr-obstore", "zarr-python-obstore": "zarr-obstore"}
ZARRLIB_READERS = ("zarrlib", "zarrlib-fsspec", "baseline")

Index = br.Index
Array = br.Array
ReadFn = br.ReadFn
log = br.log


# --------------------------------------------------------------------------- request log


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    range: str | None
    status: int
    nbytes: int  # body bytes sent
    connection: str  # server-side connection id ("" when unknown)


class RequestLog(Protocol):
    def mark(self) -> int:
        """A position in the log after every request answered so far has been logged."""

    def between(self, start: int, stop: int) -> list[Request]:
        """The requests logged between two marks."""


@dataclass
class Server:
    name: str  # e.g. "nginx 1.22.1"
    url: str  # http://127.0.0.1:PORT
    log: RequestLog


# --------------------------------------------------------------------------- nginx

LOG_FORMAT = '$msec $connection $request_method "$request_uri" "$http_range" $status $body_bytes_sent'
_LOG_LINE = re.compile(r'^\S+ (\S+) (\S+) "([^"]*)" "([^"]*)" (\d+) (\d+)$')

# tcp_nopush stays off: with it (Debian's default nginx.conf turns it on), a ranged answer
# that starts at an offset that is not page-aligned is held back ~40 ms on loopback (TCP_CORK
# plus sendfile; measured with nginx 1.22.1), which would swamp every reader's time alike.
NGINX_CONF = """\
{user}daemon off;
master_process on;
worker_processes 2;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format bench '{log_format}';
    access_log {tmp}/access.log bench;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    types {{ application/json json; }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush off;
    tcp_nodelay on;
    keepalive_timeout 300s;
    keepalive_requests 1000000;
    server_tokens off;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        autoindex off;
        location / {{ }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGTERM if this process dies (Linux), so no server outlives a crash."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def wait_for_port(port: int, proc: subprocess.Popen[Any], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
        time.sleep(0.05)
    return False


def stop_process(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


class NginxLog:
    """nginx's access log file. Lines are written when a response is finished, which can be a
    moment after the client has the last byte, so a mark waits until the file stops growing."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def mark(self) -> int:
        size, stable_since = self._size(), time.monotonic()
        while time.monotonic() - stable_since < 0.15:
            time.sleep(0.02)
            now = self._size()
            if now != size:
                size, stable_since = now, time.monotonic()
        return size

    def between(self, start: int, stop: int) -> list[Request]:
        with open(self.path, "rb") as f:
            f.seek(start)
            text = f.read(stop - start).decode("utf-8", "replace")
        out: list[Request] = []
        for line in text.splitlines():
            m = _LOG_LINE.match(line.strip())
            if m is None:
                continue
            conn, method, uri, rng, status, nbytes = m.groups()
            out.append(Request(method, unquote(uri), None if rng in ("", "-") else rng, int(status), int(nbytes), conn))
        return out


def nginx_version(binary: str) -> str:
    res = subprocess.run([binary, "-v"], capture_output=True, text=True, check=False)
    m = re.search(r"nginx/(\S+)", res.stderr + res.stdout)
    return f"nginx {m.group(1)}" if m else "nginx"


@contextlib.contextmanager
def nginx_server(root: Path, binary: str) -> Iterator[Server]:
    tmp = Path(tempfile.mkdtemp(prefix="bench_http_nginx_"))
    proc: subprocess.Popen[bytes] | None = None
    try:
        for _attempt in range(3):  # the free port can be taken between probing and binding
            port = free_port()
            user = "user nobody nogroup;\n" if os.geteuid() == 0 else ""
            conf = NGINX_CONF.format(user=user, tmp=tmp, port=port, root=root.resolve(), log_format=LOG_FORMAT)
            (tmp / "nginx.conf").write_text(conf)
            # -e: the startup error log too goes to our temp dir, never to /var/log/nginx.
            cmd = [binary, "-p", str(tmp), "-c", str(tmp / "nginx.conf"), "-e", str(tmp / "error.log")]
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, preexec_fn=die_with_parent)
            if wait_for_port(port, proc):
                break
            stop_process(proc)
            err = (proc.stderr.read().decode(errors="replace") if proc.stderr else "").strip()
            errlog = (tmp / "error.log").read_text(errors="replace").strip() if (tmp / "error.log").exists() else ""
            log(f"server: nginx did not start on port {port}: {err or errlog or 'no message'}")
            proc = None
        if proc is None:
            raise RuntimeError("nginx failed to start")
        yield Server(f"{nginx_version(binary)} (sendfile, keep-alive, 2 workers)", f"http://127.0.0.1:{port}",
                     NginxLog(tmp / "access.log"))
    finally:
        if proc is not None:
            stop_process(proc, signal.SIGQUIT)  # graceful: workers finish and exit with the master
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- Python fallback server

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class PythonLog:
    """In-memory log of the fallback server; entries are added before the answer is sent."""

    def __init__(self) -> None:
        self.entries: list[Request] = []
        self.lock = threading.Lock()

    def add(self, req: Request) -> None:
        with self.lock:
            self.entries.append(req)

    def mark(self) -> int:
        with self.lock:
            return len(self.entries)

    def between(self, start: int, stop: int) -> list[Request]:
        with self.lock:
            return list(self.entries[start:stop])


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """``[start, stop)`` for a single ``bytes=`` range, None if unsatisfiable or malformed."""
    m = _RANGE.match((header or "").strip())
    if m is None:
        return None
    a, b = m.groups()
    if a == "":
        if b == "":
            return None
        return max(0, size - int(b)), size
    start, stop = int(a), min(size, int(b) + 1) if b else size
    return (start, stop) if start < size else None


def range_handler(root: Path, reqlog: PythonLog) -> type[BaseHTTPRequestHandler]:
    root = root.resolve()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body are two writes: without TCP_NODELAY, Nagle plus the client's
            # delayed ACK hold a short body back ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            self.serve(body=True)

        def do_HEAD(self) -> None:  # noqa: N802
            self.serve(body=False)

        def answer(self, status: int, rng: str | None, headers: dict[str, str], payload: bytes, body: bool) -> None:
            conn = str(id(self.connection))
            reqlog.add(Request(self.command, unquote(self.path), rng, status, len(payload) if body else 0, conn))
            self.send_response(status)
            for k, v in {**headers, "Content-Length": str(len(payload))}.items():
                self.send_header(k, v)
            self.end_headers()
            if body and payload:
                self.wfile.write(payload)

        def serve(self, body: bool) -> None:
            rng = self.headers.get("Range")
            path = (root / unquote(self.path.split("?", 1)[0]).lstrip("/")).resolve()
            if root not in path.parents or not path.is_file():
                self.answer(404, rng, {}, b"", body)
                return
            size = path.stat().st_size
            headers = {"Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
            if rng is None:
                self.answer(200, rng, headers, path.read_bytes(), body)
                return
            span = parse_range(rng, size)
            if span is None:
                self.answer(416, rng, {"Content-Range": f"bytes */{size}"}, b"", body)
                return
            with open(path, "rb") as f:
                f.seek(span[0])
                payload = f.read(span[1] - span[0])
            headers["Content-Range"] = f"bytes {span[0]}-{span[1] - 1}/{size}"
            self.answer(206, rng, headers, payload, body)

    return Handler


class BacklogHTTPServer(ThreadingHTTPServer):
    # The default listen backlog of 5 overflows when a reader opens dozens of connections at
    # once; the kernel then drops SYNs and the client retries after a second.
    request_queue_size = 256
    daemon_threads = True


@contextlib.contextmanager
def python_server(root: Path) -> Iterator[Server]:
    reqlog = PythonLog()
    server = BacklogHTTPServer(("127.0.0.1", 0), range_handler(root, reqlog))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server("Python ThreadingHTTPServer (fallback; in this process)", f"http://127.0.0.1:{server.server_address[1]}", reqlog)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def find_nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None)


def start_server(kind: str, root: Path, stack: contextlib.ExitStack) -> Server:
    """``auto``: nginx if installed and it starts, else the Python server. Stopped by ``stack``."""
    binary = find_nginx() if kind in ("auto", "nginx") else None
    if kind == "nginx" and binary is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
    if binary is not None:
        try:
            return stack.enter_context(nginx_server(root, binary))
        except RuntimeError:
            if kind == "nginx":
                raise
            log("server: nginx unusable, falling back to the Python server")
    elif kind == "auto":
        log("server: nginx not found, using the Python server")
    return stack.enter_context(python_server(root))


# --------------------------------------------------------------------------- latency proxy


async def _forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, first_extra: float) -> None:
    """Copy one direction of a connection, each segment ``delay`` s after it arrived, in order.
    Reading goes on while earlier segments wait, so the delay adds latency, not a bandwidth cap."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()

    async def pump_in() -> None:
        extra = first_extra
        try:
            while data := await reader.read(1 << 18):
                queue.put_nowait((loop.time() + delay + extra, data))
                extra = 0.0
        except (ConnectionError, OSError):
            pass
        finally:
            queue.put_nowait(None)

    async def pump_out() -> None:
        try:
            while (item := await queue.get()) is not None:
                due, data = item
                if (wait := due - loop.time()) > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except (ConnectionError, OSError):
            pass

    await asyncio.gather(pump_in(), pump_out())


async def _proxy_main(upstream_port: int, latency_s: float) -> None:
    one_way = latency_s / 2
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    handlers: set[asyncio.Task[Any]] = set()

    async def handle(c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            u_reader, u_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
        except OSError:
            c_writer.close()
            handlers.discard(task)
            return
        try:
            # client -> server: the first segment also pays the handshake round trip.
            await asyncio.gather(_forward(c_reader, u_writer, one_way, latency_s),
                                 _forward(u_reader, c_writer, one_way, 0.0))
        except asyncio.CancelledError:
            pass  # shutting down; returning normally keeps 3.11's streams callback quiet
        finally:
            for w in (u_writer, c_writer):
                w.close()
            handlers.discard(task)

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256)
    print(server.sockets[0].getsockname()[1], flush=True)
    await stop.wait()
    server.close()
    for task in list(handlers):
        task.cancel()
    await asyncio.gather(*handlers, return_exceptions=True)


def proxy_child(upstream_port: int, latency_ms: float) -> int:
    """Entry point of the proxy process (``--_proxy``): prints its port, runs until SIGTERM."""
    asyncio.run(_proxy_main(upstream_port, latency_ms / 1e3))
    return 0


@contextlib.contextmanager
def latency_proxy(upstream_url: str, latency_ms: float) -> Iterator[str]:
    """A child process forwarding to ``upstream_url`` with ``latency_ms`` per round trip; yields its URL."""
    upstream_port = urlsplit(upstream_url).port
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--_proxy", f"{upstream_port}:{latency_ms}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, preexec_fn=die_with_parent)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        if not line.isdigit():
            raise RuntimeError(f"latency proxy did not start (said {line!r})")
        yield f"http://127.0.0.1:{int(line)}"
    finally:
        stop_process(proc)


BANDWIDTH_PROBE_BYTES = 16 << 20


def measure_bandwidth(base_url: str, path: str, nbytes: int, repeats: int = 3) -> tuple[float, float]:
    """(bytes/s, seconds to the first byte) of one GET of the first ``nbytes`` of ``path`` on a
    kept-alive connection (a small request opens it first); the best of ``repeats``."""
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request("GET", "/" + path, headers={"Range": "bytes=0-0"})
        conn.getresponse().read()
        best = (0.0, 0.0)
        for _ in range(repeats):
            t0 = time.perf_counter()
            conn.request("GET", "/" + path, headers={"Range": f"bytes=0-{nbytes - 1}"})
            resp = conn.getresponse()
            resp.read(1)
            t1 = time.perf_counter()
            rest = len(resp.read())
            rate = rest / max(time.perf_counter() - t1, 1e-9)
            if rate > best[0]:
                best = (rate, t1 - t0)
        return best
    finally:
        conn.close()


def probe_bandwidth(server_url: str, proxy_url: str, data_dir: Path, layouts: Sequence[br.Layout]) -> dict[str, float]:
    """Raw transfer rate, direct and through the proxy, on the largest stored object (<= 16 MiB of it)."""
    files = [f for lay in layouts for f in (data_dir / lay.name).rglob("*") if f.is_file()]
    biggest = max(files, key=lambda f: f.stat().st_size)
    rel = biggest.relative_to(data_dir).as_posix()
    nbytes = min(biggest.stat().st_size, BANDWIDTH_PROBE_BYTES)
    direct, _ = measure_bandwidth(server_url, rel, nbytes)
    proxy, first_byte = measure_bandwidth(proxy_url, rel, nbytes)
    return {"direct": direct, "proxy": proxy, "proxy_first_byte_s": first_byte, "probe_bytes": nbytes, "probe": rel}


# --------------------------------------------------------------------------- readers


def tensorstore_context() -> Any:
    return br.tensorstore_context()  # cache_pool total_bytes_limit 0, verified


#: ``--baseline CHECKOUT``: another checkout whose zarrlib reads as reader "baseline"
BASELINE: Path | None = None


#: zarrlib reader -> the array it opened last, to tell after the reads which store "default" gave
ZARRLIB_OPENED: dict[str, Any] = {}


def zarrlib_stores() -> dict[str, str]:
    """Each zarrlib reader's store class (see ``store_kind``), as its last open gave it."""
    return {name: store_kind(arr) for name, arr in ZARRLIB_OPENED.items()}


def store_kind(arr: Any) -> str:
    """The class of the store an opened zarrlib array reads through, and where an obstore store
    has handed its reads over to the fsspec route, the class of that one too."""
    store = getattr(arr, "store", None)
    if store is None:
        return "?"
    kind = type(store).__name__
    handed = getattr(store, "handed", None)
    return f"{kind} -> {type(handed).__name__}" if handed is not None else kind


def open_zarrlib(url: str, io_concurrency: int | None, backend: str | None = None, zl: Any = None,
                 name: str = "zarrlib") -> ReadFn:
    """``backend`` None: the library's own choice (no ``backend`` option), as a user's ``open(url)``."""
    zl = zl or br.import_zarrlib()
    opts: dict[str, Any] = {}
    if backend is not None:
        opts["backend"] = backend
    if io_concurrency is not None:
        opts["io_concurrency"] = io_concurrency
    arr = zl.open(url, **opts)
    ZARRLIB_OPENED[name] = arr

    def read(index: Index) -> Array:
        return np.asarray(arr[index])

    return read


def open_tensorstore(url: str, layout: br.Layout, ctx: Any) -> ReadFn:
    import tensorstore as ts

    spec = {"driver": layout.ts_driver, "kvstore": {"driver": "http", "base_url": url.rstrip("/") + "/"}}
    arr = ts.open(spec, read=True, context=ctx).result()

    def read(index: Index) -> Array:
        return np.asarray(arr[index].read().result())

    return read


def open_zarr_python(url: str) -> ReadFn:
    import zarr
    from zarr.storage import FsspecStore

    arr = zarr.open_array(store=FsspecStore.from_url(url, read_only=True), mode="r")

    def read(index: Index) -> Array:
        return np.asarray(arr[index])

    return read


def open_zarr_obstore(url: str) -> ReadFn:
    import zarr
    from obstore.store import HTTPStore
    from zarr.storage import ObjectStore

    store = ObjectStore(HTTPStore.from_url(url, client_options={"allow_http": True}), read_only=True)
    arr = zarr.open_array(store=store, mode="r")

    def read(index: Index) -> Array:
        return np.asarray(arr[index])

    return read


def opener(name: str, url: str, layout: br.Layout, ts_ctx: Any, io_concurrency: int | None) -> Callable[[], ReadFn]:
    """A function that opens ``layout`` at ``url`` afresh each time it is called."""
    if name == "zarrlib":
        return lambda: open_zarrlib(url, io_concurrency)
    if name == "zarrlib-fsspec":
        return lambda: open_zarrlib(url, io_concurrency, backend="fsspec", name=name)
    if name == "zarr-obstore":
        return lambda: open_zarr_obstore(url)
    if name == "baseline":  # the other checkout's own default, as its users got it
        assert BASELINE is not None
        return lambda: open_zarrlib(url, io_concurrency, zl=br.import_baseline(BASELINE), name=name)
    if name == "tensorstore":
        return lambda: open_tensorstore(url, layout, ts_ctx)
    if name == "zarr-python":
        return lambda: open_zarr_python(url)
    raise ValueError(name)


# --------------------------------------------------------------------------- request counting


@dataclass
class Counts:
    open: list[Request]
    cold: list[Request]  # first read after the open
    warm: list[Request]  # second read, same opened array

    @staticmethod
    def summary(reqs: Sequence[Request]) -> dict[str, Any]:
        return {
            "requests": len(reqs),
            "bytes": sum(r.nbytes for r in reqs),
            "connections": len({r.connection for r in reqs if r.connection}),
            "errors": sum(r.status >= 400 for r in reqs),
        }


def count_requests(
    server: Server, open_fn: Callable[[], ReadFn], index: Index
) -> tuple[Counts, Array]:
    m0 = server.log.mark()
    read = open_fn()
    m1 = server.log.mark()
    out = read(index)
    m2 = server.log.mark()
    read(index)
    m3 = server.log.mark()
    b = server.log.between
    return Counts(b(m0, m1), b(m1, m2), b(m2, m3)), out


# --------------------------------------------------------------------------- timing


@dataclass
class Variant:
    """One way a reader reads a case: ``read`` (reused array) or, with ``fresh``, open then read."""

    key: str  # e.g. "zarrlib", "zarrlib@lat", "zarrlib@cold"
    read: ReadFn | None = None
    fresh: Callable[[], ReadFn] | None = None

    def run(self, index: Index) -> tuple[float, list[float]]:
        """Seconds of one read, and the process's context switches and CPU seconds meanwhile."""
        if self.fresh is not None:
            fn = self.fresh()  # opening is not timed
            return br.timed(fn, index)
        assert self.read is not None
        return br.timed(self.read, index)


def run_rounds(res: br.CaseResult, groups: dict[str, list[Variant]], index: Index, rounds: int) -> None:
    """``groups``: reader -> its variants. Reader order rotates every round; variants stay together."""
    names = list(groups)
    for v in (v for vs in groups.values() for v in vs):
        res.times.setdefault(v.key, [])
        res.usage.setdefault(v.key, [])
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        res.orders.append(order)
        for name in order:
            for v in groups[name]:
                elapsed, usage = v.run(index)
                res.times[v.key].append(elapsed)
                res.usage[v.key].append(usage)


# --------------------------------------------------------------------------- results & report


@dataclass
class HttpResult:
    case: br.CaseResult
    counts: dict[str, Counts] = field(default_factory=dict)


def target_for(layout: str) -> float:
    return TARGET_SHARDED if br.LAYOUTS[layout].shards else TARGET_UNSHARDED


def fmt_counts(c: Counts | None) -> str:
    return "—" if c is None else f"{len(c.warm)} / {len(c.cold)}"


def request_verdict(counts: dict[str, Counts]) -> str:
    zl, ts = counts.get("zarrlib"), counts.get("tensorstore")
    if zl is None or ts is None:
        return "—"
    ok = len(zl.warm) <= len(ts.warm) and len(zl.cold) <= len(ts.cold)
    return "PASS" if ok else "FAIL"


#: the timed modes of a reader: how the tables name each, and the suffix of its timing key
MODES = (("direct", ""), ("+latency warm", "@lat"), ("+latency cold", "@cold"))


def backend_table(results: Sequence[HttpResult]) -> tuple[str, int, int]:
    """zarrlib as it reads by default (for http(s): obstore) and through its fsspec route
    (``backend="fsspec"``), against tensorstore and zarr-python on obstore.

    Targets, for the default: zarrlib/ts <= 1.0 and zarr-obstore/zarrlib >= 1.3 (zarrlib 1.3x faster)."""
    lines = ["| layout | case | link | zarrlib ms | zarrlib-fsspec ms | tensorstore ms | zarr-obstore ms "
             "| zarrlib/ts | zarrlib-fsspec/ts | zarr-obstore/zarrlib | zarrlib <= ts | >= 1.3x zarr-obstore |",
             "|" + "---|" * 12]
    passed = checked = 0
    for hr in results:
        r = hr.case
        for link, sfx in MODES:
            fs, zl, ts, zo = (n + sfx for n in ("zarrlib-fsspec", "zarrlib", "tensorstore", "zarr-obstore"))
            if zl not in r.times or ts not in r.times or zo not in r.times:
                continue
            zl_ts = r.median_ratio(zl, ts)
            zo_zl = r.median_ratio(zo, zl)
            v1 = br.verdict(zl_ts, lambda v: v <= 1.0)
            v2 = br.verdict(zo_zl, lambda v: v >= 1.3)
            for v in (v1, v2):
                if v != "—":
                    checked += 1
                    passed += v == "PASS"
            lines.append(
                f"| {r.layout} | {r.case} | {link} | {br.fmt_ms(r.median_ms(zl))} | {br.fmt_ms(r.median_ms(fs))} "
                f"| {br.fmt_ms(r.median_ms(ts))} | {br.fmt_ms(r.median_ms(zo))} "
                f"| {br.fmt_ratio(zl_ts)} | {br.fmt_ratio(r.median_ratio(fs, ts))} "
                f"| {br.fmt_ratio(zo_zl)} | {v1} | {v2} |")
    return "\n".join(lines), passed, checked


def baseline_table(results: Sequence[HttpResult]) -> tuple[str, int, int]:
    """zarrlib against the baseline checkout's zarrlib, both as they open by default, per case and
    timed mode; with zarrlib's fsspec route against the baseline beside it where it was timed.

    Target, with latency (warm and cold): zarrlib/baseline <= ``BASELINE_SLACK``. Direct reads
    (loopback) are reported, not judged."""
    lines = ["| layout | case | link | zarrlib ms | baseline ms | zarrlib/baseline | zarrlib-fsspec/baseline "
             f"| <= {BASELINE_SLACK:g}x baseline |",
             "|" + "---|" * 8]
    passed = checked = 0
    for hr in results:
        r = hr.case
        for link, sfx in MODES:
            zl, base, fs = "zarrlib" + sfx, "baseline" + sfx, "zarrlib-fsspec" + sfx
            if zl not in r.times or base not in r.times:
                continue
            ratio = r.median_ratio(zl, base)
            v = br.verdict(ratio, lambda x: x <= BASELINE_SLACK) if sfx else "—"
            if v != "—":
                checked += 1
                passed += v == "PASS"
            lines.append(
                f"| {r.layout} | {r.case} | {link} | {br.fmt_ms(r.median_ms(zl))} | {br.fmt_ms(r.median_ms(base))} "
                f"| {br.fmt_ratio(ratio)} | {br.fmt_ratio(r.median_ratio(fs, base))} | {v} |")
    return "\n".join(lines), passed, checked


def speed_table(results: Sequence[HttpResult]) -> tuple[str, int, int]:
    head = (
        "| layout | case | zarrlib ms | tensorstore ms | zarr-python ms | zarrlib/ts | zarr-python/zarrlib "
        "| zarrlib/ts target | speed | zarrlib req | ts req | zarr req | req <= ts |"
    )
    lines = [head, "|" + "---|" * 13]
    passed = checked = 0
    for hr in results:
        r = hr.case
        zl_ts = r.median_ratio("zarrlib", "tensorstore")
        target = target_for(r.layout)
        v_speed = br.verdict(zl_ts, lambda v, t=target: v <= t)
        v_req = request_verdict(hr.counts)
        for v in (v_speed, v_req):
            if v != "—":
                checked += 1
                passed += v == "PASS"
        lines.append(
            f"| {r.layout} | {r.case} | {br.fmt_ms(r.median_ms('zarrlib'))} | {br.fmt_ms(r.median_ms('tensorstore'))} "
            f"| {br.fmt_ms(r.median_ms('zarr-python'))} | {br.fmt_ratio(zl_ts)} "
            f"| {br.fmt_ratio(r.median_ratio('zarr-python', 'zarrlib'))} | <= {target:.2f} | {v_speed} "
            f"| {fmt_counts(hr.counts.get('zarrlib'))} | {fmt_counts(hr.counts.get('tensorstore'))} "
            f"| {fmt_counts(hr.counts.get('zarr-python'))} | {v_req} |"
        )
    return "\n".join(lines), passed, checked


def describe_ranges(reqs: Sequence[Request]) -> str:
    """Compact: how many requests were whole objects, ranges, suffix ranges, 404s."""
    whole = sum(r.range is None and r.status < 400 for r in reqs)
    suffix = sum(r.range is not None and r.range.startswith("bytes=-") for r in reqs)
    ranged = sum(r.range is not None for r in reqs) - suffix
    missing = sum(r.status >= 400 for r in reqs)
    parts = [f"{n} {what}" for n, what in ((whole, "whole"), (ranged, "range"), (suffix, "suffix"), (missing, "4xx")) if n]
    return ", ".join(parts) or "none"


def request_table(results: Sequence[HttpResult], readers: Sequence[str]) -> str:
    lines = [
        "| layout | case | reader | open req | cold read req (KiB) | warm read req (KiB) | warm read: kinds | warm connections |",
        "|" + "---|" * 8,
    ]
    for hr in results:
        for name in readers:
            c = hr.counts.get(name)
            if c is None:
                continue
            lines.append(
                f"| {hr.case.layout} | {hr.case.case} | {name} | {len(c.open)} ({describe_ranges(c.open)}) "
                f"| {len(c.cold)} ({sum(r.nbytes for r in c.cold) / 1024:.0f}) "
                f"| {len(c.warm)} ({sum(r.nbytes for r in c.warm) / 1024:.0f}) | {describe_ranges(c.warm)} "
                f"| {len({r.connection for r in c.warm if r.connection}) or '?'} |"
            )
    return "\n".join(lines)


@dataclass
class LatencyStats:
    direct: float  # seconds, medians
    warm: float
    cold: float
    extra_warm: float  # median over rounds of (t_latency - t_direct) / RTT
    extra_cold: float
    nbytes: int  # bytes of one warm read
    requests: int | None

    @staticmethod
    def of(hr: HttpResult, name: str, rtt: float) -> LatencyStats:
        t = hr.case.times
        c = hr.counts.get(name)

        def extra(key: str) -> float:
            return statistics.median((a - b) / rtt for a, b in zip(t[key], t[name]))

        return LatencyStats(
            statistics.median(t[name]), statistics.median(t[f"{name}@lat"]), statistics.median(t[f"{name}@cold"]),
            extra(f"{name}@lat"), extra(f"{name}@cold"),
            sum(q.nbytes for q in c.warm) if c else 0, len(c.warm) if c else None,
        )

    def one_round_trip(self, sharded: bool) -> bool:
        """About one round trip (two for a cold sharded read) more than without latency."""
        return (self.extra_warm <= 1 + LATENCY_SLACK_RTT
                and self.extra_cold <= (2 if sharded else 1) + LATENCY_SLACK_RTT)


def latency_table(
    results: Sequence[HttpResult], readers: Sequence[str], latency_ms: float, proxy_bw: float
) -> tuple[str, int, int]:
    rtt = latency_ms / 1e3
    lines = [
        f"| layout | case | reader | warm req | KiB | transfer est. ms | direct ms | +{latency_ms:g} ms warm ms | warm in RTT "
        f"| extra RTT warm | cold ms | cold in RTT | extra RTT cold | about one RTT |",
        "|" + "---|" * 14,
    ]
    passed = checked = 0
    for hr in results:
        r = hr.case
        for name in (n for n in readers if n in r.times):
            st = LatencyStats.of(hr, name, rtt)
            verdict = "—"
            if name == "zarrlib":
                ok = st.one_round_trip(br.LAYOUTS[r.layout].shards is not None)
                verdict = "PASS" if ok else "FAIL"
                checked += 1
                passed += ok
            lines.append(
                f"| {r.layout} | {r.case} | {name} | {st.requests if st.requests is not None else '?'} "
                f"| {st.nbytes / 1024:.0f} | {st.nbytes / proxy_bw * 1e3:.1f} | {st.direct * 1e3:.1f} "
                f"| {st.warm * 1e3:.1f} | {st.warm / rtt:.2f} | {st.extra_warm:.2f} "
                f"| {st.cold * 1e3:.1f} | {st.cold / rtt:.2f} | {st.extra_cold:.2f} | {verdict} |"
            )
    return "\n".join(lines), passed, checked


def latency_summary(results: Sequence[HttpResult], latency_ms: float, proxy_bw: float) -> list[str]:
    """One line per layout: how many round trips zarrlib's XY plane costs."""
    rtt = latency_ms / 1e3
    out = []
    for hr in results:
        if hr.case.case != "xy_plane" or "zarrlib@lat" not in hr.case.times:
            continue
        st = LatencyStats.of(hr, "zarrlib", rtt)
        out.append(
            f"zarrlib {hr.case.layout} plane ({st.requests} requests, {st.nbytes / 2**20:.1f} MiB): "
            f"warm = {st.warm / rtt:.2f} RTT = direct read {st.direct * 1e3:.0f} ms + {st.extra_warm:.2f} RTT; "
            f"cold = {st.cold / rtt:.2f} RTT = direct + {st.extra_cold:.2f} RTT "
            f"(transfer est. {st.nbytes / proxy_bw * 1e3:.1f} ms)"
        )
    return out


def http_environment(readers: Sequence[str], io_concurrency: int | None) -> dict[str, Any]:
    env = br.environment(readers)
    from importlib.metadata import version

    for pkg in ("fsspec", "aiohttp"):
        with contextlib.suppress(Exception):
            env[pkg] = version(pkg)
    with contextlib.suppress(Exception):
        env["obstore"] = version("obstore")
    if any(n in readers for n in ZARRLIB_READERS):
        import inspect

        from zarrview.zarrlib.storage import FsspecStore

        default = inspect.signature(FsspecStore).parameters["io_concurrency"].default
        env["zarrlib_io_concurrency"] = io_concurrency if io_concurrency is not None else f"default ({default})"
        env["zarrlib_stores"] = zarrlib_stores()
    if "baseline" in readers:
        env["baseline"] = str(BASELINE)
        env["baseline_commit"] = checkout_commit(BASELINE, "%H %s")
        env["ZARRLIB_REMOTE_BACKEND"] = os.environ.get("ZARRLIB_REMOTE_BACKEND")
    if "tensorstore" in readers:
        import tensorstore as ts

        env["tensorstore_http_request_concurrency"] = ts.Context()["http_request_concurrency"].to_json(include_defaults=True)
    return env


def checkout_commit(checkout: Path | None, fmt: str = "%h") -> str | None:
    """What ``git log -1 --format=FMT`` says of the commit a checkout (a worktree) is at."""
    if checkout is None:
        return None
    res = subprocess.run(["git", "-C", str(checkout), "log", "-1", f"--format={fmt}"],
                         capture_output=True, text=True, check=False)
    return res.stdout.strip() or None


# --------------------------------------------------------------------------- main run


def check_counts_ok(counts: dict[str, Counts], where: str) -> None:
    for name, c in counts.items():
        bad = [r for r in c.cold + c.warm if r.status >= 400]
        if bad:
            log(f"bench: warning: {where}: {name} got {len(bad)} error answers, e.g. {bad[0]}")


def bench_layout(
    server: Server,
    proxy_url: str | None,
    layout: br.Layout,
    cases: dict[str, Index],
    expected: dict[str, Array],
    readers: Sequence[str],
    ts_ctx: Any,
    rounds: int,
    io_concurrency: int | None,
) -> list[HttpResult]:
    url = f"{server.url}/{layout.name}"
    direct = {n: opener(n, url, layout, ts_ctx, io_concurrency) for n in readers}
    out: list[HttpResult] = []

    # 1. request counts (fresh opens, direct) and correctness of every reader.
    counts_by_case: dict[str, dict[str, Counts]] = {}
    for case, index in cases.items():
        where = f"{layout.name} {case} {br.fmt_index(index)}"
        got: dict[str, Array] = {}
        counts: dict[str, Counts] = {}
        for name in readers:
            counts[name], got[name] = count_requests(server, direct[name], index)
        br.check_results(got, expected[case], where)
        check_counts_ok(counts, where)
        counts_by_case[case] = counts
        log(f"bench: {where}: requests warm/cold " + ", ".join(f"{n} {fmt_counts(c)}" for n, c in counts.items()))

    # 2. timing: arrays opened once; one untimed read each first (pools, page cache, shard indexes).
    groups: dict[str, list[Variant]] = {n: [Variant(n, read=direct[n]())] for n in readers}
    if proxy_url is not None:
        purl = f"{proxy_url}/{layout.name}"
        for n in readers:
            slow = opener(n, purl, layout, ts_ctx, io_concurrency)
            groups[n] += [Variant(f"{n}@lat", read=slow()), Variant(f"{n}@cold", fresh=slow)]
    for case, index in cases.items():
        where = f"{layout.name} {case} {br.fmt_index(index)}"
        for vs in groups.values():
            for v in vs:
                if v.read is not None:
                    if not br.same(v.read(index), expected[case]):
                        raise br.MismatchError(f"{where}: {v.key} differs from the generated data")
        res = br.CaseResult(layout.name, case, br.fmt_index(index))
        run_rounds(res, groups, index, rounds)
        log(f"bench: {where}: " + ", ".join(f"{k} {res.median_ms(k):.1f} ms" for k in res.times))
        out.append(HttpResult(res, counts_by_case[case]))
    return out


def print_header(server: Server, shape: tuple[int, ...], rounds: int, readers: Sequence[str], env: dict[str, Any],
                 latency_ms: float | None) -> None:
    print()
    print(
        f"Stack {shape} {br.DTYPE} over HTTP, {rounds} rounds, readers: {', '.join(readers)}. "
        f"Server: {server.name} at {server.url}. Warm OS page cache, no chunk cache in any reader; medians."
        + (f" Added latency: {latency_ms:g} ms per round trip (proxy process; +1 RTT per new connection)." if latency_ms else "")
    )
    ts_http = env.get("tensorstore_http_request_concurrency", {})
    print(
        f"Host: {env['cpu_count']} CPUs (usable {env['usable_cpus']}). Requests in flight: zarrlib "
        f"{env.get('zarrlib_io_concurrency', '—')}, tensorstore http_request_concurrency "
        f"{ts_http.get('limit', '—') if isinstance(ts_http, dict) else ts_http}, zarr-python async.concurrency "
        f"{env['zarr_async_concurrency']}."
    )
    print(
        f"Versions: python {env['python']}, numpy {env['numpy']}, zarr {env['zarr']}, tensorstore {env['tensorstore']}, "
        f"fsspec {env.get('fsspec', '?')}, aiohttp {env.get('aiohttp', '?')}, obstore {env.get('obstore', '?')}."
    )
    stores = env.get("zarrlib_stores") or {}
    if stores:
        how = {"zarrlib": "default", "zarrlib-fsspec": 'backend="fsspec"', "baseline": "its default"}
        print("zarrlib reads through: " + "; ".join(f"{n} ({how.get(n, '?')}) {k}" for n, k in stores.items()) + ".")
    if "baseline" in readers:
        print(f"Baseline: {env.get('baseline')} at {checkout_commit(BASELINE) or '?'}.")
        if env.get("ZARRLIB_REMOTE_BACKEND"):
            print(f"Note: ZARRLIB_REMOTE_BACKEND={env['ZARRLIB_REMOTE_BACKEND']} is set; a zarrlib that reads it "
                  "chooses its default backend from it.")
    print()


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if len(args_list) == 2 and args_list[0] == "--_proxy":  # internal: the latency proxy process
        port, latency = args_list[1].split(":")
        return proxy_child(int(port), float(latency))

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rounds", type=int, default=7, help="timed rounds per case (default 7)")
    p.add_argument("--quick", action="store_true", help=f"use the {br.QUICK_SHAPE} stack instead of {br.FULL_SHAPE}")
    p.add_argument("--layouts", default=",".join(br.LAYOUTS), help="comma list of: " + ", ".join(br.LAYOUTS))
    p.add_argument("--cases", default=",".join(HTTP_CASES), help="comma list of: " + ", ".join(HTTP_CASES))
    p.add_argument("--readers", default=",".join(READERS),
                   help="comma list of: zarrlib (zl; as open(url) reads by default: obstore for http(s); "
                        "also zlo, zarrlib-obstore), zarrlib-fsspec (zlf, zarrlib-aiohttp: backend=\"fsspec\"), "
                        "tensorstore (ts), zarr-python (zarr, zp), zarr-obstore (zo)")
    p.add_argument("--server", choices=("auto", "nginx", "python"), default="auto",
                   help="auto: nginx if installed, else the Python server")
    p.add_argument("--latency-ms", type=float, default=0.0,
                   help="add this round-trip latency through a proxy (e.g. 50); 0: none")
    p.add_argument("--io-concurrency", type=int, default=None, help="zarrlib's io_concurrency (default: its own)")
    p.add_argument("--data-dir", type=Path, default=br.DEFAULT_DATA_DIR, help=f"default {br.DEFAULT_DATA_DIR}")
    p.add_argument("--json", type=Path, help="also write raw timings, request logs and environment here")
    p.add_argument("--strict", action="store_true", help="exit with status 1 if any target FAILs")
    p.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                   help="also time the zarrlib of another checkout (opened with its own defaults) as reader "
                        "'baseline', and print zarrlib/baseline per case and timed mode")
    args = p.parse_args(args_list)

    try:
        layouts = [br.LAYOUTS[n] for n in br.parse_list(args.layouts, list(br.LAYOUTS), "layout")]
        case_names = br.parse_list(args.cases, list(HTTP_CASES), "case")
        readers = br.parse_list(args.readers, [*READERS, "baseline"], "reader", READER_ALIASES)
    except argparse.ArgumentTypeError as exc:
        p.error(str(exc))
    global BASELINE
    BASELINE = args.baseline
    if args.baseline is not None and "baseline" not in readers:
        readers.append("baseline")
    if "baseline" in readers and args.baseline is None:
        p.error("reader 'baseline' needs --baseline CHECKOUT")
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    if args.latency_ms < 0:
        p.error("--latency-ms must be >= 0")
    if any(n in readers for n in ZARRLIB_READERS):
        try:
            br.import_zarrlib()
            if args.baseline is not None:
                br.import_baseline(args.baseline)
        except ImportError as exc:
            p.error(f"zarrlib is not usable ({exc}); run without it, e.g. --readers ts,zarr")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the cleanups (stop nginx, proxy)

    shape = br.QUICK_SHAPE if args.quick else br.FULL_SHAPE
    gen = br.PlaneGenerator(shape)
    data_dir = args.data_dir / ("quick" if args.quick else "full")
    br.ensure_data(data_dir, layouts, shape, gen, rewrite=False)
    all_cases = br.make_cases(shape)
    cases = {c: all_cases[c] for c in case_names}
    expected = {}
    for case, index in cases.items():
        log(f"bench: computing reference data for {case} {br.fmt_index(index)}")
        expected[case] = gen.expected(index)
    ts_ctx = tensorstore_context() if "tensorstore" in readers else None
    latency = args.latency_ms or None

    results: list[HttpResult] = []
    bandwidth: dict[str, float] = {}
    with contextlib.ExitStack() as stack:
        server = start_server(args.server, data_dir, stack)
        log(f"server: {server.name} at {server.url}, serving {data_dir}")
        proxy_url = stack.enter_context(latency_proxy(server.url, latency)) if latency else None
        if proxy_url:
            log(f"proxy: {proxy_url} -> {server.url}, {latency:g} ms per round trip")
        try:
            for layout in layouts:
                results += bench_layout(server, proxy_url, layout, cases, expected, readers, ts_ctx,
                                        args.rounds, args.io_concurrency)
        except br.MismatchError as exc:
            log("")
            log("!" * 78)
            log(f"ABORT: readers do not return identical data -- {exc}")
            log("!" * 78)
            return 2
        if proxy_url:
            bandwidth = probe_bandwidth(server.url, proxy_url, data_dir, layouts)

    env = http_environment(readers, args.io_concurrency)
    print_header(server, shape, args.rounds, readers, env, latency)
    table, passed, checked = speed_table(results)
    print(table)
    print()
    btable, bp, bc = backend_table(results)
    if bc:
        passed, checked = passed + bp, checked + bc
        print("zarrlib as it reads by default (obstore for http), with its fsspec route (backend=\"fsspec\", aiohttp)")
        print("beside it, against tensorstore and zarr-python on obstore (zarr.storage.ObjectStore); ratios are")
        print("medians of per-round ratios. Targets: zarrlib/ts <= 1.0, zarr-obstore/zarrlib >= 1.3.")
        print()
        print(btable)
        print()
    if "baseline" in readers:
        bltable, blp, blc = baseline_table(results)
        passed, checked = passed + blp, checked + blc
        print(f"Against the baseline ({args.baseline}: {checkout_commit(args.baseline) or '?'}), both opened with")
        print("their own defaults; medians of per-round ratios. Target with latency: zarrlib/baseline "
              f"<= {BASELINE_SLACK:g}, warm and cold;")
        print("direct (loopback) ratios are reported, not judged.")
        print()
        print(bltable)
        print()
    print("Requests: 'warm / cold' = a read of an already-opened array / the first read after a fresh open")
    print("(the open's own requests are in the 'open req' column). Speed ratios are medians of per-round ratios.")
    print()
    print(request_table(results, readers))
    if latency:
        ltable, lp, lc = latency_table(results, readers, latency, bandwidth["proxy"])
        passed, checked = passed + lp, checked + lc
        print()
        print(
            f"Latency {latency:g} ms per round trip (RTT). Bandwidth of one {bandwidth['probe_bytes'] / 2**20:.1f} MiB GET: direct "
            f"{bandwidth['direct'] / 2**20:.0f} MiB/s, through the proxy {bandwidth['proxy'] / 2**20:.0f} MiB/s "
            f"(first byte after {bandwidth['proxy_first_byte_s'] * 1e3:.0f} ms). 'transfer est.' = warm-read bytes / "
            "proxy bandwidth. 'extra RTT' = median over rounds of (time with latency - direct time) / RTT: the round "
            "trips a read waits in series. Warm reuses the opened array, cold opens afresh (untimed) and reads once."
        )
        print()
        print(ltable)
        print()
        summary = latency_summary(results, latency, bandwidth["proxy"])
        if summary:
            print("\n".join(summary))
            print()
        print(f"about one RTT: zarrlib needs <= {1 + LATENCY_SLACK_RTT:g} extra RTT warm and cold, "
              f"<= {2 + LATENCY_SLACK_RTT:g} cold on v3_sharded (shard index, then data).")
    print()
    print(f"Targets met: {passed}/{checked}")

    if args.json:
        payload = {
            "environment": env,
            "server": server.name,
            "shape": list(shape),
            "rounds": args.rounds,
            "latency_ms": latency,
            "bandwidth": bandwidth,
            "targets": {"unsharded": TARGET_UNSHARDED, "sharded": TARGET_SHARDED},
            "results": [
                {**asdict(hr.case), "requests": {n: {k: [asdict(q) for q in getattr(c, k)] for k in ("open", "cold", "warm")}
                                                 for n, c in hr.counts.items()}}
                for hr in results
            ],
        }
        args.json.write_text(json.dumps(payload, indent=2, default=str) + "\n")
        log(f"bench: raw timings written to {args.json}")
    return 1 if args.strict and passed < checked else 0


if __name__ == "__main__":
    sys.exit(main())
