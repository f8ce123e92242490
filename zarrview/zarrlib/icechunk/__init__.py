"""Icechunk repositories, read natively and read-only (spec versions 1 and 2).

``IcechunkStore`` presents one version of a repository as a Zarr v3 store; ``refs`` and
``history`` answer what a version picker shows: the branches and tags, and the commits
before a version, newest first; ``diff_versions`` what changed between two versions, from
the commits' transaction logs.
"""

from __future__ import annotations

from ..storage.location import register_opener
from .binary import IcechunkFormatError
from .diff import DifferentRepositoriesError, NoCommonAncestorError, VersionDiff, diff_versions
from .history import commits, history, refs
from .repo_info import SnapshotInfo
from .store import IcechunkStore
from .locate import open_repository
from .transactions import TransactionLogNotFoundError
from .versions import Version, VersionNotFoundError, parse_version, split_version

register_opener(open_repository)

__all__ = ["IcechunkStore", "IcechunkFormatError", "SnapshotInfo", "Version", "VersionNotFoundError",
           "commits", "history", "parse_version", "refs", "split_version", "VersionDiff", "diff_versions",
           "DifferentRepositoriesError", "NoCommonAncestorError", "TransactionLogNotFoundError"]
