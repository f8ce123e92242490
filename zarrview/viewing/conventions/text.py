"""Words for the Zarr conventions of a node: the tree's mark, the metadata panel's rows (from the
attributes alone, no request) and what ``zarrview info`` prints of a multiscales pyramid."""

from __future__ import annotations

from typing import Any

from ..ome.doc import Reporter
from .crs import Crs, read_crs
from .declared import MULTISCALES, PROJ, SPATIAL, conventions
from .geozarr import GeoMultiscale


def _crs(attrs: Any) -> Crs | None:
    return read_crs(attrs, Reporter("", "$", []))


def _levels(attrs: Any) -> int | None:
    ms = attrs.get("multiscales") if isinstance(attrs, dict) else None
    layout = ms.get("layout") if isinstance(ms, dict) else None
    return len(layout) if isinstance(layout, list) else None


def family(applied: frozenset[str]) -> str:
    """"GeoZarr" where a CRS or a spatial transform goes with the node, else the plain convention."""
    return "GeoZarr" if applied & {PROJ, SPATIAL} else "Zarr"


def marker(attrs: Any) -> str:
    """``[GeoZarr multiscales, 3 levels, EPSG:32633]``, ``[GeoZarr, EPSG:4326]``, or "" for a node
    that follows none of the conventions zarrview reads."""
    conv = conventions(attrs)
    if not conv.applied:
        return ""
    parts = [family(conv.applied) + (" multiscales" if MULTISCALES in conv else "")]
    if MULTISCALES in conv:
        n = _levels(attrs)
        parts.append(f"{'?' if n is None else n} level{'' if n == 1 else 's'}")
    crs = _crs(attrs) if PROJ in conv else None
    if crs is not None:
        parts.append(crs.name)
    return "[" + ", ".join(parts) + "]"


def type_text(attrs: Any) -> str | None:
    """The tree's Type column for a group following the conventions: ``GeoZarr multiscales (3
    levels)``, ``GeoZarr group``; None for one that follows none (from cheap key checks only)."""
    conv = conventions(attrs)
    if not conv.applied:
        return None
    if MULTISCALES not in conv:
        return f"{family(conv.applied)} group"
    n = _levels(attrs)
    return f"{family(conv.applied)} multiscales ({'?' if n is None else n} level{'' if n == 1 else 's'})"


def rows(attrs: Any) -> list[tuple[str, str]]:
    """The metadata panel's rows for a node's conventions: which, the CRS, the levels (the raw
    ``spatial:`` and ``proj:`` keys are the Attributes tab's)."""
    conv = conventions(attrs)
    if not conv.applied and not conv.declared:
        return []
    out = [("Conventions", ", ".join(conv.names()) or "—")]
    crs = _crs(attrs) if PROJ in conv else None
    if crs is not None:
        out.append(("CRS", crs.label))
    if MULTISCALES in conv:
        n = _levels(attrs)
        out.append(("Levels", "?" if n is None else str(n)))
    return out


def describe(found: GeoMultiscale) -> list[str]:
    """Lines for ``zarrview info``: the pyramid, where each level lies, the CRS and the problems."""
    conv = found.conventions
    out = [f"{family(conv.applied)} multiscales ({', '.join(conv.names())})"]
    if found.variables:
        out.append(f"  Variables: {', '.join(found.variables)} (shown: {found.variable})")
    out.append(f"  CRS: {found.crs.label if found.crs is not None else '—'}"
               + ("" if found.georeferenced else "   (no spatial:transform: levels in pixels of the first)"))
    for level, aff in zip(found.multiscale.levels, found.transforms):
        shape = "×".join(str(s) for s in level.shape) or "?"
        where = f"transform [{aff.a:g}, {aff.b:g}, {aff.c:g}, {aff.d:g}, {aff.e:g}, {aff.f:g}]"
        out.append(f"  Level {level.index}: {level.path}  {shape}  {where}"
                   + (f"  — {level.error}" if level.error else ""))
    if found.problems:
        out.append(f"  Problems ({len(found.problems)}):")
        out += [f"    {p.severity}: {p.node}: {p.path}: {p.message}" for p in found.problems]
    return out
