"""A loopback HTTP server for tests: byte ranges, no directory listing, request log, faults.

With ``buckets``, the folders under its root are buckets and ``GET /<bucket>?list-type=2``
lists one as the S3 and Google Cloud Storage XML APIs do (ListObjectsV2: a prefix, a
delimiter, pages of ``max-keys`` continued by a token), which makes it the GCS XML-API server
obstore's GCS store reads (the JSON-API emulator serves no such listing); ``?comp=list``
lists one as Azure's List Blobs does (pages of ``maxresults`` continued by a marker), which
makes it the Blob service obstore's Azure store reads (an endpoint without signatures).

Bound to 127.0.0.1 on a free port, run in a daemon thread and shut down by the fixture, so
tests never reach beyond this machine and never leave a server behind. ``Faults`` makes it
misbehave the ways real servers do: slow answers, 5xx, connections dropped mid-body, Range
ignored, suffix ranges refused, fixed statuses for chosen keys, and bodies of its own making
(``Body``: endless, longer than the Range asked, a Content-Length of terabytes, a gzip bomb).
Every body byte the server hands to the kernel is counted per path (``ServerState.sent``),
so a test can tell a bounded read from one that merely failed in the end.
"""

from __future__ import annotations

import gzip
import os
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from email.utils import formatdate
from urllib.parse import parse_qs, unquote
from xml.sax.saxutils import escape

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")
#: an "endless" body stops here, so a client that never stops reading still ends the test
ENDLESS_CAP = 256 << 20
#: the send buffer of a made-up body: small, so what the server counts as sent is close to
#: what the client was offered
FAULT_SNDBUF = 64 << 10


def etag_of(path: Path) -> str:
    """The ETag the server sends for a file: from its modification time and size, as nginx makes it."""
    st = os.stat(path)
    return f'"{st.st_mtime_ns:x}-{st.st_size:x}"'


@dataclass(frozen=True)
class Body:
    """An answer of the server's own making to a request whose path contains the key it is filed under."""

    status: int = 200  # 206 answers with a Content-Range for the range asked
    length: int | None = None  # the Content-Length stated; None: chunked transfer encoding
    send: int | None = None  # body bytes actually sent; None: until the client hangs up
    gzip: bool = False  # send the gzip of ``send`` zero bytes, with Content-Encoding: gzip
    ranges: str = "any"  # which requests get it: "any", "suffix" (bytes=-N) or "explicit" (bytes=a-b)

    def applies(self, rng: str | None) -> bool:
        if self.ranges == "any":
            return True
        suffix = bool(rng) and rng.strip().startswith("bytes=-")  # type: ignore[union-attr]
        return suffix if self.ranges == "suffix" else bool(rng) and not suffix


@dataclass
class Faults:
    delay: float = 0.0  # seconds before every answer to a path containing ``delay_match``
    delay_match: str = ""
    fail_5xx: int = 0  # answer this many requests matching ``fail_match`` with ``fail_status``
    fail_match: str = ""
    fail_status: int = 500
    drop: int = 0  # cut this many bodies matching ``drop_match`` off halfway and close
    drop_match: str = ""
    ignore_range: bool = False  # 200 with the whole object whatever the Range
    refuse_suffix: bool = False  # 416 for "bytes=-N"
    status: dict[str, int] = field(default_factory=dict)  # path suffix -> fixed status
    bodies: dict[str, Body] = field(default_factory=dict)  # path substring -> made-up answer
    signed: dict[str, str] = field(default_factory=dict)  # path substring -> the query it needs, else 403
    moved: dict[str, str] = field(default_factory=dict)  # path prefix -> where a 301 sends it
    chunked: bool = False  # files are sent in chunked transfer encoding, stating no size (as nginx compressing on the fly)

    def take(self, counter: str, path: str, match: str) -> bool:
        """Whether this request gets the fault; counts down ``counter``."""
        if getattr(self, counter) > 0 and match in path:
            setattr(self, counter, getattr(self, counter) - 1)
            return True
        return False


@dataclass
class ServerState:
    root: Path
    log: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range)
    lock: threading.Lock = field(default_factory=threading.Lock)
    faults: Faults = field(default_factory=Faults)
    roots: tuple[Path, ...] = ()  # with roots, URL paths are absolute file paths below one of them
    connections: set[tuple[str, int]] = field(default_factory=set)  # client (host, port): one per TCP connection
    sent: dict[str, int] = field(default_factory=dict)  # URL path -> body bytes handed to the kernel
    writing: int = 0  # made-up answers still being sent
    buckets: bool = False  # folders under the root are buckets, listed as ``?list-type=2`` asks

    def sent_to(self, contains: str) -> int:
        with self.lock:
            return sum(n for path, n in self.sent.items() if contains in path)

    def wait_quiet(self, timeout: float = 10.0) -> bool:
        """Wait until no made-up answer is still being sent (the client hung up or the body
        ended), so ``sent_to`` is final."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if not self.writing:
                    return True
            time.sleep(0.02)
        return False

    def requests(self, method: str | None = None) -> list[tuple[str, str, str | None]]:
        with self.lock:
            return [r for r in self.log if method is None or r[0] == method]

    def clear(self) -> None:
        with self.lock:
            self.log.clear()


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def _file(self) -> Path | None:
            rel = unquote(self.path.split("?", 1)[0]).lstrip("/")
            if state.roots:
                path = Path("/" + rel).resolve()
                if not any(r in path.parents for r in state.roots):
                    return None
                return path if path.is_file() else None
            path = (state.root / rel).resolve()
            if state.root.resolve() not in path.parents and path != state.root.resolve():
                return None
            return path if path.is_file() else None

        def _status(self, code: int) -> None:
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _fault(self) -> bool:
            """Answer with a fault instead of the object; True when one was sent."""
            f = state.faults
            with state.lock:
                delay = f.delay if f.delay and f.delay_match in self.path else 0.0
                fixed = next((code for suffix, code in f.status.items() if self.path.endswith(suffix)), None)
                fail = fixed is None and f.take("fail_5xx", self.path, f.fail_match)
            if delay:
                time.sleep(delay)
            if fixed is not None:
                self._status(fixed)
                return True
            if fail:
                self._status(f.fail_status)
                return True
            return False

        def _write(self, data: bytes | memoryview, count: int | None = None) -> None:
            self.wfile.write(data)
            with state.lock:
                state.sent[self.path] = state.sent.get(self.path, 0) + (len(data) if count is None else count)

        def _made_up(self, spec: Body, rng: str | None, body: bool) -> None:
            """Answer with ``spec`` instead of the object; the connection is closed after it."""
            with state.lock:
                state.writing += 1
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, FAULT_SNDBUF)
            self.connection.settimeout(20)
            try:
                self._send_made_up(spec, rng, body)
            except OSError:
                pass  # the client hung up: what it was offered is counted
            finally:
                with state.lock:
                    state.writing -= 1

        def _send_made_up(self, spec: Body, rng: str | None, body: bool) -> None:
            self.send_response(spec.status)
            self.send_header("Content-Type", "application/octet-stream")
            payload = gzip.compress(bytes(spec.send or 0)) if spec.gzip else None
            length = len(payload) if payload is not None else spec.length
            if spec.status == 206:
                m = _RANGE.match((rng or "").strip())
                a, b = m.groups() if m else ("0", "")
                self.send_header("Content-Range", f"bytes {a or 0}-{b or ''}/*")
            if spec.gzip:
                self.send_header("Content-Encoding", "gzip")
            if length is None:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(length))
            self.end_headers()
            if not body:
                return
            if payload is not None:
                self._write(payload)
                return
            piece = bytes(64 << 10)
            left = ENDLESS_CAP if spec.send is None else spec.send
            while left > 0:
                part = piece[:left]
                if length is None:
                    self._write(b"%x\r\n" % len(part) + part + b"\r\n", len(part))
                else:
                    self._write(part)
                left -= len(part)
            if length is None:
                self.wfile.write(b"0\r\n\r\n")

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve(body=False)

        def do_GET(self) -> None:  # noqa: N802
            self._serve(body=True)

        def _serve(self, body: bool) -> None:
            rng = self.headers.get("Range")
            with state.lock:
                state.log.append((self.command, self.path, rng))
                state.connections.add(self.client_address)
            if self._fault():
                return
            moved = next(((k, v) for k, v in state.faults.moved.items() if self.path.startswith(k)), None)
            if moved is not None:
                self.send_response(301)
                self.send_header("Location", moved[1] + self.path[len(moved[0]):])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            where, _, query = self.path.partition("?")
            if any(k in where and query != q for k, q in state.faults.signed.items()):
                self._status(403)
                return
            spec = next((b for k, b in state.faults.bodies.items() if k in self.path and b.applies(rng)), None)
            if spec is not None:
                self._made_up(spec, rng, body)
                return
            if state.faults.ignore_range:
                rng = None
            if rng and state.faults.refuse_suffix and rng.strip().startswith("bytes=-"):
                self._status(416)
                return
            if state.buckets and "list-type=2" in query and where.strip("/") and "/" not in where.strip("/"):
                self._list_bucket(unquote(where.strip("/")), query, body)
                return
            if state.buckets and "comp=list" in query and where.strip("/") and "/" not in where.strip("/"):
                self._list_container(unquote(where.strip("/")), query, body)
                return
            path = self._file()
            if path is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            size = os.path.getsize(path)
            start, stop, status = 0, size, 200
            if rng:
                m = _RANGE.match(rng.strip())
                if m is None:
                    self.send_response(416)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                a, b = m.groups()
                if a == "":
                    start, stop = max(0, size - int(b)), size
                else:
                    start, stop = int(a), min(size, int(b) + 1 if b else size)
                if start >= size and size > 0:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 206
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", etag_of(path))
            self.send_header("Last-Modified", formatdate(os.stat(path).st_mtime, usegmt=True))
            if state.faults.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(stop - start))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{max(start, stop - 1)}/{size}")
            self.end_headers()
            if body:
                with open(path, "rb") as f:
                    f.seek(start)
                    payload = f.read(stop - start)
                with state.lock:
                    drop = state.faults.take("drop", self.path, state.faults.drop_match)
                if drop:  # half the promised body, then hang up
                    self._write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if state.faults.chunked:
                    self._write((b"%x\r\n" % len(payload) + payload + b"\r\n" if payload else b"") + b"0\r\n\r\n",
                                len(payload))
                    return
                self._write(payload)

        def _listing(self, bucket: str, prefix: str, delimiter: str, after: str,
                     most: int) -> tuple[dict[str, Path | None], list[str], bool] | None:
            """A page of the keys under ``prefix`` of a bucket, those with ``delimiter`` past the
            prefix folded into common prefixes, in key order, ``most`` after ``after``: the
            entries (name -> its file, None for a common prefix), the page's names and whether
            more follow; None where there is no such bucket."""
            folder = state.root / bucket
            if not folder.is_dir():
                return None
            entries: dict[str, Path | None] = {}
            for path in sorted(folder.rglob("*")):
                key = path.relative_to(folder).as_posix()
                if not path.is_file() or not key.startswith(prefix):
                    continue
                rest = key[len(prefix):]
                if delimiter and delimiter in rest:
                    entries.setdefault(prefix + rest.split(delimiter, 1)[0] + delimiter, None)
                else:
                    entries[key] = path
            names = [n for n in sorted(entries) if n > after]
            return entries, names[:most], len(names) > most

        def _send_xml(self, text: str, body: bool) -> None:
            payload = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if body:
                self._write(payload)

        def _list_container(self, container: str, query: str, body: bool) -> None:
            """Azure's List Blobs: as ``_list_bucket``, continued by a marker (the last name sent)."""
            q = parse_qs(query, keep_blank_values=True)
            prefix, delimiter = q.get("prefix", [""])[0], q.get("delimiter", [""])[0]
            most = int(q.get("maxresults", ["5000"])[0])
            found = self._listing(container, prefix, delimiter, q.get("marker", [""])[0], most)
            if found is None:
                self._status(404)
                return
            entries, page, more = found
            parts = ['<?xml version="1.0" encoding="utf-8"?>',
                     f'<EnumerationResults ContainerName="{escape(container)}"><Prefix>{escape(prefix)}</Prefix>'
                     f"<MaxResults>{most}</MaxResults><Delimiter>{escape(delimiter)}</Delimiter><Blobs>"]
            for name in page:
                path = entries[name]
                if path is None:
                    parts.append(f"<BlobPrefix><Name>{escape(name)}</Name></BlobPrefix>")
                    continue
                st = path.stat()
                parts.append(f"<Blob><Name>{escape(name)}</Name><Properties>"
                             f"<Last-Modified>{formatdate(st.st_mtime, usegmt=True)}</Last-Modified>"
                             f"<Etag>{escape(etag_of(path))}</Etag><Content-Length>{st.st_size}</Content-Length>"
                             "<Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType>"
                             "</Properties></Blob>")
            parts.append(f"</Blobs><NextMarker>{escape(page[-1]) if more else ''}</NextMarker></EnumerationResults>")
            self._send_xml("".join(parts), body)

        def _list_bucket(self, bucket: str, query: str, body: bool) -> None:
            """ListObjectsV2: the keys under ``prefix``, those with ``delimiter`` past the prefix
            folded into common prefixes, in key order, ``max-keys`` a page after the token."""
            q = parse_qs(query, keep_blank_values=True)
            prefix, delimiter = q.get("prefix", [""])[0], q.get("delimiter", [""])[0]
            after = q.get("continuation-token", q.get("start-after", [""]))[0]
            most = int(q.get("max-keys", ["1000"])[0])
            found = self._listing(bucket, prefix, delimiter, after, most)
            if found is None:
                self._status(404)
                return
            entries, page, more = found
            parts = ['<?xml version="1.0" encoding="UTF-8"?>',
                     '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
                     f"<Name>{escape(bucket)}</Name><Prefix>{escape(prefix)}</Prefix><KeyCount>{len(page)}</KeyCount>",
                     f"<MaxKeys>{most}</MaxKeys><IsTruncated>{str(more).lower()}</IsTruncated>"]
            if more:
                parts.append(f"<NextContinuationToken>{escape(page[-1])}</NextContinuationToken>")
            for name in page:
                path = entries[name]
                if path is None:
                    parts.append(f"<CommonPrefixes><Prefix>{escape(name)}</Prefix></CommonPrefixes>")
                    continue
                st = path.stat()
                modified = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(st.st_mtime))
                parts.append(f"<Contents><Key>{escape(name)}</Key><LastModified>{modified}</LastModified>"
                             f"<ETag>{escape(etag_of(path))}</ETag><Size>{st.st_size}</Size></Contents>")
            self._send_xml("".join(parts) + "</ListBucketResult>", body)

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops concurrent connects (a 1 s SYN retry each)


@contextmanager
def serve(root: Path, faults: Faults | None = None, roots: tuple[Path, ...] = (),
          tls: ssl.SSLContext | None = None, buckets: bool = False) -> Iterator[tuple[str, ServerState]]:
    """Serve ``root`` at ``http://127.0.0.1:<port>``; yields (base URL, request log).

    With ``roots``, the URL path is an absolute file path, served when below one of them.
    With ``tls`` (a server context), it is ``https://`` instead.
    """
    state = ServerState(Path(root), faults=faults or Faults(), roots=tuple(Path(r).resolve() for r in roots),
                        buckets=buckets)
    server = _Server(("127.0.0.1", 0), _handler(state))
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        scheme = "https" if tls is not None else "http"
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
