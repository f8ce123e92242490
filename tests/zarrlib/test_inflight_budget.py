"""The bytes one remote read's answers hold while they arrive stay within ``inflight_bytes``.

The budget itself is checked as the scheduler it is (who proceeds, in which order, that the
oldest answer is never kept waiting and that waiters go as soon as bytes are handed on); then
reads over a loopback server of arrays whose chunks the request bounds (a range, the codecs'
bound) and of arrays whose chunks only the server's answer sizes (a filter of unknown output),
with the budget set to a few chunks: the read's peak stays within the budget and one chunk,
its values are zarr-python's, and a budget too small for one chunk still reads (the oldest
answer goes on alone) instead of waiting for ever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.limits import configure, restore
from zarrview.zarrlib.storage.async_batch import InFlight

from http_server import Faults, serve
from remote_backends import backend  # noqa: F401  (each read on each backend)


def _run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_answers_wait_in_order_and_the_oldest_never_waits(backend: str) -> None:
    async def main() -> list[str]:
        b = InFlight(100)
        order: list[str] = []
        t = [b.open() for _ in range(4)]
        await b.hold(t[0], 60)  # the oldest: within the budget
        await b.hold(t[1], 40)  # fills it
        assert b.used == 100

        async def later(i: int, n: int) -> None:
            await b.hold(t[i], n)
            order.append(f"{i}:{n}")

        w2 = asyncio.create_task(later(2, 30))
        w3 = asyncio.create_task(later(3, 10))
        await asyncio.sleep(0)
        assert order == [] and b.used == 100  # both wait: the budget is full
        await b.hold(t[0], 500)  # the oldest grows past the budget: it never waits
        assert b.used == 600 and b.peak == 600
        b.close(t[0])  # handed on: 40 held, 30 and 10 fit, first come first served
        await asyncio.gather(w2, w3)
        assert order == ["2:30", "3:10"] and b.used == 80
        b.close(t[1])
        b.close(t[2])
        b.close(t[3])
        assert b.used == 0
        return order

    _run(main())


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_an_older_answer_waiting_behind_a_newer_one_goes_first(backend: str) -> None:
    """A newer answer waiting for room must not keep the oldest one (which holds that room
    and wants more) waiting behind it: that would be a read waiting on itself."""
    async def main() -> None:
        b = InFlight(100)
        old, new = b.open(), b.open()
        await b.hold(old, 90)
        waiting_new = asyncio.create_task(b.hold(new, 50))
        await asyncio.sleep(0)
        await asyncio.wait_for(b.hold(old, 50), timeout=5)  # proceeds although the newer waits
        assert not waiting_new.done()
        b.close(old)
        await asyncio.wait_for(waiting_new, timeout=5)
        assert b.used == 50

    _run(main())


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_a_cancelled_waiter_gives_its_place_up(backend: str) -> None:
    async def main() -> None:
        b = InFlight(10)
        first, second, third = b.open(), b.open(), b.open()
        await b.hold(first, 10)
        gone = asyncio.create_task(b.hold(second, 5))
        stays = asyncio.create_task(b.hold(third, 5))
        await asyncio.sleep(0)
        gone.cancel()
        b.close(second)
        b.close(first)
        await asyncio.wait_for(stays, timeout=5)
        assert b.used == 5

    _run(main())


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_one_answer_at_a_time_passes_the_budget(backend: str) -> None:
    """An older answer whose body comes after a newer one passed the budget waits for it to be
    handed on: two past the budget at once would hold two answers' bounds beyond it."""
    async def main() -> None:
        b = InFlight(100)
        older, newer = b.open(), b.open()  # the older one still waits for its answer
        await b.hold(newer, 60)
        await b.hold(newer, 80)  # the oldest that holds: past the budget
        assert b.used == 140
        late = asyncio.create_task(b.hold(older, 50))
        await asyncio.sleep(0)
        assert not late.done() and b.used == 140
        await b.hold(newer, 10)  # the one past the budget goes on
        b.close(newer)
        await asyncio.wait_for(late, timeout=5)
        assert b.used == 50 and b.peak == 150

    _run(main())


@pytest.fixture
def budget() -> Iterator[None]:
    old = configure(inflight_bytes=1 << 20)  # four chunks of 256 KiB
    yield
    restore(old)


def _site(root: Path) -> np.ndarray:
    data = np.random.default_rng(3).integers(0, 2**32, size=(512, 2048), dtype="<u4")
    bounded = zarr.create_array(root / "bounded.zarr", shape=data.shape, chunks=(128, 512), dtype="<u4",
                                compressors=None)  # each chunk exactly 256 KiB: its answer states so
    bounded[...] = data
    unsized = zarr.create_array(root / "unsized.zarr", shape=data.shape, chunks=(128, 512), dtype="<u4",
                                zarr_format=2, compressors=None, filters=[numcodecs.Base64()])
    unsized[...] = data  # base64 of each: only the server's answer says how large
    return data


@pytest.mark.parametrize("name", ["bounded", "unsized"])
def test_a_read_holds_no_more_than_its_budget_and_one_chunk(backend: str, budget: None, name: str,
                                                             tmp_path: Path) -> None:
    data = _site(tmp_path)
    # every answer a round trip late: all 16 are in flight together, their heads come at once
    with serve(tmp_path, Faults(delay=0.05, delay_match="/c")) as (url, _):
        arr = zl.open(f"{url}/{name}.zarr")
        np.testing.assert_array_equal(arr[...], data)  # 16 chunks, all asked for at once
        b = arr.store.last_budget
        assert b is not None and b.used == 0
        peak = b.peak
    chunk = (128 * 512 * 4) * (4 / 3 if name == "unsized" else 1) + 1024
    assert chunk * 0.9 < peak <= (1 << 20) + chunk, (peak, chunk)


def test_a_budget_smaller_than_one_chunk_still_reads(backend: str, tmp_path: Path) -> None:
    data = _site(tmp_path)
    old = configure(inflight_bytes=1000)
    try:
        with serve(tmp_path) as (url, _):
            np.testing.assert_array_equal(zl.open(f"{url}/bounded.zarr")[...], data)
            np.testing.assert_array_equal(zl.open(f"{url}/unsized.zarr")[...], data)
    finally:
        restore(old)


@pytest.mark.parametrize("backend", ["fsspec"], indirect=True)
def test_an_answer_that_holds_nothing_keeps_no_one_waiting(backend: str) -> None:
    """The oldest answer may be queued for a connection, holding nothing, while newer ones hold
    the budget and wait for more on the connections it waits for: the oldest of those that hold
    goes on, or they would all wait until their timeouts."""
    async def main() -> None:
        b = InFlight(100)
        queued, reading, other = b.open(), b.open(), b.open()
        await b.hold(other, 60)
        await b.hold(reading, 40)
        more = asyncio.create_task(b.hold(reading, 30))  # the oldest that holds: it goes on
        also = asyncio.create_task(b.hold(other, 30))  # newer: it waits
        await asyncio.wait_for(more, timeout=5)
        await asyncio.sleep(0)
        assert not also.done() and b.used == 130
        b.close(reading)
        await asyncio.wait_for(also, timeout=5)
        assert b.used == 90
        b.close(other)
        await b.hold(queued, 10)
        assert b.used == 10

    _run(main())
