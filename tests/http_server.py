"""A loopback HTTP server for tests: byte ranges, no directory listing, request log, faults.

Bound to 127.0.0.1 on a free port, run in a daemon thread and shut down by the fixture, so
tests never reach beyond this machine and never leave a server behind. ``Faults`` makes it
misbehave the ways real servers do: slow answers, 5xx, connections dropped mid-body, Range
ignored, suffix ranges refused, fixed statuses for chosen keys.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


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
            if state.faults.ignore_range:
                rng = None
            if rng and state.faults.refuse_suffix and rng.strip().startswith("bytes=-"):
                self._status(416)
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
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self.wfile.write(payload)

    return Handler


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops concurrent connects (a 1 s SYN retry each)


@contextmanager
def serve(root: Path, faults: Faults | None = None,
          roots: tuple[Path, ...] = ()) -> Iterator[tuple[str, ServerState]]:
    """Serve ``root`` at ``http://127.0.0.1:<port>``; yields (base URL, request log).

    With ``roots``, the URL path is an absolute file path, served when below one of them.
    """
    state = ServerState(Path(root), faults=faults or Faults(), roots=tuple(Path(r).resolve() for r in roots))
    server = _Server(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
