"""SpatialData's coordinate transformations: each element maps its own axes into named
coordinate systems ("global", "aligned", ...), as a list of NGFF-style transformations each
naming its ``input`` and ``output`` coordinate system.

Every transformation is read into an :class:`AxisMap`, an affine map between named axes
(``identity``, ``mapAxis``, ``translation``, ``scale``, ``affine``, ``rotation``, ``sequence``,
``byDimension``), so that an element's place in a coordinate system is one matrix over the axes
a view needs (``AxisMap.matrix(("x", "y"), ("x", "y"))``, the 3 × 3 matrix spatialdata's
``to_affine_matrix`` gives). Nesting and sizes are bounded: a hostile document costs a
:class:`TransformError` naming the node and the JSON path, never a crash.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...zarrlib.errors import ZarrError, short

#: the most axes a transformation may name, transformations in one list, and levels of nesting
MAX_AXES = 16
MAX_STEPS = 256
MAX_DEPTH = 16


class TransformError(ZarrError):
    """A SpatialData transformation that cannot be read: names the node and the JSON path."""


@dataclass(frozen=True)
class AxisMap:
    """An affine map from the named ``inputs`` axes to the named ``outputs`` axes:
    ``out = m[:, :-1] @ in + m[:, -1]`` (``m`` is ``len(outputs) × (len(inputs) + 1)``)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    m: np.ndarray
    #: the coordinate system the map leads to (``output.name``), where stated
    system: str | None = None
    source: str | None = None

    def then(self, after: AxisMap, where: str) -> AxisMap:
        """This map followed by ``after`` (whose inputs this map's outputs must name)."""
        missing = [a for a in after.inputs if a not in self.outputs]
        if missing:
            raise TransformError(f"{where}: the next transformation reads axes {missing} that the one before "
                                 f"does not give (it gives {list(self.outputs)})")
        rows = np.vstack([self.m[self.outputs.index(a)] for a in after.inputs]) if after.inputs else \
            np.zeros((0, len(self.inputs) + 1))
        full = np.vstack([rows, np.eye(1, len(self.inputs) + 1, len(self.inputs))])
        return AxisMap(self.inputs, after.outputs, after.m @ full, after.system or self.system, self.source)

    def matrix(self, inputs: tuple[str, ...], outputs: tuple[str, ...]) -> np.ndarray:
        """The ``(len(outputs) + 1) × (len(inputs) + 1)`` homogeneous matrix over the axes asked
        for (an input axis the map does not read is left out, as spatialdata's own matrices do)."""
        missing = [a for a in outputs if a not in self.outputs]
        if missing:
            raise TransformError(f"the transformation gives no axis {missing} (it gives {list(self.outputs)})")
        out = np.zeros((len(outputs) + 1, len(inputs) + 1))
        for r, name in enumerate(outputs):
            row = self.m[self.outputs.index(name)]
            for c, axis in enumerate(inputs):
                if axis in self.inputs:
                    out[r, c] = row[self.inputs.index(axis)]
            out[r, -1] = row[-1]
            unread = [self.inputs[k] for k in range(len(self.inputs)) if self.inputs[k] not in inputs and row[k] != 0]
            if unread and all(a in ("c", "t") for a in unread):
                continue  # a channel or time index does not move a point in space
            if unread:
                raise TransformError(f"axis {name!r} depends on {unread}, which were not given")
        out[-1, -1] = 1.0
        return out


def parse_list(value: Any, node: str, where: str = "$.coordinateTransformations") -> dict[str, AxisMap]:
    """An element's transformations by the coordinate system each leads to (the first one
    wins where two name the same system). Raises :class:`TransformError`."""
    if not isinstance(value, list):
        raise TransformError(f"{node}: {where} must be a list of transformations, not {short(value)}")
    if len(value) > MAX_STEPS:
        raise TransformError(f"{node}: {where} holds {len(value)} transformations; at most {MAX_STEPS} are read")
    out: dict[str, AxisMap] = {}
    for i, t in enumerate(value):
        parsed = parse_one(t, node, f"{where}[{i}]", None, None, 0)
        if parsed.system is None:
            raise TransformError(f"{node}: {where}[{i}] names no output coordinate system")
        out.setdefault(parsed.system, parsed)
    return out


def _axes_of(system: Any, node: str, where: str) -> tuple[tuple[str, ...], str | None] | None:
    if system is None:
        return None
    if isinstance(system, str):  # a name alone: the axes come from context
        return None
    if not isinstance(system, dict):
        raise TransformError(f"{node}: {where} must be a coordinate system object, not {short(system)}")
    axes = system.get("axes")
    name = system.get("name")
    if not isinstance(axes, list) or not axes or len(axes) > MAX_AXES:
        raise TransformError(f"{node}: {where}.axes must list 1 to {MAX_AXES} axes, not {short(axes)}")
    names = tuple(a.get("name") if isinstance(a, dict) else a for a in axes)
    if not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise TransformError(f"{node}: {where}.axes must have distinct names, not {short(axes)}")
    return tuple(str(n) for n in names), name if isinstance(name, str) else None


def _numbers(value: Any, n: int | None, node: str, where: str) -> list[float]:
    if not isinstance(value, list) or (n is not None and len(value) != n):
        want = f"{n} numbers" if n is not None else "a list of numbers"
        raise TransformError(f"{node}: {where} must be {want}, not {short(value)}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        raise TransformError(f"{node}: {where} must hold finite numbers, not {short(value)}")
    return [float(v) for v in value]


def parse_one(t: Any, node: str, where: str, inputs: tuple[str, ...] | None, outputs: tuple[str, ...] | None,
              depth: int) -> AxisMap:
    """One transformation; ``inputs``/``outputs`` are the axes its context gives where it
    names no coordinate system of its own."""
    if depth > MAX_DEPTH:
        raise TransformError(f"{node}: {where} is nested more than {MAX_DEPTH} deep")
    if not isinstance(t, dict):
        raise TransformError(f"{node}: {where} must be an object, not {short(t)}")
    kind = t.get("type")
    got_in = _axes_of(t.get("input"), node, f"{where}.input")
    got_out = _axes_of(t.get("output"), node, f"{where}.output")
    ins = got_in[0] if got_in else inputs
    outs = got_out[0] if got_out else outputs
    system = got_out[1] if got_out else (t["output"] if isinstance(t.get("output"), str) else None)
    source = got_in[1] if got_in else (t["input"] if isinstance(t.get("input"), str) else None)
    if kind in ("sequence", "byDimension"):
        whole = _compound(t, kind, node, where, ins, outs, depth)
        return AxisMap(whole.inputs, whole.outputs, whole.m, system or whole.system, source)
    if ins is None:
        raise TransformError(f"{node}: {where} ({kind}) names no input axes")
    n = len(ins)
    m: np.ndarray
    if kind == "identity":
        outs = outs or ins
        m = np.zeros((len(outs), n + 1))
        for r, a in enumerate(outs):
            if a not in ins:
                raise TransformError(f"{node}: {where}: identity gives axis {a!r} that its input {list(ins)} lacks")
            m[r, ins.index(a)] = 1.0
    elif kind == "mapAxis":
        mapping = t.get("mapAxis")
        if not isinstance(mapping, dict) or not mapping or len(mapping) > MAX_AXES:
            raise TransformError(f"{node}: {where}.mapAxis must map output axes to input axes, not {short(mapping)}")
        outs = outs or tuple(mapping)
        m = np.zeros((len(outs), n + 1))
        for r, a in enumerate(outs):
            src = mapping.get(a)
            if src not in ins:
                raise TransformError(f"{node}: {where}.mapAxis: output {a!r} takes {short(src)}, not an input axis")
            m[r, ins.index(src)] = 1.0
    elif kind in ("translation", "scale"):
        vec = _numbers(t.get(kind), n, node, f"{where}.{kind}")
        outs = outs or ins
        base = np.hstack([np.eye(n), np.zeros((n, 1))])
        if kind == "scale":
            base[:, :n] = np.diag(vec)
        else:
            base[:, n] = vec
        m = _by_name(base, ins, outs, node, where)
    elif kind == "rotation":
        flat = _numbers(t.get("rotation"), n * n, node, f"{where}.rotation")
        base = np.hstack([np.array(flat).reshape(n, n), np.zeros((n, 1))])
        m = _by_name(base, ins, outs or ins, node, where)
        outs = outs or ins
    elif kind == "affine":
        rows = t.get("affine")
        if not isinstance(rows, list) or not rows or len(rows) > MAX_AXES:
            raise TransformError(f"{node}: {where}.affine must be a list of rows, not {short(rows)}")
        m = np.array([_numbers(r, n + 1, node, f"{where}.affine[{i}]") for i, r in enumerate(rows)])
        if len(rows) == n + 1 and np.allclose(m[-1], np.eye(1, n + 1, n)):  # written with its last row
            m = m[:-1]
        outs = outs or (ins if len(m) == n else None)
        if outs is None or len(outs) != len(m):
            raise TransformError(f"{node}: {where}.affine has {len(m)} rows for output axes {short(outs)}")
    else:
        raise TransformError(f"{node}: {where}.type {short(kind)} is not a SpatialData transformation")
    return AxisMap(tuple(ins), tuple(outs), m, system, source)


def _by_name(square: np.ndarray, ins: tuple[str, ...], outs: tuple[str, ...], node: str, where: str) -> np.ndarray:
    """A map written over the input axes, given to the output axes by name."""
    if outs == ins:
        return square
    missing = [a for a in outs if a not in ins]
    if missing:
        raise TransformError(f"{node}: {where}: output axes {missing} are not among the input axes {list(ins)}")
    return np.vstack([square[ins.index(a)] for a in outs])


def _compound(t: dict[str, Any], kind: str, node: str, where: str, ins: tuple[str, ...] | None,
              outs: tuple[str, ...] | None, depth: int) -> AxisMap:
    parts = t.get("transformations")
    if not isinstance(parts, list) or not parts or len(parts) > MAX_STEPS:
        raise TransformError(f"{node}: {where}.transformations must list 1 to {MAX_STEPS} transformations")
    if kind == "sequence":
        current: AxisMap | None = None
        for i, part in enumerate(parts):
            here = current.outputs if current is not None else ins
            step = parse_one(part, node, f"{where}.transformations[{i}]", here, None, depth + 1)
            current = step if current is None else current.then(step, f"{node}: {where}.transformations[{i}]")
        assert current is not None
        if outs is not None and set(outs) <= set(current.outputs) and outs != current.outputs:
            current = AxisMap(current.inputs, outs, np.vstack([current.m[current.outputs.index(a)] for a in outs]),
                              current.system, current.source)
        return current
    if ins is None:
        raise TransformError(f"{node}: {where} (byDimension) names no input axes")
    pieces = [parse_one(p, node, f"{where}.transformations[{i}]", None, None, depth + 1) for i, p in enumerate(parts)]
    rows: dict[str, np.ndarray] = {}
    for piece in pieces:
        for r, a in enumerate(piece.outputs):
            row = np.zeros(len(ins) + 1)
            for c, b in enumerate(piece.inputs):
                if b not in ins:
                    raise TransformError(f"{node}: {where}: a part reads axis {b!r}, not an input axis {list(ins)}")
                row[ins.index(b)] = piece.m[r, c]
            row[-1] = piece.m[r, -1]
            rows[a] = row
    order = outs or tuple(rows)
    if any(a not in rows for a in order):
        raise TransformError(f"{node}: {where}: no part gives axes {[a for a in order if a not in rows]}")
    return AxisMap(ins, order, np.vstack([rows[a] for a in order]))
