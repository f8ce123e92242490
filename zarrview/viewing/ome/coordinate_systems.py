"""OME-Zarr 0.6 ``coordinateSystems``, the references of a transformation's ``input`` and
``output``, and the graph they make: coordinate systems are its nodes, transformations its edges,
and a route between two systems is the composition of the maps along it (a transformation
walked backwards is inverted).

A reference is ``(path, name)``: ``path`` is the group that defines the system relative to the
document that refers to it ("" for the document itself), ``name`` its name (None where only a
dataset's array is meant). 0.6rc0 writes references as objects; 0.6.dev3 and earlier wrote the
datasets' as plain strings (the array path as input, the system's name as output), which are
read too.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from .affine import AffineMap, TransformationError, UnsupportedTransformation, identity_map
from .coordinate_transformations import Dims, dev_spellings, read_transformation
from .axes import parse_axes
from .doc import Reporter, kind_of
from .model import CoordinateSystem

Key = tuple[str, str | None]
#: coordinate systems a graph may hold before more are refused
MAX_SYSTEMS = 10_000


def parse_systems(value: Any, where: str, rep: Reporter) -> tuple[CoordinateSystem, ...]:
    """Every well-formed coordinate system of a ``coordinateSystems`` list (names unique, axes read)."""
    if not isinstance(value, list):
        rep.error(where, f'"coordinateSystems" must be a list of coordinate systems, not {kind_of(value)}')
        return ()
    out: list[CoordinateSystem] = []
    for i, cs in enumerate(value[:MAX_SYSTEMS]):
        here = f"{where}[{i}]"
        if not isinstance(cs, dict):
            rep.error(here, f"a coordinate system must be an object, not {kind_of(cs)}")
            continue
        name = cs.get("name")
        if not isinstance(name, str) or not name:
            rep.error(f"{here}.name", f'a coordinate system MUST have a non-empty string "name", not {name!r:.60}')
            continue
        if any(c.name == name for c in out):
            rep.error(f"{here}.name", f"coordinate system names MUST be unique: {name!r} is there twice")
            continue
        axes = parse_axes(cs.get("axes"), f"{here}.axes", rep)
        if axes is None:
            continue
        names = [a.name for a in axes]
        if len(set(names)) != len(names):
            rep.error(f"{here}.axes", f"axis names MUST be unique within coordinate system {name!r}: {names}")
        out.append(CoordinateSystem(name, axes))
    return tuple(out)


def parse_ref(value: Any, where: str, rep: Reporter, *, string_is: str, dialect: bool) -> Key | None:
    """The reference an ``input`` or ``output`` makes; ``string_is`` says what a plain string
    names ("path" or "name"), ``dialect`` whether the document's version wrote strings."""
    if isinstance(value, str) and value:
        if not dialect:
            rep.error(where, f'{value!r} as a plain string is the 0.6.dev3 spelling; 0.6rc0 writes an object '
                             f'{{"{string_is}": {value!r}}} (read as that)')
        return (value.strip("/"), None) if string_is == "path" else ("", value)
    if not isinstance(value, dict):
        rep.error(where, f'must be an object with "name" and/or "path", not {value!r:.60}')
        return None
    name, path = value.get("name"), value.get("path")
    if name is not None and not (isinstance(name, str) and name):
        rep.error(f"{where}.name", f'"name" must be a non-empty string, not {name!r:.60}')
        return None
    if path is not None and not isinstance(path, str):
        rep.error(f"{where}.path", f'"path" must be a string, not {path!r:.60}')
        return None
    if name is None and not path:
        rep.error(where, 'a reference MUST give a coordinate system "name" or an array "path"')
        return None
    return (path or "").strip("/"), name


class TransformGraph:
    """Coordinate systems joined by transformations; :meth:`route` composes a way between two."""

    def __init__(self) -> None:
        self._systems: dict[Key, CoordinateSystem | None] = {}
        self._edges: dict[Key, list[tuple[Key, AffineMap, bool]]] = {}
        self._links: dict[Key, set[Key]] = {}

    def add_system(self, key: Key, system: CoordinateSystem | None) -> None:
        if len(self._systems) < MAX_SYSTEMS:
            self._systems.setdefault(key, system)

    def system(self, key: Key) -> CoordinateSystem | None:
        return self._systems.get(key)

    def __contains__(self, key: Key) -> bool:
        return key in self._systems

    def add(self, source: Key, target: Key, amap: AffineMap | None) -> None:
        """A transformation from ``source`` to ``target``; None where it cannot be applied (the
        systems count as linked all the same, as the specification counts them)."""
        self._links.setdefault(source, set()).add(target)
        self._links.setdefault(target, set()).add(source)
        if amap is not None:
            self._edges.setdefault(source, []).append((target, amap, True))
            self._edges.setdefault(target, []).append((source, amap, False))

    def route(self, source: Key, target: Key) -> AffineMap:
        """The map from ``source`` to ``target`` along the fewest transformations (inverting those
        walked backwards where they can be); :class:`TransformationError` where there is none."""
        for key, end in ((source, "source"), (target, "target")):
            if key not in self._systems:
                raise TransformationError("$", f"the {end} coordinate system {_show(key)} is not defined")
        came: dict[Key, tuple[Key, AffineMap] | None] = {source: None}
        todo = deque([source])
        while todo and target not in came:
            here = todo.popleft()
            for nxt, amap, forward in self._edges.get(here, ()):
                if nxt in came:
                    continue
                try:
                    step = amap if forward else amap.inverse()
                except TransformationError:
                    continue  # not walkable backwards; another way may be
                came[nxt] = (here, step)
                todo.append(nxt)
        if target not in came:
            raise TransformationError("$", f"no chain of transformations leads from {_show(source)} to {_show(target)}")
        steps: list[AffineMap] = []
        at = target
        while (prev := came[at]) is not None:
            steps.append(prev[1])
            at = prev[0]
        if not steps:
            system = self._systems[source]
            n = len(system.axes) if system is not None else 0
            return identity_map(n)
        out = steps[-1]
        for step in reversed(steps[:-1]):
            out = out.then(step)
        return out

    def components(self) -> list[set[Key]]:
        """The groups of systems linked to each other (one group where the graph is connected)."""
        left = set(self._systems)
        out = []
        while left:
            seed = left.pop()
            group = {seed}
            todo = [seed]
            while todo:
                for nxt in self._links.get(todo.pop(), ()):
                    if nxt in left:
                        left.discard(nxt)
                        group.add(nxt)
                        todo.append(nxt)
            out.append(group)
        return out


def add_link(graph: TransformGraph, t: dict[str, Any], where: str, source: Key, target: Key, rep: Reporter,
             dialect: bool) -> None:
    """Reads the transformation ``t`` from ``source`` to ``target`` (systems of ``graph``) and adds
    it; what cannot be read is reported, and the two systems still count as linked."""
    a, b = graph.system(source), graph.system(target)
    dims = Dims(len(a.axes) if a else None, len(b.axes) if b else None,
                tuple(x.name for x in a.axes) if a else None, tuple(x.name for x in b.axes) if b else None)
    spellings(t, where, dims.n_in, rep, dialect)
    try:
        graph.add(source, target, read_transformation(t, rep.at(where), dims))
    except UnsupportedTransformation as e:
        rep.warning(where, f"unsupported: {e.message}; no route passes through it")
        graph.add(source, target, None)
    except TransformationError as e:
        rep.error(where, str(e))
        graph.add(source, target, None)


def spellings(t: dict[str, Any], where: str, n_in: int | None, rep: Reporter, dialect: bool) -> None:
    """The pre-0.6rc0 spellings of a transformation, each an error where the document says it is
    0.6 or 0.6rc0 (a pre-release writes them)."""
    if not dialect:
        for path, message in dev_spellings(t, where, n_in):
            rep.error(path, message)


def _show(key: Key) -> str:
    path, name = key
    return f"{name!r}" + (f" of {path!r}" if path else "")
