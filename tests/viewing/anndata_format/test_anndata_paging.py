"""The paged table's view model over a numpy table: the pages of the rows in view are read once
each, answers that are stale or cancelled are asked again, a failed page is named and not read
again, and at most ``max_pages`` pages are held however far the view scrolls."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrview.scheduling import Answer, Context
from zarrview.zarrlib import CancelToken, ChunkCache, StoreError
from zarrview.viewing.anndata.paging import PagedTable



def _run(request: Any, *, stale: bool = False, cancelled: bool = False) -> Answer[Any]:
    if stale or cancelled:
        return Answer(1, value=None, stale=stale, cancelled=cancelled)
    ctx = Context(CancelToken(), ChunkCache(1 << 20))
    try:
        return Answer(1, value=request.job.work(ctx))
    except StoreError as e:
        return Answer(1, error=e)


def test_pages_in_view_are_read_once_and_bounded() -> None:
    values = np.arange(1_000_000) * 3
    reads: list[tuple[int, int]] = []

    def read_page(start: int, stop: int, **read: Any) -> np.ndarray:
        assert {"cancel", "cache", "failures"} <= set(read)
        reads.append((start, stop))
        return values[start:stop]

    paged: PagedTable[np.ndarray] = PagedTable(len(values), read_page, "/t", page=100, max_pages=6)
    req = paged.request(250, 420)
    assert req is not None and req.starts == (200, 300, 400)
    assert paged.request(250, 420) is None  # the job in flight reads just that
    assert paged.apply(req, _run(req)) == [(200, 300), (300, 400), (400, 500)]
    assert reads == [(200, 300), (300, 400), (400, 500)]
    for row in (250, 399, 420):
        page = paged.get(row)
        assert page is not None and page[row - paged.page_of(row)] == values[row]
    assert paged.request(200, 499) is None  # all held: nothing read again
    for first in range(0, 1_000_000, 37_000):  # scrolling through: never more than six pages held
        req = paged.request(first, first + 150)
        if req is not None:
            paged.apply(req, _run(req))
        assert len(paged.held()) <= 6
        assert paged.get(first) is not None and paged.get(first)[first % 100] == values[first]  # type: ignore[index]
    last = paged.request(999_950, 1_000_100)  # past the end: clipped
    assert last is not None and last.starts == (999_900,)
    assert paged.apply(last, _run(last)) == [(999_900, 1_000_000)]


def test_stale_cancelled_and_failed_pages() -> None:
    def read_page(start: int, stop: int, **_: Any) -> list[int]:
        if start == 500:
            raise StoreError("/t/values/c/5: connection reset")
        return list(range(start, stop))

    paged: PagedTable[list[int]] = PagedTable(1000, read_page, "/t", page=100)
    req = paged.request(0, 50)
    assert req is not None
    assert paged.apply(req, _run(req, stale=True)) == [] and paged.get(0) is None
    again = paged.request(0, 50)  # asked again: the stale answer held nothing
    assert again is not None and again.starts == (0,)
    assert paged.apply(again, _run(again, cancelled=True)) == []
    again = paged.request(0, 50)
    assert again is not None and paged.apply(again, _run(again)) == [(0, 100)]
    bad = paged.request(520, 530)
    assert bad is not None
    assert paged.apply(bad, _run(bad)) == [(500, 600)]
    assert paged.error(550) == "/t/values/c/5: connection reset" and paged.error(50) is None
    assert paged.request(520, 530) is None  # not asked again


def test_the_block_in_view() -> None:
    from zarrview.viewing.anndata.sparse import block_in_view

    assert block_in_view((-3.5, 20.2), (10.5, 30.0), (100, 50)) == ((10, 30), (0, 21))
    assert block_in_view((40.0, 90.0), (95.0, 130.0), (100, 50)) == ((95, 100), (40, 50))
    assert block_in_view((0.0, 5000.0), (0.0, 1e9), (10**7, 3000), max_side=1024) == ((0, 1024), (0, 1024))
    rows, cols = block_in_view((60.0, 80.0), (200.0, 300.0), (100, 50))
    assert rows[1] - rows[0] == 0 and cols[1] - cols[0] == 0  # wholly outside: nothing to read
