"""What a version picker lists for an Icechunk repository: its branches, its tags and the
commits before the version that is open, each with the location that opens it.

Reading refs and history is I/O (one ``repo`` read in spec 2, one file per commit in spec 1),
so the rows are made by a job on a worker; the window only shows them.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, NamedTuple

from ..scheduling import Job, call_job
from ..zarrlib.icechunk import IcechunkStore, history, refs
from ..zarrlib.icechunk import commits as ice_commits  # version_rows names its ancestry commits
from ..zarrlib.nodes import Node

#: refs off the open version's ancestry whose commit time and message are looked up (one repo
#: file read in spec 2, a snapshot file each in spec 1); beyond these a ref shows its id only
MORE_TIMES = 50

__all__ = ["MORE_TIMES", "VersionRow", "VersionTable", "icechunk_store", "location_at", "version_rows", "versions_job"]


class VersionRow(NamedTuple):
    """One choice: ``kind`` is "branch", "tag" or "commit"; ``version`` the spelling that opens it."""

    kind: str
    name: str
    version: str
    snapshot: str
    time: str
    message: str
    #: the commit's metadata as ``name: value`` lines (who, with what tool)
    metadata: str = ""


class VersionTable(NamedTuple):
    """The rows, and which row is the version open now (-1 where none is listed)."""

    rows: list[VersionRow]
    current: int


def icechunk_store(node: Node) -> IcechunkStore | None:
    """The repository behind ``node``, or None where the node is not in one."""
    store = node.hierarchy.store
    return store if isinstance(store, IcechunkStore) else None


def location_at(store: IcechunkStore, version: str) -> str:
    """The location that opens ``version`` of the repository that ``store`` reads."""
    return f"{store.base.url}@{version}"


def version_rows(store: IcechunkStore) -> VersionTable:
    """Branches, then tags, then the commits that lead to the open version, newest first."""
    found = refs(store)
    commits = history(store)
    rows: list[VersionRow] = []
    times = {c.id: c for c in commits}
    off_ancestry = {s for named in found for s in named.values() if s not in times}
    times.update(ice_commits(store, sorted(off_ancestry)[:MORE_TIMES]))
    for kind, named in (("branch", found.branches), ("tag", found.tags)):
        for name, snapshot in named.items():
            info = times.get(snapshot)
            rows.append(VersionRow(kind, name, f"{kind}.{name}", snapshot,
                                   _when(info.time) if info else "", info.message if info else "",
                                   metadata_text(info.metadata) if info else ""))
    rows += [VersionRow("commit", c.id, c.id, c.id, _when(c.time), c.message, metadata_text(c.metadata))
             for c in commits]
    opened = str(store.version)
    current = next((i for i, r in enumerate(rows) if r.version == opened), -1)
    return VersionTable(rows, current)


def versions_job(store: IcechunkStore) -> Job[VersionTable]:
    return call_job(lambda: version_rows(store), label=f"versions of {store.base.url}")


def _when(time: object) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC") if isinstance(time, datetime) else ""


def metadata_text(metadata: dict[str, Any]) -> str:
    """A commit's metadata as one ``name: value`` line each, values as JSON."""
    return "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False, default=str)}" for k, v in metadata.items())
