"""One store wrapper for every test that counts requests, adds latency or injects faults.

Tests that prove "a revisit is free", "a stale plane stops early" or "the event loop keeps
ticking while a slow store loads" need a store that tells what was asked of it, or that
answers slowly. Each such test used to subclass ``LocalStore`` with its own counters; those
copies drifted (one answered a ranged read with the whole object). ``CountingStore``
wraps any store instead, forwards every call unchanged, and is itself run through the store
contract (tests/zarrlib/test_store_contract.py), so a test using it reads what the wrapped
store would have answered.

What it records, from any thread: every request in order (``requests``), and per key the
whole-object reads (``gets``), the ranged reads (``ranges``) and the bytes answered
(``bytes``). What it can add: ``latency`` seconds before each request (or once per batch when
the wrapped store prefers batches, as one round trip would cost) for the keys ``slow``
selects; ``gate``: an event those requests wait on, so a test holds a read open for as long
as it needs to look at what the window says meanwhile, however busy the machine; and ``fail``: an exception to raise, or to settle in place of the answer, for the
requests it selects.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

from zarrview.zarrlib.cancel import CancelToken
from zarrview.zarrlib.errors import StoreError
from zarrview.zarrlib.storage.base import ByteRequest, OnEach, Scratch, Store

#: keys of metadata documents (everything else a reader asks for is a chunk, shard or index)
META_SUFFIXES = (".json", ".zarray", ".zattrs", ".zgroup", ".zmetadata")


#: how long a gated request waits before it fails rather than hangs the suite
GATE_SECONDS = 120.0


def is_chunk_key(key: str) -> bool:
    """Whether ``key`` is a chunk or shard rather than a metadata document."""
    return not key.endswith(META_SUFFIXES)


class CountingStore(Store):
    """A read-only view of ``inner`` that records and optionally slows or breaks requests."""

    def __init__(self, inner: Store, *, latency: float = 0.0,
                 slow: Callable[[str], bool] = lambda key: True,
                 fail: Callable[[ByteRequest], StoreError | None] | None = None,
                 gate: threading.Event | None = None) -> None:
        super().__init__(inner.url)
        self.gate = gate
        self.inner = inner
        self.prefers_batches = inner.prefers_batches
        self.coalescing = inner.coalescing
        self.latency = latency
        self.slow = slow
        self.fail = fail
        self.requests: list[ByteRequest] = []
        self.gets: Counter[str] = Counter()
        self.ranges: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()
        self.batches = 0
        self._lock = threading.Lock()

    # -- what was asked ---------------------------------------------------------------------
    def chunk_keys(self) -> list[str]:
        """The keys of every chunk/shard request, in the order they were made."""
        with self._lock:
            return [r.key for r in self.requests if is_chunk_key(r.key)]

    def chunk_reads(self) -> int:
        return len(self.chunk_keys())

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.gets.clear()
            self.ranges.clear()
            self.bytes.clear()
            self.batches = 0

    def _record(self, reqs: Sequence[ByteRequest], batch: bool = False) -> None:
        with self._lock:
            self.requests.extend(reqs)
            for r in reqs:
                (self.gets if r.start is None else self.ranges)[r.key] += 1
            self.batches += batch
        if (self.latency or self.gate is not None) and any(self.slow(r.key) for r in reqs):
            time.sleep(self.latency)
            if self.gate is not None and not self.gate.wait(GATE_SECONDS):
                raise StoreError(f"{reqs[0].key}: the test never opened the gate")

    def _answered(self, key: str, data: bytes | memoryview | None) -> None:
        if data is not None:
            with self._lock:
                self.bytes[key] += len(data)

    def _one(self, req: ByteRequest, read: Callable[[], bytes | memoryview | None]) -> bytes | memoryview | None:
        self._record([req])
        error = self.fail(req) if self.fail is not None else None
        if error is not None:
            raise error
        data = read()
        self._answered(req.key, data)
        return data

    # -- the Store interface, forwarded -----------------------------------------------------
    def get(self, key: str) -> bytes | None:
        return self._one(ByteRequest(key), lambda: self.inner.get(key))  # type: ignore[return-value]

    def get_range(self, req: ByteRequest) -> bytes | None:
        return self._one(req, lambda: self.inner.get_range(req))  # type: ignore[return-value]

    def get_bounded(self, key: str, limit: int) -> bytes | None:
        return self._one(ByteRequest(key, limit=limit),  # type: ignore[return-value]
                         lambda: self.inner.get_bounded(key, limit))

    def read_group(self, req: ByteRequest, scratch: Scratch | None) -> bytes | memoryview | None:
        return self._one(req, lambda: self.inner.read_group(req, scratch))

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        """Batches stay batches (one round trip of latency, the requests recorded as asked); a
        store that reads one request at a time is asked one coalesced read at a time, each
        recorded and paying the latency."""
        if not self.inner.prefers_batches:
            super().get_ranges(reqs, on_each, cancel, scratch)
            return
        reqs = list(reqs)
        self._record(reqs, batch=True)
        failed = {i: e for i, r in enumerate(reqs)
                  if self.fail is not None and (e := self.fail(r)) is not None}
        ask = [i for i in range(len(reqs)) if i not in failed]

        def landed(j: int, res: bytes | memoryview | None | StoreError) -> None:
            if not isinstance(res, StoreError):
                self._answered(reqs[ask[j]].key, res)
            on_each(ask[j], res)

        for i, e in failed.items():
            on_each(i, e)
        self.inner.get_ranges([reqs[i] for i in ask], landed, cancel, scratch)

    @property
    def can_list(self) -> bool:
        return self.inner.can_list

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        return self.inner.list_dir(prefix)

    def list_prefix(self, prefix: str) -> list[str]:
        return self.inner.list_prefix(prefix)

    def size(self, key: str) -> int | None:
        return self.inner.size(key)

    def key_url(self, key: str) -> str:
        return self.inner.key_url(key)

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"
