"""Plain text for OME nodes: what a group's attributes mark it as (from the attributes alone, no
request: the tree's Type column and the ``[OME image 0.5, 4 levels]`` of ``zarrview tree``) and
the description ``zarrview info`` prints."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .doc import namespace
from .model import (
    Bioformats2raw,
    CoordinateSystem,
    Level,
    Multiscale,
    OmeImage,
    OmeLabels,
    OmeNode,
    OmePlate,
    OmeScene,
    OmeWell,
    SceneLink,
)


def _shape(t: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(x) for x in t) + ("," if len(t) == 1 else "") + ")"


def _num(v: float) -> str:
    return f"{v:.6g}"


class OmeMark(NamedTuple):
    """What OME-Zarr node a group's attributes make it, from the attributes alone (no request):
    one reading for every place that marks OME groups (the tree's Type column, ``zarrview tree``)."""

    kind: str                     # "image", "label image", "labels", "plate", "well", "bioformats2raw", "scene"
    version: str
    #: plate: rows, columns, wells; well: fields; (label) image: levels, multiscales; labels: label
    #: images; None where the metadata does not say
    counts: tuple[int | None, ...]
    levels: dict[str, int]        # an image's level array paths -> level index


def ome_mark(attrs: Any) -> OmeMark | None:
    """The OME mark of a group's attributes; None for a plain group."""
    if not isinstance(attrs, dict):
        return None
    ns = namespace(attrs, "", [])
    if ns is None:
        return None
    keys, v = ns.keys, ns.version

    def count(value: Any, key: str) -> int | None:
        return len(value[key]) if isinstance(value, dict) and isinstance(value.get(key), list) else None

    if "plate" in keys:
        return OmeMark("plate", v, tuple(count(keys["plate"], x) for x in ("rows", "columns", "wells")), {})
    if "well" in keys:
        return OmeMark("well", v, (count(keys["well"], "images"),), {})
    if "multiscales" in keys or "image-label" in keys:
        ms = keys.get("multiscales")
        first = ms[0] if isinstance(ms, list) and ms else None
        datasets: list[Any] = first["datasets"] if isinstance(first, dict) and isinstance(first.get("datasets"), list) else []
        levels = {d["path"]: i for i, d in enumerate(datasets) if isinstance(d, dict) and isinstance(d.get("path"), str)}
        kind = "label image" if "image-label" in keys else "image"
        return OmeMark(kind, v, (count(first, "datasets"), len(ms) if isinstance(ms, list) else None), levels)
    if "bioformats2raw.layout" in keys:
        return OmeMark("bioformats2raw", v, (), {})
    if "scene" in keys:
        return OmeMark("scene", v, (count(keys["scene"], "coordinateTransformations"),), {})
    return OmeMark("labels", v, (count(keys, "labels"),), {})


def _n(value: int | None) -> str:
    return "?" if value is None else str(value)


def marker(attrs: Any) -> str:
    """``[OME image 0.5, 4 levels]``, ``[OME plate 0.4, 8x12, 2 wells]``... for a group's
    attributes (``zarrview tree``), or "" where they hold no OME metadata."""
    mark = ome_mark(attrs)
    if mark is None:
        return ""
    kind, v, c = mark.kind, mark.version, mark.counts
    if kind == "plate":
        return f"[OME plate {v}, {c[0] or '?'}x{c[1] or '?'}, {_n(c[2])} wells]"
    if kind == "well":
        return f"[OME well {v}, {_n(c[0])} fields]"
    if kind in ("image", "label image"):
        extra = f", {c[1]} multiscales" if c[1] is not None and c[1] > 1 else ""
        return f"[OME {'label' if kind == 'label image' else 'image'} {v}, {_n(c[0])} levels{extra}]"
    if kind == "bioformats2raw":
        return f"[OME bioformats2raw {v}]"
    if kind == "scene":
        return f"[OME scene {v}, {_n(c[0])} transformation{'' if c[0] == 1 else 's'}]"
    return f"[OME labels {v}, {_n(c[0])}]"


def type_text(mark: OmeMark) -> str:
    """The words of the tree's Type column: ``image (4 levels)``, ``plate 8×12, 2 wells``..."""
    kind, c = mark.kind, mark.counts
    if kind == "plate":
        return f"plate {_n(c[0])}×{_n(c[1])}, {_n(c[2])} wells"
    if kind == "well":
        return f"well ({_n(c[0])} field{'' if c[0] == 1 else 's'})"
    if kind in ("image", "label image"):
        more = f", {c[1]} multiscales" if c[1] is not None and c[1] > 1 else ""
        return f"{kind} ({_n(c[0])} level{'' if c[0] == 1 else 's'}{more})"
    if kind == "bioformats2raw":
        return "bioformats2raw series"
    if kind == "scene":
        return f"scene ({_n(c[0])} transformation{'' if c[0] == 1 else 's'})"
    return f"labels ({_n(c[0])})"


def describe(node: OmeNode) -> list[str]:
    """Lines describing an OME node for ``zarrview info``."""
    out = [f"OME-NGFF {node.kind} (version {node.version}"
           + (f", declared {node_declared(node)}" if node_declared(node) not in (None, node.version) else "") + ")"]
    if isinstance(node, OmeImage):
        out += _image(node)
    elif isinstance(node, OmePlate):
        out.append(f"  Name: {node.name or '—'}   Rows: {len(node.rows)} ({' '.join(node.rows)})   "
                   f"Columns: {len(node.columns)} ({' '.join(node.columns)})")
        out.append(f"  Wells: {len(node.wells)}: " + ", ".join(w.path for w in node.wells[:24])
                   + (" …" if len(node.wells) > 24 else ""))
        out.append(f"  Fields per well: {node.field_count if node.field_count is not None else '—'}   "
                   f"Acquisitions: {', '.join(str(a.id) + (f' ({a.name})' if a.name else '') for a in node.acquisitions) or '—'}"
                   + ("   (bioformats2raw layout)" if node.bioformats2raw else ""))
    elif isinstance(node, OmeWell):
        out.append("  Fields: " + (", ".join(im.path + (f" (acquisition {im.acquisition})" if im.acquisition is not None
                                                     else "") for im in node.images) or "—"))
    elif isinstance(node, Bioformats2raw):
        out.append(f"  Series ({len(node.series)}, from {node.series_from}): " + (", ".join(node.series) or "—"))
    elif isinstance(node, OmeLabels):
        out.append("  Label images: " + (", ".join(node.labels) or "—"))
    elif isinstance(node, OmeScene):
        out += _scene(node)
    out += _problems(node)
    return out


def node_declared(node: OmeNode) -> str | None:
    ns = namespace(node.group.attrs, "", []) if isinstance(node.group.attrs, dict) else None
    return ns.declared if ns is not None else None


def _image(img: OmeImage) -> list[str]:
    out = [f"  Name: {img.name or '—'}"]
    for i, ms in enumerate(img.multiscales):
        if len(img.multiscales) > 1:
            out.append(f"  Multiscale {i}: {ms.name or '—'}" + (" (default)" if i == 0 else ""))
        out += _multiscale(ms)
    if img.omero is not None:
        out.append(f"  Channels ({len(img.omero.channels)}):")
        for i, c in enumerate(img.omero.channels):
            w = c.window
            win = (f"window {_opt(w.start)}–{_opt(w.end)} of {_opt(w.min)}–{_opt(w.max)}" if w is not None else "no window")
            flags = ", ".join(f for f, on in (("active", c.active), ("inverted", c.inverted)) if on) or "inactive"
            out.append(f"    {i}: {c.label or '—'}  color {c.color or '—'}  {win}  {flags}")
        r = img.omero.rdefs
        if (r.default_z, r.default_t, r.model) != (None, None, None):
            out.append(f"  Rendering: defaultZ {_opt(r.default_z)}, defaultT {_opt(r.default_t)}, model {r.model or '—'}")
    if img.label is not None:
        lab = img.label
        out.append(f"  Label image: {len(lab.colors)} colours, {len(lab.properties)} properties, "
                   f"source {lab.source or '—'}")
    if img.labels:
        out.append("  Labels: " + ", ".join(img.labels))
    return out


def _scene(scene: OmeScene) -> list[str]:
    out = ["  Coordinate systems: " + (", ".join(system_text(s) for s in scene.coordinate_systems) or "—")]
    out.append(f"  Transformations ({len(scene.links)}):")
    out += [f"    {link_text(k)}" for k in scene.links]
    out.append("  Images: " + (", ".join(scene.images) or "—"))
    return out


def system_text(cs: CoordinateSystem) -> str:
    """``physical (z, y, x; micrometer)``: a coordinate system's name, axes and units."""
    units = sorted({a.unit for a in cs.axes if a.unit})
    return f"{cs.name} ({', '.join(a.name for a in cs.axes)}{'; ' + ', '.join(units) if units else ''})"


def link_text(link: SceneLink) -> str:
    """``affine: 'physical' of 'imageA' -> 'world'``."""
    def end(ref: tuple[str, str]) -> str:
        return f"{ref[1]!r}" + (f" of {ref[0]!r}" if ref[0] else "")
    named = f" ({link.name})" if link.name else ""
    return f"{link.type}{named}: {end(link.source)} -> {end(link.target)}"


def _multiscale(ms: Multiscale) -> list[str]:
    axes = ", ".join(f"{a.name} ({a.type or '?'}{', ' + a.unit if a.unit else ''})" for a in ms.axes)
    out = [f"  Axes: {axes}"]
    if ms.coordinate_systems:
        out.append("  Coordinate systems: " + ", ".join(system_text(s) for s in ms.coordinate_systems)
                   + f" (levels placed in {ms.intrinsic!r})")
    if ms.type:
        out.append(f"  Downscaling: {ms.type}")
    out.append(f"  Levels ({len(ms.levels)}):")
    for lv in ms.levels:
        out.append("    " + level_line(lv))
    return out


def level_line(lv: Level) -> str:
    """``0  path '0'  shape (…)  scale …  translation …  chunks … [shards …]`` for one level."""
    parts = [f"{lv.index}", f"path {lv.path!r}"]
    if lv.shape:
        parts.append(f"shape {_shape(lv.shape)}")
    parts.append("scale " + _shape_f(lv.scale))
    if any(lv.translation):
        parts.append("translation " + _shape_f(lv.translation))
    if lv.chunk_counts:
        parts.append(f"chunks {_shape(lv.chunks)}: {_count(lv.chunk_counts)}")
    if lv.shards and lv.shard_counts:
        parts.append(f"shards {_shape(lv.shards)}: {_count(lv.shard_counts)}")
    if lv.dtype:
        parts.append(lv.dtype)
    if lv.error:
        parts.append(f"— cannot be read: {lv.error}")
    return "  ".join(parts)


def _count(counts: tuple[int, ...]) -> str:
    return f"{math.prod(counts):,} ({'×'.join(map(str, counts))})"


def _shape_f(t: tuple[float, ...]) -> str:
    return "(" + ", ".join(_num(x) for x in t) + ")"


def _opt(v: Any) -> str:
    return "—" if v is None else _num(v) if isinstance(v, float) else str(v)


def _problems(node: OmeNode) -> list[str]:
    if not node.problems:
        return ["  Problems: none"]
    return [f"  Problems ({len(node.problems)}):"] + [f"    {p}" for p in node.problems]
