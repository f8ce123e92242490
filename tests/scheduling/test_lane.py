"""The lane contract, without Qt or storage: numbering, cancelling the previous job, one
answer per job (also when many threads submit at once), only the newest shown, errors as
errors, a bounded pool, and closing answering what is pending."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

import pytest

from zarrview.scheduling import Answer, Context, Job, Lane, WorkerPool
from zarrview.zarrlib import ReadCancelled

from driven import Inbox


def waiting_job(started: threading.Event, label: str = "") -> Job[str]:
    """A job that runs until cancelled (as a long read does), then stops."""
    def work(ctx: Context) -> str:
        started.set()
        while not ctx.cancel.cancelled:
            time.sleep(0.001)
        ctx.cancel.raise_if_cancelled()
        return "never"

    return Job(work, label)


@pytest.fixture
def pool() -> WorkerPool:
    p = WorkerPool(threads=3)
    yield p
    p.close()


def test_jobs_are_numbered_and_the_newest_is_delivered(pool: WorkerPool) -> None:
    inbox = Inbox()
    lane: Lane[int] = Lane(pool, inbox.post)
    got: list[Answer[int]] = []
    numbers = [lane.submit(Job(lambda ctx, i=i: i * 10, f"job {i}"), got.append) for i in range(5)]
    assert numbers == [1, 2, 3, 4, 5] and lane.newest == 5
    inbox.drain(pool)
    assert sorted(a.number for a in got) == numbers  # every job answered, once
    [shown] = [a for a in got if a.ok]
    assert shown.number == 5 and shown.value == 40 and shown.label == "job 4"
    assert all(a.stale and a.cancelled and a.value is None for a in got if a is not shown)
    assert not lane.busy()


def test_a_new_job_cancels_the_running_one(pool: WorkerPool) -> None:
    inbox = Inbox()
    lane: Lane[str] = Lane(pool, inbox.post)
    got: list[Answer[str]] = []
    started = threading.Event()
    tokens: list[object] = []

    def record(ctx: Context) -> str:
        tokens.append(ctx.cancel)
        started.set()
        while not ctx.cancel.cancelled:
            time.sleep(0.001)
        raise ReadCancelled("stopped")

    lane.submit(Job(record), got.append)
    assert started.wait(5)
    lane.submit(Job(lambda ctx: "new"), got.append)
    inbox.drain(pool)
    assert tokens[0].cancelled  # type: ignore[attr-defined]
    assert [(a.number, a.stale, a.value) for a in sorted(got, key=lambda a: a.number)] == [(1, True, None),
                                                                                            (2, False, "new")]


def test_errors_are_answers_and_cancel_is_not_stale(pool: WorkerPool) -> None:
    inbox = Inbox()
    lane: Lane[str] = Lane(pool, inbox.post)
    got: list[Answer[str]] = []

    def fail(ctx: Context) -> str:
        raise KeyError("the chunk")

    lane.submit(Job(fail), got.append)
    inbox.drain(pool)
    assert isinstance(got[0].error, KeyError) and not got[0].cancelled and not got[0].stale and not got[0].ok
    started = threading.Event()
    lane.submit(waiting_job(started), got.append)
    assert started.wait(5)
    lane.cancel()  # the user's Cancel: the newest job answers as cancelled, to be said so
    inbox.drain(pool)
    assert got[1].cancelled and not got[1].stale and got[1].error is None


def test_discard_makes_answers_in_flight_stale(pool: WorkerPool) -> None:
    inbox = Inbox()
    lane: Lane[str] = Lane(pool, inbox.post)
    got: list[Answer[str]] = []
    lane.submit(Job(lambda ctx: "done"), got.append)
    assert pool.wait_until_idle(5)
    lane.discard()  # answered already, not yet arrived: it arrives stale
    inbox.drain(pool)
    assert got[0].stale and got[0].value is None


def test_progress_and_partials_reach_only_the_newest(pool: WorkerPool) -> None:
    inbox = Inbox()
    lane: Lane[str] = Lane(pool, inbox.post)
    seen: list[tuple[str, object]] = []
    gate = threading.Event()

    def work(ctx: Context) -> str:
        assert ctx.progress is not None
        ctx.progress(1, 2)
        ctx.emit("block")
        gate.wait(5)
        return "x"

    lane.submit(Job(work), lambda a: None, on_progress=lambda d, t: seen.append(("old", (d, t))),
                on_partial=lambda p: seen.append(("old", p)))
    time.sleep(0.05)
    lane.submit(Job(lambda ctx: "y"), lambda a: None, on_progress=lambda d, t: seen.append(("new", (d, t))))
    gate.set()
    inbox.drain(pool)
    assert not [s for s in seen if s[0] == "old"]


def test_keys_run_side_by_side(pool: WorkerPool) -> None:
    inbox = Inbox()
    lane: Lane[str] = Lane(pool, inbox.post)
    got: list[Answer[str]] = []
    for key in ("a", "b", "a"):
        lane.submit(Job(lambda ctx, k=key: k), got.append, key=key)
    inbox.drain(pool)
    shown = sorted((a.key, a.number) for a in got if a.ok)
    assert shown == [("a", 3), ("b", 2)] and len(got) == 3


def test_many_threads_submitting_get_one_answer_each_and_one_shown(pool: WorkerPool) -> None:
    inbox = Inbox()
    lane: Lane[int] = Lane(pool, inbox.post)
    got: list[Answer[int]] = []
    lock = threading.Lock()

    def receive(a: Answer[int]) -> None:
        with lock:
            got.append(a)

    def slow(ctx: Context) -> int:
        for _ in range(3):
            time.sleep(0.0005)
            ctx.cancel.raise_if_cancelled()
        return 1

    numbers: list[int] = []
    barrier = threading.Barrier(8)

    def submitter() -> None:
        barrier.wait()
        for _ in range(50):
            n = lane.submit(Job(slow), receive)
            with lock:
                numbers.append(n)

    threads = [threading.Thread(target=submitter) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    inbox.drain(pool)
    assert sorted(numbers) == list(range(1, 401))  # numbered without gaps or repeats
    assert sorted(a.number for a in got) == sorted(numbers)  # exactly one answer per job
    shown = [a for a in got if not a.stale]
    assert [a.number for a in shown] == [400] and shown[0].value == 1


def test_the_pool_never_runs_more_than_its_threads(pool: WorkerPool) -> None:
    inbox = Inbox()
    lanes: list[Lane[int]] = [Lane(pool, inbox.post) for _ in range(10)]
    running = [0]
    most = [0]
    lock = threading.Lock()

    def work(ctx: Context) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return 1

    got: list[Answer[int]] = []
    for lane in lanes:
        lane.submit(Job(work), got.append)
    inbox.drain(pool)
    assert len(got) == 10 and all(a.ok for a in got)
    assert most[0] == pool.threads == 3 and pool.most_running <= 3


def test_one_job_after_another_runs_on_the_thread_that_went_idle_last(pool: WorkerPool) -> None:
    """Slider steps one at a time stay on one warm thread (its read buffers and caches hot),
    even after several threads were started for jobs at once."""
    inbox = Inbox()
    lanes: list[Lane[str]] = [Lane(pool, inbox.post) for _ in range(3)]
    release = threading.Event()
    for lane in lanes:  # three at once: every thread of the pool is started
        lane.submit(Job(lambda ctx: release.wait(5) and threading.current_thread().name), lambda a: None)
    time.sleep(0.05)
    release.set()
    inbox.drain(pool)
    names: list[str] = []
    for _ in range(20):  # then one at a time, each after the last has ended
        lanes[0].submit(Job(lambda ctx: threading.current_thread().name), lambda a: names.append(a.value))
        inbox.drain(pool)
    assert len(names) == 20 and len(set(names)) == 1, names


def test_close_answers_pending_jobs_as_cancelled() -> None:
    pool = WorkerPool(threads=1)
    inbox = Inbox()
    a: Lane[str] = Lane(pool, inbox.post)
    b: Lane[str] = Lane(pool, inbox.post)
    got: list[Answer[str]] = []
    started = threading.Event()
    a.submit(waiting_job(started, "running"), got.append)
    assert started.wait(5)
    b.submit(Job(lambda ctx: "queued behind it", "queued"), got.append)
    pool.close()
    while not inbox.queue.empty():
        inbox.queue.get_nowait()()
    assert sorted(x.label for x in got) == ["queued", "running"]
    assert all(x.cancelled and not x.stale for x in got)
    b.submit(Job(lambda ctx: "late", "late"), got.append)  # after closing: answered at once, cancelled
    while not inbox.queue.empty():
        inbox.queue.get_nowait()()
    assert got[-1].label == "late" and got[-1].cancelled
    assert len(got) == 3


def test_what_a_receiver_holds_is_let_go_on_the_receiving_thread() -> None:
    """A worker may still hold a job's ticket after its answer was delivered; what the
    receiver's callback holds (a widget, a model index) must not live on in it, or its last
    reference would go on the worker and a Qt object be destroyed there."""
    import weakref

    class Held:  # stands for a Qt object the callback captured
        pass

    pool = WorkerPool(threads=1)
    delivered = threading.Event()
    inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def post(fn: Callable[[], None]) -> None:  # the worker waits, ticket in hand, until it is delivered
        inbox.put(fn)
        assert delivered.wait(10)

    lane: Lane[int] = Lane(pool, post)
    try:
        held = Held()
        gone = weakref.ref(held)
        got: list[Answer[int]] = []
        lane.submit(Job(lambda ctx: 7, "seven"), lambda answer, held=held: got.append(answer))  # type: ignore[misc]
        del held
        inbox.get(timeout=10)()  # delivered here, while the worker still holds the ticket
        assert [a.value for a in got] == [7]
        assert gone() is None  # let go on this thread, not left for the worker to drop
        delivered.set()
        assert pool.wait_until_idle(10)
    finally:
        delivered.set()
        pool.close()
