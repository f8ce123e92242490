"""What a read costs, recorded where every byte passes: each store request of its chunks (key,
range, bytes, when it landed), the requests the store had to try again (by the store, which
alone sees its tries), the chunks the cache served, the chunks decoded and the time their
decoding took, and when the first and the last chunk were in place.

Off unless a caller records (``with recording(IoLog()):``): a read then looks the log up once
(a context variable) and passes it to the threads that fetch and decode for it; with no log,
nothing else is done. The requests are those a read asks the store for, one per chunk or
inner chunk (the store may merge neighbouring ranges of one object into one request on the
wire); a log keeps the last ``REQUESTS_KEPT`` of them and counts all.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

#: requests a log keeps (each a few hundred bytes); the totals count every one
REQUESTS_KEPT = 10_000


@dataclass(frozen=True)
class RequestRecord:
    key: str
    start: int | None
    stop: int | None
    #: bytes that came back (0 for a missing object or an error)
    nbytes: int
    #: seconds from the store call to this answer's landing
    seconds: float
    #: "stored", "missing" (no such object: the fill value) or the error's text
    outcome: str


class IoLog:
    """One view's (one job's) requests and totals; filled by the threads of its reads."""

    def __init__(self, label: str = "") -> None:
        self.label = label
        self.started = time.perf_counter()
        self.requests: deque[RequestRecord] = deque(maxlen=REQUESTS_KEPT)
        self.request_count = 0
        self.bytes = 0
        self.cache_hits = 0
        self.chunks_decoded = 0
        self.decode_seconds = 0.0
        #: seconds from the start to the first and to the last chunk put in place (None: none yet)
        self.first_chunk: float | None = None
        self.last_chunk: float | None = None
        #: requests the store had to try more than once: their object's key -> tries, and how many
        self.tries: dict[str, int] = {}
        self.retried = 0
        self._lock = threading.Lock()

    def request(self, key: str, start: int | None, stop: int | None, nbytes: int, seconds: float, outcome: str) -> None:
        with self._lock:
            self.requests.append(RequestRecord(key, start, stop, nbytes, seconds, outcome))
            self.request_count += 1
            self.bytes += nbytes

    def tried(self, key: str, tries: int) -> None:
        """A request of the store for ``key`` took ``tries`` tries (recorded where more than one)."""
        with self._lock:
            self.retried += 1
            if key in self.tries or len(self.tries) < REQUESTS_KEPT:
                self.tries[key] = max(tries, self.tries.get(key, 0))

    def hits(self, n: int) -> None:
        if n:
            with self._lock:
                self.cache_hits += n
                self._placed()

    def decoded(self, seconds: float) -> None:
        with self._lock:
            self.chunks_decoded += 1
            self.decode_seconds += seconds
            self._placed()

    def _placed(self) -> None:
        now = time.perf_counter() - self.started
        if self.first_chunk is None:
            self.first_chunk = now
        self.last_chunk = now

    @property
    def active(self) -> bool:
        """Whether anything was read or served from the cache."""
        return bool(self.request_count or self.cache_hits or self.chunks_decoded)


_current: ContextVar[IoLog | None] = ContextVar("zarrlib_io_log", default=None)


@contextmanager
def recording(log: IoLog) -> Iterator[IoLog]:
    """Every read made in this context (this thread, or tasks it starts) records into ``log``."""
    token = _current.set(log)
    try:
        yield log
    finally:
        _current.reset(token)


def current() -> IoLog | None:
    """The log the reads of this context record into, if any."""
    return _current.get()
