"""``zarrview export``: the plane the window would show, an OME-Zarr image's plane with its
labels, a reduction over a dimension, or an AnnData dataframe, written to a file (no Qt)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .cli_common import AUTHORIZE_HELP, OneLineParser, said, storage_options
from .viewing.image.slice_spec import SLICE_HELP
from .viewing.projection.spec import REDUCE_HELP

if TYPE_CHECKING:  # imported when the command runs
    from .viewing.decision import Shown
    from .viewing.export.plane import PlaneSpec
    from .viewing.image.slice_spec import SliceText
    from .viewing.projection.spec import ReduceText
    from .viewing.projection.view import ProjectionValues
    from .zarrlib import Node


def run(argv: Sequence[str]) -> int:
    """Write the plane the window would show for ``--slice`` at full resolution (no Qt)."""
    sub = OneLineParser(prog="zarrview export",
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
    sub.add_argument("-o", "--output", required=True,
                     help="FILE.npy (exact values), FILE.csv (values in the array's index order) or FILE.png (drawn "
                          "as the window draws it: colour map or channels, contrast, orientation)")
    sub.add_argument("--authorize", action="append", metavar="PREFIX", help=AUTHORIZE_HELP)
    ns = sub.parse_args(list(argv))
    from . import zarrlib as zl
    from .viewing.anndata.element import FRAME
    from .viewing.decision import looked_at
    from .viewing.export.errors import ExportError, UnsupportedExport
    from .viewing.export.plane import export_format, export_plane
    from .viewing.image.slice_spec import ArgumentError, read_slice
    from .viewing.projection.cluster import ClusterError
    from .viewing.projection.spec import read_reduce

    try:
        reduce = read_reduce(ns.reduce) if ns.reduce is not None else None
        request = read_slice(ns.slice, reduced=int(reduce is not None))
        if ns.scheduler is not None and reduce is None:
            raise ArgumentError("zarrview: --scheduler runs the reduction of --reduce: give --reduce too")
        if reduce is not None and ns.labels is not None:
            raise ArgumentError("zarrview: --labels draws the label images of one plane; a projection (--reduce) "
                                "has none")
        export_format(ns.output)
        node = open_shown(ns.location, ns.authorize)
        seen = looked_at(node)  # what the window shows it as
        if seen.anndata == FRAME:
            return _export_frame(node, ns)
        plane, spec = chosen_spec(seen, request, ns.level, raw=ns.raw, labels=ns.labels, reduce=reduce)
        if spec is None:
            return 1
        names = seen.names
        values = None if reduce is None else _projection(names, spec, reduce, ns)
        if ns.slice is not None or reduce is not None:  # choosing: no index is taken silently
            say_defaults(names, spec, plane)
        label = spec.label if values is None else values.label
        written = dataclasses.replace(spec, decode=spec.decode and values is None)
        export_plane(written, ns.output, values=values, progress=_tty_progress(label) if sys.stderr.isatty() else None)
        print(f"zarrview: wrote {ns.output}: {_what_was_written(written, values, ns.output)}")
    except (ArgumentError, UnsupportedExport) as e:
        print(e if str(e).startswith("zarrview:") else f"zarrview: {e}", file=sys.stderr)
        return 2
    except (zl.ZarrError, ExportError, ClusterError) as e:
        print(said(e), file=sys.stderr)
        return 1
    return 0


def open_shown(location: str, authorize: list[str] | None) -> Node:
    """The node ``location`` names, read as the window reads it: ML and sub-byte types
    (bfloat16, float8, int4...) as float32, as shown."""
    from . import zarrlib as zl

    node = zl.open(location, **storage_options(authorize))
    node.hierarchy.widen_ml_types = True
    return node


def chosen_spec(seen: Shown, request: SliceText, level: int | None, *, raw: bool = False, labels: str | None = None,
                reduce: ReduceText | None = None) -> tuple[dict[int, int], PlaneSpec | None]:
    """The indices ``--slice`` (``request``) fixes and the plane ``zarrview export`` writes for
    what the node is shown as (``seen``, ``looked_at``), at ``level``, with the label images
    ``labels`` names, decoded unless ``raw``; with ``reduce``, the plane among the dimensions
    it leaves. Says on stderr which coordinate values the names chose and what cannot be used
    to decode; the spec is None after saying why there is none. Every command that writes or
    names a view's values builds its plane here, so they agree about it. Raises
    ``ArgumentError`` for a request that names nothing of the node."""
    from .viewing.image.slice_spec import choose_plane

    plane, choices = choose_plane(seen, request)
    if reduce is not None:
        plane = _reduced_fixed(seen.node, seen.names, plane, reduce)
    for choice in choices:  # nearest may be far from what was typed: say what was taken
        print(f"zarrview: --slice {choice}", file=sys.stderr)
    spec = _export_spec(seen.with_request(plane, level, labels))
    if spec is not None and not raw:
        spec = _decoding(spec)
    return plane, spec


def say_defaults(names: tuple[str | None, ...] | None, spec: PlaneSpec, plane: dict[int, int]) -> None:
    """Name the dimensions the file holds one index of without ``--slice`` giving it (the
    window's defaults: 0, an OME image's defaultZ/T, one channel where the image is shown a
    channel at a time), so that no choice is silent. The reduced dimension is in ``plane``
    (``_reduced_fixed``): its index is no choice."""
    from .viewing.cf.dims import dimension_names

    if names is None or len(names) != spec.array.ndim:
        names = dimension_names(spec.array)
    level0 = spec.array.shape
    taken = [(d, i) for d, i in enumerate(spec.selection) if isinstance(i, int) and d not in plane and level0[d] > 1]
    if taken:
        said = ", ".join(f"{names[d] or f'dimension {d}'}={i}" for d, i in taken)
        print(f"zarrview: {said} (not given in --slice: where the window first shows it)", file=sys.stderr)


def _reduced_fixed(node: Node, names: tuple[str | None, ...] | None, plane: dict[int, int],
                   reduce: ReduceText) -> dict[int, int]:
    """``plane`` with the dimension ``--reduce`` names fixed (at 0; its index is not used), so
    that the plane is chosen among the other dimensions: ``--slice :,0,:,: --reduce max:time``
    shows the two dimensions after ``0``. A dimension that cannot be named is left for the
    projection to refuse."""
    from .viewing.image.slice_spec import Positions
    from .viewing.projection.spec import ProjectionSpecError, resolve_dim

    if names is None:
        return plane
    try:
        dim = resolve_dim(reduce.dim, names, node.path, len(names))
    except ProjectionSpecError:
        return plane
    if dim in plane:
        return plane
    return Positions({**plane, dim: 0}, getattr(plane, "rank", None))


def _what_was_written(spec: PlaneSpec, values: ProjectionValues | None, output: str) -> str:
    """The values a file holds, in words: what was read (or reduced), its shape and type, and
    for .npy and .csv that the order is the array's own."""
    from .viewing.export.plane import selected

    label = spec.label if values is None else values.label
    if str(output).lower().endswith(".png"):
        return f"{label} drawn as the window draws it"
    if len(spec.shape) < 2:
        return f"{label}, {selected(spec)}"
    return f"{label}, {'x'.join(map(str, spec.shape))} values in the array's index order"


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


def _export_spec(shown: Shown) -> PlaneSpec | None:
    """What ``zarrview export`` writes for what the node is shown as (``viewing.decision``): an
    array's plane, or an OME-Zarr image's or multiscales pyramid's plane at the level asked for
    (the window's first view of it) with the label images asked for; None after saying why
    there is none. A request that names nothing of it raises ``ArgumentError``."""
    from .viewing.export.plane import default_spec, state_spec
    from .viewing.image.slice_spec import ArgumentError

    refused = shown.refused
    if refused is not None:
        if refused.request is not None:
            raise ArgumentError(f"zarrview: {refused.text}")
        _say_problems(refused.text, refused.listed)
        return None
    level = shown.first_level
    if level is not None and shown.state is not None:  # a pyramid's level, as the window reads it whole
        if shown.level is None and level != 0:
            print(f"zarrview: level 0 of {shown.node.path} cannot be read; writing level {level}, the finest "
                  "that can be", file=sys.stderr)
        return state_spec(shown.state.with_(labels=shown.layers), level, shown.plane)
    assert shown.array is not None and shown.array is shown.node
    return default_spec(shown.array, shown.plane, state=shown.state, coordinates=shown.coordinates)


def _say_problems(what: str, problems: Sequence[object]) -> None:
    print(f"zarrview: {what}" + "".join(f"\n  {p}" for p in problems[:10]), file=sys.stderr)


def _projection(names: tuple[str | None, ...] | None, spec: PlaneSpec, reduce: ReduceText,
                ns: argparse.Namespace) -> ProjectionValues:
    """``--reduce`` over ``spec``'s plane (dimensions ``names``, ``_axis_names``): decoded as the
    plane would be written, on the cluster of ``--scheduler`` when one is given. ``--slice``
    chooses the plane's axes; the index it gives the reduced dimension (if any) is not used."""
    from .viewing.cf.values import value_coding
    from .viewing.projection.cluster import source_of
    from .viewing.projection.spec import projection
    from .viewing.projection.view import Engine, ProjectionValues

    arr = spec.array
    coding = value_coding(arr) if spec.decode else None
    shown = (*(spec.dims or ()), *(() if spec.channel_dim is None else (spec.channel_dim,)))
    p = projection(arr, spec.selection, reduce, names, coding if coding is not None and coding.active else None, shown)
    engine = Engine(ns.scheduler, source_of(arr, ns.location, storage_options(ns.authorize))) if ns.scheduler else Engine()
    return ProjectionValues(p, engine)


def _decoding(spec: PlaneSpec) -> PlaneSpec:
    """``spec`` written as CF values, with a line for each attribute that cannot be used."""
    from .viewing.cf.values import value_coding

    for note in value_coding(spec.array).notes:
        print(f"zarrview: {spec.array.path}: {note}", file=sys.stderr)
    return dataclasses.replace(spec, decode=True)


def _tty_progress(label: str) -> Callable[[int, int], None]:
    def progress(done: int, total: int) -> None:
        print(f"\rreading {label}: {done}/{total} chunks", end="\n" if done == total else "", file=sys.stderr, flush=True)

    return progress
