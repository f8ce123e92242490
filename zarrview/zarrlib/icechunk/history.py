"""The refs and the commit history of a repository, for a version picker.

Spec 2 keeps every snapshot's parent, time and message in the ``repo`` file, so a history is
one read; spec 1 keeps the parent link in each snapshot file, so each step reads one. Either
way the walk is bounded (``limit``) and a parent chain that loops is an error, not a hang.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..storage.base import Store
from .binary import IcechunkFormatError
from .repo_info import RepoInfo, SnapshotInfo
from .snapshot import read_snapshot
from .store import IcechunkStore, read_info
from .versions import MAIN, Version, require_version, resolve

#: commits a history lists unless asked for more
HISTORY_LIMIT = 1000


class Refs(NamedTuple):
    branches: dict[str, str]
    tags: dict[str, str]


def _base(store: Store) -> Store:
    return store.base if isinstance(store, IcechunkStore) else store


def refs(store: Store) -> Refs:
    """The repository's branches and tags, ``{name: snapshot id}`` each, read afresh (a branch
    may have moved since the store was opened). ``store``: an ``IcechunkStore`` or the store
    of the repository's location."""
    info = read_info(_base(store))
    return Refs(dict(sorted(info.branches.items())), dict(sorted(info.tags.items())))


def history(store: Store, version: Version | str | None = None, limit: int = HISTORY_LIMIT) -> list[SnapshotInfo]:
    """The commits that lead to ``version`` (default: the version ``store`` opened, else
    ``main``), newest first, at most ``limit`` of them."""
    base = _base(store)
    if isinstance(version, str):
        version = require_version(version, f"{base.url}: {version!r}", IcechunkFormatError)
    if version is None:
        version = store.version if isinstance(store, IcechunkStore) else MAIN
    info = read_info(base, version)
    start = resolve(info, version, base.url)
    return _walk(base, info, start, max(1, limit))


def commits(store: Store, ids: Iterable[str]) -> dict[str, SnapshotInfo]:
    """The commits with these snapshot ids (those that exist): one read of the repo file in
    spec 2, one snapshot file each in spec 1."""
    base = _base(store)
    info = read_info(base)
    out: dict[str, SnapshotInfo] = {}
    for sid in ids:
        entry = info.snapshots.get(sid)
        if entry is None and info.spec < 2:
            entry = read_snapshot(base, sid).info()
        if entry is not None:
            out[sid] = entry
    return out


def _walk(base: Store, info: RepoInfo, start: str, limit: int) -> list[SnapshotInfo]:
    out: list[SnapshotInfo] = []
    seen: set[str] = set()
    current: str | None = start
    while current is not None and len(out) < limit:
        if current in seen:
            raise IcechunkFormatError(f"{base.url}: the ancestry of {start} loops back to snapshot {current}")
        seen.add(current)
        entry = info.snapshots.get(current)
        if entry is None:
            if info.spec >= 2:
                raise IcechunkFormatError(f"{base.url}: snapshot {current} is not in the repo file")
            entry = read_snapshot(base, current).info()
        out.append(entry)
        current = entry.parent_id
    return out
