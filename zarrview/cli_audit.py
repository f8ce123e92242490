"""``zarrview audit LOCATION[::/node] [--json]``: how each array below a node is stored.

For every array: chunks expected and stored, stored and logical bytes, the compression ratio,
stored object sizes in power-of-two classes, shard fill, objects below the array that are no
key of its grid, and for grids of one to three dimensions a map of where chunks are stored.
Counted from the store's listing and its shard indexes (``zarrlib/audit.py``), never from the
grid's keys. Headless: it imports no Qt.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from .cli_common import AUTHORIZE_HELP, OneLineParser, said, storage_options
from .viewing.audit import arrays_below, describe


def run(args: Sequence[str]) -> int:
    parser = OneLineParser(prog="zarrview audit",
                           description="How each array below a node is stored: chunks stored and missing, bytes, "
                                       "compression, shard fill, a map of stored chunks.")
    parser.add_argument("location", help="path, URL, .zip or .ozx, optionally followed by ::/node/path")
    parser.add_argument("--json", action="store_true", help="one JSON document: a list of arrays")
    parser.add_argument("--authorize", action="append", metavar="PREFIX", help=AUTHORIZE_HELP)
    ns = parser.parse_args(list(args))
    from . import zarrlib as zl

    try:
        node = zl.open(ns.location, **storage_options(ns.authorize))
        audits = [array.audit() for array in arrays_below(node)]
    except zl.ZarrError as e:
        print(said(e), file=sys.stderr)
        return 1
    try:
        if ns.json:
            json.dump([a.as_json() for a in audits], sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            sys.stdout.write("\n".join(describe(a) for a in audits) + "\n" if audits else "no arrays\n")
    except BrokenPipeError:
        return 0
    return 1 if any(a.errors for a in audits) else 0
