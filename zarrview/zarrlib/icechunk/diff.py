"""What changed between two versions of a repository, from the commits' transaction logs.

Icechunk's own ``Repository.diff(from, to)`` walks the ancestry of ``to`` back to ``from``
and replays the transaction logs of the commits in between (``from`` excluded, ``to``
included, each preceded by the logs that expiration carried over to it), collecting node ids:
a node is new, deleted or updated (its zarr.json rewritten: attributes or array metadata) if
any of those commits says so, and a chunk index is updated if any of them set or removed its
reference, equal bytes or not. Ids are then named by their path in ``from`` or ``to`` (``to``
wins, so a moved node reads under its new path); a node in neither (created and deleted in
between) is left out everywhere. A node created and then updated is both new and updated; a
node deleted after chunks of it were written is deleted, with those chunks, under its path in
``from``; an array deleted and created again at one path is deleted and new, its chunk
indexes those of both ids (icechunk keeps one id's, whichever its hash map yields last). Moves
are listed as the logs hold them, the newest commit's first. A carried-over log that garbage
collection deleted is left out (and named in ``missing_logs``). ``diff_snapshots`` answers
exactly that where ``from`` is an ancestor of ``to``.

Icechunk refuses every other pair (the same snapshot twice, ``to`` older than ``from``, two
branches that diverged). A user asking what changed between them still means something
definite: here the pair is answered through their newest common ancestor: the changes on the
way from it to ``to`` as above, followed by those on the way to ``from`` undone (what
``from``'s side created reads as deleted and the reverse, its updates and written chunks stay
updates, its moves are reversed, newest commit first), named by the paths of ``from`` and
``to`` alike. A log both sides hold (expiration carries a removed commit's log over to every
commit re-parented past it) is a change of neither. So a node changed on both sides is listed
once per kind of change, and a chunk written on either side is listed even where both wrote
the same bytes. The same snapshot twice has no changes. ``VersionDiff.relation`` says which
case answered. Only the repo file (or spec 1's refs), the two snapshots, those on the way
(spec 1 keeps parent links in them) and transaction logs are read: no manifest, no chunk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import MetadataError, StoreError, StoreNotFoundError
from ..storage.base import Store
from ..storage.location import open_store, split_node_path, store_url
from .binary import IcechunkFormatError
from .repo_info import RepoInfo, SnapshotInfo
from .snapshot import Snapshot, read_snapshot
from .store import IcechunkStore, read_info
from .transactions import ChunkIndex, TransactionLog, TransactionLogNotFoundError, read_transaction_log
from .versions import MAIN, Version, require_version, resolve, split_version

__all__ = ["VersionDiff", "DifferentRepositoriesError", "NoCommonAncestorError", "diff_versions", "diff_snapshots",
           "ANCESTOR", "SAME", "DESCENDANT", "DIVERGED"]

#: ``from`` is an ancestor of ``to``: icechunk's own diff
ANCESTOR = "ancestor"
#: both name one snapshot: no changes
SAME = "same"
#: ``to`` is an ancestor of ``from``: ``from``'s commits since then, undone
DESCENDANT = "descendant"
#: neither is an ancestor of the other: through their newest common ancestor
DIVERGED = "diverged"


class DifferentRepositoriesError(StoreError):
    """Two locations compared as versions of one repository name two repositories."""


class NoCommonAncestorError(MetadataError):
    """Two snapshots of a repository share no ancestor (a broken or rewritten history)."""


@dataclass(frozen=True)
class VersionDiff:
    """The changes from one version to another, with the fields of icechunk's ``Diff``.

    Paths are absolute node paths (``/a/b``), sorted; ``updated_chunks`` maps an array's
    path to its updated chunk indexes, sorted; ``moved_nodes`` are ``(from, to)`` paths."""

    new_groups: tuple[str, ...]
    new_arrays: tuple[str, ...]
    deleted_groups: tuple[str, ...]
    deleted_arrays: tuple[str, ...]
    updated_groups: tuple[str, ...]
    updated_arrays: tuple[str, ...]
    updated_chunks: Mapping[str, tuple[ChunkIndex, ...]]
    moved_nodes: tuple[tuple[str, str], ...]
    from_snapshot: str
    to_snapshot: str
    #: the newest common ancestor the changes were collected from (``from_snapshot`` itself
    #: where it is an ancestor of ``to_snapshot``, or the same snapshot)
    base_snapshot: str
    #: ANCESTOR, SAME, DESCENDANT or DIVERGED
    relation: str
    #: transaction logs of commits that expiration removed, named but no longer stored: their
    #: changes are missing from this answer (icechunk warns and leaves them out too)
    missing_logs: tuple[str, ...] = field(default=())

    #: icechunk's ``Diff`` fields, the keys of ``as_json``
    FIELDS: ClassVar[tuple[str, ...]] = ("new_groups", "new_arrays", "deleted_groups", "deleted_arrays",
                                         "updated_groups", "updated_arrays", "updated_chunks", "moved_nodes")

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in self.FIELDS)

    def as_json(self) -> dict[str, Any]:
        """Icechunk's ``Diff`` as JSON: its field names, paths as strings, sets as sorted
        lists, chunk indexes as lists, moves as ``[from, to]``."""
        out: dict[str, Any] = {name: list(getattr(self, name)) for name in self.FIELDS[:6]}
        out["updated_chunks"] = {path: [list(i) for i in chunks] for path, chunks in self.updated_chunks.items()}
        out["moved_nodes"] = [list(m) for m in self.moved_nodes]
        return out


class _Changes:
    """Node ids collected over transaction logs, per kind of change."""

    def __init__(self) -> None:
        self.new_groups: set[bytes] = set()
        self.new_arrays: set[bytes] = set()
        self.deleted_groups: set[bytes] = set()
        self.deleted_arrays: set[bytes] = set()
        self.updated_groups: set[bytes] = set()
        self.updated_arrays: set[bytes] = set()
        self.chunks: dict[bytes, set[ChunkIndex]] = {}
        self.moves: list[tuple[str, str]] = []

    def add(self, log: TransactionLog, undo: bool = False) -> None:
        """One commit's changes; ``undo``: as the commit's reversal sees them."""
        new_groups, deleted_groups = (self.deleted_groups, self.new_groups) if undo else (self.new_groups,
                                                                                          self.deleted_groups)
        new_arrays, deleted_arrays = (self.deleted_arrays, self.new_arrays) if undo else (self.new_arrays,
                                                                                          self.deleted_arrays)
        new_groups.update(log.new_groups)
        new_arrays.update(log.new_arrays)
        deleted_groups.update(log.deleted_groups)
        deleted_arrays.update(log.deleted_arrays)
        self.updated_groups.update(log.updated_groups)
        self.updated_arrays.update(log.updated_arrays)
        for node_id, indexes in log.updated_chunks.items():
            self.chunks.setdefault(node_id, set()).update(indexes)
        self.moves += [(m.target, m.source) if undo else (m.source, m.target) for m in log.moves]

    def named(self, paths: Mapping[bytes, str], start: str, end: str, base: str, relation: str,
              missing: list[str]) -> VersionDiff:
        """Ids named by ``paths``; an id no path names (a node neither version holds) is left out."""

        def name(found: set[bytes]) -> tuple[str, ...]:
            return tuple(sorted({paths[i] for i in found if i in paths}))

        chunks: dict[str, set[ChunkIndex]] = {}
        for node_id, indexes in self.chunks.items():
            if node_id in paths:  # two ids at one path (deleted, then created again): their union
                chunks.setdefault(paths[node_id], set()).update(indexes)
        return VersionDiff(name(self.new_groups), name(self.new_arrays), name(self.deleted_groups),
                           name(self.deleted_arrays), name(self.updated_groups), name(self.updated_arrays),
                           {p: tuple(sorted(chunks[p])) for p in sorted(chunks)}, tuple(self.moves),
                           start, end, base, relation, tuple(missing))


class _History:
    """Snapshots' parents, the snapshots read (spec 1 keeps parents in them), and their logs."""

    def __init__(self, base: Store, info: RepoInfo, known: Iterable[Snapshot]) -> None:
        self.base, self.info = base, info
        self.snapshots: dict[str, Snapshot] = {s.id: s for s in known}

    def snapshot(self, snapshot_id: str) -> Snapshot:
        if snapshot_id not in self.snapshots:
            self.snapshots[snapshot_id] = read_snapshot(self.base, snapshot_id)
        return self.snapshots[snapshot_id]

    def entry(self, snapshot_id: str) -> SnapshotInfo:
        found = self.info.snapshots.get(snapshot_id)
        if found is not None:
            return found
        if self.info.spec >= 2:
            raise IcechunkFormatError(f"{self.base.url}: snapshot {snapshot_id} is not in the repo file")
        return self.snapshot(snapshot_id).info()

    def ancestry(self, start: str) -> Iterator[SnapshotInfo]:
        """``start`` and its ancestors, newest first; a parent chain that loops is an error."""
        seen: set[str] = set()
        current: str | None = start
        while current is not None:
            if current in seen:
                raise IcechunkFormatError(f"{self.base.url}: the ancestry of {start} loops back to snapshot {current}")
            seen.add(current)
            entry = self.entry(current)
            yield entry
            current = entry.parent_id

    def log_ids(self, commits: list[SnapshotInfo]) -> list[tuple[str, bool]]:
        """The transaction logs of ``commits`` (newest first) as icechunk replays them: each
        commit's own log after those expiration carried over to it (oldest first); ``(id,
        carried over)``."""
        out: list[tuple[str, bool]] = []
        for entry in commits:
            out += [(pruned, True) for pruned in entry.pruned_tx_logs]
            if self.info.spec >= 2 or entry.parent_id is not None:  # spec 1 writes none for the first
                out.append((entry.id, False))
        return out

    def logs(self, wanted: list[tuple[str, bool]], missing: list[str]) -> Iterator[TransactionLog]:
        """The logs ``log_ids`` named; a carried-over log no longer stored is named in
        ``missing`` and skipped (an older garbage collection may have deleted it)."""
        for log_id, carried in wanted:
            try:
                yield read_transaction_log(self.base, log_id)
            except TransactionLogNotFoundError:
                if not carried:
                    raise
                missing.append(log_id)


def diff_snapshots(base: Store, info: RepoInfo, start: str, end: str, known: Iterable[Snapshot] = ()) -> VersionDiff:
    """The changes from snapshot ``start`` to snapshot ``end`` of the repository at ``base``
    (``info``: its refs and, spec 2, its snapshots; ``known``: snapshots read already); see
    the module's description."""
    history = _History(base, info, known)
    forward: list[SnapshotInfo] = []
    reached = False
    for entry in history.ancestry(end):
        if entry.id == start:
            reached = True
            break
        forward.append(entry)
    backward: list[SnapshotInfo] = []
    if reached:
        common, relation = start, ANCESTOR if forward else SAME
    else:
        position = {entry.id: i for i, entry in enumerate(forward)}
        found: str | None = None
        for entry in history.ancestry(start):
            if entry.id in position:
                found = entry.id
                break
            backward.append(entry)
        if found is None:
            raise NoCommonAncestorError(f"{base.url}: snapshots {start} and {end} have no common ancestor")
        common, forward = found, forward[:position[found]]
        relation = DESCENDANT if found == end else DIVERGED
    ahead, behind = history.log_ids(forward), history.log_ids(backward)
    # expiration re-parents commits and carries the removed commits' logs over to them, so two
    # sides may both hold a log from before they diverged: a change both histories hold is none
    shared = {i for i, _ in ahead} & {i for i, _ in behind}
    changes = _Changes()
    missing: list[str] = []
    for log in history.logs([w for w in ahead if w[0] not in shared], missing):
        changes.add(log)
    for log in history.logs([w for w in behind if w[0] not in shared], missing):
        changes.add(log, undo=True)
    paths = {node.node_id: path for path, node in history.snapshot(start).nodes.items()}
    paths.update({node.node_id: path for path, node in history.snapshot(end).nodes.items()})
    return changes.named(paths, start, end, common, relation, missing)


def _repository(location: str) -> tuple[str, Version]:
    loc, version = split_version(location)
    if split_node_path(loc)[1] != "/":
        raise StoreError(f"{location}: changes are between whole versions of a repository; "
                         "leave out the node path after ::")
    return loc, version or MAIN


def diff_versions(location_a: str | os.PathLike[str], location_b: str | os.PathLike[str],
                  **storage_options: Any) -> VersionDiff:
    """The changes from version A to version B of one repository (``repo.icechunk@tag.v1``,
    ``@branch.NAME``, ``@SNAPSHOTID``; no version means ``branch.main``). ``location_b`` may
    be a version alone (``@tag.v2``): of A's repository. Where A is an ancestor of B this is
    icechunk's ``Repository.diff``; other pairs, which icechunk refuses, go through the two
    versions' newest common ancestor (see the module's description)."""
    a = os.fspath(location_a)
    b = os.fspath(location_b)
    loc_a, version_a = _repository(a)
    if b.startswith("@"):
        loc_b, version_b = loc_a, require_version(b[1:], f"{b}")
    else:
        loc_b, version_b = _repository(b)
    url_a, url_b = store_url(loc_a).rstrip("/"), store_url(loc_b).rstrip("/")
    if url_a != url_b:
        raise DifferentRepositoriesError(f"{url_a} and {url_b} are two repositories; changes are between two "
                                         "versions of one repository")
    store = open_store(loc_a, **{**storage_options, "version": version_a})
    try:
        if not isinstance(store, IcechunkStore):
            raise StoreNotFoundError(f"{loc_a} is not an Icechunk repository")
        info = store.info
        if info.spec < 2 and version_b.kind != "snapshot" and not store.base.can_list:
            info = read_info(store.base, version_b)  # a spec 1 store that cannot list read only A's ref
        end = resolve(info, version_b, store.base.url)
        return diff_snapshots(store.base, info, store.snapshot_id, end, [store.snapshot])
    finally:
        store.close()
