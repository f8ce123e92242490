"""A group's members a page at a time, for the hierarchy tree: the read behind each page.

The tree lists a group when someone expands it and reads its next page only when the view
scrolls to the end of its rows, so a group of 100,000 members costs one page at first.
``PagesModel`` makes each page a request of its own (``request(PageAsk) -> PageRequest``), run
by the tree's driver under the group's key: groups list side by side, each one page at a time.
The first page of a remote group is cut short (``FIRST_REMOTE`` members, one batch of requests
where there is no consolidated metadata) so its first rows come quickly; the rest of that page
comes with the next. A group whose store cannot list shows what its metadata names (an image's
levels).

No Qt here: ``app/tree/model.py`` puts each page into the group's rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...scheduling import Answer, Job, ReadOnce, call_job
from ...zarrlib import Group, ReadCancelled
from ...zarrlib.nodes import Outline
from .known import known_members

#: members listed (and their metadata read) at a time
PAGE = 1000
#: members of a remote group read first (a request each, where there is no consolidated metadata)
FIRST_REMOTE = 100

#: the names of a listing under way, a page at a time
Pages = Iterator[list[str]]


@dataclass(frozen=True, eq=False)
class PageAsk:
    """The next page of ``group``: the first where ``pages`` is None, else the next that
    ``pages`` (the listing under way) gives. ``about`` is what the receiver needs to place it."""

    group: Group
    pages: Pages | None = None
    about: Any = None

    @property
    def first(self) -> bool:
        return self.pages is None


@dataclass(frozen=True, eq=False)
class PageRequest(ReadOnce):
    ask: PageAsk
    job: Job[tuple[list[Outline], Pages | None]]



@dataclass(frozen=True, eq=False)
class Page:
    """A page as the tree puts it in: the members read, the listing that gives the rest (None:
    listed to the end, or it failed) and why it failed (a cancelled page fails: the window is
    closing)."""

    ask: PageAsk
    members: list[Outline]
    pages: Pages | None
    error: BaseException | None

    @property
    def first(self) -> bool:
        return self.ask.first


def page_job(group: Group, pages: Pages | None) -> Job[tuple[list[Outline], Pages | None]]:
    """The job reading the next page of ``group`` (the first where ``pages`` is None): the
    members and the listing that gives the rest."""
    first = pages is None

    def work() -> tuple[list[Outline], Pages | None]:
        listing = pages
        if first and not group.can_list_members:  # what its metadata names (an image's levels)
            return group.member_outlines(known_members(group)), None
        if listing is None:
            listing = group.iter_member_names(PAGE)
        names = next(listing, None)
        if names is None:
            return [], None
        if first and group.store.prefers_batches and len(names) > FIRST_REMOTE:
            # a remote group's first rows after a small batch of requests; the rest of the page next
            names, rest = names[:FIRST_REMOTE], names[FIRST_REMOTE:]
            listing = itertools.chain([rest], listing)
        # arrays like one parsed before without a node each; the others (and every child
        # without consolidated metadata: one batch of requests remotely) as their nodes
        return group.member_outlines(names), listing

    return call_job(work, label=f"members of {group.path}")


class PagesModel:
    """Each ask is one page read; nothing is drawn while it is read (the tree shows its own
    "Loading…" row)."""

    def request(self, ask: PageAsk) -> PageRequest:
        return PageRequest(ask, page_job(ask.group, ask.pages))

    def waiting(self, request: PageRequest | None) -> Page | None:
        return None

    def apply(self, request: PageRequest, answer: Answer[tuple[list[Outline], Pages | None]]) -> Page:
        members, pages = answer.value if answer.value is not None else ([], None)
        error = answer.error
        if answer.cancelled and error is None:  # the window is closing
            error = ReadCancelled("listing cancelled")
        return Page(request.ask, members, pages, error)
