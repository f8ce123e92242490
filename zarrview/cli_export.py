"""``zarrview export``: the plane the window would show, an OME-Zarr image's plane with its
labels, a reduction over a dimension, or an AnnData dataframe, written to a file (no Qt)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .cli_common import AUTHORIZE_HELP, OneLineParser, said, storage_options
from .viewing.image.slice_spec import SLICE_HELP
from .viewing.projection.spec import REDUCE_HELP

if TYPE_CHECKING:  # imported when the command runs
    from .viewing.conventions.geozarr import GeoMultiscale
    from .viewing.export.plane import PlaneSpec
    from .viewing.labels.layers import LabelLayer
    from .viewing.ome import OmeNode
    from .viewing.projection.spec import ReduceText
    from .viewing.projection.view import ProjectionValues
    from .zarrlib import Group, Node


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
    from .viewing.export.errors import ExportError, UnsupportedExport
    from .viewing.export.plane import export_format, export_plane
    from .viewing.image.slice_spec import ArgumentError, choose_plane, read_slice
    from .viewing.projection.cluster import ClusterError
    from .viewing.projection.spec import read_reduce
    from .viewing.shown import shown_as

    try:
        reduce = read_reduce(ns.reduce) if ns.reduce is not None else None
        request = read_slice(ns.slice, reduced=int(reduce is not None))
        if ns.scheduler is not None and reduce is None:
            raise ArgumentError("zarrview: --scheduler runs the reduction of --reduce: give --reduce too")
        if reduce is not None and ns.labels is not None:
            raise ArgumentError("zarrview: --labels draws the label images of one plane; a projection (--reduce) "
                                "has none")
        export_format(ns.output)
        node = zl.open(ns.location, **storage_options(ns.authorize))
        node.hierarchy.widen_ml_types = True  # bfloat16, float8, int4...: exported as float32, as shown
        if _is_frame(node):
            return _export_frame(node, ns)
        found = shown_as(node) if isinstance(node, zl.Group) else None  # what the window shows it as
        plane, choices = choose_plane(node, request)
        names = _axis_names(node, found)
        if reduce is not None:
            plane = _reduced_fixed(node, names, plane, reduce)
        for choice in choices:  # nearest may be far from what was typed: say what was taken
            print(f"zarrview: --slice {choice}", file=sys.stderr)
        spec = _export_spec(node, found, plane, ns.level, ns.labels)
        if spec is None:
            return 1
        if not ns.raw:
            spec = _decoding(spec)
        values = None if reduce is None else _projection(names, spec, reduce, ns)
        if ns.slice is not None or reduce is not None:  # choosing: no index is taken silently
            _say_defaults(names, spec, plane)
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


def _axis_names(node: Node, found: OmeNode | GeoMultiscale | None) -> tuple[str | None, ...] | None:
    """The names of the dimensions of what ``node`` is shown as: an array's own, an OME-Zarr
    image's or a multiscales pyramid's axes; None for anything else."""
    from . import zarrlib as zl
    from .viewing.cf.dims import dimension_names
    from .viewing.conventions.geozarr import GeoMultiscale
    from .viewing.ome import OmeImage

    if isinstance(node, zl.Array):
        return dimension_names(node)
    if isinstance(found, OmeImage) and found.multiscales:
        return tuple(a.name for a in found.first.axes)
    if isinstance(found, GeoMultiscale) and found.multiscale.axes:
        return tuple(a.name for a in found.multiscale.axes)
    return None


def _say_defaults(names: tuple[str | None, ...] | None, spec: PlaneSpec, plane: dict[int, int]) -> None:
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


def _export_spec(node: Node, found: OmeNode | GeoMultiscale | None, plane: dict[int, int], level: int | None,
                 labels: str | None = None) -> PlaneSpec | None:
    """What ``zarrview export`` writes for ``node`` (shown as ``found``, ``viewing.shown``): an
    array's plane, or an OME-Zarr image's plane at pyramid ``level`` (the window's first view of
    it) with the label images ``labels`` names ("": all); None after saying why there is none."""
    from . import zarrlib as zl
    from .viewing.export.plane import default_spec, image_spec
    from .viewing.image.slice_spec import ArgumentError, check_plane
    from .viewing.ome import OmeImage

    if isinstance(node, zl.Array):
        for flag, given in (("--level", level), ("--labels", labels)):
            if given is not None:
                raise ArgumentError(f"zarrview: {flag} is for an OME-Zarr image group; {node.path} is an array")
        check_plane(node, plane)
        return default_spec(node, plane)
    if not isinstance(node, zl.Group):
        print(f"zarrview: {node.path} cannot be read: {getattr(node, 'error', 'not an array')}", file=sys.stderr)
        return None
    image = found
    if not isinstance(image, OmeImage):
        return _pyramid_spec(node, found, plane, level, labels)
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


def _pyramid_spec(node: Group, found: OmeNode | GeoMultiscale | None, plane: dict[int, int], level: int | None,
                  labels: str | None) -> PlaneSpec | None:
    """``_export_spec`` for a group that is no OME-Zarr image: a multiscales convention pyramid
    (GeoZarr), else None after saying what the group is not."""
    from .viewing.conventions.geozarr import GeoMultiscale
    from .viewing.export.plane import pyramid_spec
    from .viewing.image.slice_spec import ArgumentError, check_plane

    if not isinstance(found, GeoMultiscale):
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
