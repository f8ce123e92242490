"""Command line: ``zarrview [LOCATION]`` opens the window; ``tree``, ``info``, ``export`` and
``decoders`` (the native decoders and their versions) run headless.

The headless subcommands import no Qt, so they work on servers and in scripts.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import __version__
from .viewing.image.slice_spec import SLICE_HELP
from .viewing.projection.spec import REDUCE_HELP

if TYPE_CHECKING:  # the headless commands import their modules when they run
    from .viewing.export.plane import PlaneSpec
    from .viewing.labels.layers import LabelLayer
    from .viewing.projection.spec import ReduceText
    from .viewing.projection.view import ProjectionValues
    from .zarrlib import Group, Node


AUTHORIZE_HELP = ("a URL prefix (file:///data/, s3://bucket/, https://host/) that virtual chunks and references may "
                  "read from besides the store's own location; repeat for several")


def _options(authorize: list[str] | None) -> dict[str, Any]:
    """Storage options from the command line: reads outside the store only where allowed."""
    return {"authorize": authorize} if authorize else {}


def _said(error: BaseException) -> str:
    """An error as the command line prints it; a refused read outside the store says how to allow it."""
    from .zarrlib.storage.access import AccessDeniedError

    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, AccessDeniedError):
        cause = cause.__cause__ or cause.__context__
    hint = f" (allow it with --authorize {cause.prefix})" if isinstance(cause, AccessDeniedError) else ""
    return f"zarrview: {error}{hint}"


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
        from .viewing.ome import describe as describe_ome, detect

        ome = detect(node)
        if ome is not None:
            print()
            print("\n".join(describe_ome(ome)))
        from .viewing.conventions.geozarr import detect_geozarr
        from .viewing.conventions.text import describe as describe_pyramid

        pyramid = detect_geozarr(node) if ome is None else None
        if pyramid is not None:
            print()
            print("\n".join(describe_pyramid(pyramid)))
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


class _OneLineParser(argparse.ArgumentParser):
    """Malformed arguments are one line and exit status 2, not a usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"zarrview: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _export(argv: Sequence[str]) -> int:
    """Write the plane the window would show for ``--slice`` at full resolution (no Qt)."""
    sub = _OneLineParser(prog="zarrview export",
                          description="Write one plane of an array or an OME-Zarr image to .npy, .csv or .png, "
                                      "or an AnnData dataframe (obs, var) to .csv.")
    sub.add_argument("location", help="path, URL, .zip or .ozx, followed by ::/node/path of an array or an OME-Zarr image")
    sub.add_argument("--slice", help=SLICE_HELP)
    sub.add_argument("--level", type=int, help="the pyramid level of an OME-Zarr image (0, the finest, by default)")
    sub.add_argument("--labels", nargs="?", const="", metavar="NAMES",
                     help="draw an OME-Zarr image's label images over a .png: all, or those named (a,b)")
    sub.add_argument("--raw", action="store_true",
                     help="write the stored values; by default an array that follows the CF conventions is "
                          "written decoded, as xarray reads it (fill and missing values as NaN, packed values "
                          "unpacked with scale_factor and add_offset)")
    sub.add_argument("--reduce", metavar="OP:DIM[START:STOP]", help=REDUCE_HELP)
    sub.add_argument("--scheduler", metavar="ADDRESS",
                     help="reduce the slabs of --reduce on the dask.distributed cluster at ADDRESS (tcp://host:8786); "
                          "its workers open LOCATION themselves")
    sub.add_argument("-o", "--output", required=True, help="FILE.npy (exact values), FILE.csv or FILE.png (grey)")
    sub.add_argument("--authorize", action="append", metavar="PREFIX", help=AUTHORIZE_HELP)
    ns = sub.parse_args(list(argv))
    from . import zarrlib as zl
    from .viewing.export.errors import ExportError, UnsupportedExport
    from .viewing.export.plane import export_format, export_plane
    from .viewing.image.slice_spec import ArgumentError, choose_plane, read_slice
    from .viewing.projection.cluster import ClusterError
    from .viewing.projection.spec import read_reduce

    try:
        request = read_slice(ns.slice)
        reduce = read_reduce(ns.reduce) if ns.reduce is not None else None
        if ns.scheduler is not None and reduce is None:
            raise ArgumentError("zarrview: --scheduler runs the reduction of --reduce: give --reduce too")
        if reduce is not None and ns.labels is not None:
            raise ArgumentError("zarrview: --labels draws the label images of one plane; a projection (--reduce) "
                                "has none")
        export_format(ns.output)
        node = zl.open(ns.location, **_options(ns.authorize))
        node.hierarchy.widen_ml_types = True  # bfloat16, float8, int4...: exported as float32, as shown
        if _is_frame(node):
            return _export_frame(node, ns)
        plane, choices = choose_plane(node, request)
        for choice in choices:  # nearest may be far from what was typed: say what was taken
            print(f"zarrview: --slice {choice}", file=sys.stderr)
        spec = _export_spec(node, plane, ns.level, ns.labels)
        if spec is None:
            return 1
        if not ns.raw:
            spec = _decoding(spec)
        values = None if reduce is None else _projection(node, spec, reduce, ns)
        label = spec.label if values is None else values.label
        export_plane(dataclasses.replace(spec, decode=spec.decode and values is None), ns.output, values=values,
                     progress=_tty_progress(label) if sys.stderr.isatty() else None)
    except (ArgumentError, UnsupportedExport) as e:
        print(e if str(e).startswith("zarrview:") else f"zarrview: {e}", file=sys.stderr)
        return 2
    except (zl.ZarrError, ExportError, ClusterError) as e:
        print(_said(e), file=sys.stderr)
        return 1
    return 0


def _is_frame(node: Node) -> bool:
    from .viewing.anndata.frame import is_frame

    return is_frame(node)


def _export_frame(node: Node, ns: argparse.Namespace) -> int:
    """An AnnData dataframe (obs, var) as one CSV table, as pandas writes it."""
    from .viewing.anndata import open_frame
    from .viewing.anndata.table_export import export_frame_csv
    from .viewing.export.errors import UnsupportedExport
    from .viewing.image.slice_spec import ArgumentError
    from .zarrlib import Group

    for flag, given in (("--slice", ns.slice), ("--level", ns.level), ("--labels", ns.labels)):
        if given is not None:
            raise ArgumentError(f"zarrview: {flag} is not for a dataframe; {node.path} is written whole")
    if not str(ns.output).lower().endswith(".csv"):
        raise UnsupportedExport(ns.output, f"{node.path} is an AnnData dataframe: write it to a .csv file")
    assert isinstance(node, Group)
    frame = open_frame(node)
    export_frame_csv(frame, ns.output, progress=_tty_rows(frame.path) if sys.stderr.isatty() else None)
    return 0


def _tty_rows(label: str) -> Callable[[int, int], None]:
    def progress(done: int, total: int) -> None:
        print(f"\rwriting {label}: {done:,}/{total:,} rows", end="\n" if done == total else "", file=sys.stderr,
              flush=True)

    return progress


def _export_spec(node: Node, plane: dict[int, int], level: int | None, labels: str | None = None) -> PlaneSpec | None:
    """What ``zarrview export`` writes for ``node``: an array's plane, or an OME-Zarr image's plane
    at pyramid ``level`` (the window's first view of it) with the label images ``labels`` names
    ("": all); None after saying why there is none."""
    from . import zarrlib as zl
    from .viewing.export.plane import default_spec, image_spec
    from .viewing.image.slice_spec import ArgumentError, check_plane
    from .viewing.ome import OmeImage, detect

    if isinstance(node, zl.Array):
        for flag, given in (("--level", level), ("--labels", labels)):
            if given is not None:
                raise ArgumentError(f"zarrview: {flag} is for an OME-Zarr image group; {node.path} is an array")
        check_plane(node, plane)
        return default_spec(node, plane)
    if not isinstance(node, zl.Group):
        print(f"zarrview: {node.path} cannot be read: {getattr(node, 'error', 'not an array')}", file=sys.stderr)
        return None
    image = detect(node, labels=False)
    if not isinstance(image, OmeImage):
        return _pyramid_spec(node, plane, level, labels)
    if not image.multiscales:  # OME metadata too broken to name a level: say what is wrong
        _say_problems(f"{node.path} holds OME-Zarr image metadata that names no readable pyramid", image.errors)
        return None
    level0 = next((lv.array for lv in image.first.levels if lv.array is not None), None)
    if level0 is not None:
        check_plane(level0, plane)  # --slice in level-0 indices, as the window takes it
    try:
        return image_spec(image, plane, level or 0, _label_layers(node, labels))
    except ValueError as e:
        raise ArgumentError(f"zarrview: {e}") from None


def _pyramid_spec(node: Group, plane: dict[int, int], level: int | None, labels: str | None) -> PlaneSpec | None:
    """``_export_spec`` for a group that is no OME-Zarr image: a multiscales convention pyramid
    (GeoZarr), else None after saying what the group is not."""
    from .viewing.conventions.geozarr import detect_geozarr
    from .viewing.export.plane import pyramid_spec
    from .viewing.image.slice_spec import ArgumentError, check_plane

    found = detect_geozarr(node)
    if found is None:
        from .viewing.anndata import encoding_of

        enc = encoding_of(node)
        what = f" (AnnData {enc.type})" if enc is not None else ""
        print(f"zarrview: {node.path} is a group{what}, not an array or an OME-Zarr image: name one with ::/path",
              file=sys.stderr)
        return None
    if labels is not None:
        raise ArgumentError(f"zarrview: --labels is for an OME-Zarr image; {node.path} is a multiscales pyramid")
    levels = found.multiscale.readable_levels
    if not levels:
        _say_problems(f"{node.path} is a multiscales pyramid with no readable level", found.problems)
        return None
    assert levels[0].array is not None
    check_plane(levels[0].array, plane)
    try:
        return pyramid_spec(found, plane, level or 0)
    except ValueError as e:
        raise ArgumentError(f"zarrview: {e}") from None


def _say_problems(what: str, problems: Sequence[Any]) -> None:
    print(f"zarrview: {what}" + "".join(f"\n  {p}" for p in problems[:10]), file=sys.stderr)


def _projection(node: Node, spec: PlaneSpec, reduce: ReduceText, ns: argparse.Namespace) -> ProjectionValues:
    """``--reduce`` over ``spec``'s plane: decoded as the plane would be written, on the cluster
    of ``--scheduler`` when one is given. ``--slice`` chooses the plane's axes; the index it
    gives the reduced dimension (if any) is not used."""
    from . import zarrlib as zl
    from .viewing.cf.values import value_coding
    from .viewing.ome import OmeImage, detect
    from .viewing.projection.cluster import source_of
    from .viewing.projection.spec import projection
    from .viewing.projection.view import Engine, ProjectionValues

    arr = spec.array
    image = detect(node, labels=False) if isinstance(node, zl.Group) else None
    names = tuple(a.name for a in image.first.axes) if isinstance(image, OmeImage) else None
    coding = value_coding(arr) if spec.decode else None
    shown = (*(spec.dims or ()), *(() if spec.channel_dim is None else (spec.channel_dim,)))
    p = projection(arr, spec.selection, reduce, names, coding if coding is not None and coding.active else None, shown)
    engine = Engine(ns.scheduler, source_of(arr, ns.location, _options(ns.authorize))) if ns.scheduler else Engine()
    return ProjectionValues(p, engine)


def _decoding(spec: PlaneSpec) -> PlaneSpec:
    """``spec`` written as CF values, with a line for each attribute that cannot be used."""
    from .viewing.cf.values import value_coding

    for note in value_coding(spec.array).notes:
        print(f"zarrview: {spec.array.path}: {note}", file=sys.stderr)
    return dataclasses.replace(spec, decode=True)


def _label_layers(image: Group, names: str | None) -> tuple[LabelLayer, ...]:
    """The label images ``--labels`` names (all for ""), every one shown; an unknown name is an error."""
    from .viewing.image.slice_spec import ArgumentError
    from .viewing.labels.layers import labels_group, layers_of

    if names is None:
        return ()
    layers = layers_of(labels_group(image))
    wanted = [n.strip() for n in names.split(",") if n.strip()] or [lay.name for lay in layers]
    have = {lay.name: lay for lay in layers}
    missing = [n for n in wanted if n not in have]
    if missing:
        known = ", ".join(have) or "none that can be read"
        raise ArgumentError(f"zarrview: --labels {','.join(missing)}: {image.path} has no such label image "
                            f"(its label images: {known})")
    return tuple(have[n].with_(visible=True) for n in wanted)


def _tty_progress(label: str) -> Callable[[int, int], None]:
    def progress(done: int, total: int) -> None:
        print(f"\rreading {label}: {done}/{total} chunks", end="\n" if done == total else "", file=sys.stderr, flush=True)

    return progress


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="zarrview", description="Browse Zarr v2 and v3 hierarchies.")
    p.add_argument("--version", action="version", version=f"zarrview {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from .zarrlib import tune_process

    tune_process()  # process-wide tuning is the program's choice: see zarrlib/tuning.py
    if args and args[0] == "export":
        return _export(args[1:])
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

        options = _options(ns.authorize)
        try:
            return _tree(ns.location, **options) if args[0] == "tree" else _info(ns.location, **options)
        except ZarrError as e:
            print(_said(e), file=sys.stderr)
            return 1
        except BrokenPipeError:
            return 0
    from .app.main import run_app

    return run_app(args)


if __name__ == "__main__":
    sys.exit(main())
