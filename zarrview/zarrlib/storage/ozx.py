"""Single-file OME-Zarr (``.ozx``): what the archive comment says, and how the archive departs
from the layout the single-file specification asks for.

The specification's recommendations (ZIP64, stored entries, ``zarr.json`` files first and
breadth-first, a JSON comment naming the OME-Zarr version) make an archive fast to read, but
an archive that ignores them still reads correctly, so departures are notes for the user,
never a refusal.
"""

from __future__ import annotations

import struct
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import MetadataError
from ..jsonutil import load_json_object

#: the file name ending the specification gives single-file OME-Zarr
OZX_SUFFIX = ".ozx"
#: archive name endings opened as zip stores
ZIP_SUFFIXES = (".zip", OZX_SUFFIX)
#: notes of one kind listed by name before the rest are counted
_NAMED = 3


@dataclass(frozen=True)
class ArchiveInfo:
    """What an archive's comment and layout say; ``notes`` lists departures from the
    single-file OME-Zarr layout (empty for an archive that is not one)."""

    #: the comment's JSON object, or None where it holds none
    comment: dict[str, Any] | None
    #: ``ome.version`` of the comment
    ome_version: str | None
    #: ``ome.zipFile.centralDirectory.jsonFirst``: the ``zarr.json`` entries lead the directory
    json_first: bool
    #: an end record or a directory entry in the ZIP64 format
    zip64: bool
    entries: int
    #: whether the archive presents itself as single-file OME-Zarr (its name or its comment)
    is_ozx: bool
    notes: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        """One line for a node's metadata."""
        if not self.is_ozx:
            return f"zip archive, {self.entries:,} entries{', ZIP64' if self.zip64 else ''}"
        parts = [f"OME-Zarr {self.ome_version}" if self.ome_version else "OME-Zarr (no version in the comment)",
                 f"{self.entries:,} entries"]
        if self.zip64:
            parts.append("ZIP64")
        if self.json_first:
            parts.append("zarr.json first")
        return "single-file OME-Zarr (.ozx): " + ", ".join(parts)


def parse_comment(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(the comment's JSON object, why it holds none usable); an empty comment is no object
    and no complaint."""
    if not raw.strip(b"\0 \t\r\n"):
        return None, None
    try:
        return load_json_object(raw, "the archive comment"), None
    except MetadataError as e:
        return None, str(e)


def _ome_fields(comment: dict[str, Any] | None) -> tuple[str | None, bool, list[str]]:
    """(``ome.version``, ``jsonFirst``, what is malformed) of a comment object."""
    if comment is None:
        return None, False, []
    ome = comment.get("ome")
    if not isinstance(ome, dict):
        return None, False, ["the archive comment has no \"ome\" object"]
    notes = []
    version = ome.get("version")
    if not isinstance(version, str):
        notes.append("the archive comment's ome.version is missing or not a string")
        version = None
    zip_file = ome.get("zipFile", {})
    directory = zip_file.get("centralDirectory", {}) if isinstance(zip_file, dict) else None
    json_first = directory.get("jsonFirst", False) if isinstance(directory, dict) else None
    if not isinstance(json_first, bool):
        notes.append("the archive comment's ome.zipFile.centralDirectory is malformed (jsonFirst must be true or false)")
        json_first = False
    return version, json_first, notes


def _has_zip64_field(extra: bytes) -> bool:
    """Whether a directory entry's extra field holds a ZIP64 record (header id 1)."""
    at = 0
    while at + 4 <= len(extra):
        tag, size = struct.unpack_from("<2H", extra, at)
        if tag == 1:
            return True
        at += 4 + size
    return False


def _named(items: list[str]) -> str:
    shown = ", ".join(repr(n) for n in items[:_NAMED])
    return shown + (f" and {len(items) - _NAMED:,} more" if len(items) > _NAMED else "")


def describe_archive(url: str, raw_comment: bytes, zip64: bool, infos: list[zipfile.ZipInfo], prefix: str,
                     unreadable: dict[str, str]) -> ArchiveInfo:
    """The archive's comment and its notes; ``infos``: its file entries in directory order,
    ``prefix``: the folder its hierarchy was found in, ``unreadable``: entry -> why."""
    zip64 = zip64 or any(_has_zip64_field(i.extra) for i in infos)
    comment, comment_problem = parse_comment(raw_comment)
    version, json_first, comment_notes = _ome_fields(comment)
    is_ozx = url.lower().split("?", 1)[0].endswith(OZX_SUFFIX) or (comment is not None and "ome" in comment)
    notes: list[str] = []
    if unreadable:
        bad = sorted(unreadable)
        notes.append(f"{len(bad):,} entries cannot be read: " +
                     "; ".join(f"{n!r}: {unreadable[n]}" for n in bad[:_NAMED]) +
                     (f"; and {len(bad) - _NAMED:,} more" if len(bad) > _NAMED else ""))
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        counts = Counter(names)
        dupes = [n for n, k in counts.items() if k > 1]
        what = "1 name is" if len(dupes) == 1 else f"{len(dupes):,} names are"
        notes.append(f"{what} listed more than once in the directory (such as {_named(dupes)}): "
                     "the last entry of each is read, as zipfile reads it")
    if not is_ozx:
        return ArchiveInfo(comment, version, json_first, zip64, len(infos), False, tuple(notes))
    if comment_problem:
        notes.append(comment_problem)
    elif comment is None:
        notes.append('the archive has no comment: single-file OME-Zarr names its version there, '
                     'as {"ome": {"version": "…"}}')
    notes += comment_notes
    notes += _layout_notes(infos, prefix, json_first, zip64)
    return ArchiveInfo(comment, version, json_first, zip64, len(infos), True, tuple(notes))


def _layout_notes(infos: list[zipfile.ZipInfo], prefix: str, json_first: bool, zip64: bool) -> list[str]:
    notes: list[str] = []
    names = [i.filename for i in infos]
    if prefix:
        notes.append(f"the hierarchy's root zarr.json is in the folder {prefix!r}, not at the archive's root "
                     "as single-file OME-Zarr requires")
    elif "zarr.json" not in names:
        notes.append("there is no zarr.json at the archive's root, which single-file OME-Zarr requires")
    elif names[0] != "zarr.json":
        notes.append(f"the root zarr.json is not the directory's first entry ({names[0]!r} is)")
    jsons = [i for i, n in enumerate(names) if n == "zarr.json" or n.endswith("/zarr.json")]
    late = [names[i] for k, i in enumerate(jsons) if i != k]
    depths = [names[i].count("/") for i in jsons]
    if late:
        what = ("the comment says jsonFirst, but " if json_first else "")
        notes.append(f"{what}{_named(late)} follow other entries in the directory "
                     "(zarr.json files should come first)")
    elif any(a > b for a, b in zip(depths, depths[1:])):
        notes.append("the zarr.json entries are not in breadth-first order")
    packed = [i.filename for i in infos if i.compress_type != zipfile.ZIP_STORED]
    if packed:
        notes.append(f"{len(packed):,} of {len(infos):,} entries are compressed (such as {_named(packed)}); "
                     "stored entries can be read in ranges without inflating them")
    if not zip64:
        notes.append("the archive does not use the ZIP64 format, which single-file OME-Zarr recommends")
    nested = [n for n in names if n.lower().endswith(ZIP_SUFFIXES)]
    if nested:
        notes.append(f"it holds other zip archives ({_named(nested)}), which single-file OME-Zarr does not allow "
                     "(they are not opened)")
    return notes
