"""Where the levels of an OME-Zarr 0.6 multiscale lie: each dataset's transformation into the
"intrinsic" coordinate system (the one every dataset's ``output`` names), read as a scale and a
translation per axis, exactly as 0.4 and 0.5 place levels; the units are the intrinsic system's.

A dataset's transformation that is not axis-aligned (a rotation, a shear, an axis permutation)
cannot place tiles of a pyramid: it is reported as unsupported and the level is drawn with the
identity. The multiscale's own ``coordinateTransformations`` link the intrinsic system to others;
they are read and checked, and the image is shown in the intrinsic system, as the specification
recommends for viewing.

Tolerated dialects: references written as strings (0.6.dev3), ``coordinateSystems`` beside
``multiscales`` rather than in each entry, and 0.5's ``axes`` with a list of scale and
translation (each reported, then read as far as it goes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .affine import AffineMap, TransformationError, UnsupportedTransformation
from .axes import check_axes, implied_axes, parse_axes
from .coordinate_systems import TransformGraph, add_link, parse_ref, parse_systems, spellings
from .coordinate_transformations import Dims, read_transformation
from .doc import Namespace, Reporter, kind_of
from .model import Axis, CoordinateSystem

Placement = tuple[tuple[float, ...], tuple[float, ...]]
#: what a dataset's transformation MAY be (a sequence of one scale and one translation too)
DATASET_TYPES = ("scale", "identity", "sequence")
#: what a multiscale's link to a system of one of its label images MAY be
LABEL_LINK_TYPES = ("identity", "scale", "translation")


@dataclass(frozen=True)
class Frame:
    """The axes (of the intrinsic system), every level's (scale, translation), and the systems."""

    axes: tuple[Axis, ...]
    placements: tuple[Placement, ...]
    systems: tuple[CoordinateSystem, ...]
    intrinsic: str | None


def read_frame(ms: dict[str, Any], ns: Namespace, paths: list[str], ndim: int | None, where: str,
               rep: Reporter) -> Frame:
    """The frame of one 0.6 ``multiscales`` entry whose datasets name the arrays ``paths``."""
    systems = _systems(ms, ns, ndim, where, rep)
    datasets: list[Any] = ms["datasets"] if isinstance(ms.get("datasets"), list) else []
    outputs: list[str | None] = []
    maps: list[AffineMap | None] = []
    for j, path in enumerate(paths):
        ds = datasets[j] if j < len(datasets) and isinstance(datasets[j], dict) else {}
        name, amap = _dataset(ds, path, systems, ndim, f"{where}.datasets[{j}]", rep, ns.dialect)
        outputs.append(name)
        maps.append(amap)
    intrinsic = _intrinsic(outputs, systems, f"{where}.datasets", rep)
    axes = intrinsic.axes if intrinsic is not None else implied_axes(ndim or 0)
    if intrinsic is not None:
        check_axes(axes, f"{where}.coordinateSystems[{systems.index(intrinsic)}].axes", rep)
    n = len(axes)
    placements = tuple(_placement(amap, n, j, paths[j], f"{where}.datasets[{j}].coordinateTransformations", rep)
                       for j, amap in enumerate(maps))
    _links(ms.get("coordinateTransformations"), systems, intrinsic, f"{where}.coordinateTransformations", rep,
           ns.dialect)
    return Frame(axes, placements, systems, intrinsic.name if intrinsic is not None else None)


def _systems(ms: dict[str, Any], ns: Namespace, ndim: int | None, where: str,
             rep: Reporter) -> tuple[CoordinateSystem, ...]:
    if "coordinateSystems" in ms:
        return parse_systems(ms["coordinateSystems"], f"{where}.coordinateSystems", rep)
    if "coordinateSystems" in ns.keys:  # an early draft put them beside "multiscales"
        rep.warning("coordinateSystems", '"coordinateSystems" beside "multiscales" is a pre-release layout; '
                                         "0.6 puts them in each multiscale")
        return parse_systems(ns.keys["coordinateSystems"], "coordinateSystems", rep)
    rep.error(where, 'a 0.6 multiscale MUST have "coordinateSystems"')
    if "axes" in ms:
        axes = parse_axes(ms["axes"], f"{where}.axes", rep)
        if axes is not None:
            rep.warning(f"{where}.axes", '"axes" is 0.5 metadata; read as the intrinsic coordinate system')
            return (CoordinateSystem("", axes),)
    return ()


def _dataset(ds: dict[str, Any], path: str, systems: tuple[CoordinateSystem, ...], ndim: int | None, where: str,
             rep: Reporter, dialect: bool) -> tuple[str | None, AffineMap | None]:
    """(the name of the system the dataset maps into, the map) of one dataset; None where unusable."""
    value = ds.get("coordinateTransformations")
    here = f"{where}.coordinateTransformations"
    if not isinstance(value, list) or not value:
        rep.error(here, f'level {path!r} MUST have "coordinateTransformations" with one transformation, '
                        f"not {kind_of(value) if value != [] else 'an empty list'}")
        return None, None
    t: Any = value[0]
    if len(value) > 1:  # 0.5's [scale, translation]: read as the sequence it means
        rep.error(here, f"level {path!r} MUST have one transformation (a sequence of a scale and a translation), "
                        f"not {len(value)}; read as their sequence")
        t = {"type": "sequence", "transformations": value,
             **{k: v for k, v in (value[0] if isinstance(value[0], dict) else {}).items() if k in ("input", "output")}}
    if not isinstance(t, dict):
        rep.error(f"{here}[0]", f"a transformation must be an object, not {kind_of(t)}")
        return None, None
    _check_dataset_type(t, path, f"{here}[0]", rep)
    name = _check_ends(t, path, systems, f"{here}[0]", rep, dialect)
    target = next((s for s in systems if s.name == name), None) or (systems[0] if systems else None)
    n_out = len(target.axes) if target is not None else ndim
    spellings(t, f"{here}[0]", ndim, rep, dialect)
    try:
        amap = read_transformation(t, f"{rep.at(here)}[0]", Dims(ndim, n_out))
    except UnsupportedTransformation as e:
        rep.warning(f"{here}[0]", f"unsupported: {e.message}; level {path!r} is drawn with the identity")
        return name, None
    except TransformationError as e:
        rep.error(f"{here}[0]", f"level {path!r}: {e}; drawn with the identity")
        return name, None
    return name, amap


def _check_dataset_type(t: dict[str, Any], path: str, where: str, rep: Reporter) -> None:
    typ = t.get("type")
    steps = t.get("transformations") if typ == "sequence" else None
    kinds = [s.get("type") if isinstance(s, dict) else None for s in steps] if isinstance(steps, list) else None
    if typ not in DATASET_TYPES or (kinds is not None and kinds not in (["scale", "translation"], ["scale"])):
        shown = f"sequence of {kinds}" if kinds is not None else repr(typ)
        rep.error(where, f"level {path!r}: a dataset's transformation MUST be a scale, an identity or a sequence of "
                         f"a scale and a translation, not {shown}")


def _check_ends(t: dict[str, Any], path: str, systems: tuple[CoordinateSystem, ...], where: str, rep: Reporter,
                dialect: bool) -> str | None:
    """The output's system name, with the input checked against the dataset's own path."""
    if "input" in t:
        ref = parse_ref(t["input"], f"{where}.input", rep, string_is="path", dialect=dialect)
        if ref is not None and ref[0] != path.strip("/"):
            rep.error(f"{where}.input", f"the input MUST be the dataset's path {path!r}, not {ref[0]!r}")
    else:
        rep.error(where, f'level {path!r}: the transformation MUST have an "input" (the dataset\'s path)')
    if "output" not in t:
        rep.error(where, f'level {path!r}: the transformation MUST have an "output" (the intrinsic coordinate system)')
        return None
    ref = parse_ref(t["output"], f"{where}.output", rep, string_is="name", dialect=dialect)
    if ref is None:
        return None
    if ref[1] is None:
        rep.error(f"{where}.output", "the output MUST name the intrinsic coordinate system")
        return None
    if systems and all(s.name != ref[1] for s in systems):
        rep.error(f"{where}.output", f"the output names {ref[1]!r}, which is not one of the coordinate systems "
                                     f"{[s.name for s in systems]}")
    return ref[1]


def _intrinsic(outputs: list[str | None], systems: tuple[CoordinateSystem, ...], where: str,
               rep: Reporter) -> CoordinateSystem | None:
    named = [o for o in outputs if o is not None]
    if len(set(named)) > 1:
        rep.error(where, f"every level MUST map into the same coordinate system, not {sorted(set(named))}; "
                         f"{named[0]!r} is used")
    found = next((s for s in systems if named and s.name == named[0]), None)
    return found or (systems[0] if systems else None)


def _placement(amap: AffineMap | None, n: int, j: int, path: str, where: str, rep: Reporter) -> Placement:
    if amap is None:
        return (1.0,) * n, (0.0,) * n
    if amap.n_in != n or amap.n_out != n:
        rep.error(where, f"level {j} ({path!r}) maps {amap.n_in} to {amap.n_out} axes; the image has {n}; drawn "
                         f"with the identity")
        return (1.0,) * n, (0.0,) * n
    aligned = amap.axis_aligned()
    if aligned is None:
        rep.warning(where, f"unsupported: level {j} ({path!r}) is placed by a transformation that is not "
                           f"axis-aligned (a rotation, shear or axis permutation); it is drawn with the identity")
        return (1.0,) * n, (0.0,) * n
    scale, shift = aligned
    if any(s <= 0 for s in scale):
        rep.error(where, f"level {j} ({path!r}): scale values must be positive, not {list(scale)}; taken as 1 there")
        scale = tuple(s if s > 0 else 1.0 for s in scale)
    return scale, shift


def _links(value: Any, systems: tuple[CoordinateSystem, ...], intrinsic: CoordinateSystem | None, where: str,
           rep: Reporter, dialect: bool) -> None:
    """The multiscale's own transformations: one end the intrinsic system, the other a system of
    this multiscale (or of a label image below it); each read, and the systems checked linked."""
    if value is None:
        value = []
    if not isinstance(value, list):
        rep.error(where, f'"coordinateTransformations" must be a list, not {kind_of(value)}')
        return
    graph = TransformGraph()
    for s in systems:
        graph.add_system(("", s.name), s)
    for i, t in enumerate(value):
        here = f"{where}[{i}]"
        if not isinstance(t, dict):
            rep.error(here, f"a transformation must be an object, not {kind_of(t)}")
            continue
        ends = [parse_ref(t.get(k), f"{here}.{k}", rep, string_is="name", dialect=dialect) for k in ("input", "output")]
        src, dst = ends
        if src is None or dst is None:
            continue
        if intrinsic is not None and ("", intrinsic.name) not in (src, dst):
            rep.error(here, f"one end MUST be the intrinsic coordinate system {intrinsic.name!r}")
        elsewhere = [key[0] for key in (src, dst) if key[0]]
        if elsewhere and t.get("type") not in LABEL_LINK_TYPES:
            rep.error(here, f"a transformation to a label image ({elsewhere[0]!r}) MUST be an identity, scale or "
                            f"translation, not {t.get('type')!r}")
        if any(key[0] == "" and key not in graph for key in (src, dst)):
            unknown = [k[1] for k in (src, dst) if k[0] == "" and k not in graph]
            rep.error(here, f"coordinate system {unknown[0]!r} is not defined in this multiscale")
            continue
        add_link(graph, t, here, src, dst, rep, dialect)
    _check_connected(graph, intrinsic, where, rep)


def _check_connected(graph: TransformGraph, intrinsic: CoordinateSystem | None, where: str, rep: Reporter) -> None:
    if intrinsic is None:
        return
    groups = graph.components()
    home = next((g for g in groups if ("", intrinsic.name) in g), set())
    lost = sorted(k[1] or "" for g in groups if g is not home for k in g if k[0] == "")
    if lost:
        rep.error(where, f"coordinate systems {lost} are linked to the intrinsic {intrinsic.name!r} by no "
                         f"transformation; the systems MUST be connected")
