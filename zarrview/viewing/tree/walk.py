"""Walking every group below the open stores, for the tree filter.

The tree lists a group only when it is expanded, so a filter over its rows would find only
what someone already opened. The walk lists the rest on a worker thread, breadth first (shallow
matches arrive first), and hands each listing over as soon as it has it, so the tree can show
matches while the walk goes on. It stops when cancelled or past a bound on the nodes it has
seen, and says which groups it could not list (servers that cannot list, broken listings).
Groups are listed through ``Group.members``, which answers from consolidated metadata where a
remote store has it, so such a store is walked without a request per group.

No Qt here: the window runs ``walk`` on a thread and posts the callbacks to its GUI thread.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...zarrlib import CancelToken, Group, Node, ZarrError
from .known import known_members

#: the most nodes one walk visits: enough for large hierarchies, bounded for endless ones
MAX_NODES = 100_000

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
