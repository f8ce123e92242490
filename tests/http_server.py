"""A loopback HTTP server for tests: byte ranges, no directory listing, request log.

Bound to 127.0.0.1 on a free port, run in a daemon thread and shut down by the fixture, so
tests never reach beyond this machine and never leave a server behind.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@dataclass
class ServerState:
    root: Path
    log: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def requests(self, method: str | None = None) -> list[tuple[str, str, str | None]]:
        with self.lock:
            return [r for r in self.log if method is None or r[0] == method]

    def clear(self) -> None:
        with self.lock:
            self.log.clear()


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def _file(self) -> Path | None:
            rel = unquote(self.path.split("?", 1)[0]).lstrip("/")
            path = (state.root / rel).resolve()
            if state.root.resolve() not in path.parents and path != state.root.resolve():
                return None
            return path if path.is_file() else None

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve(body=False)

        def do_GET(self) -> None:  # noqa: N802
            self._serve(body=True)

        def _serve(self, body: bool) -> None:
            rng = self.headers.get("Range")
            with state.lock:
                state.log.append((self.command, self.path, rng))
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
                    self.wfile.write(f.read(stop - start))

    return Handler


@contextmanager
def serve(root: Path) -> Iterator[tuple[str, ServerState]]:
    """Serve ``root`` at ``http://127.0.0.1:<port>``; yields (base URL, request log)."""
    state = ServerState(Path(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
