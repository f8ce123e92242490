"""``zarrview changes REPO@A REPO@B [--json]``: what changed between two versions of an Icechunk repository.

The answer comes from the commits' transaction logs and the two snapshots
(``zarrlib/icechunk/diff.py``): no manifest and no chunk is read, so it costs a few small
files however large the arrays are. The JSON is icechunk's ``Diff`` with its own field names,
so a script can take either tool's output. Headless: it imports no Qt.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from .cli_common import AUTHORIZE_HELP, OneLineParser, said, storage_options
from .zarrlib.icechunk.diff import DESCENDANT, DIVERGED, SAME, VersionDiff

#: chunk indexes listed for an array; more are counted only
LISTED_CHUNKS = 8

DESCRIPTION = (
    "What changed from version A to version B of an Icechunk repository: new, deleted and updated groups and "
    "arrays (updated: zarr.json rewritten, attributes or metadata), chunks written (set or removed, equal bytes or "
    "not) and nodes moved, read from the commits' transaction logs without reading any chunk. Where A is an "
    "ancestor of B this is icechunk's Repository.diff. Icechunk refuses other pairs; here they go through the newest "
    "common ancestor: what B's side committed since then, plus what A's side committed, undone (what A's side "
    "created reads as deleted). The same version twice has no changes.")

SECTIONS = (("new_groups", "new groups"), ("new_arrays", "new arrays"), ("deleted_groups", "deleted groups"),
            ("deleted_arrays", "deleted arrays"), ("updated_groups", "updated groups (zarr.json rewritten)"),
            ("updated_arrays", "updated arrays (zarr.json rewritten)"))


def run(args: Sequence[str]) -> int:
    parser = OneLineParser(prog="zarrview changes", description=DESCRIPTION)
    parser.add_argument("a", metavar="REPO@A", help="the repository at the version changed from: path or URL, then "
                                                    "@branch.NAME, @tag.NAME or @SNAPSHOTID (none: branch.main)")
    parser.add_argument("b", metavar="REPO@B", help="the version changed to, of the same repository; @VERSION alone "
                                                    "names a version of A's repository")
    parser.add_argument("--json", action="store_true",
                        help="one JSON document with the fields of icechunk's Diff: new_groups, new_arrays, "
                             "deleted_groups, deleted_arrays, updated_groups, updated_arrays, updated_chunks "
                             "(path: [chunk index, ...]), moved_nodes ([from, to])")
    parser.add_argument("--authorize", action="append", metavar="PREFIX", help=AUTHORIZE_HELP)
    ns = parser.parse_args(list(args))
    from . import zarrlib as zl

    try:
        diff = zl.icechunk.diff_versions(ns.a, ns.b, **storage_options(ns.authorize))
    except zl.ZarrError as e:
        print(said(e), file=sys.stderr)
        return 1
    try:
        if ns.json:
            json.dump(diff.as_json(), sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(describe(diff, ns.a, ns.b))
    except BrokenPipeError:
        return 0
    return 0


def _indexes(indexes: Sequence[tuple[int, ...]]) -> str:
    return " ".join("(" + ", ".join(str(i) for i in index) + ")" for index in indexes)


def describe(diff: VersionDiff, a: str, b: str) -> str:
    """The changes as text: what was compared, then a section per kind of change that has any."""
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
