"""Which version of a repository a location names: ``@branch.NAME``, ``@tag.NAME`` or ``@SNAPSHOTID``.

The spelling is Icechunk's own (its refs are ``branch.main`` and ``tag.v1`` on disk in spec 1,
and snapshot ids print as 20 Crockford base-32 characters), so what a user copies from
``repo.ancestry()`` or ``list_tags()`` opens as typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import StoreError, StoreNotFoundError, ZarrError
from .repo_info import RepoInfo

_VERSION = re.compile(r"^(?:(branch|tag)\.([^/@]+)|([0-9A-HJKMNP-TV-Z]{20}))$")


class VersionNotFoundError(StoreNotFoundError):
    """The branch, tag or snapshot a location names is not in the repository."""


@dataclass(frozen=True)
class Version:
    """``kind`` is "branch", "tag" or "snapshot"; ``name`` the ref's name or the snapshot id."""

    kind: str
    name: str

    def __str__(self) -> str:
        return self.name if self.kind == "snapshot" else f"{self.kind}.{self.name}"


MAIN = Version("branch", "main")


def parse_version(text: str) -> Version | None:
    m = _VERSION.match(text.strip())
    if m is None:
        return None
    if m.group(3):
        return Version("snapshot", m.group(3))
    return Version(m.group(1), m.group(2))


def require_version(text: str, what: str, error: type[ZarrError] = StoreError) -> Version:
    """``text`` parsed; where it names no version, ``error`` (the class the caller's own callers
    expect) saying so of ``what`` and showing the spellings that do."""
    version = parse_version(text)
    if version is None:
        raise error(f"{what} names no version (branch.NAME, tag.NAME or a snapshot id)")
    return version


def split_version(location: str) -> tuple[str, Version | None]:
    """``"repo.icechunk@tag.v1"`` -> ``("repo.icechunk", tag v1)``; a location without a
    version spelling after its last ``@`` is returned whole (``user@host`` URLs stay intact)."""
    head, sep, tail = location.rpartition("@")
    if not sep or not head:
        return location, None
    version = parse_version(tail)
    return (head, version) if version is not None else (location, None)


def resolve(info: RepoInfo, version: Version, where: str) -> str:
    """The snapshot id ``version`` names (a snapshot id is checked when its file is read)."""
    if version.kind == "snapshot":
        if info.spec >= 2 and version.name not in info.snapshots:
            raise VersionNotFoundError(f"{where}: snapshot {version.name} does not exist in the repository")
        return version.name
    refs = info.branches if version.kind == "branch" else info.tags
    if version.name not in refs:
        known = ", ".join(sorted(f"{version.kind}.{n}" for n in refs)) or "none"
        raise VersionNotFoundError(f"{where}: no {version.kind} named {version.name!r} (the repository has: {known})")
    return refs[version.name]
