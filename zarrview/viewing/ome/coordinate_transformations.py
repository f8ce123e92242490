"""OME-Zarr 0.6 (RFC-5) ``coordinateTransformations``: one transformation object read into an
:class:`~zarrview.viewing.ome.affine.AffineMap`.

The dialects written before 0.6rc0 are read too: ``0.6.dev2`` wrote ``mapAxis`` as an object of
output axis name to input axis name and ``byDimension`` items as transformations carrying
``input_axes``/``output_axes`` (axis names); ``0.6.dev3`` and ``0.6.dev4`` wrote items of
``transformation``, ``input_axes`` and ``output_axes`` (indices); 0.6rc0 spells them
``inputAxes``/``outputAxes``. ``inverseOf`` (dropped in dev3) is read as the inverse of what it
wraps. Nesting is bounded (a document nested deeper than :data:`MAX_DEPTH`, or an object that
contains itself, is an error, never a recursion).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .affine import AffineMap, TransformationError, UnsupportedTransformation, from_linear, identity_map
from .doc import is_int, is_number, kind_of

#: nesting of sequence / byDimension / bijection deeper than this is refused
MAX_DEPTH = 32
#: axes a transformation may have at either end (OME images have at most 5; this bounds matrices)
MAX_AXES = 64
#: the types read here; "displacements" and "coordinates" are known but not applied
AFFINE_TYPES = ("identity", "scale", "translation", "affine", "rotation", "mapAxis", "projectAxis", "sequence",
                "byDimension", "bijection", "inverseOf")
FIELD_TYPES = ("displacements", "coordinates")


@dataclass(frozen=True)
class Dims:
    """What is known of a transformation's ends: axis counts and names (None where unknown)."""

    n_in: int | None = None
    n_out: int | None = None
    names_in: tuple[str, ...] | None = None
    names_out: tuple[str, ...] | None = None


def read_transformation(t: Any, where: str, dims: Dims = Dims()) -> AffineMap:
    """The affine map of one transformation object; raises :class:`TransformationError` (or
    :class:`UnsupportedTransformation`) naming the JSON path of what is wrong."""
    return _read(t, where, dims, ())


def _read(t: Any, where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    if not isinstance(t, dict):
        raise TransformationError(where, f"a transformation must be an object, not {kind_of(t)}")
    if id(t) in stack:
        raise TransformationError(where, "the transformation contains itself")
    if len(stack) >= MAX_DEPTH:
        raise TransformationError(where, f"transformations are nested more than {MAX_DEPTH} deep")
    typ = t.get("type")
    reader = _READERS.get(typ) if isinstance(typ, str) else None
    if reader is None:
        if typ in FIELD_TYPES:
            raise UnsupportedTransformation(where, f"{typ} fields are not applied by this viewer")
        raise TransformationError(f"{where}.type", f"unknown transformation type {typ!r}")
    out = reader(t, where, dims, stack + (id(t),))
    if dims.n_in is not None and out.n_in != dims.n_in:
        raise TransformationError(where, f"the {typ} takes {out.n_in} axes; its input has {dims.n_in}")
    if dims.n_out is not None and out.n_out != dims.n_out:
        raise TransformationError(where, f"the {typ} gives {out.n_out} axes; its output has {dims.n_out}")
    return out


def _vector(t: dict[str, Any], key: str, where: str, n: int | None) -> np.ndarray:
    if key not in t and "path" in t:
        raise UnsupportedTransformation(where, f"a {key} stored in a Zarr array ({t['path']!r}) is not read")
    vec = t.get(key)
    if not isinstance(vec, list) or not vec or not all(is_number(v) for v in vec):
        raise TransformationError(f"{where}.{key}", f'"{key}" must be a non-empty list of numbers, not {vec!r:.60}')
    if n is not None and len(vec) != n:
        raise TransformationError(f"{where}.{key}", f"the {key} has {len(vec)} values; the input has {n} axes")
    _bounded(len(vec), f"{where}.{key}")
    return np.array(vec, dtype=float)


def _bounded(n: int, where: str) -> int:
    if n > MAX_AXES:
        raise TransformationError(where, f"{n} axes are more than the {MAX_AXES} a transformation may have here")
    return n


def _matrix(t: dict[str, Any], key: str, where: str) -> np.ndarray:
    if key not in t and "path" in t:
        raise UnsupportedTransformation(where, f"an {key} matrix stored in a Zarr array ({t['path']!r}) is not read")
    rows = t.get(key)
    if (not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows)
            or not all(is_number(v) for r in rows for v in r)):
        raise TransformationError(f"{where}.{key}", f'"{key}" must be a list of rows of numbers, not {rows!r:.60}')
    if len({len(r) for r in rows}) != 1:
        raise TransformationError(f"{where}.{key}", f"the rows of the {key} differ in length")
    _bounded(max(len(rows), len(rows[0]) - 1), f"{where}.{key}")
    return np.array(rows, dtype=float)


def _need_in(dims: Dims, where: str, typ: str) -> int:
    if dims.n_in is None:
        raise TransformationError(where, f"the number of axes a {typ} takes is not known here")
    return dims.n_in


def _identity(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    n = dims.n_in if dims.n_in is not None else dims.n_out
    if n is None:
        raise TransformationError(where, "the number of axes an identity takes is not known here")
    _bounded(n, where)
    if dims.n_out is not None and dims.n_out != n:
        raise TransformationError(where, f"an identity cannot map {n} axes to {dims.n_out}")
    return identity_map(n)


def _scale(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    vec = _vector(t, "scale", where, dims.n_in)
    return from_linear(np.diag(vec), np.zeros(len(vec)))


def _translation(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    vec = _vector(t, "translation", where, dims.n_in)
    return from_linear(np.eye(len(vec)), vec)


def _affine(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    m = _matrix(t, "affine", where)
    if m.shape[1] < 2:
        raise TransformationError(f"{where}.affine", "an affine needs N + 1 columns for N input axes")
    homogeneous = m.shape[0] == m.shape[1] and np.array_equal(m[-1], np.eye(m.shape[1])[-1])
    if homogeneous and (dims.n_out is None or dims.n_out == m.shape[0] - 1):
        m = m[:-1]  # written with its last row, (0, ..., 0, 1)
    return from_linear(m[:, :-1], m[:, -1])


def _rotation(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    m = _matrix(t, "rotation", where)
    if m.shape[0] != m.shape[1]:
        raise TransformationError(f"{where}.rotation", f"a rotation must be N × N, not {m.shape[0]} × {m.shape[1]}")
    return from_linear(m, np.zeros(m.shape[0]))


def _map_axis(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    value = t.get("mapAxis")
    if isinstance(value, dict):  # 0.6.dev2: output axis name -> input axis name
        if dims.names_in is None or dims.names_out is None:
            raise TransformationError(f"{where}.mapAxis", "a mapAxis by axis names needs named input and output axes")
        value = [_index(value.get(name), dims.names_in, f"{where}.mapAxis.{name}") for name in dims.names_out]
    n = _bounded(_need_in(dims, where, "mapAxis"), where)
    if not isinstance(value, list) or not value or not all(is_int(v) for v in value):
        raise TransformationError(f"{where}.mapAxis", f'"mapAxis" must be a list of axis indices, not {value!r:.60}')
    _bounded(len(value), f"{where}.mapAxis")
    bad = [v for v in value if not 0 <= v < n]
    if bad:
        raise TransformationError(f"{where}.mapAxis", f"axis indices {bad} are outside the {n} input axes")
    linear = np.zeros((len(value), n))
    for i, j in enumerate(value):
        linear[i, j] = 1.0
    return from_linear(linear, np.zeros(len(value)))


def _project_axis(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    n = _bounded(_need_in(dims, where, "projectAxis"), where)
    dropped = _indices(t.get("droppedInputs", []), f"{where}.droppedInputs", n)
    kept = [i for i in range(n) if i not in dropped]
    m = len(kept) + len(t.get("createdOutputs", []) if isinstance(t.get("createdOutputs"), list) else [])
    created = _indices(t.get("createdOutputs", []), f"{where}.createdOutputs", m)
    _bounded(m, f"{where}.createdOutputs")
    linear = np.zeros((m, n))
    sources = iter(kept)
    for i in range(m):
        if i not in created:
            linear[i, next(sources)] = 1.0
    return from_linear(linear, np.zeros(m))


def _indices(value: Any, where: str, n: int) -> set[int]:
    if not isinstance(value, list) or not all(is_int(v) and 0 <= v < n for v in value):
        raise TransformationError(where, f"must be a list of axis indices below {n}, not {value!r:.60}")
    if len(set(value)) != len(value):
        raise TransformationError(where, f"axis indices must be unique, not {value}")
    return set(value)


def _sequence(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    items = t.get("transformations")
    if not isinstance(items, list) or not items:
        raise TransformationError(f"{where}.transformations", "a sequence needs a non-empty list of transformations")
    out: AffineMap | None = None
    n = dims.n_in
    for i, item in enumerate(items):
        last = i == len(items) - 1
        step_dims = Dims(n, dims.n_out if last else None, dims.names_in if i == 0 else None,
                         dims.names_out if last else None)
        step = _read(item, f"{where}.transformations[{i}]", step_dims, stack)
        out = step if out is None else out.then(step)
        n = step.n_out
    assert out is not None
    return out


def _by_dimension(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    items = t.get("transformations")
    if not isinstance(items, list) or not items:
        raise TransformationError(f"{where}.transformations", "a byDimension needs a non-empty list of transformations")
    parts = [_by_dimension_item(item, f"{where}.transformations[{i}]", dims) for i, item in enumerate(items)]
    n = dims.n_in if dims.n_in is not None else max(max(ins, default=-1) for _, ins, _ in parts) + 1
    m = dims.n_out if dims.n_out is not None else max(max(outs, default=-1) for _, _, outs in parts) + 1
    _bounded(max(n, m), where)
    linear = np.zeros((m, n))
    shift = np.zeros(m)
    seen: dict[int, int] = {}
    for i, (child, ins, outs) in enumerate(parts):
        here = f"{where}.transformations[{i}]"
        if any(a >= n for a in ins) or any(a >= m for a in outs):
            raise TransformationError(here, f"axis indices {ins} -> {outs} are outside {n} input and {m} output axes")
        sub = _read(child, here, Dims(len(ins), len(outs)), stack)
        for r, o in enumerate(outs):
            if o in seen:
                raise TransformationError(here, f"output axis {o} is already given by item {seen[o]}")
            seen[o] = i
            linear[o, list(ins)] = sub.matrix[r, :-1]
            shift[o] = sub.matrix[r, -1]
    missing = [o for o in range(m) if o not in seen]
    if missing:
        raise TransformationError(where, f"output axes {missing} are given by no item; each MUST be given by one")
    return from_linear(linear, shift)


def _by_dimension_item(item: Any, where: str, dims: Dims) -> tuple[Any, tuple[int, ...], tuple[int, ...]]:
    """(the transformation, input axes, output axes) of one item in any dialect."""
    if not isinstance(item, dict):
        raise TransformationError(where, f"a byDimension item must be an object, not {kind_of(item)}")
    child = item["transformation"] if "transformation" in item else item
    ins = _item_axes(item, ("inputAxes", "input_axes"), where, dims.names_in)
    outs = _item_axes(item, ("outputAxes", "output_axes"), where, dims.names_out)
    if len(ins) != len(outs) and isinstance(child, dict) and child.get("type") in ("scale", "translation", "identity"):
        raise TransformationError(where, f"{len(ins)} input axes cannot map to {len(outs)} output axes by a "
                                         f"{child.get('type')}")
    return child, ins, outs


def _item_axes(item: dict[str, Any], keys: Sequence[str], where: str,
               names: tuple[str, ...] | None) -> tuple[int, ...]:
    key = next((k for k in keys if k in item), keys[0])
    value = item.get(key)
    if not isinstance(value, list) or not value:
        raise TransformationError(f"{where}.{key}", f'"{key}" must be a non-empty list of axes, not {value!r:.60}')
    out = []
    for k, v in enumerate(value):
        if isinstance(v, str):  # 0.6.dev2 named the axes
            if names is None:
                raise TransformationError(f"{where}.{key}[{k}]", f"axis {v!r} is named where the axes are not known")
            out.append(_index(v, names, f"{where}.{key}[{k}]"))
        elif is_int(v) and v >= 0:
            out.append(v)
        else:
            raise TransformationError(f"{where}.{key}[{k}]", f"an axis must be an index or a name, not {v!r}")
    return tuple(out)


def _index(name: Any, names: tuple[str, ...], where: str) -> int:
    if name not in names:
        raise TransformationError(where, f"axis {name!r} is not one of {list(names)}")
    return names.index(name)


def _bijection(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    if "forward" not in t or "inverse" not in t:
        raise TransformationError(where, 'a bijection MUST have "forward" and "inverse"')
    forward = _read(t["forward"], f"{where}.forward", dims, stack)
    back = Dims(forward.n_out, forward.n_in, dims.names_out, dims.names_in)
    inverse = _read(t["inverse"], f"{where}.inverse", back, stack)
    if forward.n_in != forward.n_out:
        raise TransformationError(where, f"a bijection's spaces MUST have equal dimension, not {forward.n_in} and "
                                         f"{forward.n_out}")
    return AffineMap(forward.matrix, inverse.matrix)


def _inverse_of(t: dict[str, Any], where: str, dims: Dims, stack: tuple[int, ...]) -> AffineMap:
    back = replace(dims, n_in=dims.n_out, n_out=dims.n_in, names_in=dims.names_out, names_out=dims.names_in)
    inner = _read(t.get("transformation"), f"{where}.transformation", back, stack)
    return inner.inverse(where)


def dev_spellings(t: Any, where: str, n_in: int | None = None, depth: int = 0) -> list[tuple[str, str]]:
    """(JSON path, what) of each pre-0.6rc0 spelling in a transformation: read all the same, but
    wrong in a document that says it is 0.6 or 0.6rc0."""
    if not isinstance(t, dict) or depth > MAX_DEPTH:
        return []
    out: list[tuple[str, str]] = []
    typ = t.get("type")
    if typ == "inverseOf":
        out.append((f"{where}.type", '"inverseOf" was removed in 0.6.dev3; 0.6rc0 has no such transformation'))
    value = t.get("mapAxis")
    if typ == "mapAxis" and isinstance(value, dict):
        out.append((f"{where}.mapAxis", "mapAxis by axis names is the 0.6.dev2 spelling; 0.6rc0 writes a list of "
                                        "input axis indices"))
    elif typ == "mapAxis" and isinstance(value, list) and n_in is not None and sorted(value) != list(range(n_in)):
        out.append((f"{where}.mapAxis", f"mapAxis MUST be a permutation of the {n_in} input axes, each once, "
                                        f"not {value}"))
    for i, item in enumerate(t.get("transformations") or [] if isinstance(t.get("transformations"), list) else []):
        here = f"{where}.transformations[{i}]"
        if typ == "byDimension" and isinstance(item, dict):
            out += _item_spellings(item, here)
            out += dev_spellings(item.get("transformation", item), here, None, depth + 1)
        else:
            out += dev_spellings(item, here, n_in if i == 0 else None, depth + 1)
    for key in ("forward", "inverse", "transformation"):
        if key in t and typ != "byDimension":
            out += dev_spellings(t[key], f"{where}.{key}", None, depth + 1)
    return out


def _item_spellings(item: dict[str, Any], where: str) -> list[tuple[str, str]]:
    out = []
    if "transformation" not in item:
        out.append((where, 'a byDimension item with the transformation inline is the 0.6.dev2 spelling; 0.6rc0 '
                           'writes {"transformation": ..., "inputAxes": ..., "outputAxes": ...}'))
    for old, new in (("input_axes", "inputAxes"), ("output_axes", "outputAxes")):
        if old in item:
            out.append((f"{where}.{old}", f'"{old}" is the 0.6.dev3 spelling; 0.6rc0 writes "{new}"'))
        axes = item.get(old, item.get(new))
        if isinstance(axes, list) and any(isinstance(a, str) for a in axes):
            out.append((f"{where}.{new if new in item else old}", "axes by name are the 0.6.dev2 spelling; 0.6rc0 "
                                                                   "gives axis indices"))
    return out


_READERS: dict[str, Callable[[dict[str, Any], str, Dims, tuple[int, ...]], AffineMap]] = {
    "identity": _identity, "scale": _scale, "translation": _translation, "affine": _affine,
    "rotation": _rotation, "mapAxis": _map_axis, "projectAxis": _project_axis, "sequence": _sequence,
    "byDimension": _by_dimension, "bijection": _bijection, "inverseOf": _inverse_of,
}
