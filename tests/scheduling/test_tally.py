"""The pool's tally of jobs per lane agrees with what the receivers saw: every job submitted is
answered once and delivered once, under cancellation by newer jobs, by ``cancel`` and by
closing; an answer delivered twice is caught; an answer dropped by the receiving thread counts
as answered and not delivered."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable

from zarrview.scheduling import Answer, Context, Job, Lane, WorkerPool

from driven import Inbox
from test_lane import waiting_job


def sleepy(seconds: float, value: int) -> Job[int]:
    def work(ctx: Context) -> int:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ctx.cancel.raise_if_cancelled()
            time.sleep(0.0005)
        return value

    return Job(work, f"job {value}")


def test_counts_match_the_answers_each_receiver_got() -> None:
    pool = WorkerPool(threads=3)
    inbox = Inbox()
    lanes = [Lane(pool, inbox.post, name) for name in ("a", "b", "b")]  # two lanes share a name
    got: Counter[tuple[int, int]] = Counter()
    rng = random.Random(7)
    submitted = Counter[str]()
    for step in range(300):
        k = rng.randrange(3)
        lane = lanes[k]
        lane.submit(sleepy(rng.random() * 0.002, step), lambda a, k=k: got.update([(k, a.number)]),
                    key=rng.randrange(2))
        submitted[lane.name] += 1
        if step % 37 == 0:
            lane.cancel()
        if step % 50 == 0:
            inbox.drain(pool)
    inbox.drain(pool)
    counts = pool.tally.counts()
    assert {name: c.submitted for name, c in counts.items()} == dict(submitted)
    assert all(c.answered == c.submitted == c.delivered for c in counts.values()), counts
    assert pool.tally.unanswered() == {} and pool.tally.twice == []
    assert sum(got.values()) == 300 and max(got.values()) == 1  # each job's receiver called once
    pool.close()


def test_closing_answers_what_was_pending_and_what_comes_after() -> None:
    pool = WorkerPool(threads=1)
    inbox = Inbox()
    lane: Lane[str] = Lane(pool, inbox.post, "slow")
    started = threading.Event()
    answers: list[Answer[str]] = []
    lane.submit(waiting_job(started), answers.append, key=1)
    lane.submit(waiting_job(threading.Event()), answers.append, key=2)  # queued behind the first
    assert started.wait(5)
    assert pool.tally.unanswered() == {"slow": 2}
    pool.close()
    lane.submit(waiting_job(threading.Event()), answers.append)  # refused: answered at once
    while not inbox.queue.empty():
        inbox.queue.get_nowait()()
    c = pool.tally.counts()["slow"]
    assert c.submitted == c.answered == c.delivered == 3
    assert len(answers) == 3 and all(a.cancelled for a in answers)


def test_an_answer_delivered_twice_is_caught() -> None:
    pool = WorkerPool(threads=1)
    twice: Callable[[Callable[[], None]], None] = lambda fn: (fn(), fn())  # noqa: E731
    lane: Lane[int] = Lane(pool, twice, "echo")
    lane.submit(sleepy(0, 1), lambda _a: None)
    assert pool.wait_until_idle(5)
    assert pool.tally.twice == [("echo", 1)]
    assert pool.tally.counts()["echo"].delivered == 1
    pool.close()


def test_an_answer_the_receiver_dropped_is_answered_not_delivered() -> None:
    pool = WorkerPool(threads=1)
    lane: Lane[int] = Lane(pool, lambda fn: None, "gone")  # a receiver that no longer exists
    lane.submit(sleepy(0, 1), lambda _a: None)
    assert pool.wait_until_idle(5)
    c = pool.tally.counts()["gone"]
    assert (c.submitted, c.answered, c.delivered, c.unanswered) == (1, 1, 0, 0)
    pool.close()
