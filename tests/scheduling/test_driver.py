"""The driver contract, with a small counting view model and no Qt: a model sees only the newest answer,
the same read is never submitted twice, a state that wants more is read on, reading ahead
waits for ``defer`` and is void once anything newer is asked, partial results reach the
model only while its request is the newest, and every job is answered exactly once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driven import Inbox
from zarrview.scheduling import Answer, Context, Done, Driver, Job, Task, Tasks, Warm, WorkerPool
from zarrview.zarrlib import open as zl_open


@dataclass(frozen=True)
class Ask:
    """A request of the counting model: read ``value`` in ``parts`` steps, waiting on ``gate``."""

    value: int
    parts: int = 1
    gate: threading.Event | None = None
    seen: list[int] = field(default_factory=list, compare=False, hash=False)

    @property
    def read(self) -> Hashable:
        return self.value

    @property
    def job(self) -> Job[int]:
        def work(ctx: Context) -> int:
            self.seen.append(self.value)
            if self.gate is not None:
                assert self.gate.wait(10)
            for i in range(self.parts):
                ctx.cancel.raise_if_cancelled()
                ctx.emit(i)
            return self.value * 10

        return Job(work, f"value {self.value}")


class Counting:
    """States are target values; a value is shown by reading it (``request``) unless already
    drawn. A state above ``coarse_first`` is read twice: first its tenth, then itself, as an
    image view reads its coarsest level first."""

    def __init__(self, gate: threading.Event | None = None, parts: int = 1, coarse_first: int = 10**9,
                 ahead: Sequence[Warm] = ()) -> None:
        self.drawn: int | None = None
        self.gate, self.parts, self.coarse_first = gate, parts, coarse_first
        self.applied: list[tuple[int, Answer[Any]]] = []
        self.parts_seen: list[tuple[int, Any]] = []
        self._ahead = list(ahead)
        self.ahead_asked = 0

    def request(self, state: int) -> Ask | None:
        if self.drawn == state * 10:
            return None
        if state > self.coarse_first and self.drawn != (state // 10) * 10:
            return Ask(state // 10, self.parts, self.gate)
        return Ask(state, self.parts, self.gate)

    def waiting(self, request: Ask | None) -> str | None:
        return None if request is None else f"reading {request.value}"

    def apply(self, request: Ask, answer: Answer[Any]) -> str:
        self.applied.append((request.value, answer))
        if answer.ok:
            self.drawn = answer.value
            return f"drawn {answer.value}"
        return f"not drawn: {'cancelled' if answer.cancelled else answer.error}"

    def part(self, request: Ask, part: Any) -> str:
        self.parts_seen.append((request.value, part))
        return f"part {part} of {request.value}"

    def ahead(self, request: Ask) -> list[Warm]:
        self.ahead_asked += 1
        return self._ahead


def _driver(model: Counting, pool: WorkerPool, inbox: Inbox, drawn: list[Any],
            defer: Callable[[Callable[[], None]], None] | None = None) -> Driver[int, Ask, str]:
    return Driver(model, pool, drawn.append, post=inbox.post, name="counting", defer=defer)


def test_only_the_newest_answer_reaches_the_model_and_each_job_is_answered_once() -> None:
    pool, inbox, drawn = WorkerPool(threads=2), Inbox(), []
    gate = threading.Event()
    model = Counting(gate)
    driver = _driver(model, pool, inbox, drawn)
    try:
        for state in (1, 2, 3):
            driver.show(state)
        gate.set()
        inbox.drain(pool)
        assert [v for v, _ in model.applied] == [3] and model.applied[0][1].value == 30
        assert drawn[-1] == "drawn 30" and drawn[:3] == ["reading 1", "reading 2", "reading 3"]
        count = pool.tally.counts()["counting"]
        assert (count.submitted, count.answered, count.delivered) == (3, 3, 3) and not pool.tally.twice
    finally:
        pool.close()


def test_the_same_read_in_flight_is_not_submitted_again_and_a_shown_state_reads_nothing() -> None:
    pool, inbox, drawn = WorkerPool(threads=2), Inbox(), []
    gate = threading.Event()
    model = Counting(gate)
    driver = _driver(model, pool, inbox, drawn)
    try:
        driver.show(5)
        driver.show(5)  # the same read under way: waited for, not started again
        assert driver.requests == 1
        gate.set()
        inbox.drain(pool)
        assert driver.requests == 1 and model.drawn == 50
        driver.show(5)  # drawn already: nothing read, nothing new drawn
        inbox.drain(pool)
        assert driver.requests == 1 and drawn[-1] == "drawn 50"
    finally:
        pool.close()


def test_a_state_that_wants_more_is_read_on_after_its_first_answer() -> None:
    pool, inbox, drawn = WorkerPool(threads=2), Inbox(), []
    model = Counting(coarse_first=100)
    driver = _driver(model, pool, inbox, drawn)
    try:
        driver.show(420)
        inbox.drain(pool)
        assert [v for v, _ in model.applied] == [42, 420] and model.drawn == 4200 and driver.requests == 2
    finally:
        pool.close()


def test_a_failed_or_cancelled_answer_is_applied_once_and_not_read_on() -> None:
    pool, inbox, drawn = WorkerPool(threads=2), Inbox(), []
    started, gate = threading.Event(), threading.Event()

    class Slow(Counting):
        def request(self, state: int) -> Ask | None:
            ask = super().request(state)
            return None if ask is None else Ask(ask.value, 1000, gate)

    model = Slow()
    driver = _driver(model, pool, inbox, drawn)
    try:
        driver.show(7)
        driver.lane.pool.run(started.set)
        assert started.wait(10)
        driver.cancel()
        gate.set()
        inbox.drain(pool)
        assert [(v, a.cancelled) for v, a in model.applied] == [(7, True)] and drawn[-1] == "not drawn: cancelled"
        assert driver.requests == 1 and not driver.busy()
    finally:
        pool.close()


def test_partial_results_reach_the_model_only_while_its_request_is_the_newest() -> None:
    pool, inbox, drawn = WorkerPool(threads=2), Inbox(), []
    model = Counting(parts=3)
    driver = _driver(model, pool, inbox, drawn)
    try:
        driver.show(1)
        inbox.drain(pool)
        assert model.parts_seen == [(1, 0), (1, 1), (1, 2)]
        gate = threading.Event()
        model.gate = gate
        driver.show(2)
        driver.discard()  # nothing of 2 is wanted any more
        gate.set()
        inbox.drain(pool)
        assert [v for v, _ in model.parts_seen] == [1, 1, 1] and [v for v, _ in model.applied] == [1]
    finally:
        pool.close()


def test_reading_ahead_waits_for_defer_and_is_void_once_something_newer_is_asked(tmp_path: Any) -> None:
    import zarr

    zarr.create_array(tmp_path / "a", shape=(4, 8), chunks=(1, 8), dtype="i4")[...] = np.arange(32).reshape(4, 8)
    arr = zl_open(tmp_path / "a")
    pool, inbox, drawn = WorkerPool(threads=2), Inbox(), []
    deferred: list[Callable[[], None]] = []
    model = Counting(ahead=[Warm(arr, (1, slice(None))), Warm(arr, (2, slice(None)))])  # type: ignore[arg-type]
    driver = _driver(model, pool, inbox, drawn, defer=deferred.append)
    try:
        driver.show(1)
        inbox.drain(pool)
        assert len(deferred) == 1 and model.ahead_asked == 0  # offered, not yet run
        deferred.pop()()
        inbox.drain(pool)
        assert model.ahead_asked == 1 and driver.prefetch.warmed == 2
        driver.show(2)
        inbox.drain(pool)
        assert len(deferred) == 1
        driver.show(3)  # something newer before the offer runs: the offer is void
        deferred.pop(0)()
        inbox.drain(pool)
        assert model.ahead_asked == 1 and driver.prefetch.warmed == 2
    finally:
        pool.close()


def test_states_of_different_keys_are_read_side_by_side_each_keeping_its_newest() -> None:
    pool, inbox, drawn = WorkerPool(threads=4), Inbox(), []
    gate = threading.Event()
    model = Counting(gate)
    driver = _driver(model, pool, inbox, drawn)
    try:
        driver.show(1, key="a")
        driver.show(2, key="b")
        driver.show(3, key="a")  # replaces a's read, not b's
        assert driver.busy() and driver.inflight is None  # nothing under the key None
        gate.set()
        inbox.drain(pool)
        assert sorted(v for v, _ in model.applied) == [2, 3] and driver.requests == 3 and not driver.busy()
    finally:
        pool.close()


def test_one_off_tasks_are_read_once_newest_per_key_and_never_delivered_stale() -> None:
    pool, inbox, done = WorkerPool(threads=4), Inbox(), []
    gate = threading.Event()

    def waits(value: int) -> Job[int]:
        return Job(lambda ctx: value if gate.wait(10) else -1, f"task {value}")

    driver: Driver[Task[int], Task[int], Done[int]] = Driver(Tasks(), pool, done.append, post=inbox.post)
    try:
        first, second, other = Task(waits(1)), Task(waits(2)), Task(waits(3))
        driver.show(first, key="store A")
        driver.show(first, key="store A")  # under way: left to finish
        driver.show(second, key="store A")  # replaces it
        driver.show(other, key="store B")  # beside it
        gate.set()
        inbox.drain(pool)
        assert sorted(d.answer.value for d in done) == [2, 3] and all(not d.answer.stale for d in done)
        assert [d.task for d in done if d.answer.value == 2] == [second] and driver.requests == 3
        driver.show(second, key="store A")  # answered: not read again
        inbox.drain(pool)
        assert driver.requests == 3 and len(done) == 2
    finally:
        pool.close()
