"""What a SpatialData store is: its root says ``spatialdata_attrs`` (the format version and the
software that wrote it), and its elements sit in ``images/``, ``labels/``, ``points/``,
``shapes/`` and ``tables/``, one group each.

``mark`` reads a group's attributes alone (no request: the tree's Type column, ``zarrview
tree``); ``read_store`` lists the element folders (requests: call it off the GUI thread) and
reads each element's coordinate systems from its attributes. Images and labels are OME-NGFF
multiscales as spatialdata writes them (``ome.flavour``); points and shapes are Parquet files
inside the element's folder (``parquet.py``); tables are AnnData groups, only listed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...zarrlib import Group, ZarrError
from .transforms import AxisMap, TransformError, parse_list

Kind = Literal["images", "labels", "points", "shapes", "tables"]
#: the element folders, in the order spatialdata lists them
KINDS: tuple[Kind, ...] = ("images", "labels", "points", "shapes", "tables")
#: what one element of each folder is called
SINGULAR = {"images": "image", "labels": "labels", "points": "points", "shapes": "shapes", "tables": "table"}
#: the most elements of one kind that are listed
MAX_ELEMENTS = 10_000


@dataclass(frozen=True)
class Element:
    kind: Kind
    name: str
    group: Group = field(compare=False, repr=False)
    #: its transformations by the coordinate system each leads to
    systems: dict[str, AxisMap] = field(default_factory=dict, compare=False)
    #: the axes of its own space ("x", "y"[, "z"]; "c", "y", "x" for an image)
    axes: tuple[str, ...] = ()
    #: why its transformations cannot be read, where they cannot
    error: str | None = None

    @property
    def path(self) -> str:
        return self.group.path


@dataclass(frozen=True)
class SpatialDataStore:
    group: Group = field(repr=False)
    version: str
    software: str | None
    elements: tuple[Element, ...]
    #: element folders that could not be listed, with the reason
    errors: tuple[str, ...] = ()

    def of(self, kind: Kind) -> tuple[Element, ...]:
        return tuple(e for e in self.elements if e.kind == kind)

    def systems(self) -> tuple[str, ...]:
        """Every coordinate system an element maps to, first seen first."""
        seen: dict[str, None] = {}
        for e in self.elements:
            seen.update(dict.fromkeys(e.systems))
        return tuple(seen)

    def mates(self, element: Element, kinds: tuple[Kind, ...]) -> tuple[tuple[Element, str], ...]:
        """The elements of ``kinds`` that share a coordinate system with ``element``, each with
        the first shared system in ``element``'s order."""
        out = []
        for other in self.elements:
            if other.kind in kinds and other is not element:
                shared = next((s for s in element.systems if s in other.systems), None)
                if shared is not None:
                    out.append((other, shared))
        return tuple(out)


def root_attrs(attrs: Any) -> dict[str, Any] | None:
    """The ``spatialdata_attrs`` of a store's root (with a ``version``), or None."""
    if not isinstance(attrs, dict):
        return None
    sd = attrs.get("spatialdata_attrs")
    if isinstance(sd, dict) and isinstance(sd.get("version"), str) and "ome" not in attrs \
            and "encoding-type" not in attrs and "multiscales" not in attrs:
        return sd
    return None


def is_element(attrs: Any) -> bool:
    """Whether a group's attributes are those spatialdata writes on an element."""
    return isinstance(attrs, dict) and isinstance(attrs.get("spatialdata_attrs"), dict) and root_attrs(attrs) is None


def mark(attrs: Any, parent_attrs: Any = None, name: str = "") -> str | None:
    """The words the tree's Type column shows for a SpatialData group, from attributes alone:
    ``SpatialData 0.2 (spatialdata 0.8.0)`` for the root, ``SpatialData images`` for an element
    folder (``parent_attrs``: its root's), ``SpatialData points`` for a points, shapes or table
    element; None for anything else."""
    sd = root_attrs(attrs)
    if sd is not None:
        software = sd.get("spatialdata_software_version")
        return f"SpatialData {sd['version']}" + (f" (spatialdata {software})" if isinstance(software, str) else "")
    if root_attrs(parent_attrs) is not None and name in KINDS:
        return f"SpatialData {name}"
    if isinstance(attrs, dict) and (attrs.get("encoding-type") in ("ngff:points", "ngff:shapes")
                                    or "spatialdata-encoding-type" in attrs):
        kind = element_kind(attrs)
        return f"SpatialData {SINGULAR[kind]}" if kind is not None else None
    return None


def rows(attrs: Any, parent_attrs: Any = None, name: str = "") -> list[tuple[str, str]]:
    """The metadata panel's rows for a SpatialData group, from attributes alone: what it is and,
    for an element, the coordinate systems its transformations lead to."""
    if not isinstance(attrs, dict):
        return []
    kind = element_kind(attrs) if is_element(attrs) or mark(attrs) else None
    if kind is None:
        what = mark(attrs, parent_attrs, name)
        return [("SpatialData", what)] if what else []
    out = [("SpatialData", f"{SINGULAR[kind]} element")]
    if kind != "tables":
        value, where = transformations_of(attrs)
        try:
            systems = ", ".join(parse_list(value, "", where)) or "—"
        except TransformError as e:
            systems = f"cannot be read: {e}"
        out.append(("Coordinate systems", systems))
    return out


def element_kind(attrs: dict[str, Any], folder: str | None = None) -> Kind | None:
    """What element a group's attributes make it (``folder`` decides where they do not say)."""
    encoding = attrs.get("encoding-type")
    if encoding == "ngff:points":
        return "points"
    if encoding == "ngff:shapes":
        return "shapes"
    if encoding == "anndata" or attrs.get("spatialdata-encoding-type") == "ngff:regions_table":
        return "tables"
    ome = attrs.get("ome") if isinstance(attrs.get("ome"), dict) else attrs
    if isinstance(ome, dict) and "multiscales" in ome:
        return "labels" if "image-label" in ome or folder == "labels" else "images"
    return next((k for k in KINDS if k == folder), None)


def transformations_of(attrs: dict[str, Any]) -> Any:
    """Where an element keeps its transformations: a raster's first multiscale (0.4 or 0.5
    layout), a points or shapes element's own attributes."""
    ome = attrs.get("ome") if isinstance(attrs.get("ome"), dict) else attrs
    ms = ome.get("multiscales") if isinstance(ome, dict) else None
    if isinstance(ms, list) and ms and isinstance(ms[0], dict):
        return ms[0].get("coordinateTransformations"), "$" + (".ome" if ome is not attrs else "") + \
            ".multiscales[0].coordinateTransformations"
    return attrs.get("coordinateTransformations"), "$.coordinateTransformations"


def read_element(kind: Kind, group: Group) -> Element:
    """An element and its coordinate systems, from its attributes alone (no request)."""
    attrs = group.attrs if isinstance(group.attrs, dict) else {}
    axes: tuple[str, ...] = ()
    if kind in ("points", "shapes"):
        raw = attrs.get("axes")
        axes = tuple(a for a in raw if isinstance(a, str)) if isinstance(raw, list) else ()
    if kind == "tables":
        return Element(kind, group.name, group)
    value, where = transformations_of(attrs)
    try:
        systems = parse_list(value, group.path, where)
    except TransformError as e:
        return Element(kind, group.name, group, {}, axes, str(e))
    if not axes and systems:
        axes = next(iter(systems.values())).inputs
    return Element(kind, group.name, group, systems, axes)


def read_store(root: Group) -> SpatialDataStore | None:
    """The store whose root is ``root``, its elements listed by folder; None where ``root`` is
    not a SpatialData root. Lists groups: not on the GUI thread."""
    sd = root_attrs(root.attrs)
    if sd is None:
        return None
    software = sd.get("spatialdata_software_version")
    elements: list[Element] = []
    errors: list[str] = []
    for kind in KINDS:
        try:
            folder = root[kind]
        except ZarrError:
            continue  # an empty store has no such folder
        if not isinstance(folder, Group):
            errors.append(f"{folder.path} is not a group")
            continue
        try:
            members = folder.members()
        except ZarrError as e:
            errors.append(f"{folder.path} cannot be listed: {e}")
            continue
        groups = sorted((m for m in members if isinstance(m, Group)), key=lambda g: g.name)
        if len(groups) > MAX_ELEMENTS:
            errors.append(f"{folder.path} holds {len(groups):,} elements; the first {MAX_ELEMENTS:,} are listed")
            groups = groups[:MAX_ELEMENTS]
        elements += [read_element(kind, g) for g in groups]
    return SpatialDataStore(root, sd["version"], software if isinstance(software, str) else None,
                            tuple(elements), tuple(errors))


def store_of(element: Group) -> Group | None:
    """The root of the SpatialData store an element group is in (``root/kind/name``), or None."""
    try:
        root = element.ancestor(2)
    except (ZarrError, ValueError):
        return None
    parts = [p for p in element.path.split("/") if p]
    return root if root_attrs(root.attrs) is not None and len(parts) >= 2 and parts[-2] in KINDS else None


def summary(store: SpatialDataStore) -> str:
    """The words the data view shows for a store's root."""
    lines = [f"SpatialData store (format {store.version}"
             + (f", written by spatialdata {store.software}" if store.software else "") + ")"]
    for kind in KINDS:
        found = store.of(kind)
        if found:
            lines.append(f"{kind.capitalize()} ({len(found)}): " + ", ".join(e.name for e in found))
    systems = store.systems()
    if systems:
        lines.append("Coordinate systems: " + ", ".join(systems))
    lines += store.errors
    lines.append("\nSelect an image under images/ to see it with the labels, points and shapes of its "
                 "coordinate system.")
    return "\n".join(lines)
