"""What a store on an asyncio client does with a batch of requests, whatever the client.

A remote read is dominated by round trips, so the reads of a batch are awaited together on
one I/O event loop with ``io_concurrency`` in flight (separate from the decode pool), each
answer handed on as it lands so that decoding overlaps the rest of the fetch; the caller's
thread waits and can abandon them through a cancellation token. Each request is retried on
its own on transient failures (:mod:`.retry`: attempts, backoff, a timeout per try), and what
a server does with ranges is learned from its answers, here, whatever the client: one that
answers ranges with whole objects has each object read once, one that refuses suffix ranges
is asked for its objects' sizes instead. A client (the transport: obstore, or an fsspec
driver) supplies only its loop, one bounded GET (``_get``), a HEAD (``_info``), listings and
what its errors mean, so the transports are measured against each other on the same terms.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import heapq
import itertools
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from ..cancel import CancelToken
from ..errors import ReadCancelled, StoreError
from ..limits import limits
from .base import ByteRequest, OnEach, Scratch, Store, slice_range
from .byte_request import describe_range
from .. import io_log
from .coalesce import REMOTE, coalesce, member
from .retry import RetryPolicy
from .revision import Revision, revision_of

#: the buffer a client's answers come in
Buffer = bytes | memoryview

#: answers to a suffix range that mean "not this way" rather than "no such object"
RANGE_REFUSED = frozenset({400, 405, 416, 501})
#: the most bytes of whole objects kept for a server that ignores ``Range``
WHOLE_CACHE_BYTES = 256 << 20


class InFlight:
    """The bytes one read's answers hold while they arrive, within ``limits().inflight_bytes``.

    Each answer holds, before its body is read, what it brings where the request says (its
    range) and otherwise what its head states, or each piece as it comes (within its bound).
    An answer that would pass the budget waits, first come first served, until others are
    handed on, except one answer at a time: the oldest of the answers that hold bytes or wait
    for them, which proceeds past the budget until it is handed on: the holders cannot all wait
    on each other, and a read holds at most the budget and one answer's own bound. (An answer
    that holds nothing, as one queued for a connection, takes no part: the one it would wait on
    may be a newer answer waiting on the budget. One that holds nothing yet and is older than
    the one past the budget waits for it: two past it at once would hold two answers' bounds.)
    Lives on the I/O loop.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self.peak = 0
        self._held: dict[int, int] = {}  # per open answer, the bytes it holds
        self._tickets = itertools.count()
        self._waiting: dict[int, tuple[int, asyncio.Future[None]]] = {}  # in the order they came
        self._active: list[int] = []  # a heap of the answers that hold or wait (cleaned as it is read)
        self._over: int | None = None  # the answer past the budget, until it is handed on

    def open(self) -> int:
        ticket = next(self._tickets)
        self._held[ticket] = 0
        return ticket

    async def hold(self, ticket: int, n: int) -> None:
        if self._passes(ticket) or not self._waiting and self.used + n <= self.total:
            self._grant(ticket, n)
            return
        granted = asyncio.get_running_loop().create_future()
        self._waiting[ticket] = (n, granted)
        heapq.heappush(self._active, ticket)
        self._wake()
        try:
            await granted
        finally:
            self._waiting.pop(ticket, None)

    def close(self, ticket: int) -> None:
        self.used -= self._held.pop(ticket, 0)
        self._waiting.pop(ticket, None)
        if ticket == self._over or self.used <= self.total:
            self._over = None
        self._wake()

    def _passes(self, ticket: int) -> bool:
        """Whether ``ticket`` may pass the budget: the answer already past it, else (with none
        past it) the oldest of those that hold bytes or wait for them."""
        if self._over is not None:
            return ticket == self._over
        oldest = self._oldest()
        return oldest is None or ticket <= oldest

    def _oldest(self) -> int | None:
        """The oldest answer that holds bytes or waits for them."""
        active = self._active
        while active and not (self._held.get(active[0], 0) > 0 or active[0] in self._waiting):
            heapq.heappop(active)
        return active[0] if active else None

    def _grant(self, ticket: int, n: int) -> None:
        if not self._held[ticket]:
            heapq.heappush(self._active, ticket)
        self._held[ticket] += n
        self.used += n
        self.peak = max(self.peak, self.used)
        if self.used > self.total:
            self._over = ticket

    def _wake(self) -> None:
        """Grant the answer that may pass the budget wherever it waits, then the others in order
        while they fit."""
        first = self._over if self._over is not None else self._oldest()
        if first is not None and first in self._waiting:
            self._release(first)
        while self._waiting:
            ticket, (n, _) = next(iter(self._waiting.items()))
            if self.used + n > self.total:
                return
            self._release(ticket)

    def _release(self, ticket: int) -> None:
        n, granted = self._waiting.pop(ticket)
        if not granted.done():
            self._grant(ticket, n)
            granted.set_result(None)


#: the budget of the read a request belongs to, and the request's place in it (set per task)
_answer: ContextVar[tuple[InFlight, int] | None] = ContextVar("zarrlib_inflight", default=None)


async def hold(n: int) -> None:
    """Hold ``n`` more bytes of the current read's budget for the answer being read (waiting
    while earlier answers hold it); nothing outside a batched read."""
    place = _answer.get()
    if place is not None and n > 0:
        await place[0].hold(place[1], n)


class RangeIgnored(Exception):
    """A range answered with the whole object (a 200 where a 206 was asked for): ``data`` is
    all of it, read within the request's ``whole_limit``."""

    def __init__(self, data: Buffer) -> None:
        super().__init__("the server answered a range with the whole object")
        self.data = data


class AsyncBatchStore(Store):
    """A store whose requests are coroutines on one event loop; a request settles as its bytes,
    ``None`` (no such object) or the ``StoreError`` that names what went wrong."""

    prefers_batches = True
    coalescing = REMOTE

    def __init__(self, url: str, *, retry: RetryPolicy | None, io_concurrency: int) -> None:
        super().__init__(url)
        self.retry = retry or RetryPolicy()
        self.io_concurrency = max(1, io_concurrency)
        self.ignores_ranges = False  # learned: the server answers ranged requests with whole objects
        self.refuses_suffix = False  # learned: the server rejects "bytes=-N"
        self._semaphore: asyncio.Semaphore | None = None
        self._whole: OrderedDict[str, Buffer] = OrderedDict()  # whole objects, when ranges are ignored
        self._whole_pending: dict[str, asyncio.Future[Buffer]] = {}
        #: the in-flight budget of the latest batch (for tests and the cost panel: its peak)
        self.last_budget: InFlight | None = None

    # -- what a client supplies -------------------------------------------------------------
    @abstractmethod
    def _loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the client's coroutines run on."""

    @abstractmethod
    async def _get(self, path: str, start: int | None = None, stop: int | None = None,
                   limit: int | None = None) -> Buffer:
        """One GET of ``path``: the whole object within ``limit`` (None: ``limits().object_bytes``)
        where ``start`` is None, else ``[start, stop)`` (``stop`` None: to the end; a negative
        ``start``: a suffix). A range answered with the whole object raises ``RangeIgnored``
        (its body within ``limit``); a range past the object's end is empty. Raises the client's
        own errors as they come."""

    @abstractmethod
    async def _info(self, path: str) -> dict[str, Any]:
        """What a HEAD of ``path`` says (at least ``"size"``; see ``revision.revision_of``)."""

    def _suffix_refused(self, error: BaseException) -> bool | None:
        """What ``error``, the answer to a suffix range, says: True, the server refuses suffixes
        (asked for sizes from now on); False, this one object is to be read by its size (an
        empty one, answered oddly); None, neither (an error of its own)."""
        return None

    def _path(self, key: str) -> str:
        """The path the client asks for (the key, where the client is rooted at the URL)."""
        return key

    def _url(self, path: str) -> str:
        """A path the client asks for as the user's URL, for messages."""
        return self.key_url(path)

    def _where(self, req: ByteRequest) -> str:
        """``req`` as the user's URL and the range asked of it, for messages."""
        return describe_range(self.key_url(req.key), req.start, req.stop)

    @abstractmethod
    def _missing(self, error: BaseException) -> bool:
        """Whether ``error`` says there is no such object (not an error: the key is absent)."""

    @abstractmethod
    def _transient(self, error: BaseException) -> bool:
        """Whether another try may cure ``error``."""

    @abstractmethod
    def _error(self, req: ByteRequest, e: BaseException, attempts: int, ours: bool = False) -> StoreError:
        """``e`` as a StoreError naming ``req``; ``ours``: the per-try timeout expired."""

    # -- the synchronous API ----------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        return self.get_range(ByteRequest(key))

    def get_range(self, req: ByteRequest) -> bytes | None:
        res = self._run(lambda: self._gather([req]), None)[0]
        if isinstance(res, StoreError):
            raise res
        return None if res is None else bytes(res)

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        """The coalesced reads all in flight at once (at most ``io_concurrency``); ``on_each`` runs
        on the I/O loop thread as each read lands (keep it quick), for every request that read answers."""
        if not reqs:
            return
        groups = coalesce(reqs, self.coalescing)

        def landed(g: int, res: Buffer | None | StoreError) -> None:
            group = groups[g]
            for i in group.members:
                on_each(i, res if res is None or isinstance(res, StoreError) else member(res, group.req, reqs[i]))

        log = io_log.current()  # on the caller's thread: the loop's tasks do not share its context
        self._run(lambda: self._gather([g.req for g in groups], landed, log), cancel)

    def size(self, key: str) -> int | None:
        res = self._settle(lambda: self._size(self._path(key)), ByteRequest(key))
        return None if res is None else int(res)

    def revision(self, key: str) -> Revision | None:
        async def head() -> Revision:
            return revision_of(await self._info(self._path(key)))

        res = self._settle(head, ByteRequest(key))
        return res if isinstance(res, Revision) else None

    def _settle(self, make: Callable[[], Awaitable[Any]], req: ByteRequest) -> Any:
        """One call of the client (a HEAD, a listing) about ``req``'s key, tried and timed as a
        request is: its answer, or None where the object is missing."""
        async def one() -> list[Any]:
            return [await self._tried(req, make)]

        res = self._run(one, None)[0]
        if isinstance(res, StoreError):
            raise res
        return res

    # -- running on the loop ----------------------------------------------------------------
    def _run(self, make: Callable[[], Awaitable[list[Any]]], cancel: CancelToken | None) -> list[Any]:
        async def main() -> list[Any]:
            return await make()

        future = asyncio.run_coroutine_threadsafe(main(), self._loop())
        while True:
            try:
                return future.result(timeout=0.05 if cancel is not None else None)
            except concurrent.futures.TimeoutError:
                if cancel is not None and cancel.cancelled:
                    # every request of the batch not yet sent is never sent; those in flight are dropped
                    future.cancel()
                    raise ReadCancelled(f"read from {self.url} cancelled") from None

    async def _gather(self, reqs: list[ByteRequest], on_each: Callable[[int, Buffer | None | StoreError], None]
                      | None = None, log: io_log.IoLog | None = None) -> list[Buffer | None | StoreError]:
        budget = InFlight(limits().inflight_bytes)
        self.last_budget = budget

        async def one(i: int, req: ByteRequest) -> Buffer | None | StoreError:
            ticket = budget.open()
            _answer.set((budget, ticket))  # this task's own context: its client's holds land here
            try:
                # what the request itself says it brings; a whole object's bound is not held: a
                # document's (256 MiB) or a large chunk's would keep the read waiting for bytes never sent
                known = req.ranged_bytes()
                if known:
                    await budget.hold(ticket, known)
                tries: list[int] | None = [] if log is not None else None  # counted only where recorded
                res = await self._tried(req, lambda: self._answer(req), tries)
                if log is not None and tries and tries[0] > 1:
                    log.tried(req.key, tries[0])
                if on_each is not None:
                    on_each(i, res)
                return res
            finally:
                budget.close(ticket)

        return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(reqs))))

    # -- one try, as the server's habits say --------------------------------------------------
    async def _answer(self, req: ByteRequest) -> Buffer:
        """One try at ``req``: a range cut from the whole object where the server ignores
        ``Range``, a suffix read by the object's size where it refuses suffixes."""
        path = self._path(req.key)
        if req.start is None:
            return await self._get(path, limit=req.limit)
        if self.ignores_ranges:
            return slice_range(await self._whole_object(path, req.whole_limit()), req)
        if req.stop is not None and 0 <= req.stop <= req.start:
            return b""
        if req.start < 0 and self.refuses_suffix:
            return await self._by_size(path, req)
        try:
            return await self._get(path, req.start, req.stop, req.whole_limit())
        except RangeIgnored as e:
            return self._learned_whole(path, e.data, req)
        except Exception as e:
            refused = self._suffix_refused(e) if req.start < 0 else None
            if refused is None:
                raise
            self.refuses_suffix = self.refuses_suffix or refused
            return await self._by_size(path, req)

    async def _by_size(self, path: str, req: ByteRequest) -> Buffer:
        """The suffix ``req`` asks for, as the range its object's size makes of it."""
        assert req.start is not None
        size = await self._size(path)
        if not size:
            return b""
        try:
            return await self._get(path, max(0, size + req.start), size, req.whole_limit())
        except RangeIgnored as e:
            return self._learned_whole(path, e.data, req)

    def _learned_whole(self, path: str, data: Buffer, req: ByteRequest) -> Buffer:
        self.ignores_ranges = True
        self._keep_whole(path, data)
        return slice_range(data, req)

    async def _size(self, path: str) -> int:
        size = (await self._info(path)).get("size")
        if size is None:
            raise StoreError(f"{self._url(path)}: the server reports no size, needed to read its end")
        return int(size)

    # -- one request, retried ---------------------------------------------------------------
    async def _fetch(self, req: ByteRequest) -> Buffer | None | StoreError:
        """``req`` tried until it is answered, fails for good, or its tries together have taken
        ``limits().request_seconds``: each try is cut to what is left of that."""
        return await self._tried(req, lambda: self._answer(req))

    async def _tried(self, req: ByteRequest, make: Callable[[], Awaitable[Any]], tries: list[int] | None = None) -> Any:
        """``make()`` (a call of the client about ``req``) tried as ``_fetch`` says: its answer,
        None where the object is missing, or the ``StoreError`` that names why it failed; the
        number of tries it took is appended to ``tries`` where given."""
        delays: Iterator[float] | None = None
        attempt = 0
        loop = asyncio.get_running_loop()
        total = limits().request_seconds
        end = loop.time() + total
        try:
            while True:
                attempt += 1
                deadline: asyncio.Timeout | None = None
                cut = False  # this try was given less than its own timeout: the total ran out
                try:
                    if self._semaphore is None:
                        self._semaphore = asyncio.Semaphore(self.io_concurrency)
                    async with self._semaphore:
                        left = end - loop.time()
                        cut = left < self.retry.timeout
                        async with asyncio.timeout(max(0.0, min(self.retry.timeout, left))) as deadline:
                            return await make()
                except asyncio.CancelledError:
                    raise
                except StoreError as e:  # our own verdict on an answer (too large): final, already named
                    return e
                except Exception as e:  # clients raise many unrelated types
                    if self._missing(e):
                        return None
                    expired = deadline is not None and deadline.expired()
                    if expired and cut:
                        said = f"{attempt} tries" if attempt > 1 else "one try"
                        return StoreError(f"{self._where(req)}: no complete answer within {total:g} s ({said}), "
                                          "the most one request may take")
                    if self._transient(e):
                        delays = delays or self.retry.delays()
                        delay = next(delays, None)
                        if delay is not None and end - loop.time() > delay:
                            await asyncio.sleep(delay)
                            continue
                    return self._error(req, e, attempt, ours=expired)
        finally:
            if tries is not None:
                tries.append(attempt)

    async def fetch_here(self, req: ByteRequest) -> Buffer | None | StoreError:
        """``req`` read, retried and named by this store on its own loop, awaited from any other
        loop: how a store hands over a server its own client cannot read."""
        async def here() -> Buffer | None | StoreError:
            _answer.set(None)  # the budget lives on the caller's loop, which held what it knew
            return await self._fetch(req)

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(here(), self._loop()))

    # -- servers that ignore Range ----------------------------------------------------------
    def _keep_whole(self, path: str, data: Buffer) -> None:
        self._whole[path] = data
        self._whole.move_to_end(path)
        total = sum(len(v) for v in self._whole.values())
        while total > WHOLE_CACHE_BYTES and len(self._whole) > 1:
            total -= len(self._whole.popitem(last=False)[1])

    async def _whole_object(self, path: str, limit: int | None = None) -> Buffer:
        """Each object once, however many ranges of it are wanted at the same time, within
        ``limit`` (None: ``limits().object_bytes``): the bound of the request that found it so."""
        if path in self._whole:
            self._whole.move_to_end(path)
            return self._whole[path]
        pending = self._whole_pending.get(path)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Buffer] = asyncio.get_running_loop().create_future()
        self._whole_pending[path] = future
        try:
            data = await self._get(path, limit=limit)
        except BaseException as e:
            if isinstance(e, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(e)
                future.exception()  # retrieved: waiters re-raise it, asyncio need not log it
            raise
        finally:
            self._whole_pending.pop(path, None)
        future.set_result(data)
        self._keep_whole(path, data)
        return data
