"""Command line: ``zarrview [LOCATION]`` opens the window; ``tree``, ``info``, ``export``,
``audit``, ``validate``, ``changes`` (between two versions of a repository), ``snippet`` (Python
that reads a view's selection) and ``decoders`` (the native decoders and their versions) run
headless.

The headless subcommands import no Qt, so they work on servers and in scripts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .cli_common import AUTHORIZE_HELP, said, storage_options


def _tree(location: str, **options: Any) -> int:
    import gc

    from . import zarrlib as zl
    from .describe import one_line

    # a tree of 100,000 nodes makes millions of objects, each freed with its group: the cyclic
    # collector found nothing to free and cost a third of the time (0.8 of 2.7 s)
    gc.disable()
    root = zl.open(location, **options)
    print(f"{root.url}  {one_line(root)}" if root.path == "/" else f"{root.path}  {one_line(root)}")
    if isinstance(root, zl.Group):
        from .viewing.tree.known import known_members

        if not root.can_list_members and not root.member_names() and not known_members(root):
            base = location.split("::/", 1)[0]
            print(f"(this server cannot list; children may exist: name one by its path, "
                  f"as in zarrview tree '{base}::/{root.path.strip('/') + '/' if root.path != '/' else ''}NAME')")
            return 0
        _print_children(root, "")
    return 0


def _print_children(group: object, indent: str) -> None:
    """One line a node, written a group at a time (print per line costs a tenth of a line's
    time); most arrays of a consolidated hierarchy are outlined without a node each."""
    from . import zarrlib as zl
    from .describe import outline_line

    from .viewing.tree.known import known_members

    assert isinstance(group, zl.Group)
    members = group.member_outlines() if group.can_list_members else group.member_outlines(known_members(group))
    lines: list[str] = []
    for i, child in enumerate(members):
        last = i == len(members) - 1
        lines.append(f"{indent}{'└── ' if last else '├── '}{outline_line(child)}\n")
        if isinstance(child.node, zl.Group):
            sys.stdout.write("".join(lines))
            lines = []
            _print_children(child.node, indent + ("    " if last else "│   "))
    sys.stdout.write("".join(lines))


def _info(location: str, **options: Any) -> int:
    from . import zarrlib as zl
    from .describe import cf_rows, human_bytes, summary, to_json

    node = zl.open(location, **options)
    width = max(len(k) for k, _ in summary(node))
    for key, value in summary(node):
        print(f"{key:<{width}}  {value}")
    if isinstance(node, zl.Array):
        stored = node.stored_objects(limit=_COUNT_LIMIT)
        label = "Stored shards" if node.shards else "Stored chunks"
        if stored is None:
            print(f"{label:<{width}}  unknown (the store cannot list)")
        else:
            more = "" if stored.complete else "more than "
            print(f"{label:<{width}}  {more}{stored[0]:,} of {_grid_objects(node):,}, "
                  f"{more}{human_bytes(stored[1])} ({stored[1]:,} bytes)")
    if isinstance(node, zl.Group):
        print(f"{'Members':<{width}}  {', '.join(node.member_names()) or '—'}")
        from .viewing.conventions.text import describe as describe_pyramid
        from .viewing.decision import looked_at
        from .viewing.ome import describe as describe_ome

        shown = looked_at(node, labels=True)  # as the window shows it, its labels' problems too
        if shown.pyramid is not None:
            print()
            print("\n".join(describe_pyramid(shown.pyramid)))
        elif shown.ome is not None:
            print()
            print("\n".join(describe_ome(shown.ome)))
    cf = cf_rows(node)
    if cf:
        print("\nCF conventions:")
        cf_width = max(len(k) for k, _ in cf)
        for key, value in cf:
            print(f"  {key:<{cf_width}}  {value}")
    print("\nAttributes:")
    print(to_json(node.attrs))
    print("\nMetadata document:")
    print(to_json(node.metadata_preview(_SHOWN_ENTRIES)))
    return 0


#: stored objects counted before ``zarrview info`` says "more than" (a listing of a million keys
#: takes seconds locally, minutes remotely)
_COUNT_LIMIT = 1_000_000
#: consolidated entries printed with a root's document (100,000 would be 50-90 MB of text)
_SHOWN_ENTRIES = 1000


def _grid_objects(node: object) -> int:
    import math

    from . import zarrlib as zl

    assert isinstance(node, zl.Array)
    return math.prod(node.stored_grid_shape())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="zarrview", description="Browse Zarr v2 and v3 hierarchies.")
    p.add_argument("--version", action="version", version=f"zarrview {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from .zarrlib import tune_process

    tune_process()  # process-wide tuning is the program's choice: see zarrlib/tuning.py
    if args and args[0] == "export":
        from . import cli_export

        return cli_export.run(args[1:])
    if args and args[0] == "audit":
        from . import cli_audit

        return cli_audit.run(args[1:])
    if args and args[0] == "validate":
        from . import cli_validate

        return cli_validate.run(args[1:])
    if args and args[0] == "changes":
        from . import cli_changes

        return cli_changes.run(args[1:])
    if args and args[0] == "snippet":
        from . import cli_snippet

        return cli_snippet.run(args[1:])
    if args and args[0] == "decoders":
        argparse.ArgumentParser(prog="zarrview decoders",
                                description="The native decoders stored bytes reach, with the versions loaded.") \
            .parse_args(args[1:])
        from .zarrlib.codecs.native_versions import describe

        print("\n".join(describe()))
        return 0
    if args and args[0] in ("tree", "info"):
        sub = argparse.ArgumentParser(prog=f"zarrview {args[0]}")
        sub.add_argument("location", help="path, URL, .zip or .ozx, optionally followed by ::/node/path")
        sub.add_argument("--authorize", action="append", metavar="PREFIX", help=AUTHORIZE_HELP)
        ns = sub.parse_args(args[1:])
        from .zarrlib import ZarrError

        options = storage_options(ns.authorize)
        try:
            return _tree(ns.location, **options) if args[0] == "tree" else _info(ns.location, **options)
        except ZarrError as e:
            print(said(e), file=sys.stderr)
            return 1
        except BrokenPipeError:
            return 0
    from .app.main import run_app

    return run_app(args)


if __name__ == "__main__":
    sys.exit(main())
