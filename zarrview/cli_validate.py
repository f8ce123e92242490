"""``zarrview validate LOCATION[::/node] [--json]``: where a store breaks its specifications.

Each finding names the key, the rule with its section of the specification, and a severity;
the exit status is 1 where there are errors (warnings alone leave it 0), 2 for bad arguments,
so a pipeline can check what it wrote. Headless: it imports no Qt.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from .cli_common import AUTHORIZE_HELP, OneLineParser, said, storage_options


def run(args: Sequence[str]) -> int:
    parser = OneLineParser(prog="zarrview validate",
                           description="Where a store breaks the Zarr specifications and the OME-NGFF, GeoZarr and AnnData "
                                       "conventions: every finding with its key, rule and severity.")
    parser.add_argument("location", help="path, URL, .zip or .ozx, optionally followed by ::/node/path")
    parser.add_argument("--json", action="store_true", help="one JSON document: the findings and their counts")
    parser.add_argument("--authorize", action="append", metavar="PREFIX", help=AUTHORIZE_HELP)
    ns = parser.parse_args(list(args))
    from . import zarrlib as zl
    from .viewing.validation import validate
    from .zarrlib.storage import open_store, split_node_path
    from .zarrlib.validate import count

    loc, path = split_node_path(ns.location)
    options = storage_options(ns.authorize)
    try:
        store = open_store(loc, **options)
    except zl.ZarrError as e:
        print(said(e), file=sys.stderr)
        return 1
    try:
        try:
            root: zl.Node | None = zl.open(store, path)
        except zl.ZarrError:
            root = None  # its own documents are checked one by one below
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        findings = validate(store, root, prefix)
    except zl.ZarrError as e:
        print(said(e), file=sys.stderr)
        return 1
    finally:
        store.close()
    errors, warnings = count(findings, "error"), count(findings, "warning")
    try:
        if ns.json:
            json.dump({"location": ns.location, "errors": errors, "warnings": warnings,
                       "findings": [f.as_json() for f in findings]}, sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            for f in findings:
                print(f)
            print(f"{ns.location}: {errors} error{'s' if errors != 1 else ''}, "
                  f"{warnings} warning{'s' if warnings != 1 else ''}")
    except BrokenPipeError:
        return 0
    return 1 if errors else 0
