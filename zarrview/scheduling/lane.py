"""A lane: one stream of jobs where only the newest matters, on the shared worker pool.

Every view model, panel and dialog that reads in the background owns a lane. Submitting a
job numbers it and cancels the job before it (its ``CancelToken``: zarrlib stops between
chunks); a job replaced before it started is answered at once. Every job is answered exactly
once, through ``post`` (the app's queued signal to the GUI thread; a plain call in tests):
its value, its error, or cancelled. On arrival the lane looks again whether the job is still
the newest: if a newer one was submitted meanwhile the answer is marked ``stale`` and carries
nothing to show, so no receiver keeps its own generation counter.

Jobs submitted under different ``key`` values (the groups of a tree, each listing its own
members) run side by side; the newest per key wins. ``cancel`` stops the newest jobs and they
answer as cancelled (the Cancel button: "Cancelled reading …"); ``discard`` makes whatever is
in flight stale (the view shows something else now). ``close`` answers every pending job as
cancelled and refuses new ones by answering them cancelled at once. The pool's ``tally`` counts
what every lane was given, answered and delivered (``tally.py``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar, cast

from ..zarrlib import CancelToken, ReadCancelled
from ..zarrlib.io_log import IoLog, recording
from .answer import Answer
from .job import Context, Job, Progress
from .pool import PoolClosed, WorkerPool

T = TypeVar("T")

Post = Callable[[Callable[[], None]], None]


def call_now(fn: Callable[[], None]) -> None:
    """Delivery without a GUI thread: the answer is handled on the worker that made it."""
    fn()


def _delivered(answer: Answer[Any]) -> None:
    """What a ticket answers to once its answer was delivered: nothing."""


#: the job a ticket holds once answered (its own, and what it captured, is let go)
_DONE: Job[None] = Job(lambda _ctx: None, "answered")


@dataclass(eq=False)
class _Ticket(Generic[T]):
    number: int
    key: Hashable
    job: Job[T]
    token: CancelToken
    on_answer: Callable[[Answer[T]], None]
    on_progress: Progress | None
    on_partial: Callable[[Any], None] | None
    started: bool = False
    answered: bool = False
    delivered: bool = False


class Lane(Generic[T]):
    def __init__(self, pool: WorkerPool, post: Post = call_now, name: str = "lane") -> None:
        self.pool = pool
        self.name = name
        self._post = post
        self._lock = threading.Lock()
        self._count = 0
        self._newest: dict[Hashable, _Ticket[T]] = {}  # per key, until its answer arrives
        self._open: dict[int, _Ticket[T]] = {}  # submitted, not yet answered
        self._closed = False
        pool.adopt(self)

    # -- asking -----------------------------------------------------------------------------------
    def submit(self, job: Job[T], on_answer: Callable[[Answer[T]], None], *, on_progress: Progress | None = None,
               on_partial: Callable[[Any], None] | None = None, key: Hashable = None) -> int:
        """Run ``job`` on the pool, cancelling the newest job of ``key``; ``on_answer`` gets its
        one answer, ``on_progress`` and ``on_partial`` what it reports while it is the newest.
        Returns the job's number."""
        with self._lock:
            self._count += 1
            ticket = _Ticket(self._count, key, job, CancelToken(), on_answer, on_progress, on_partial)
            older = self._newest.get(key)
            self._newest[key] = ticket
            self._open[ticket.number] = ticket
            closed = self._closed
        self.pool.tally.submitted(self.name)
        if older is not None:
            self._stop(older)
        if closed:
            self._answer(ticket, Answer(ticket.number, job.label, cancelled=True, key=key))
            return ticket.number
        try:
            self.pool.run(lambda: self._run(ticket))
        except PoolClosed:
            self._answer(ticket, Answer(ticket.number, job.label, cancelled=True, key=key))
        return ticket.number

    def cancel(self) -> None:
        """Stop the newest jobs; each answers as cancelled (not stale: the view says so)."""
        with self._lock:
            newest = list(self._newest.values())
        for ticket in newest:
            self._stop(ticket)

    def discard(self) -> None:
        """Stop whatever is in flight and make its answers stale: nothing of it is shown."""
        with self._lock:
            newest = list(self._newest.values())
            self._newest.clear()
        for ticket in newest:
            self._stop(ticket)

    def close(self) -> None:
        """Answer every pending job as cancelled; later jobs are answered cancelled at once."""
        with self._lock:
            self._closed = True
            pending = list(self._open.values())
        for ticket in pending:
            ticket.token.cancel()
            self._answer(ticket, Answer(ticket.number, ticket.job.label, cancelled=True, key=ticket.key))

    # -- state ------------------------------------------------------------------------------------
    @property
    def newest(self) -> int:
        """The number of the last job submitted (0: none yet)."""
        return self._count

    def busy(self) -> bool:
        """Whether a job is submitted and not yet answered."""
        with self._lock:
            return bool(self._open)

    # -- running, on a worker -----------------------------------------------------------------------
    def _stop(self, ticket: _Ticket[T]) -> None:
        ticket.token.cancel()
        with self._lock:
            unstarted = not ticket.started and not ticket.answered
        if unstarted:  # answered now: the worker that picks it up finds it answered
            self._answer(ticket, Answer(ticket.number, ticket.job.label, cancelled=True, key=ticket.key))

    def _run(self, ticket: _Ticket[T]) -> None:
        with self._lock:
            if ticket.answered:
                return
            ticket.started = True
        start = time.perf_counter()
        ctx = Context(ticket.token, self.pool.cache, self._reporter(ticket), self._emitter(ticket),
                      executor=self.pool.decode)
        value: T | None = None
        error: BaseException | None = None
        cancelled = ticket.token.cancelled
        sink = self.pool.io_sink
        log = IoLog(ticket.job.label) if sink is not None else None
        if not cancelled:
            try:
                if log is None:
                    value = ticket.job.work(ctx)
                else:
                    with recording(log):
                        value = ticket.job.work(ctx)
            except ReadCancelled:
                cancelled = True
            except BaseException as e:  # delivered to the receiver, never raised on the worker
                error = e
        seconds = time.perf_counter() - start
        if cancelled:
            answer: Answer[T] = Answer(ticket.number, ticket.job.label, cancelled=True, seconds=seconds, key=ticket.key)
        else:
            answer = Answer(ticket.number, ticket.job.label, value, error, seconds=seconds,
                            failures=tuple(ctx.failures), key=ticket.key)
        if sink is not None and log is not None and log.active:
            sink(log, answer)
        self._answer(ticket, answer)

    def _reporter(self, ticket: _Ticket[T]) -> Progress | None:
        on_progress = ticket.on_progress
        if on_progress is None:
            return None
        return lambda done, total: self._post(lambda: on_progress(done, total) if self._is_newest(ticket) else None)

    def _emitter(self, ticket: _Ticket[T]) -> Callable[[Any], None]:
        on_partial = ticket.on_partial
        if on_partial is None:
            return lambda _part: None
        return lambda part: self._post(lambda: on_partial(part) if self._is_newest(ticket) else None)

    def _is_newest(self, ticket: _Ticket[T]) -> bool:
        with self._lock:
            return self._newest.get(ticket.key) is ticket

    # -- answering --------------------------------------------------------------------------------
    def _answer(self, ticket: _Ticket[T], answer: Answer[T]) -> None:
        with self._lock:
            if ticket.answered:
                return
            ticket.answered = True
            self._open.pop(ticket.number, None)
        self.pool.tally.answered(self.name)
        self._post(lambda: self._arrive(ticket, answer))

    def _arrive(self, ticket: _Ticket[T], answer: Answer[T]) -> None:
        """On the receiving thread: the answer as it stands now (stale if a newer job came)."""
        with self._lock:
            again, ticket.delivered = ticket.delivered, True
            newest = self._newest.get(ticket.key) is ticket
            if newest:
                del self._newest[ticket.key]
        self.pool.tally.delivered(self.name, ticket.number, again)
        if not newest:
            answer = replace(answer, value=None, failures=(), cancelled=True, stale=True)
        receive = ticket.on_answer
        # what the receiver's callbacks and the job hold (widgets, model indexes) is let go here,
        # on the receiving thread: a worker may still hold the ticket, and a Qt object whose last
        # reference went on a worker would be destroyed there, racing the GUI thread
        ticket.on_answer, ticket.on_progress, ticket.on_partial = _delivered, None, None
        ticket.job = cast(Job[T], _DONE)
        receive(answer)
