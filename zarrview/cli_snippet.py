"""``zarrview snippet``: Python that reads exactly the values ``zarrview export`` writes to .npy for
the same location, ``--slice``, ``--level`` and ``--raw``, with zarr-python, xarray, TensorStore or
zarrlib (no Qt)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli_common import AUTHORIZE_HELP, OneLineParser, said, storage_options
from .viewing.image.slice_spec import SLICE_HELP
from .viewing.snippets import KINDS


def run(argv: Sequence[str]) -> int:
    """Print the snippet; one line and status 2 for arguments or a library that cannot read the
    array, 1 for a store that cannot be read."""
    sub = OneLineParser(prog="zarrview snippet",
                        description="Print Python that reads the plane `zarrview export` writes to .npy for the same "
                                    "arguments, with zarr-python, xarray, TensorStore or zarrlib; no secret is "
                                    "written into it.")
    sub.add_argument("location", help="path, URL, .zip or .ozx, followed by ::/node/path of an array or an OME-Zarr image")
    sub.add_argument("--slice", help=SLICE_HELP)
    sub.add_argument("--level", type=int, help="the pyramid level of an OME-Zarr image (0, the finest, by default)")
    sub.add_argument("--raw", action="store_true",
                     help="read the stored values; by default an array that follows the CF conventions is read "
                          "decoded, as the window shows it")
    sub.add_argument("--for", dest="kind", required=True, choices=KINDS,
                     help="the library the snippet reads with; where it cannot read the array (a codec, a data "
                          "type, an Icechunk repository or reference set without a driver) one line says why, "
                          "with status 2")
    sub.add_argument("--authorize", action="append", metavar="PREFIX", help=AUTHORIZE_HELP)
    ns = sub.parse_args(list(argv))
    from . import zarrlib as zl
    from .cli_export import chosen_spec, open_shown, say_defaults
    from .viewing.anndata.element import FRAME
    from .viewing.decision import looked_at
    from .viewing.image.slice_spec import ArgumentError, read_slice
    from .viewing.snippets import SnippetError, snippet

    try:
        request = read_slice(ns.slice)
        node = open_shown(ns.location, ns.authorize)
        seen = looked_at(node)
        if seen.anndata == FRAME:
            raise ArgumentError(f"zarrview: {node.path} is an AnnData dataframe, which `zarrview export` writes to "
                                ".csv: no snippet reads it as one array")
        plane, spec = chosen_spec(seen, request, ns.level, raw=ns.raw)
        if spec is None:
            return 1
        if ns.slice is not None:  # choosing: no index is taken silently
            say_defaults(seen.names, spec, plane)
        text = snippet(spec, ns.location, storage_options(ns.authorize), ns.kind)
    except (ArgumentError, SnippetError) as e:
        print(e if str(e).startswith("zarrview:") else f"zarrview: {e}", file=sys.stderr)
        return 2
    except zl.ZarrError as e:
        print(said(e), file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0
