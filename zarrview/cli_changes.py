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
from .viewing.versions import changes_text

DESCRIPTION = (
    "What changed from version A to version B of an Icechunk repository: new, deleted and updated groups and "
    "arrays (updated: zarr.json rewritten, attributes or metadata), chunks written (set or removed, equal bytes or "
    "not) and nodes moved, read from the commits' transaction logs without reading any chunk. Where A is an "
    "ancestor of B this is icechunk's Repository.diff. Icechunk refuses other pairs; here they go through the newest "
    "common ancestor: what B's side committed since then, plus what A's side committed, undone (what A's side "
    "created reads as deleted). The same version twice has no changes.")

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
            sys.stdout.write(changes_text(diff, ns.a, ns.b))
    except BrokenPipeError:
        return 0
    return 0



