"""Rows of a long table read a page at a time, as a view model: ``request(first, last)`` gives
the job reading the pages the rows in view need and that are not held, ``apply`` keeps what it
read. At most ``max_pages`` pages are held (the least recently used dropped), so a table of
millions of rows costs the memory of a few pages. No Qt: a table model asks it for cells, and
its widget's driver (``PagesModel``) for what to read when rows come into view."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ...scheduling import Answer, Job
from .jobs import reading

P = TypeVar("P")

PAGE_ROWS = 500
MAX_PAGES = 24

#: ``read(start, stop, **read)``: rows ``start:stop`` as one page (``Array.read``'s keywords)
ReadPage = Callable[..., Any]


@dataclass(frozen=True)
class PageRequest(Generic[P]):
    """The pages (their first rows) one job reads."""

    starts: tuple[int, ...]
    job: Job[list[tuple[int, P]]]


class PagedTable(Generic[P]):
    """Pages of ``page`` rows out of ``total``; ``read_page`` reads one (on a worker)."""

    def __init__(self, total: int, read_page: ReadPage, label: str, page: int = PAGE_ROWS,
                 max_pages: int = MAX_PAGES) -> None:
        self.total = total
        self.page = page
        self.max_pages = max(2, max_pages)
        self.label = label
        self._read_page = read_page
        self._pages: OrderedDict[int, P] = OrderedDict()
        self._in_flight: tuple[int, ...] = ()
        #: pages whose read failed, with the error: not asked again
        self._failed: dict[int, str] = {}

    def page_of(self, row: int) -> int:
        """The first row of the page that holds ``row``."""
        return row - row % self.page

    def get(self, row: int) -> P | None:
        """The page holding ``row``, if held (it becomes the most recently used)."""
        start = self.page_of(row)
        found = self._pages.get(start)
        if found is not None:
            self._pages.move_to_end(start)
        return found

    def missing(self, first: int, last: int) -> tuple[int, ...]:
        """The pages rows ``first..last`` need that are not held."""
        if self.total <= 0 or last < first:
            return ()
        first, last = max(0, first), min(self.total - 1, last)
        return tuple(s for s in range(self.page_of(first), last + 1, self.page)
                     if s not in self._pages and s not in self._failed)

    def error(self, row: int) -> str | None:
        """Why the page holding ``row`` could not be read, if it could not."""
        return self._failed.get(self.page_of(row))

    def request(self, first: int, last: int) -> PageRequest[P] | None:
        """The job reading what rows ``first..last`` lack; None when they lack nothing or the
        job in flight reads just that."""
        starts = self.missing(first, last)[: self.max_pages // 2]
        if not starts or starts == self._in_flight:
            return None
        self._in_flight = starts
        spans = [(s, min(self.total, s + self.page)) for s in starts]
        read_page = self._read_page

        def read_all(**read: Any) -> list[tuple[int, P]]:
            return [(a, read_page(a, b, **read)) for a, b in spans]

        rows = f"rows {spans[0][0]:,}–{spans[-1][1]:,}"
        return PageRequest(starts, reading(read_all, f"{rows} of {self.label}"))

    def apply(self, request: PageRequest[P], answer: Answer[list[tuple[int, P]]]) -> list[tuple[int, int]]:
        """Keep the pages read; the row spans that now show values or their error (none for a
        stale or cancelled answer: the next ``request`` asks again)."""
        if request.starts == self._in_flight:
            self._in_flight = ()
        if answer.stale or answer.cancelled:
            return []
        if answer.error is not None or answer.value is None:
            for start in request.starts:
                self._failed[start] = str(answer.error)
            return [(s, min(self.total, s + self.page)) for s in request.starts]
        for start, page in answer.value:
            self._pages[start] = page
            self._pages.move_to_end(start)
        while len(self._pages) > self.max_pages:
            self._pages.popitem(last=False)
        return [(s, min(self.total, s + self.page)) for s, _ in answer.value]

    def held(self) -> list[int]:
        return list(self._pages)


@dataclass(frozen=True, eq=False)
class RowsInView:
    """Rows ``first..last`` of ``table`` are on screen."""

    table: PagedTable[Any]
    first: int
    last: int


@dataclass(frozen=True, eq=False)
class PagesRead:
    """A read of pages of ``table``: the same pages of the same table are one read."""

    table: PagedTable[Any]
    pages: PageRequest[Any]

    @property
    def job(self) -> Job[list[tuple[int, Any]]]:
        return self.pages.job

    @property
    def read(self) -> Hashable:
        return self.table, self.pages.starts


@dataclass(frozen=True, eq=False)
class PagesShown:
    """What a table view shows of its reads: the status bar's text (None: nothing to say), the
    row spans of ``table`` that now show values or their error, and whether the rows on screen
    are to be looked at again (``again``: pages read, rows may have scrolled in meanwhile)."""

    table: PagedTable[Any]
    said: str | None = None
    spans: tuple[tuple[int, int], ...] = ()
    again: bool = False


class PagesModel:
    """The pages of the rows on screen as a view model a driver runs (``scheduling.Driver``): the
    pages rows lack are read, newest only; while pages are read, rows that lack nothing (or the
    same pages) leave that read to finish, so what it reads is kept."""

    def __init__(self) -> None:
        self._pending: PagesRead | None = None
        self._announced: PagesRead | None = None

    def clear(self) -> None:
        """Nothing is read (the driver dropped what was in flight)."""
        self._pending = self._announced = None

    def request(self, rows: RowsInView) -> PagesRead | None:
        pages = rows.table.request(rows.first, rows.last)
        if pages is None:
            pending = self._pending
            return pending if pending is not None and pending.table is rows.table else None
        self._pending = PagesRead(rows.table, pages)
        return self._pending

    def waiting(self, request: PagesRead | None) -> PagesShown | None:
        """"Reading …" once per read; the rows shown stay until it is answered."""
        if request is None or request is self._announced:
            return None
        self._announced = request
        return PagesShown(request.table, f"Reading {request.job.label}…")

    def apply(self, request: PagesRead, answer: Answer[list[tuple[int, Any]]]) -> PagesShown:
        if request is self._pending:
            self._pending = None
        spans = tuple(request.table.apply(request.pages, answer))
        label = request.job.label
        said = None
        if answer.error is not None:
            said = f"Cannot read {label}: {answer.error}"
        elif spans:
            failed = f"; {len(answer.failures)} chunks could not be read" if answer.failures else ""
            said = f"Read {label} in {answer.seconds * 1000:.0f} ms{failed}"
        return PagesShown(request.table, said, spans, again=answer.ok)
