"""One worker thread serving the newest request; every new request cancels the pending one.

As in napari's layer slicer: submitting cancels the in-flight read's token (zarrlib stops
between chunks) and replaces anything still queued. Every submitted request gets exactly one
answer: its data, its error, or a result marked ``cancelled`` (a request replaced before it
started is answered at once, on the submitting thread; a running one when it stops). Callbacks
otherwise run on the worker thread; the Qt layer forwards them to the GUI thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..zarrlib import CancelToken, ChunkCache, ChunkFailure, ReadCancelled, ZarrError
from .requests import ReadRequest, ReadResult

log = logging.getLogger(__name__)

Callback = Callable[[ReadResult], None]
ProgressCallback = Callable[[ReadRequest, int, int], None]


class ReadScheduler:
    def __init__(self, cache_bytes: int = 1 << 30) -> None:
        self.cache = ChunkCache(cache_bytes)
        self._cond = threading.Condition()
        self._pending: tuple[ReadRequest, Callback, ProgressCallback | None] | None = None
        self._prefetch: list[ReadRequest] = []  # warm the cache when idle; dropped by any submit
        self.prefetched = 0
        self._token: CancelToken | None = None
        self._busy = False
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="zarrview-reader", daemon=True)
        self._thread.start()

    def submit(self, request: ReadRequest, on_done: Callback, on_progress: ProgressCallback | None = None) -> None:
        """Queue ``request``, replacing and cancelling whatever was pending or running."""
        with self._cond:
            if self._token is not None:
                self._token.cancel()
            self._prefetch.clear()
            dropped, self._pending = self._pending, (request, on_done, on_progress)
            self._cond.notify_all()
        self._answer_dropped(dropped)

    def prefetch(self, requests: list[ReadRequest]) -> None:
        """Read these into the cache when nothing else is asked for (neighbouring planes)."""
        with self._cond:
            self._prefetch = list(requests)
            self._cond.notify_all()

    def cancel(self) -> None:
        with self._cond:
            dropped, self._pending = self._pending, None
            self._prefetch.clear()
            if self._token is not None:
                self._token.cancel()
        self._answer_dropped(dropped)

    @staticmethod
    def _answer_dropped(dropped: tuple[ReadRequest, Callback, ProgressCallback | None] | None) -> None:
        if dropped is not None:
            request, on_done, _ = dropped
            on_done(ReadResult(request, None, None, 0.0, cancelled=True))

    def idle(self) -> bool:
        with self._cond:
            return self._pending is None and not self._busy

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """For tests and ``--screenshot``: block until nothing is pending or running."""
        end = time.monotonic() + timeout
        with self._cond:
            while self._pending is not None or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        with self._cond:
            self._closed = True
            if self._token is not None:
                self._token.cancel()
            self._cond.notify_all()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._prefetch and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                if self._pending is None:
                    self._token = token = CancelToken()
                    ahead = self._prefetch.pop(0)
                    prefetching = True
                else:
                    request, on_done, on_progress = self._pending
                    self._pending = None
                    self._token = token = CancelToken()
                    self._busy = True
                    prefetching = False
            if prefetching:
                self._warm(ahead, token)
                continue
            result = self._run(request, token, on_progress)
            with self._cond:
                self._token = None
            try:
                on_done(result)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _warm(self, request: ReadRequest, token: CancelToken) -> None:
        try:
            request.array.read(request.selection, cancel=token, cache=self.cache)
            self.prefetched += 1
        except ZarrError as e:  # the same error shows when that plane is asked for
            log.debug("prefetch of %s failed: %s", request.label, e)
        except Exception:  # a bug must not kill the worker; it is logged with its traceback
            log.exception("prefetch of %s failed", request.label)
        with self._cond:
            self._token = None

    def _run(self, request: ReadRequest, token: CancelToken, on_progress: ProgressCallback | None) -> ReadResult:
        start = time.perf_counter()
        progress = None if on_progress is None else (lambda done, total: on_progress(request, done, total))
        failures: list[ChunkFailure] = []
        try:
            if request.compute is not None:
                data = request.compute(token, self.cache, progress, failures)
            else:
                data = request.array.read(request.selection, cancel=token, cache=self.cache, progress=progress,
                                          failures=failures)
                if request.decode is not None:
                    data = request.decode(data)
        except ReadCancelled:
            return ReadResult(request, None, None, time.perf_counter() - start, cancelled=True)
        except ZarrError as e:
            return ReadResult(request, None, e, time.perf_counter() - start)
        except Exception as e:  # never let the worker die: report it like a store error
            return ReadResult(request, None, e, time.perf_counter() - start)
        return ReadResult(request, data, None, time.perf_counter() - start, tuple(failures))
