"""A small HTTP/1.1 client for one thing: GETs of objects and byte ranges of them.

aiohttp costs about 90 µs of Python per request on the event loop (request object, headers,
connector, response object, timers, payload stream); on a fast link that is what a read of
many chunks waits for. Here a request is one pre-built ``GET`` written to a kept-alive
connection, and the answer is received straight into a buffer of its stated size
(``BufferedProtocol``: no piece-by-piece bytes, no join).

It takes only answers it reads unambiguously: a status line, headers, and a body of stated
``Content-Length``, in chunked transfer encoding, or ending with the connection. Anything else
(a redirect, another transfer encoding) raises :class:`Unsupported`, and the store reads that
server through aiohttp from then on. A body is never read past the bound its caller gives (a
stated size past it is refused before a byte of it is read); a content-encoded body is handed
over as sent, with its headers.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: the most bytes of status line and headers an answer may have
HEAD_BYTES = 64 << 10
#: idle connections kept per client; more are closed as they come free
IDLE_KEPT = 128


class Unsupported(Exception):
    """An answer this client does not read; the caller asks again another way."""


class ProtocolError(ConnectionError):
    """The server's answer is not HTTP/1.x as this client reads it (a retry may cure it)."""


class StatusError(OSError):
    """An answer with a status that is neither data nor "missing"; ``status`` is the code."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"{status} {reason}")
        self.status = status


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytearray
    headers: dict[str, str]


#: the body's bound, from the answer's status (a 206 to a range and a whole object differ)
Cap = Callable[[int], int]
#: the error for a body past its bound: (its stated size, or None where it states none and ran
#: past; the bound; the status)
TooLarge = Callable[[int | None, int, int], Exception]


#: how a body of unstated size ends (``_Connection._need``)
UNTIL_CLOSE, CHUNKED = -1, -2
#: the longest chunk-size line or trailer section taken
LINE_BYTES = 4096


class _Chunked:
    """Chunked transfer coding taken apart as its bytes arrive (RFC 9112 section 7.1)."""

    def __init__(self) -> None:
        self._pending = bytearray()  # bytes of a size line, a chunk's CRLF or the trailers
        self._left = 0  # data bytes of the current chunk still to come
        self._state = "size"  # size -> data -> crlf -> size ... -> trailers
        self.done = False

    def feed(self, piece: memoryview) -> list[memoryview]:
        """The data bytes in ``piece``; ``done`` once the last chunk and trailers are in."""
        out: list[memoryview] = []
        i, n = 0, len(piece)
        while i < n and not self.done:
            if self._state == "data":
                take = min(self._left, n - i)
                out.append(piece[i:i + take])
                i += take
                self._left -= take
                if not self._left:
                    self._state = "crlf"
                continue
            end = bytes(piece[i:min(n, i + LINE_BYTES)]).find(b"\n")
            if end < 0:
                self._pending += piece[i:]
                if len(self._pending) > LINE_BYTES:
                    raise ProtocolError("a chunk-size line or trailer runs on")
                return out
            line = bytes(self._pending + piece[i:i + end]).rstrip(b"\r")
            self._pending.clear()
            i += end + 1
            self._line(line)
        if i < n:
            raise ProtocolError("the server sent bytes after the end of a chunked body")
        return out

    def _line(self, line: bytes) -> None:
        if self._state == "crlf":
            if line:
                raise ProtocolError("a chunk is longer than its size line says")
            self._state = "size"
        elif self._state == "size":
            digits = line.split(b";", 1)[0].strip()
            try:
                size = int(digits, 16)
            except ValueError:
                raise ProtocolError(f"not a chunk size: {digits[:40]!r}") from None
            if size < 0:
                raise ProtocolError(f"not a chunk size: {digits[:40]!r}")
            self._left = size
            self._state = "data" if size else "trailers"
        elif not line:  # trailers end with an empty line
            self.done = True


class _Connection(asyncio.BufferedProtocol):
    """One kept-alive connection; one request on it at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        #: told when the connection ends while it waits in a pool, which then lets go of it
        self.on_lost: Callable[[_Connection], None] | None = None
        self._head = bytearray(HEAD_BYTES)
        self._head_view = memoryview(self._head)  # made once: the receive buffer of every head
        self._reset()

    def _reset(self) -> None:
        self._future: asyncio.Future[Answer] | None = None
        self._filled = 0  # bytes of head received
        self._status = 0
        self._headers: dict[str, str] = {}
        self._body: bytearray | None = None
        self._view: memoryview | None = None
        self._got = 0
        self._need = UNTIL_CLOSE
        self._chunked: _Chunked | None = None
        self._keep = False
        self._cap: Cap = lambda status: 0
        self._too_large: TooLarge | None = None
        self._received = False

    # -- the caller's side ------------------------------------------------------------------
    def send(self, request: bytes, cap: Cap, too_large: TooLarge) -> asyncio.Future[Answer]:
        assert self.transport is not None and self._future is None
        self._future = asyncio.get_running_loop().create_future()
        self._cap, self._too_large = cap, too_large
        self.transport.write(request)
        return self._future

    @property
    def received(self) -> bool:
        return self._received

    # -- the protocol -----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._view is not None:
            if self._need < 0:
                return self._head_view  # a body of unstated size comes through the head's buffer
            return self._view[self._got:]
        return self._head_view[self._filled:]

    def buffer_updated(self, nbytes: int) -> None:
        self._received = True
        if self._future is None or self._future.done():
            self._fail(ProtocolError("the server sent bytes no request asked for"))
            return
        try:
            if self._view is None:
                self._filled += nbytes
                self._parse_head()
            elif self._need < 0:
                self._piece(self._head_view[:nbytes])
            else:
                self._got += nbytes
                if self._got >= self._need:
                    self._finish()
        except Exception as e:
            self._fail(e)

    def eof_received(self) -> bool:
        if self._view is not None and self._need == UNTIL_CLOSE:
            self._keep = False
            self._finish()
        return False  # the transport closes; connection_lost fails whatever is still waiting

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.on_lost is not None:
            self.on_lost(self)
        if self._future is not None and not self._future.done():
            why = f": {exc}" if exc else ""
            self._future.set_exception(ConnectionResetError(f"the server closed the connection{why}"))

    # -- reading an answer ------------------------------------------------------------------
    def _parse_head(self) -> None:
        end = self._head.find(b"\r\n\r\n", 0, self._filled)
        if end < 0:
            if self._filled >= HEAD_BYTES:
                raise ProtocolError(f"the answer's headers run past {HEAD_BYTES} bytes")
            return
        lines = bytes(self._head[:end]).decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise ProtocolError(f"not a header line: {line[:80]!r}")
            headers[name.strip().lower()] = value.strip()
        if 100 <= status < 200:
            raise Unsupported(f"an interim {status} answer")
        coding = headers.get("transfer-encoding", "identity").lower()
        if coding not in ("identity", "chunked"):
            raise Unsupported(f"a body sent in the {coding} transfer encoding")
        if 300 <= status < 400 and status != 304:
            raise Unsupported(f"a redirect ({status})")
        connection = headers.get("connection", "").lower()
        self._keep = "close" not in connection and (parts[0] != "HTTP/1.0" or "keep-alive" in connection)
        self._status, self._headers = status, headers
        if status not in (200, 206):  # its body is not wanted: the connection goes with it
            self._keep = False
            self._finish()
            return
        stated = headers.get("content-length")
        rest = self._head_view[end + 4:self._filled]
        if coding == "chunked":
            self._need, self._chunked = CHUNKED, _Chunked()
            self._body = bytearray()
            self._view = memoryview(b"")
            self._piece(rest)
        elif stated is not None:
            if not stated.isdigit():
                raise ProtocolError(f"Content-Length {stated[:40]!r} is not a size")
            n = int(stated)
            cap = self._cap(status)
            if n > cap:
                assert self._too_large is not None
                raise self._too_large(n, cap, status)
            if len(rest) > n:
                raise ProtocolError("the server sent more than the Content-Length it stated")
            self._need = n
            self._body = bytearray(n)
            self._view = memoryview(self._body)
            self._view[:len(rest)] = rest
            self._got = len(rest)
            if self._got >= n:
                self._finish()
        else:
            self._body = bytearray()
            self._view = memoryview(b"")
            self._piece(rest)

    def _piece(self, piece: memoryview) -> None:
        """Bytes of a body of unstated size: as they are, or as chunks to take apart."""
        if self._chunked is None:
            self._grow(piece)
            return
        for data in self._chunked.feed(piece):
            self._grow(data)
        if self._chunked.done:
            self._finish()

    def _grow(self, piece: memoryview) -> None:
        assert self._body is not None
        if len(self._body) + len(piece) > self._cap(self._status):
            assert self._too_large is not None
            raise self._too_large(None, self._cap(self._status), self._status)
        self._body += piece

    def _finish(self) -> None:
        future, answer = self._future, Answer(self._status, self._body or bytearray(), self._headers)
        keep = self._keep
        self._reset()
        if not keep and self.transport is not None:
            self.transport.close()
            self.closed = True
        if future is not None and not future.done():
            future.set_result(answer)

    def _fail(self, error: BaseException) -> None:
        future = self._future
        self.closed = True
        if self.transport is not None:
            self.transport.close()
        if future is not None and not future.done():
            future.set_exception(error)


class HttpClient:
    """GETs to one origin (scheme, host, port) over connections kept alive between requests."""

    def __init__(self, host: str, port: int, tls: bool, host_header: str) -> None:
        self.host, self.port = host, port
        self._ssl: ssl.SSLContext | None = ssl.create_default_context() if tls else None
        self._host_header = host_header
        self._idle: deque[_Connection] = deque()

    def request(self, target: str, range_header: str | None) -> bytes:
        """The bytes of a GET of ``target`` (the path and query, already percent-encoded)."""
        rng = f"Range: {range_header}\r\n" if range_header else ""
        return (f"GET {target} HTTP/1.1\r\nHost: {self._host_header}\r\n{rng}"
                "Accept-Encoding: identity\r\nUser-Agent: zarrview\r\n\r\n").encode("latin-1")

    async def get(self, request: bytes, cap: Cap, too_large: TooLarge) -> Answer:
        """The answer to ``request``. A kept connection the server has meanwhile closed costs a
        second try on a new one, not an error (servers close idle connections at will)."""
        while self._idle:
            conn = self._idle.pop()
            conn.on_lost = None
            if conn.closed:
                continue
            try:
                return await self._on(conn, request, cap, too_large)
            except ConnectionResetError:
                if conn.received:
                    raise
        return await self._on(await self._connect(), request, cap, too_large)

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(_Connection, self.host, self.port, ssl=self._ssl)
        return conn

    async def _on(self, conn: _Connection, request: bytes, cap: Cap, too_large: TooLarge) -> Answer:
        try:
            answer = await conn.send(request, cap, too_large)
        except BaseException:
            conn.closed = True  # cancelled or failed mid-answer: the rest would be read as the next one's
            if conn.transport is not None:
                conn.transport.close()
            raise
        if not conn.closed:
            if len(self._idle) < IDLE_KEPT:
                conn.on_lost = self._forget
                self._idle.append(conn)
            elif conn.transport is not None:
                conn.transport.close()
        return answer

    def _forget(self, conn: _Connection) -> None:
        """A kept connection the server closed: its buffers go with it."""
        try:
            self._idle.remove(conn)
        except ValueError:
            pass

    @property
    def idle(self) -> int:
        """Connections kept open for the next requests."""
        return len(self._idle)


_clients: dict[tuple[int, str, int, bool], HttpClient] = {}
#: origins remembered before those holding no connection are forgotten
CLIENTS_KEPT = 64


def client_for(host: str, port: int, tls: bool, host_header: str) -> HttpClient:
    """The running loop's client for an origin: every store of one server shares its kept-alive
    connections, so opening an array again costs no new connections (a handshake each, a round
    trip on a slow link). Called on the loop's thread only."""
    key = (id(asyncio.get_running_loop()), host, port, tls)
    client = _clients.get(key)
    if client is None:
        if len(_clients) >= CLIENTS_KEPT:  # a request in flight keeps its client; only sharing ends
            for stale in [k for k, c in _clients.items() if not c.idle]:
                del _clients[stale]
        client = _clients[key] = HttpClient(host, port, tls, host_header)
    return client


def parse_origin(url: Any) -> tuple[str, int, bool, str] | None:
    """(host, port, tls, Host header) of a yarl URL, or None where this client cannot reach it."""
    scheme = (url.scheme or "").lower()
    if scheme not in ("http", "https") or not url.raw_host or url.raw_user or url.raw_password:
        return None
    default = 443 if scheme == "https" else 80
    port = url.port or default
    host = url.raw_host
    shown = f"[{host}]" if ":" in host else host
    return host, port, scheme == "https", shown if port == default else f"{shown}:{port}"
