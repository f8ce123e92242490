"""Branches, tags and the snapshot list: the ``repo`` file (spec 2) or ``refs/`` (spec 1).

Spec 2 keeps every ref and every snapshot's summary (parent, time, message) in one file, so
a version and its whole history resolve with one read. Spec 1 keeps one JSON file per ref
(``refs/branch.main/ref.json``) and the parent link in each snapshot file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Any

from ..storage.base import Store
from . import ids
from .binary import FbTable, FileType, IcechunkFormatError, read_file
from .commit_metadata import read_items


@dataclass(frozen=True)
class SnapshotInfo:
    """One commit: its id (as Icechunk prints it), when, its message and its parent's id."""

    id: str
    time: datetime
    message: str
    parent_id: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: spec 2: the snapshots, oldest first, whose transaction logs expiration carried over to
    #: this one when it removed them from its ancestry (their changes are this commit's too)
    pruned_tx_logs: tuple[str, ...] = ()


def micros(value: int) -> datetime:
    """Icechunk's timestamps: microseconds since 1970, UTC."""
    try:
        return datetime.fromtimestamp(value / 1e6, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return datetime.fromtimestamp(0, tz=UTC)


@dataclass
class RepoInfo:
    """What the repository's entry point says: its spec version, refs and (spec 2) snapshots."""

    spec: int
    branches: dict[str, str]
    tags: dict[str, str]
    #: spec 2: every snapshot's summary by id; spec 1: empty (the snapshots hold it)
    snapshots: dict[str, SnapshotInfo]
    #: the repository's configuration (spec 2: FlexBuffers), kept raw
    config: bytes | None = None


def read_repo_info(store: Store, key: str = "repo") -> RepoInfo | None:
    """The spec 2 ``repo`` file, or None where the store has none."""
    where = store.key_url(key)
    found = read_file(store, key, FileType.REPO_INFO)
    if found is None:
        return None
    spec, buf = found
    root = FbTable.root(buf, where)
    infos = root.tables(4)
    raw_ids: list[str] = []
    entries: list[tuple[int, int, str, dict[str, Any], tuple[str, ...]]] = []
    for i in range(len(infos)):
        t = infos[i]
        raw = t.inline(0, 12)
        message = t.string(3)
        t.require(raw, "SnapshotInfo.id")
        assert raw is not None
        raw_ids.append(ids.encode(raw))
        pruned = tuple(ids.encode(p) for p in t.structs(5, 12))
        entries.append((t.scalar(1, "i", 0), t.scalar(2, "Q"), message or "", read_items(t.tables(4), spec), pruned))
    snapshots: dict[str, SnapshotInfo] = {}
    for sid, (parent, flushed, message, metadata, pruned) in zip(raw_ids, entries):
        if parent >= len(raw_ids) or parent < -1:
            raise IcechunkFormatError(f"{where}: snapshot {sid} names parent {parent} of {len(raw_ids)}")
        snapshots[sid] = SnapshotInfo(sid, micros(flushed), message, None if parent < 0 else raw_ids[parent], metadata,
                                      pruned)

    def refs(slot: int) -> dict[str, str]:
        out: dict[str, str] = {}
        vec = root.tables(slot)
        for i in range(len(vec)):
            t = vec[i]
            name = t.string(0)
            t.require(name, "Ref.name")
            index = t.scalar(1, "I")
            if index >= len(raw_ids):
                raise IcechunkFormatError(f"{where}: ref {name!r} names snapshot {index} of {len(raw_ids)}")
            out[str(name)] = raw_ids[index]
        return out

    return RepoInfo(spec, refs(2), refs(1), snapshots, root.raw(9))


def read_refs_v1(store: Store, wanted: str | None = None) -> RepoInfo | None:
    """Spec 1: ``refs/branch.NAME/ref.json`` and ``refs/tag.NAME/ref.json``; None without ``refs/``.
    A store that cannot list (plain HTTP) is asked for ``branch.main`` and the ref ``wanted``."""
    branches: dict[str, str] = {}
    tags: dict[str, str] = {}
    if store.can_list:
        _, dirs = store.list_dir("refs/")
        names = dirs
    else:
        names = ["branch.main"] + ([wanted] if wanted and wanted != "branch.main" else [])
    for name in names:
        kind, _, ref = name.partition(".")
        if kind not in ("branch", "tag") or not ref:
            continue
        if kind == "tag" and store.get_bounded(f"refs/{name}/ref.json.deleted", 1 << 10) is not None:
            continue
        sid = read_ref_file(store, f"refs/{name}/ref.json")
        if sid is not None:
            (branches if kind == "branch" else tags)[ref] = sid
    if not branches and not tags:
        return None
    return RepoInfo(1, branches, tags, {})


def read_ref_file(store: Store, key: str) -> str | None:
    data = store.get_bounded(key, 1 << 16)
    if data is None:
        return None
    try:
        doc = json.loads(data)
        sid = doc["snapshot"]
        ids.decode(sid)
    except (ValueError, KeyError, TypeError):
        raise IcechunkFormatError(f"{store.key_url(key)}: not a ref file ({{\"snapshot\": ID}} expected)") from None
    return str(sid)
