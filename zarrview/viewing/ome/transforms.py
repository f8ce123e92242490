"""``coordinateTransformations``: the scale and translation of a level, checked and combined.

A dataset's list MUST hold exactly one ``scale`` and MAY hold one ``translation`` after it; the
multiscale's own list follows the same rules and is applied after the dataset's. Applied in
order, ``scale`` multiplies both the running scale and translation, ``translation`` adds.
"""

from __future__ import annotations

from typing import Any

from .doc import Reporter, is_number, kind_of

Affine = tuple[tuple[float, ...], tuple[float, ...]]


def identity(ndim: int) -> Affine:
    return (1.0,) * ndim, (0.0,) * ndim


def parse_transforms(value: Any, path: str, ndim: int, rep: Reporter, *, what: str,
                     required: bool) -> list[tuple[str, tuple[float, ...]]]:
    """The usable (type, vector) steps of one list, in order; every broken rule reported."""
    if value is None:
        if required:
            rep.error(path, f'{what} MUST have "coordinateTransformations" with a "scale"')
        return []
    if not isinstance(value, list):
        rep.error(path, f'{what}: "coordinateTransformations" must be a list, not {kind_of(value)}')
        return []
    steps: list[tuple[str, tuple[float, ...]]] = []
    types: list[str] = []
    for i, t in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(t, dict):
            rep.error(where, f"{what}: a transformation must be an object, not {kind_of(t)}")
            continue
        typ = t.get("type")
        if typ not in ("scale", "translation"):
            rep.error(f"{where}.type", f"{what}: transformations MUST be of type scale or translation, not {typ!r}")
            continue
        types.append(typ)
        if typ not in t and "path" in t:
            rep.warning(where, f"{what}: a {typ} stored as binary data ({t['path']!r}) is not read; taken as identity")
            continue
        vec = t.get(typ)
        if not isinstance(vec, list) or not all(is_number(v) for v in vec):
            rep.error(f"{where}.{typ}", f"{what}: {typ} must be a list of numbers, not {vec!r}")
            continue
        if len(vec) != ndim:
            rep.error(f"{where}.{typ}", f"{what}: the {typ} has {len(vec)} values; it MUST have one per axis ({ndim})")
            continue
        if typ == "scale" and any(v <= 0 for v in vec):
            rep.error(f"{where}.scale", f"{what}: scale values must be positive, not {vec}; taken as 1 there")
            vec = [v if v > 0 else 1.0 for v in vec]
        steps.append((typ, tuple(float(v) for v in vec)))
    if required and types.count("scale") != 1:
        rep.error(path, f"{what} MUST have exactly one scale transformation, not {types.count('scale')}")
    elif not required and types.count("scale") > 1:
        rep.error(path, f"{what} MUST have at most one scale transformation, not {types.count('scale')}")
    if types.count("translation") > 1:
        rep.error(path, f"{what} MAY have one translation, not {types.count('translation')}")
    if "translation" in types and "scale" in types and types.index("translation") < types.index("scale"):
        rep.error(path, f"{what}: the translation MUST come after the scale")
    return steps


def combine(ndim: int, *step_lists: list[tuple[str, tuple[float, ...]]]) -> Affine:
    """The scale and translation of the steps applied in order (data index -> physical)."""
    scale = [1.0] * ndim
    shift = [0.0] * ndim
    for steps in step_lists:
        for typ, vec in steps:
            for d in range(ndim):
                if typ == "scale":
                    scale[d] *= vec[d]
                    shift[d] *= vec[d]
                else:
                    shift[d] += vec[d]
    return tuple(scale), tuple(shift)
