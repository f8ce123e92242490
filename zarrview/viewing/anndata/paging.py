"""Rows of a long table held a page at a time: which pages the rows in view need, the pages
read so far (a bounded number, the least recently used dropped), and nothing else, so a table of
millions of rows costs the memory of a few pages. No Qt: a table model asks it what to read."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

P = TypeVar("P")

PAGE_ROWS = 500
MAX_PAGES = 24


class PagedRows(Generic[P]):
    """Pages of ``page`` rows out of ``total``; ``P`` is whatever a page read gives."""

    def __init__(self, total: int, page: int = PAGE_ROWS, max_pages: int = MAX_PAGES) -> None:
        self.total = total
        self.page = page
        self.max_pages = max(2, max_pages)
        self._pages: OrderedDict[int, P] = OrderedDict()
        self._asked: set[int] = set()

    def page_of(self, row: int) -> int:
        """The first row of the page that holds ``row``."""
        return row - row % self.page

    def get(self, row: int) -> P | None:
        """The page holding ``row``, if read (it becomes the most recently used)."""
        start = self.page_of(row)
        found = self._pages.get(start)
        if found is not None:
            self._pages.move_to_end(start)
        return found

    def wanted(self, first: int, last: int) -> list[int]:
        """The pages rows ``first..last`` need that are neither read nor asked for (each is then
        marked asked): what to read next."""
        if self.total <= 0:
            return []
        first, last = max(0, first), min(self.total - 1, last)
        out = []
        for start in range(self.page_of(first), last + 1, self.page):
            if start not in self._pages and start not in self._asked:
                self._asked.add(start)
                out.append(start)
        return out

    def span(self, start: int) -> tuple[int, int]:
        """Rows ``start:stop`` of the page starting at ``start``."""
        return start, min(self.total, start + self.page)

    def put(self, start: int, page: P) -> None:
        """A page read; the least recently used are dropped past ``max_pages``."""
        self._asked.discard(start)
        self._pages[start] = page
        self._pages.move_to_end(start)
        while len(self._pages) > self.max_pages:
            self._pages.popitem(last=False)

    def forget(self, start: int) -> None:
        """A page whose read was cancelled or failed: it may be asked for again."""
        self._asked.discard(start)

    def held(self) -> list[int]:
        return list(self._pages)
