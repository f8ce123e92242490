"""``multiscales``: the levels of each pyramid, their arrays, transforms, and the rules that
tie axes, arrays and levels together."""

from __future__ import annotations

import math
from typing import Any

from ...zarrlib import Array, Group, UnsupportedArray, ZarrError
from .axes import check_axes, implied_axes, parse_axes
from .flavour import check_systems, names_systems
from .doc import Namespace, Reporter, kind_of
from .model import Axis, Level, Multiscale
from .multiscales_v06 import read_frame
from .transforms import combine, identity, parse_transforms


def parse_multiscales(group: Group, ns: Namespace, rep: Reporter, *, label: bool = False) -> tuple[Multiscale, ...]:
    value = ns.keys.get("multiscales")
    if not isinstance(value, list) or not value:
        rep.error("multiscales", f'"multiscales" must be a non-empty list, not {value!r:.60}')
        return ()
    out = []
    for i, ms in enumerate(value):
        where = f"multiscales[{i}]"
        if not isinstance(ms, dict):
            rep.error(where, f"a multiscale must be an object, not {kind_of(ms)}")
            continue
        found = _one(group, ns, ms, where, rep, label=label)
        if found is not None:
            out.append(found)
    return tuple(out)


def _one(group: Group, ns: Namespace, ms: dict[str, Any], where: str, rep: Reporter, *, label: bool) -> Multiscale | None:
    name = rep.get_str(ms, "name", where)
    datasets = rep.get_list(ms, "datasets", where, required=True)
    if not datasets:
        if datasets is not None:
            rep.error(f"{where}.datasets", '"datasets" MUST list at least one level')
        return None
    # every level's metadata in one round trip on a remote store, then opened one by one
    group.prefetch([ds["path"] for ds in datasets if isinstance(ds, dict) and isinstance(ds.get("path"), str)])
    arrays = [_open(group, ds, f"{where}.datasets[{j}]", rep) for j, ds in enumerate(datasets)]
    ndim = next((len(a.shape) for _, a, _ in arrays if a is not None and a.shape is not None), None)
    frame = read_frame(ms, ns, [p for p, _, _ in arrays], ndim, where, rep) if ns.version == "0.6" else None
    if frame is not None:
        axes = frame.axes
    else:
        written = parse_axes(ms.get("axes"), f"{where}.axes", rep) if "axes" in ms or ns.version == "0.5" or \
            _declared_at_least(ns, "0.3") else None
        if written is not None:
            check_axes(written, f"{where}.axes", rep)
        axes = written if written is not None else implied_axes(ndim or 0)
    n = len(axes)
    written_steps = ms.get("coordinateTransformations")
    if ns.writer is not None and isinstance(written_steps, list) and names_systems(written_steps):
        # spatialdata's, to named coordinate systems: read by viewing.spatialdata, checked for shape
        rep.problems.extend(check_systems(written_steps, rep.at(f"{where}.coordinateTransformations"), rep.node))
        group_steps = []
    else:
        group_steps = parse_transforms(written_steps, f"{where}.coordinateTransformations", n, rep,
                                       what=f"multiscale {name or where}", required=False) if frame is None else []
    levels = []
    for j, (path, arr, error) in enumerate(arrays):
        dwhere = f"{where}.datasets[{j}]"
        ds = datasets[j] if isinstance(datasets[j], dict) else {}
        if frame is not None:
            scale, shift = frame.placements[j]
        else:
            steps = parse_transforms(ds.get("coordinateTransformations"), f"{dwhere}.coordinateTransformations", n,
                                     rep, what=f"level {j} ({path!r})", required=True)
            scale, shift = combine(n, steps, group_steps) if n else identity(0)
        if arr is not None and arr.shape is not None and len(arr.shape) != n:
            rep.error(dwhere, f"level {j} ({path!r}) has {len(arr.shape)} dimensions; there are {n} axes and "
                              f"their number MUST equal the arrays' dimensions")
            scale, shift = _fit(scale, len(arr.shape)), _fit(shift, len(arr.shape), 0.0)
        if arr is not None and ns.version in ("0.5", "0.6") and isinstance(arr, Array):
            _check_dimension_names(arr, axes, j, path, dwhere, rep, must=ns.version == "0.5")
        if arr is not None and label and isinstance(arr, Array) and arr.dtype.kind not in "iu":
            rep.error(dwhere, f"label level {j} ({path!r}) is {arr.dtype}; label images MUST be of an integer type")
        levels.append(_level(j, path, arr, error, scale, shift))
    _check_order(levels, axes, f"{where}.datasets", rep)
    meta: dict[str, Any] = ms["metadata"] if isinstance(ms.get("metadata"), dict) else {}
    typ = ms.get("type") if isinstance(ms.get("type"), str) else None
    if frame is None:
        return Multiscale(name, axes, tuple(levels), typ, meta)
    return Multiscale(name, axes, tuple(levels), typ, meta, frame.systems, frame.intrinsic)


def _declared_at_least(ns: Namespace, version: str) -> bool:
    return ns.declared is None or ns.declared >= version


def _open(group: Group, ds: Any, where: str, rep: Reporter) -> tuple[str, Array | UnsupportedArray | None, str | None]:
    """(path, array, why not) of one dataset: UnsupportedArray keeps its shape but cannot be read."""
    if not isinstance(ds, dict):
        rep.error(where, f"a dataset must be an object, not {kind_of(ds)}")
        return "?", None, "not an object"
    path = ds.get("path")
    if not isinstance(path, str) or not path.strip("/"):
        rep.error(f"{where}.path", f'a dataset MUST have a "path", not {path!r}')
        return str(path), None, "no path"
    try:
        node = group[path]
    except ZarrError as e:
        rep.error(f"{where}.path", f"level {path!r} cannot be opened: {e}")
        return path, None, str(e)
    if isinstance(node, UnsupportedArray):
        rep.warning(f"{where}.path", f"level {path!r} cannot be read: {node.error}")
        return path, node, str(node.error)
    if not isinstance(node, Array):
        rep.error(f"{where}.path", f"level {path!r} is a {node.kind}, not an array")
        return path, None, f"{node.kind}, not an array"
    return path, node, None


def _fit(vec: tuple[float, ...], n: int, pad: float = 1.0) -> tuple[float, ...]:
    return tuple(vec[:n]) + (pad,) * max(0, n - len(vec))


def _check_dimension_names(arr: Array, axes: tuple[Axis, ...], j: int, path: str, where: str, rep: Reporter, *,
                           must: bool) -> None:
    """0.5 requires the arrays' dimension_names to be the axes names; 0.6 no longer asks for
    them, and names that differ from the intrinsic system's axes are only a warning there."""
    names = arr.dimension_names
    want = [a.name for a in axes]
    if names is None:
        if must:
            rep.error(where, f'level {j} ({path!r}) has no "dimension_names"; in 0.5 they MUST be there and equal '
                             f"the axes names {want}")
    elif list(names) != want:
        if must:
            rep.error(where, f"level {j} ({path!r}): dimension_names {list(names)} MUST equal the axes names {want}")
        else:
            rep.warning(where, f"level {j} ({path!r}): dimension_names {list(names)} differ from the intrinsic "
                               f"coordinate system's axes {want}")


def _level(j: int, path: str, arr: Array | UnsupportedArray | None, error: str | None,
           scale: tuple[float, ...], shift: tuple[float, ...]) -> Level:
    if isinstance(arr, Array):
        counts = arr.chunk_grid_shape()
        shards = arr.shards
        shard_counts = arr.stored_grid_shape() if shards else None
        dtype = arr.data_type_name if arr.dtype.kind == "O" else str(arr.dtype)
        return Level(j, path, arr, scale, shift, tuple(arr.shape), tuple(arr.chunks), shards, counts, shard_counts,
                     dtype)
    if isinstance(arr, UnsupportedArray):
        w = arr.written
        shape = tuple(w.shape or ())
        chunks = tuple(w.chunks or ())
        counts = tuple(-(-s // c) for s, c in zip(shape, chunks)) if chunks and len(chunks) == len(shape) else ()
        return Level(j, path, None, scale, shift, shape, chunks, None, counts, None, w.data_type or "?", error)
    return Level(j, path, None, scale, shift, error=error)


def _check_order(levels: list[Level], axes: tuple[Axis, ...], where: str, rep: Reporter) -> None:
    """Levels MUST go from the highest resolution to the lowest: no level larger than the one
    before it, nor with finer pixels, along any axis; and all of one dimensionality."""
    sized = [lv for lv in levels if lv.shape]
    if len({len(lv.shape) for lv in sized}) > 1:
        dims = ", ".join(f"{lv.path!r}: {len(lv.shape)}" for lv in sized)
        rep.error(where, f"every level MUST have the same number of dimensions ({dims})")
        return
    for prev, lv in zip(sized, sized[1:]):
        for d, (a, b) in enumerate(zip(prev.shape, lv.shape)):
            name = axes[d].name if d < len(axes) else f"dim {d}"
            if b > a:
                rep.error(where, f"level {lv.index} ({lv.path!r}) is larger than level {prev.index} ({prev.path!r}) "
                                 f"along {name} ({b} > {a}): levels MUST be ordered from highest to lowest resolution")
                return
            if d < len(lv.scale) and d < len(prev.scale) and not math.isclose(lv.scale[d], prev.scale[d]) \
                    and lv.scale[d] < prev.scale[d]:
                rep.error(where, f"level {lv.index} ({lv.path!r}) has finer pixels than level {prev.index} "
                                 f"({prev.path!r}) along {name} ({lv.scale[d]:g} < {prev.scale[d]:g}): levels MUST be "
                                 f"ordered from highest to lowest resolution")
                return

