"""A loopback HTTP/1.1 server on raw sockets that serves a store and answers chosen keys with hostility.

``serve_hostile(root, rules)`` serves the files below ``root`` at ``http://127.0.0.1:<port>``
as a plain static server does (byte ranges, suffix ranges, ETag, 404, keep-alive), except that
a request whose path matches a rule's pattern gets that rule's ``Hostile`` answer instead: a
body without end (chunked, or ended only by closing), a body cut short of its Content-Length,
a Content-Length smaller than the body, a garbage status line, 200 KiB of headers, a flood of
1xx interim answers, a redirect loop (to itself, or A -> B -> A), a body dripped a byte at a
time, a gzip bomb, a 206 of other bytes than asked, a 206 of more bytes than asked, a fixed
error status, an error status whose body is a gzip bomb. A TLS
ClientHello sent to it (an ``https://`` URL at this plain server) is answered with a plain-HTTP
400; ``tls=`` makes it speak TLS with a certificate of the test's making instead.

No third-party server: every byte on the wire is written here, so the tests know exactly what
the client was offered. The server counts what it hands to the kernel per request (status line
and headers apart from body bytes), in ``HostileState.records``; a made-up body is written
through a small send buffer, so what it counts is close to what the client accepted.

Everything runs on daemon threads bound to 127.0.0.1 only; the context manager's exit wakes
every blocked accept, recv, send and wait (a self-pipe, socket shutdowns, an Event) and joins
the threads with short timeouts, so teardown never blocks on a client that neither reads nor
hangs up. ``answer_hook`` lets the HTTP-answer fuzzer mutate any valid answer before it is sent.
"""

from __future__ import annotations

import functools
import os
import re
import select
import socket
import ssl
import struct
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

#: the behaviours a rule may name
KINDS = (
    "endless_chunked",  # 200, Transfer-Encoding: chunked, chunks of zeros without end
    "endless_close",  # 200, no Content-Length, zeros until the client hangs up (close framing)
    "truncated",  # the right answer with a Content-Length larger than what is sent, then close
    "short_length",  # the right answer with a Content-Length half its body, all of it sent, kept alive
    "garbage_status",  # a status line that is not HTTP, then the body, then close
    "huge_headers",  # the right answer after 200 KiB of header lines
    "interim_flood",  # 1xx interim answers without end before the real one
    "redirect_self",  # 302 to the very URL asked for
    "redirect_pair",  # A -> B -> A: 302 to the path with ?hop=b, which redirects back
    "slow_drip",  # the right answer, its body one byte every ``interval`` seconds
    "gzip_bomb",  # 200, Content-Encoding: gzip, a few MiB that inflate to ``size`` zero bytes
    "gzip_bomb_chunked",  # the same bomb in chunked transfer encoding (no size stated)
    "wrong_range",  # a 206 to a range with other bytes than asked, Content-Range stating which
    "range_overflow",  # a 206 to a range with more bytes than asked, Content-Range and Content-Length stating so
    "status",  # the status ``code`` with a short body of its own, for every request (a 405, a 501)
    "error_bomb",  # a 502 whose body is the gzip bomb (Content-Encoding: gzip, its size stated)
)
#: an endless body or flood stops here (then the connection closes, no valid end), so a client
#: that never stops reading still ends the test; a bounded client hangs up long before
ENDLESS_CAP = 256 << 20
#: the send buffer of a made-up answer: small, so what is counted as sent is close to what the
#: client was offered (the kernel may still grow the loopback buffers)
SNDBUF = 64 << 10
#: how long a connection thread waits for the next request, and a blocked send, before it gives up
SOCKET_TIMEOUT = 30.0
#: the longest request head read
REQUEST_HEAD_MAX = 64 << 10
METADATA = r"(zarr\.json|\.zarray|\.zgroup|\.zattrs|\.zmetadata)$"
CHUNKS = r"/c/\d+(/\d+)*$"
_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")
_PIECE = bytes(64 << 10)


@dataclass(frozen=True)
class Hostile:
    """What a matching request gets instead of the right answer."""

    kind: str
    interval: float = 1.0  # slow_drip: seconds between bytes
    size: int = 2 << 30  # gzip bombs: the decoded size
    cap: int = ENDLESS_CAP  # endless bodies and floods: bytes sent before giving up
    extra: int = 4096  # range_overflow: bytes past the range; truncated: Content-Length past the body
    times: int | None = None  # only the first ``times`` matching requests; None: every one
    ranges: str = "any"  # which requests: "any", "whole" (no Range), "suffix" (bytes=-N), "explicit" (bytes=a-b)
    code: int = 503  # status: the status sent

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown hostile behaviour {self.kind!r}; one of {', '.join(KINDS)}")
        if self.ranges not in ("any", "whole", "suffix", "explicit"):
            raise ValueError(f"ranges must be any, whole, suffix or explicit, not {self.ranges!r}")

    def applies(self, rng: str | None) -> bool:
        if self.ranges == "any":
            return True
        if not rng:
            return self.ranges == "whole"
        suffix = rng.strip().startswith("bytes=-")
        return suffix if self.ranges == "suffix" else self.ranges == "explicit" and not suffix


@dataclass
class Request:
    method: str
    target: str  # as sent: path and query, percent-encoded
    version: str
    headers: dict[str, str]  # lower-case names

    @property
    def path(self) -> str:
        return unquote(self.target.split("?", 1)[0])

    @property
    def query(self) -> str:
        return self.target.partition("?")[2]

    @property
    def range(self) -> str | None:
        return self.headers.get("range")


@dataclass
class Answer:
    """A complete, valid answer for a request: what the server would send if it behaved."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    version: str = "HTTP/1.1"
    start: int = 0  # the answer's first byte in the object (a 206), for mutators
    size: int | None = None  # the object's size, None for a 404
    whole: bytes = field(default=b"", repr=False)  # the whole object, for mutators that answer other bytes

    def head(self) -> bytes:
        lines = [f"{self.version} {self.status} {self.reason}"] + [f"{k}: {v}" for k, v in self.headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


#: what a behaviour or hook hands the sender: ("head", bytes) and ("body", bytes) are written and
#: counted, ("wait", seconds) pauses (woken at once by stop), ("close", b"") hangs up,
#: ("linger", seconds) waits that long for the client's next request, then hangs up
Step = tuple[str, object]


@dataclass
class Record:
    """One request and what was sent back."""

    method: str
    target: str
    range: str | None
    kind: str | None  # the behaviour it got; None: served normally
    head: int = 0  # status line and header bytes handed to the kernel
    body: int = 0  # body bytes handed to the kernel
    ended: str = ""  # "sent" (all of it), "client" (hung up first), "stopped", "timeout", or "" while sending
    t0: float = field(default_factory=time.monotonic)
    t1: float | None = None

    @property
    def path(self) -> str:
        return unquote(self.target.split("?", 1)[0])


@dataclass
class HostileState:
    root: Path
    rules: list[tuple[re.Pattern[str], Hostile]]
    answer_hook: Callable[[Request, Answer], Iterable[Step] | None] | None = None
    records: list[Record] = field(default_factory=list)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    quiet: threading.Condition = field(init=False)
    sending: int = 0  # made-up answers still being written
    used: dict[int, int] = field(default_factory=dict)  # rule index -> requests it took
    errors: list[str] = field(default_factory=list)  # the server's own failures (a hook that raised), with stacks

    def __post_init__(self) -> None:
        self.quiet = threading.Condition(self.lock)

    def rule_for(self, path: str, rng: str | None) -> Hostile | None:
        with self.lock:
            for i, (pattern, hostile) in enumerate(self.rules):
                if pattern.search(path) and hostile.applies(rng):
                    if hostile.times is not None and self.used.get(i, 0) >= hostile.times:
                        continue
                    self.used[i] = self.used.get(i, 0) + 1
                    return hostile
        return None

    def matching(self, contains: str = "", hostile: bool | None = None) -> list[Record]:
        with self.lock:
            return [r for r in self.records if contains in r.path
                    and (hostile is None or (r.kind is not None) == hostile)]

    def body_sent(self, contains: str = "") -> int:
        """Body bytes handed to the kernel for requests whose path contains ``contains``."""
        return sum(r.body for r in self.matching(contains))

    def wire_sent(self, contains: str = "") -> int:
        """Every byte (heads and bodies) handed to the kernel for those requests."""
        return sum(r.head + r.body for r in self.matching(contains))

    def wait_sending(self, count: int, timeout: float = 10.0) -> bool:
        """Wait until at least ``count`` made-up answers are being written at once."""
        with self.quiet:
            return self.quiet.wait_for(lambda: self.sending >= count, timeout)

    def wait_quiet(self, timeout: float = 10.0) -> bool:
        """Wait (on a condition, woken by each made-up answer's end) until no made-up answer is
        still being written, so the counts are final; False if one still is after ``timeout``."""
        with self.quiet:
            return self.quiet.wait_for(lambda: self.sending == 0, timeout)


class _Stopped(Exception):
    pass


class HostileServer:
    def __init__(self, state: HostileState, tls: ssl.SSLContext | None = None) -> None:
        self.state = state
        self.tls = tls
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = self.listener.getsockname()[1]
        self.stop_event = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._conns: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._accepter = threading.Thread(target=self._accept_loop, name="hostile-accept", daemon=True)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._accepter.start()

    def stop(self) -> None:
        """Wake and end every thread; never waits long for any of them (they are daemons)."""
        self.stop_event.set()
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._accepter.join(timeout=2)
        deadline = time.monotonic() + 2
        for t in list(self._threads):
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        for s in (self.listener, self._wake_r, self._wake_w, *conns):
            try:
                s.close()
            except OSError:
                pass
        with self.state.quiet:
            self.state.quiet.notify_all()

    # -- accepting -------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        while not self.stop_event.is_set():
            ready, _, _ = select.select([self.listener, self._wake_r], [], [])
            if self._wake_r in ready or self.stop_event.is_set():
                return
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            with self._lock:
                self._conns.add(conn)
                self._threads = [t for t in self._threads if t.is_alive()]
                t = threading.Thread(target=self._serve_connection, args=(conn,), name="hostile-conn", daemon=True)
                self._threads.append(t)
            with self.state.lock:
                self.state.connections += 1
            t.start()

    # -- one connection --------------------------------------------------------------------
    def _serve_connection(self, raw: socket.socket) -> None:
        conn: socket.socket = raw
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            raw.settimeout(SOCKET_TIMEOUT)
            if self.tls is not None:
                conn = self.tls.wrap_socket(raw, server_side=True)
                with self._lock:
                    self._conns.add(conn)
            buf = b""
            while not self.stop_event.is_set():
                head, buf = self._read_head(conn, buf)
                if head is None:
                    return
                req = _parse_request(head)
                if req is None:  # not HTTP: a TLS ClientHello to this plain server, or garbage
                    self._record(Record("?", "?", None, "not_http"))
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    return
                if not self._answer(conn, req):
                    return
        except (OSError, _Stopped, ssl.SSLError, ValueError):
            return
        finally:
            for s in {raw, conn}:
                try:
                    s.close()
                except OSError:
                    pass
            with self._lock:
                self._conns.discard(raw)
                self._conns.discard(conn)

    def _read_head(self, conn: socket.socket, buf: bytes) -> tuple[bytes | None, bytes]:
        while b"\r\n\r\n" not in buf:
            if buf and not buf[:1].isalpha():
                return buf, b""  # not a request line: answered as not HTTP at once
            if len(buf) > REQUEST_HEAD_MAX:
                return None, b""
            got = conn.recv(65536)
            if not got:
                return None, b""
            buf += got
        head, _, rest = buf.partition(b"\r\n\r\n")
        return head, rest

    def _record(self, record: Record) -> Record:
        with self.state.lock:
            self.state.records.append(record)
        return record

    def _answer(self, conn: socket.socket, req: Request) -> bool:
        """Answer one request; False when the connection is to close."""
        hostile = self.state.rule_for(req.path, req.range)
        valid = self.valid_answer(req)
        steps: Iterable[Step] | None = None
        kind = hostile.kind if hostile is not None else None
        if hostile is not None:
            steps = _behaviour(hostile, req, valid)
        elif self.state.answer_hook is not None:
            try:
                steps = self.state.answer_hook(req, valid)
            except Exception:  # a harness bug: recorded for the test to report, the connection dropped
                with self.state.lock:
                    self.state.errors.append(traceback.format_exc())
                return False
            kind = "hook" if steps is not None else None
        record = self._record(Record(req.method, req.target, req.range, kind))
        keep = req.headers.get("connection", "").lower() != "close" and req.version == "HTTP/1.1"
        if steps is None:
            steps = [("head", valid.head()), ("body", valid.body)]
        else:
            with self.state.quiet:
                self.state.sending += 1
                self.state.quiet.notify_all()
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
        try:
            keep = self._send(conn, req, steps, record) and keep
            record.ended = record.ended or "sent"
            return keep
        except _Stopped:
            record.ended = "stopped"
            raise
        except TimeoutError:
            record.ended = "timeout"
            raise
        except OSError:
            record.ended = "client"
            raise
        finally:
            record.t1 = time.monotonic()
            if kind is not None:
                with self.state.quiet:
                    self.state.sending -= 1
                    self.state.quiet.notify_all()

    def _send(self, conn: socket.socket, req: Request, steps: Iterable[Step], record: Record) -> bool:
        """Write ``steps``; False when the connection is to close after them."""
        for what, value in steps:
            if self.stop_event.is_set():
                raise _Stopped
            if what == "wait":
                if self.stop_event.wait(float(value)):  # type: ignore[arg-type]
                    raise _Stopped
            elif what == "close":
                return False
            elif what == "linger":  # wait for the next request a while, then hang up
                ready, _, _ = select.select([conn, self._wake_r], [], [], float(value))  # type: ignore[arg-type]
                return bool(ready) and conn in ready and not self.stop_event.is_set()
            elif what == "head" or (what == "body" and req.method != "HEAD"):
                self._write(conn, value, record, what)  # type: ignore[arg-type]
        return True

    def _write(self, conn: socket.socket, data: bytes, record: Record, what: str) -> None:
        view = memoryview(data)
        while view:
            if self.stop_event.is_set():
                raise _Stopped
            n = conn.send(view)
            view = view[n:]
            with self.state.lock:
                if what == "head":
                    record.head += n
                else:
                    record.body += n

    # -- what a static server would answer ---------------------------------------------------
    def valid_answer(self, req: Request) -> Answer:
        path = self._file(req.path)
        if path is None or req.method not in ("GET", "HEAD"):
            status, reason = (404, "Not Found") if req.method in ("GET", "HEAD") else (405, "Method Not Allowed")
            return Answer(status, reason, [("Content-Length", "0")], b"")
        data = path.read_bytes()
        size = len(data)
        headers = [("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes"),
                   ("ETag", f'"{os.stat(path).st_mtime_ns:x}-{size:x}"')]
        rng = req.range
        if not rng:
            return Answer(200, "OK", headers + [("Content-Length", str(size))], data, size=size, whole=data)
        m = _RANGE.match(rng.strip())
        if m is None or m.groups() == ("", ""):
            return Answer(416, "Range Not Satisfiable", [("Content-Range", f"bytes */{size}"),
                                                         ("Content-Length", "0")], b"", size=size, whole=data)
        a, b = m.groups()
        if a == "":
            start, stop = max(0, size - int(b)), size
        else:
            start, stop = int(a), min(size, int(b) + 1 if b else size)
        if start >= size or stop <= start:
            return Answer(416, "Range Not Satisfiable", [("Content-Range", f"bytes */{size}"),
                                                         ("Content-Length", "0")], b"", size=size, whole=data)
        body = data[start:stop]
        return Answer(206, "Partial Content", headers + [("Content-Range", f"bytes {start}-{stop - 1}/{size}"),
                                                         ("Content-Length", str(len(body)))], body, start=start,
                      size=size, whole=data)

    def _file(self, rel: str) -> Path | None:
        root = self.state.root.resolve()
        path = (root / rel.lstrip("/")).resolve()
        if root not in path.parents:
            return None
        return path if path.is_file() else None


def _parse_request(head: bytes) -> Request | None:
    try:
        lines = head.decode("latin-1").split("\r\n")
    except UnicodeDecodeError:
        return None
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/"):
        return None
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return Request(parts[0], parts[1], parts[2], headers)


# -- the behaviours ----------------------------------------------------------------------------

def _chunked(piece: bytes) -> bytes:
    return b"%x\r\n" % len(piece) + piece + b"\r\n"


def _zeros(total: int) -> Iterator[bytes]:
    left = total
    while left > 0:
        yield _PIECE[:left]
        left -= len(_PIECE)


@functools.lru_cache(maxsize=4)
def gzip_bomb(size: int) -> bytes:
    """A valid gzip member of ``size`` zero bytes, built from one 16 MiB deflate segment repeated
    (after a full flush a segment refers to nothing before it), so 2 GiB costs about a second."""
    seg = 16 << 20
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(seg)) + c.flush(zlib.Z_FULL_FLUSH)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflate = block * (size // seg) + tail.compress(bytes(size % seg)) + tail.flush()
    crc, buf = 0, bytes(seg)
    for _ in range(size // seg):
        crc = zlib.crc32(buf, crc)
    crc = zlib.crc32(bytes(size % seg), crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + deflate + struct.pack("<II", crc, size & 0xFFFFFFFF)


def _head(status: str, headers: list[tuple[str, str]]) -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in headers]) + "\r\n\r\n").encode("latin-1")


def _without(headers: list[tuple[str, str]], *names: str) -> list[tuple[str, str]]:
    drop = {n.lower() for n in names}
    return [(k, v) for k, v in headers if k.lower() not in drop]


def _behaviour(h: Hostile, req: Request, valid: Answer) -> Iterator[Step]:
    octets = [("Content-Type", "application/octet-stream")]
    if h.kind == "endless_chunked":
        yield "head", _head("200 OK", octets + [("Transfer-Encoding", "chunked")])
        for piece in _zeros(h.cap):
            yield "body", _chunked(piece)
        yield "close", b""  # no last chunk: the body never ends validly
    elif h.kind == "endless_close":
        yield "head", _head("200 OK", octets + [("Connection", "close")])
        for piece in _zeros(h.cap):
            yield "body", piece
        yield "close", b""
    elif h.kind == "truncated":
        stated = len(valid.body) + h.extra
        yield "head", Answer(valid.status, valid.reason, _without(valid.headers, "Content-Length")
                             + [("Content-Length", str(stated))], b"").head()
        yield "body", valid.body
        yield "close", b""
    elif h.kind == "short_length":
        yield "head", Answer(valid.status, valid.reason, _without(valid.headers, "Content-Length")
                             + [("Content-Length", str(len(valid.body) // 2))], b"").head()
        yield "body", valid.body  # the rest is read as the next answer's start, if the client keeps it
    elif h.kind == "garbage_status":
        yield "head", b"HTTZ/9.9 2OO SURE THING\r\n" + valid.head().split(b"\r\n", 1)[1]
        yield "body", valid.body
        yield "close", b""
    elif h.kind == "huge_headers":
        filler = "".join(f"X-Filler-{i:05d}: {'a' * 100}\r\n" for i in range((200 << 10) // 118 + 1))
        head = valid.head()
        yield "head", head[:-2] + filler.encode() + b"\r\n"
        yield "body", valid.body
    elif h.kind == "interim_flood":
        interim = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
        batch = interim * 256
        for _ in range(h.cap // len(batch)):
            yield "head", batch
        yield "head", valid.head()
        yield "body", valid.body
    elif h.kind == "redirect_self":
        yield "head", _head("302 Found", [("Location", req.target), ("Content-Length", "0")])
    elif h.kind == "redirect_pair":
        path = req.target.split("?", 1)[0]
        to = path if "hop=b" in req.query else path + "?hop=b"
        yield "head", _head("302 Found", [("Location", to), ("Content-Length", "0")])
    elif h.kind == "slow_drip":
        yield "head", valid.head()
        for i in range(len(valid.body)):
            yield "body", valid.body[i:i + 1]
            yield "wait", h.interval
    elif h.kind in ("gzip_bomb", "gzip_bomb_chunked"):
        bomb = gzip_bomb(h.size)
        framing = [("Transfer-Encoding", "chunked")] if h.kind.endswith("chunked") else \
            [("Content-Length", str(len(bomb)))]
        yield "head", _head("200 OK", octets + [("Content-Encoding", "gzip")] + framing)
        for i in range(0, len(bomb), len(_PIECE)):
            yield "body", _chunked(bomb[i:i + len(_PIECE)]) if h.kind.endswith("chunked") else bomb[i:i + len(_PIECE)]
        if h.kind.endswith("chunked"):
            yield "body", b"0\r\n\r\n"
    elif h.kind in ("wrong_range", "range_overflow"):
        if valid.status != 206 or valid.size is None:  # not a range: answered as asked
            yield "head", valid.head()
            yield "body", valid.body
            return
        n, size, whole = len(valid.body), valid.size, valid.whole
        if h.kind == "wrong_range":  # as many bytes as asked, from elsewhere in the object, said so
            shift = max(1, n // 2)
            if valid.start + shift + n <= size:
                start = valid.start + shift
            elif valid.start >= shift:
                start = valid.start - shift
            else:  # the range is (nearly) the whole object: other bytes, fewer of them
                start = 1 if valid.start == 0 else 0
            stop = min(size, start + n)
        elif valid.start + n < size:  # the bytes asked and the ones after them
            start, stop = valid.start, min(size, valid.start + n + h.extra)
        else:  # the range ends the object: the bytes asked and the ones before them
            start, stop = max(0, valid.start - h.extra), valid.start + n
        body = whole[start:stop]
        yield "head", _head("206 Partial Content", octets + [("Content-Range", f"bytes {start}-{stop - 1}/{size}"),
                                                           ("Content-Length", str(len(body)))])
        yield "body", body
    elif h.kind == "status":
        body = f"{h.code} from the hostile server\n".encode()
        yield "head", _head(f"{h.code} Hostile", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        yield "body", body
    elif h.kind == "error_bomb":
        bomb = gzip_bomb(h.size)
        yield "head", _head("502 Bad Gateway", [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
                                                ("Content-Length", str(len(bomb)))])
        for i in range(0, len(bomb), len(_PIECE)):
            yield "body", bomb[i:i + len(_PIECE)]
    else:  # pragma: no cover - Hostile checks its kind
        raise ValueError(h.kind)


def self_signed(folder: Path) -> ssl.SSLContext:
    """A server context with a certificate for 127.0.0.1 signed by its own key (written to
    ``folder``): a client that checks certificates, as every client should, refuses it."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context


@contextmanager
def serve_hostile(root: Path, rules: Iterable[tuple[str, Hostile]] | dict[str, Hostile] = (),
                  tls: ssl.SSLContext | None = None,
                  answer_hook: Callable[[Request, Answer], Iterable[Step] | None] | None = None,
                  ) -> Iterator[tuple[str, HostileState]]:
    """Serve ``root`` on 127.0.0.1; yields (base URL, state). ``rules``: (regular expression
    searched in the request's decoded path, behaviour), the first that matches applies."""
    items = list(rules.items()) if isinstance(rules, dict) else list(rules)
    for _, h in items:
        if h.kind.startswith("gzip_bomb") or h.kind == "error_bomb":
            gzip_bomb(h.size)  # built before the first request, not while the client waits
    state = HostileState(Path(root), [(re.compile(p), h) for p, h in items], answer_hook)
    server = HostileServer(state, tls)
    server.start()
    try:
        yield server.url, state
    finally:
        server.stop()
