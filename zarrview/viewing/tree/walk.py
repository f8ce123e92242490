"""Walking every group below the open stores, for the tree filter.

The tree lists a group only when it is expanded, so a filter over its rows would find only
what someone already opened. The walk lists the rest on a worker thread, breadth first (shallow
matches arrive first), and hands each listing over as soon as it has it, so the tree can show
matches while the walk goes on. It stops when cancelled or past a bound on the nodes it has
seen, and says which groups it could not list (servers that cannot list, broken listings).
Groups are listed through ``Group.members``, which answers from consolidated metadata where a
remote store has it, so such a store is walked without a request per group.

``WalkModel`` is the walk as a view model (``request(WalkAsk) -> WalkRequest``): the tree
filter's driver runs it, hands the nodes seen so far to ``part`` while the walk is the newest
(``Walking``: the filter searches what the index gained) and its outcome to ``apply``
(``Walked``). No Qt here.
"""

from __future__ import annotations

import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...scheduling import Answer, Context, Job, ReadOnce
from ...zarrlib import CancelToken, Group, Node, ZarrError
from .index import NodeIndex
from .known import known_members

#: the most nodes one walk visits: enough for large hierarchies, bounded for endless ones
MAX_NODES = 100_000
#: seconds between the walk's reports of the nodes seen so far
PROGRESS_EVERY_S = 0.1

#: (which root, the group listed, its members), called on the walking thread
OnListing = Callable[[int, Group, list[Node]], None]


@dataclass
class WalkOutcome:
    nodes: int = 0
    cancelled: bool = False
    #: stopped at the bound: groups below those visited were not listed
    truncated: bool = False
    #: paths of groups that exist but whose store cannot list them (children only by path)
    unlisted: list[str] = field(default_factory=list)
    #: (group path, message) of listings that failed
    errors: list[tuple[str, str]] = field(default_factory=list)

    def note(self, limit: int = MAX_NODES) -> str | None:
        """What a person should know about how much the filter covers, or None when all of it."""
        if self.cancelled:
            return f"Search cancelled after {self.nodes:,} nodes: the filter covers the nodes listed so far"
        if self.truncated:
            return f"Search stopped at {limit:,} nodes: the filter covers only those"
        if self.unlisted:
            return (f"{len(self.unlisted):,} group(s) cannot be listed (the server cannot list): "
                    "the filter covers only listed nodes and those opened by path")
        if self.errors:
            path, message = self.errors[0]
            return f"{len(self.errors):,} group(s) could not be listed ({path}: {message}): the filter covers the others"
        return None


def walk(roots: Sequence[Group], on_listing: OnListing, cancel: CancelToken,
         progress: Callable[[int], None] | None = None, limit: int = MAX_NODES) -> WalkOutcome:
    """List every group below ``roots``; ``on_listing`` gets each listing as it is read and
    ``progress`` the number of nodes seen so far."""
    out = WalkOutcome()
    queue: deque[tuple[int, Group]] = deque(enumerate(roots))
    while queue:
        if cancel.cancelled:
            out.cancelled = True
            break
        which, group = queue.popleft()
        try:
            members = group.members()
        except ZarrError as e:
            out.errors.append((group.path, str(e)))
            continue
        if not members and not group.can_list_members:
            try:  # what the group's metadata names (an image's levels): opened by their paths
                members = group.load_members(known_members(group))
            except ZarrError as e:
                out.errors.append((group.path, str(e)))
                continue
            if not members:
                out.unlisted.append(group.path)
                continue
        if cancel.cancelled:  # a listing can take long: do not hand over one asked to stop
            out.cancelled = True
            break
        on_listing(which, group, members)
        out.nodes += len(members)
        if progress is not None:
            progress(out.nodes)
        if out.nodes >= limit:
            out.truncated = bool(queue) or any(isinstance(m, Group) for m in members)
            break
        queue.extend((which, m) for m in members if isinstance(m, Group))
    return out


@dataclass(frozen=True, eq=False)
class WalkAsk:
    """A walk of ``roots`` filling ``index`` (made for these roots): each ask is walked once."""

    roots: Sequence[Group]
    index: NodeIndex


@dataclass(frozen=True, eq=False)
class WalkRequest(ReadOnce):
    ask: WalkAsk
    job: Job[WalkOutcome]



@dataclass(frozen=True)
class Walking:
    """The walk goes on: ``nodes`` seen so far, each already in the index."""

    nodes: int


@dataclass(frozen=True)
class Walked:
    """The walk ended: its outcome (cancelled where it was stopped before it began), or None and
    the error where it failed."""

    outcome: WalkOutcome | None
    error: BaseException | None = None


def walk_job(ask: WalkAsk, every_s: float = PROGRESS_EVERY_S) -> Job[WalkOutcome]:
    """The job walking ``ask.roots`` into ``ask.index``, reporting the nodes seen (``ctx.emit``)
    at most every ``every_s`` seconds."""
    index = ask.index
    roots = list(ask.roots)

    def listed(which: int, group: Group, members: list[Node]) -> None:
        index.add(which, members)

    def work(ctx: Context) -> WalkOutcome:
        last = 0.0

        def progress(nodes: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= every_s:
                last = now
                ctx.emit(nodes)

        return walk(roots, listed, ctx.cancel, progress)

    return Job(work, "filter walk")


class WalkModel:
    """Each ask is walked once (the driver asks again for the same state after the answer:
    nothing more to read); nothing is drawn until the walk reports."""

    def __init__(self, every_s: float = PROGRESS_EVERY_S) -> None:
        self.every_s = every_s
        self._walked: weakref.WeakSet[WalkAsk] = weakref.WeakSet()

    def request(self, ask: WalkAsk) -> WalkRequest | None:
        return None if ask in self._walked else WalkRequest(ask, walk_job(ask, self.every_s))

    def waiting(self, request: WalkRequest | None) -> Walking | Walked | None:
        return None

    def part(self, request: WalkRequest, nodes: int) -> Walking:
        return Walking(nodes)

    def apply(self, request: WalkRequest, answer: Answer[WalkOutcome]) -> Walked:
        self._walked.add(request.ask)
        if answer.cancelled:
            return Walked(WalkOutcome(cancelled=True))
        return Walked(answer.value, answer.error)
