"""What a version picker lists for an Icechunk repository: its branches, its tags and the
commits before the version that is open, each with the location that opens it.

Reading refs and history is I/O (one ``repo`` read in spec 2, one file per commit in spec 1),
so the rows are made by a job on a worker; the window only shows them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from ..scheduling import Job, call_job
from ..zarrlib.icechunk import IcechunkStore, history, refs
from ..zarrlib.icechunk import commits as ice_commits  # version_rows names its ancestry commits
from ..zarrlib.icechunk.diff import DESCENDANT, DIVERGED, SAME, VersionDiff
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


# -- what changed between two versions --------------------------------------------------------
#: chunk indexes listed for an array; more are counted only
LISTED_CHUNKS = 8

SECTIONS = (("new_groups", "new groups"), ("new_arrays", "new arrays"), ("deleted_groups", "deleted groups"),
            ("deleted_arrays", "deleted arrays"), ("updated_groups", "updated groups (zarr.json rewritten)"),
            ("updated_arrays", "updated arrays (zarr.json rewritten)"))


def _indexes(indexes: Sequence[tuple[int, ...]]) -> str:
    return " ".join("(" + ", ".join(str(i) for i in index) + ")" for index in indexes)


def changes_text(diff: VersionDiff, a: str, b: str) -> str:
    """The changes from ``a`` to ``b`` as text (``zarrview changes``, the version picker's comparison):
    what was compared, then a section per kind of change that has any."""
    lines = [f"changes from {a} (snapshot {diff.from_snapshot})", f"          to {b} (snapshot {diff.to_snapshot})"]
    if diff.relation == SAME:
        lines.append("both name the same snapshot")
    elif diff.relation == DESCENDANT:
        lines.append(f"{b} is older than {a}: the commits since, undone (icechunk's diff refuses this order)")
    elif diff.relation == DIVERGED:
        lines.append(f"the two diverged after snapshot {diff.base_snapshot}: the commits since then on the way to {b}, "
                     f"and those on the way to {a} undone (icechunk's diff refuses this pair)")
    if diff.missing_logs:
        lines.append(f"warning: {len(diff.missing_logs)} transaction log(s) that expiration carried over are no longer "
                     f"stored ({', '.join(diff.missing_logs)}): their changes are missing")
    if diff.is_empty():
        lines.append("no changes")
    for name, title in SECTIONS:
        paths: tuple[str, ...] = getattr(diff, name)
        if paths:
            lines.append(f"{title}: {len(paths)}")
            lines += [f"  {p}" for p in paths]
    if diff.updated_chunks:
        total = sum(len(c) for c in diff.updated_chunks.values())
        arrays = len(diff.updated_chunks)
        lines.append(f"chunks written (set or removed): {total} in {arrays} arra{'ys' if arrays != 1 else 'y'}")
        for path, indexes in diff.updated_chunks.items():
            count = f"{len(indexes)} chunk{'s' if len(indexes) != 1 else ''}"
            lines.append(f"  {path}: {count}" + (f": {_indexes(indexes)}" if len(indexes) <= LISTED_CHUNKS else ""))
    if diff.moved_nodes:
        lines.append(f"moved: {len(diff.moved_nodes)}")
        lines += [f"  {source} -> {target}" for source, target in diff.moved_nodes]
    return "\n".join(lines) + "\n"
