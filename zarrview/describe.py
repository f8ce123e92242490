"""Plain-text descriptions of nodes, shared by the command line and the app's metadata panel.

Kept free of Qt so ``zarrview tree`` and ``zarrview info`` stay headless.
"""

from __future__ import annotations

import functools
import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .zarrlib import Array, ErrorNode, Node, UnsupportedArray
from .zarrlib.icechunk import IcechunkStore
from .zarrlib.mltypes import is_ml
from .zarrlib.storage import ZipStore
from .viewing.anndata.encoding import encoding_rows
from .viewing.conventions.text import marker as convention_marker, rows as convention_rows
from .viewing.metadata import human_bytes as human_bytes  # where the other layers read it from
from .viewing.ome.text import marker as ome_marker
from .viewing.spatialdata.store import mark as spatial_mark
from .viewing.spatialdata.store import rows as spatial_rows

if TYPE_CHECKING:
    from .zarrlib.metadata.model import ArrayMetadata
    from .zarrlib.nodes import Outline
    from .viewing.cf.coords import CoordAxis
    from .viewing.cf.values import ValueCoding
    from .viewing.cf.view import CFView



def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def dtype_text(arr: Array) -> str:
    """The data type's name; an ML, sub-byte or narrow complex type also says what reads return
    (``bfloat16 (shown as float32)``)."""
    if arr.meta.dt.storage is not None and arr.dtype != arr.stored_dtype:
        return f"{arr.meta.dt.name} (shown as {arr.dtype})"
    return _meta_dtype_text(arr.meta)


def meta_dtype_text(meta: ArrayMetadata) -> str:
    """The data type as ``dtype_text`` words it, from parsed metadata (a row not yet a node)."""
    return _meta_dtype_text(meta)


def _meta_dtype_text(meta: ArrayMetadata) -> str:
    if meta.dt.storage is not None:  # numpy names an ml_dtypes type alike; a complex_* type: complex64
        return meta.dt.name if meta.dt.storage.components == 1 else f"{meta.dt.name} (shown as {meta.dtype})"
    return meta.dt.name if meta.dtype.kind == "O" else _numpy_dtype_text(meta.dtype)


@functools.lru_cache(maxsize=512)
def _numpy_dtype_text(dtype: np.dtype[Any]) -> str:
    """Cached: numpy names a data type in Python code (3 µs, a sixth of a tree line)."""
    if dtype.names:
        return "struct{" + ", ".join(f"{n}: {dtype.fields[n][0]}" for n in dtype.names) + "}"  # type: ignore[index]
    return str(dtype)


def fill_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, np.generic) and is_ml(value.dtype):  # numpy sees their scalars as raw bytes
        value = float(value) if value.dtype.kind not in "iu" and "int" not in value.dtype.name else int(value)
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        return "NaN"
    if isinstance(value, np.generic):
        return repr(value.item()) if value.dtype.kind not in "V" else value.tobytes().hex()
    return repr(value)


def one_line(node: Node) -> str:
    """``name  kind  details`` for tree listings."""
    if isinstance(node, UnsupportedArray):
        w = node.written
        parts = [_opt(shape_text, w.shape), w.data_type or "?", "chunks " + _opt(shape_text, w.chunks), w.codecs or "?"]
        return f"{node.name or '/'}  array (unsupported)  " + "  ".join(parts) + f"  — {node.error}"
    if isinstance(node, ErrorNode):
        return f"{node.name or '/'}  error  {node.error}"
    if isinstance(node, Array):
        return f"{node.name or '/'}  array  {shape_text(node.shape)}  {_array_details(node.meta)}"
    extra = "  (implicit)" if node.implicit else ""
    mark = ome_marker(node.attrs) or convention_marker(node.attrs)  # from the attributes alone: no request
    spatial = spatial_mark(node.attrs)
    mark = mark or (f"[{spatial}]" if spatial else "")
    return f"{node.name or '/'}  group  {node.format_name}{extra}" + (f"  {mark}" if mark else "")


def outline_line(outline: Outline) -> str:
    """``one_line`` of a child as ``Group.member_outlines`` gives it (the same text)."""
    if outline.node is not None:
        return one_line(outline.node)
    assert outline.like is not None
    held = _details.get(id(outline.like))
    if held is None or held[0] is not outline.like:
        held = _details[id(outline.like)] = (outline.like, _array_details(outline.like))
    return f"{outline.name}  array  {shape_text(outline.shape)}  {held[1]}"


#: the details of each array template outlines were like, by identity (the template is held too)
_details: dict[int, tuple[ArrayMetadata, str]] = {}


def _array_details(meta: ArrayMetadata) -> str:
    """Data type, chunks, shards and codecs: what one line says of an array besides its shape."""
    rect = meta.grid is not None
    chunks = shape_text(meta.chunk_shape)
    parts = [_meta_dtype_text(meta), f"chunks rectilinear ≤{chunks}" if rect and not meta.shard_shape else f"chunks {chunks}"]
    if meta.shard_shape:
        parts.append(f"shards rectilinear ≤{shape_text(meta.shard_shape)}" if rect else f"shards {shape_text(meta.shard_shape)}")
    parts.append(meta.codecs_description)
    return "  ".join(parts)


def summary(node: Node) -> list[tuple[str, str]]:
    """(field, value) rows describing a node, in display order."""
    rows = [("Path", node.path), ("Kind", node.kind), ("Zarr format", node.format_name), ("Store", node.url)]
    spatial = spatial_rows(node.attrs)
    rows += archive_rows(node) + repository_rows(node) + spatial
    if not isinstance(node, ErrorNode) and not (spatial and str(node.attrs.get("encoding-type")).startswith("ngff:")):
        rows += encoding_rows(node)  # (SpatialData's points and shapes say "encoding-type" too: not AnnData)
    if isinstance(node, UnsupportedArray):  # what the document says, and why it cannot be read
        w = node.written
        return rows + [("Shape", _opt(shape_text, w.shape)), ("Data type", w.data_type or "?"),
                       ("Chunk shape", _opt(shape_text, w.chunks)), ("Codecs", w.codecs or "?"),
                       ("Error", str(node.error))]
    if isinstance(node, Array):
        rows += [
            ("Shape", shape_text(node.shape)),
            ("Data type", dtype_text(node)),
        ]
        rows += grid_rows(node)
        rows += [
            ("Codecs", node.codecs),
            ("Fill value", fill_text(node.fill_value)),
            ("Dimension names", ", ".join(str(n) for n in node.dimension_names) if node.dimension_names else "—"),
            ("Chunks in grid", f"{math.prod(node.chunk_grid_shape()):,} {shape_text(node.chunk_grid_shape())}"),
        ]
        if node.dtype.kind != "O":
            rows.append(("Logical size", f"{human_bytes(node.nbytes)} ({node.nbytes:,} bytes)"))
    return rows + convention_rows(node.attrs)


def grid_rows(arr: Array) -> list[tuple[str, str]]:
    """The chunk (and shard) shape; on a rectilinear grid, each dimension's edges as the
    grid's runs (``3×4, 5``: four chunks of 3, then one of 5), cut at the array's end."""
    grid = arr.grid
    if grid is None:
        rows = [("Chunk shape", shape_text(arr.chunks))]
        return rows + [("Shard shape", shape_text(arr.shards))] if arr.shards else rows
    what = "Shard" if arr.shards else "Chunk"
    names = arr.dimension_names or (None,) * arr.ndim
    objects = what.lower() + "s"
    rows = [(f"{what} grid", f"rectilinear, {math.prod(grid.grid_shape):,} {objects} {shape_text(grid.grid_shape)}, "
                             f"largest {shape_text(grid.largest)}")]
    for d, (axis, name) in enumerate(zip(grid.axes, names)):
        label = f"{what} edges {d}" + (f" ({name})" if name else "")
        rows.append((label, f"{axis.text()} ({axis.n:,} {objects})"))
    return rows + [("Chunk shape", shape_text(arr.chunks))] if arr.shards else rows


def archive_rows(node: Node) -> list[tuple[str, str]]:
    """What a zip archive's comment and layout say, on its root node only: single-file
    OME-Zarr names its version there, and the notes say how the archive departs from the
    single-file specification (slower reads, not wrong ones)."""
    store = getattr(node, "store", None)
    if node.path != "/" or not isinstance(store, ZipStore):
        return []
    archive = store.archive
    return [("Archive", archive.summary())] + [("Archive note", note) for note in archive.notes]


def repository_rows(node: Node) -> list[tuple[str, str]]:
    """Which version of an Icechunk repository a node is read from: the same path differs
    between branches, tags and commits, so every node of one says which it is."""
    store = getattr(node, "store", None)
    if not isinstance(store, IcechunkStore):
        return []
    when = store.snapshot.info_time().strftime("%Y-%m-%d %H:%M:%S UTC")
    rows = [("Repository", f"Icechunk, format version {store.info.spec}"),
            ("Version", f"{store.version}: snapshot {store.snapshot_id} ({when})")]
    if store.snapshot.message:
        rows.append(("Commit", store.snapshot.message))
    rows += [(f"Commit {name}", json.dumps(value, ensure_ascii=False, default=str))
             for name, value in store.snapshot.metadata.items()]
    return rows


def _opt(fmt: Any, value: Any) -> str:
    """A field the document did not state readably shows as ``?``."""
    return "?" if value is None else str(fmt(value))


def to_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def cf_rows(node: Node) -> list[tuple[str, str]]:
    """What the CF conventions (and GeoZarr-style keys) say about ``node``, as (field, value)
    rows for ``zarrview info``: an array's title and units, each dimension with its coordinate's
    first and last values, how its values are decoded, flags, and a ``Note`` row for each
    attribute that cannot be used. Reads an array's coordinate variables (not for the GUI
    thread). Empty where there is nothing to say."""
    from .viewing.cf.conventions import geo_metadata
    from .viewing.cf.view import read_cf

    rows: list[tuple[str, str]] = []
    if isinstance(node, Array) and not isinstance(node, UnsupportedArray):
        view = read_cf(node)
        rows = [] if view is None else _array_cf_rows(node, view)
    if not isinstance(node, ErrorNode):
        rows += [(f"GeoZarr {key}", text) for key, text in geo_metadata(node.attrs)]
    return rows


def _array_cf_rows(arr: Array, view: CFView) -> list[tuple[str, str]]:
    from .viewing.cf.dims import dimension_names

    attrs = arr.attrs if isinstance(arr.attrs, dict) else {}
    rows: list[tuple[str, str]] = []
    for key, label in (("long_name", "Long name"), ("standard_name", "Standard name")):
        if key in attrs:
            rows.append((label, attrs[key] if isinstance(attrs[key], str) else f"{attrs[key]!r} (not text)"))
    if view.units:
        rows.append(("Units", view.units))
    for d, (name, size) in enumerate(zip(dimension_names(arr), arr.shape)):
        axis = view.axes.get(d)
        own = view.own if d == 0 else None
        if axis is None and own is not None:  # CF 1.2: a 1-D variable named like its dimension is its coordinate
            text = f"{size}: {own.label(0)} … {own.label(size - 1)}" if size else "0 values"
            text += f" (this array is its coordinate variable{_calendar_text(own)})"
        elif axis is None:
            text = f"{size}, no coordinate variable"
        else:
            text = f"{size}: {axis.label(0)} … {axis.label(size - 1)}" if size else "0 values"
            calendar = axis.time.calendar if axis.time is not None else None
            extra = [f"coordinate {axis.name}"] if axis.name != name else []
            extra += [f"calendar {calendar}"] if calendar not in (None, "standard", "proleptic_gregorian") else []
            text += f" ({', '.join(extra)})" if extra else ""
        rows.append((f"Dimension {name if name is not None else d}", text))
    times = view.decoding.times if view.decoding is not None else None
    if times is not None:
        calendar = times.get("calendar")
        rows.append(("Values", f"times in {times.get('units')}, calendar {calendar if isinstance(calendar, str) else 'standard'}: "
                               "shown, plotted and exported as dates"))
    rows.append(("Value coding", coding_text(view.coding)))
    if view.flags is not None:
        codes = view.flags.values if view.flags.values is not None else view.flags.masks or ()
        rows.append(("Flags", ", ".join(f"{c} {m}" for c, m in zip(codes, view.flags.meanings))))
    if view.range is not None:
        rows.append(("Initial range", f"{view.range[0]:.10g} … {view.range[1]:.10g}"))
    return rows + [("Note", n) for n in dict.fromkeys(view.notes) if n]


def _calendar_text(axis: CoordAxis) -> str:
    calendar = axis.time.calendar if axis.time is not None else None
    return f", calendar {calendar}" if calendar is not None else ""


def coding_text(coding: ValueCoding) -> str:
    """One line saying what CF decoding does to an array's stored values."""
    if not coding.active:
        return "none: values are used as stored"
    parts: list[str] = []
    if coding.unsigned:
        parts.append("read as unsigned (_Unsigned)")
    if coding.fill_values:
        parts.append("masked where " + " or ".join(_number(f) for f in coding.fill_values))
    if coding.valid_min is not None or coding.valid_max is not None:
        lo = "" if coding.valid_min is None else _number(coding.valid_min)
        hi = "" if coding.valid_max is None else _number(coding.valid_max)
        parts.append(f"valid {lo} … {hi}".replace("  ", " ").strip())
    if coding.scale_factor is not None or coding.add_offset is not None:
        scale = 1.0 if coding.scale_factor is None else coding.scale_factor
        offset = 0.0 if coding.add_offset is None else coding.add_offset
        parts.append(f"unpacked as stored × {_number(scale)} + {_number(offset)}")
    return "; ".join(parts) + f" → {coding.decoded_dtype}"


def _number(x: float | int) -> str:
    return f"{x:.10g}" if isinstance(x, float) else str(x)
