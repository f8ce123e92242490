"""OME-Zarr 0.6 ``scene``: coordinate systems of the scene's own and transformations linking
them with the coordinate systems of the images below it.

Every reference is checked: a scene system by name, an image's by its group's path and the name
of one of its multiscale's coordinate systems (the image's attributes are read, its arrays are
not). The systems, the images' and their own links between them make one graph, so that
:meth:`OmeScene.route` gives the map between any two linked systems; the specification asks
that they be connected.
"""

from __future__ import annotations

from typing import Any

from ...zarrlib import Group, ZarrError
from .coordinate_systems import Key, TransformGraph, add_link, parse_ref, parse_systems
from .doc import Namespace, Reporter, kind_of, namespace
from .model import CoordinateSystem, OmeScene, SceneLink

#: image groups a scene's links may name before the rest are left unchecked
MAX_IMAGES = 256


def parse_scene(group: Group, ns: Namespace, rep: Reporter) -> OmeScene:
    value = ns.keys["scene"]
    graph = TransformGraph()
    if not isinstance(value, dict):
        rep.error("scene", f'"scene" must be an object, not {kind_of(value)}')
        return OmeScene(ns.version, group, (), (), (), (), graph)
    systems = parse_systems(value["coordinateSystems"], "scene.coordinateSystems", rep) \
        if "coordinateSystems" in value else ()
    for s in systems:
        graph.add_system(("", s.name), s)
    images: dict[str, tuple[CoordinateSystem, ...] | None] = {}
    links = []
    items = rep.get_list(value, "coordinateTransformations", "scene", required=True) or []
    if not items and "coordinateTransformations" in value:
        rep.error("scene.coordinateTransformations", "a scene MUST list at least one transformation")
    for i, t in enumerate(items):
        link = _link(group, t, f"scene.coordinateTransformations[{i}]", graph, images, rep, ns.dialect)
        if link is not None:
            links.append(link)
    groups = graph.components()
    if len(groups) > 1:
        parts = "; ".join(", ".join(sorted(_name(k) for k in g)) for g in groups)
        rep.error("scene", f"the coordinate systems MUST be connected by transformations; they fall apart into "
                           f"{len(groups)} groups: {parts}")
    return OmeScene(ns.version, group, (), systems, tuple(links), tuple(sorted(images)), graph)


def _link(group: Group, t: Any, where: str, graph: TransformGraph,
          images: dict[str, tuple[CoordinateSystem, ...] | None], rep: Reporter, dialect: bool) -> SceneLink | None:
    if not isinstance(t, dict):
        rep.error(where, f"a transformation must be an object, not {kind_of(t)}")
        return None
    ends: list[Key] = []
    for k in ("input", "output"):
        if k not in t:
            rep.error(where, f'a scene transformation MUST have an "{k}"')
            return None
        ref = parse_ref(t[k], f"{where}.{k}", rep, string_is="name", dialect=dialect)
        if ref is None:
            return None
        if ref[1] is None:
            rep.error(f"{where}.{k}", f'the {k} MUST name a coordinate system ("name")')
            return None
        if not _known(group, ref, images, graph, f"{where}.{k}", rep):
            return None
        ends.append(ref)
    src, dst = ends
    typ = str(t["type"]) if isinstance(t.get("type"), str) else "?"
    name = t.get("name") if isinstance(t.get("name"), str) else None
    add_link(graph, t, where, src, dst, rep, dialect)
    return SceneLink(name, typ, (src[0], src[1] or ""), (dst[0], dst[1] or ""))


def _known(group: Group, ref: Key, images: dict[str, tuple[CoordinateSystem, ...] | None], graph: TransformGraph,
           where: str, rep: Reporter) -> bool:
    """Whether the system ``ref`` names exists (an image's systems are read once, on first use)."""
    path, name = ref
    if not path:
        if ref not in graph:
            rep.error(where, f"coordinate system {name!r} is not defined in the scene")
            return False
        return True
    if path not in images:
        if len(images) >= MAX_IMAGES:
            rep.warning(where, f"more than {MAX_IMAGES} images are linked; {path!r} is not checked")
            return False
        images[path] = _image_systems(group, path, where, rep)
        for s in images[path] or ():
            graph.add_system((path, s.name), s)
    systems = images[path]
    if systems is None:
        return False
    if all(s.name != name for s in systems):
        rep.error(where, f"the image {path!r} has no coordinate system {name!r} (it has {[s.name for s in systems]})")
        return False
    return True


def _image_systems(group: Group, path: str, where: str, rep: Reporter) -> tuple[CoordinateSystem, ...] | None:
    """The coordinate systems the image group at ``path`` defines (its first multiscale's)."""
    try:
        node = group[path]
    except ZarrError as e:
        rep.error(where, f"the image {path!r} cannot be opened: {e}")
        return None
    ns = namespace(node.attrs, node.path, []) if isinstance(node, Group) and isinstance(node.attrs, dict) else None
    ms = ns.keys.get("multiscales") if ns is not None else None
    if not isinstance(ms, list) or not ms or not isinstance(ms[0], dict):
        rep.error(where, f"{path!r} is not a multiscale image group")
        return None
    # the image's own problems are reported when the image is opened
    return parse_systems(ms[0].get("coordinateSystems", []), "", Reporter(node.path, "$", []))


def _name(key: Key) -> str:
    return f"{key[0]}:{key[1]}" if key[0] else str(key[1])
