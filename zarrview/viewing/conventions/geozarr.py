"""A multiscales convention group (GeoZarr's pyramids) read into the levels a view uses.

Each level becomes an OME-style :class:`~zarrview.viewing.ome.model.Level`, so the image view's
level picker and level-by-zoom (``image/levels.py``) serve both. Levels are placed by their
``spatial:transform`` (the layout item's, else the level array's or level group's; the group's
own for a base level), else by the relative ``transform`` of the level they derive from, else
by their shapes. A level's ``scale``/``translation`` are its pixel centres in a space where both
axes increase along level 0's rows and columns (``sign * coordinate``), so a north-up raster's
falling Y stays a positive pixel size for the level arithmetic.

Nothing here raises for bad metadata: every broken rule is a :class:`Problem`, and what can be
read still is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...zarrlib import Array, Group, ZarrError
from ..ome.doc import Reporter
from ..ome.model import Axis, Level, Multiscale, Problem
from .crs import Crs, read_crs
from .declared import MULTISCALES, Conventions, conventions
from .layout import LayoutItem, level_variables, open_level, read_layout
from .spatial import Affine, centre_offset, read_affine, spatial_dims, transform_usable

PIXELS = Affine(1.0, 0.0, 0.0, 0.0, 1.0, 0.0)


@dataclass(frozen=True)
class GeoMultiscale:
    """A multiscales group: its pyramid (one variable's, for level groups), where each level lies,
    and the CRS. ``transforms[i]`` maps level ``i``'s (col, row) to coordinates; ``georeferenced``
    says whether they are a ``spatial:`` transform's or only pixels of level 0."""

    group: Group = field(compare=False, repr=False)
    conventions: Conventions
    multiscale: Multiscale
    variable: str | None
    variables: tuple[str, ...]
    transforms: tuple[Affine, ...]
    dims: tuple[int, int] | None        # (Y, X) dimensions
    crs: Crs | None
    georeferenced: bool
    offset: float                       # a pixel centre in transform indices (0.5: pixel registration)
    problems: tuple[Problem, ...]

    kind = "geozarr multiscales"

    @property
    def path(self) -> str:
        return self.group.path


def detect_geozarr(group: Group, variable: str | None = None) -> GeoMultiscale | None:
    """The multiscales convention pyramid of ``group`` (of ``variable`` where levels are groups),
    or None where the group does not follow the multiscales convention. Opens the level arrays:
    call it off the GUI thread."""
    attrs = group.attrs if isinstance(group.attrs, dict) else {}
    conv = conventions(attrs, group.path)
    if MULTISCALES not in conv:
        return None
    problems = list(conv.problems)
    rep = Reporter(group.path, "$", problems)
    items = read_layout(attrs.get("multiscales"), rep)
    empty = GeoMultiscale(group, conv, Multiscale(None, (), ()), None, (), (), None, None, False, 0.5, ())
    if not items:
        return _done(empty, problems)
    group.prefetch([it.asset for it in items])
    try:
        variables = level_variables(group, items[0].asset)
    except ZarrError as e:
        rep.error(f"{items[0].where}.asset", f"level {items[0].asset!r} cannot be opened: {e}")
        variables = None
    if variables is not None:
        if variable is None or variable not in variables:
            if variable is not None:
                rep.error("", f"level {items[0].asset!r} has no array {variable!r}")
            variable = variables[0] if variables else None
        if variable is None:
            rep.error(f"{items[0].where}.asset", f"level group {items[0].asset!r} holds no array to show")
            return _done(empty, problems)
    opened = [open_level(group, it, variable, rep) for it in items]
    base = next((arr for arr, _, _ in opened if isinstance(arr, Array)), None)
    if base is None:
        levels = tuple(Level(i, it.asset, None, (), (), error=why) for i, (it, (_, why, _)) in enumerate(zip(items, opened)))
        return _done(GeoMultiscale(group, conv, Multiscale(None, (), levels), variable, variables or (), (), None,
                                   None, False, 0.5, ()), problems)
    first_attrs = opened[0][0].attrs if isinstance(opened[0][0], Array) else {}
    sources = [first_attrs, opened[0][2], attrs]
    dims = spatial_dims(base, sources, rep)
    crs = next((c for c in (read_crs(s, rep) for s in sources if isinstance(s, dict)) if c is not None), None)
    usable = all(transform_usable(s, "", rep) for s in sources if isinstance(s, dict))
    offset = centre_offset(next((s for s in sources if isinstance(s, dict) and "spatial:registration" in s), {}), rep)
    affines, geo = _place(group, items, opened, base, dims, usable, rep)
    levels, kept = _levels(items, opened, affines, base, dims, offset, variable, rep)
    axes = _axes(base, dims, crs.units if crs is not None and geo else None)
    levels, kept = _finest_first(levels, kept)
    ms = Multiscale(variable or group.name or None, axes, levels, _method(attrs))
    return _done(GeoMultiscale(group, conv, ms, variable, variables or (), kept, dims, crs, geo, offset, ()), problems)


def _done(found: GeoMultiscale, problems: list[Problem]) -> GeoMultiscale:
    import dataclasses

    return dataclasses.replace(found, problems=tuple(problems))


def _method(attrs: dict) -> str | None:
    ms = attrs.get("multiscales")
    method = ms.get("resampling_method") if isinstance(ms, dict) else None
    return method if isinstance(method, str) else None


def _own_affine(item: LayoutItem, arr: Array | None, level_attrs: object, rep: Reporter) -> Affine | None:
    """A level's own ``spatial:transform``: the layout item's, else its array's, else its level group's."""
    found = read_affine(item.raw, "spatial:transform", item.where, rep)
    if found is None and isinstance(arr, Array):
        found = read_affine(arr.attrs, "spatial:transform", "", Reporter(arr.path, "$", rep.problems))
    if found is None and isinstance(level_attrs, dict):
        found = read_affine(level_attrs, "spatial:transform", "", rep)
    return found


def _place(group: Group, items: tuple[LayoutItem, ...], opened: list, base: Array, dims: tuple[int, int] | None,
           usable: bool, rep: Reporter) -> tuple[dict[str, Affine], bool]:
    """Each level's transform by asset, and whether they are coordinates (not pixels of level 0)."""
    own = {it.asset: _own_affine(it, arr, la, rep) if usable else None for it, (arr, _, la) in zip(items, opened)}
    group_affine = read_affine(group.attrs, "spatial:transform", "", rep) if usable else None
    geo = any(a is not None for a in own.values()) or group_affine is not None
    if any(a is not None and a.rotated for a in [*own.values(), group_affine]):
        rep.warning("", "a spatial:transform is rotated or sheared; the levels are shown in pixels, placed by "
                        "their shapes")
        own, group_affine, geo = dict.fromkeys(own), None, False
    placed: dict[str, Affine] = {}
    arrays = {it.asset: arr for it, (arr, _, _) in zip(items, opened)}
    for _ in range(len(items)):  # derived levels resolve once their source has
        for it in items:
            if it.asset in placed:
                continue
            mine = own.get(it.asset)
            if mine is not None:
                placed[it.asset] = mine
            elif it.derived_from is None:
                placed[it.asset] = group_affine if group_affine is not None and not placed else PIXELS
            elif it.derived_from in placed:
                placed[it.asset] = _derived(placed[it.derived_from], it, arrays.get(it.derived_from),
                                            arrays.get(it.asset), dims)
    assets = {it.asset for it in items}
    for it in items:
        if it.asset not in placed:
            why = "a level derived, in a cycle, from this one" if it.derived_from in assets else \
                "not a level of the layout"
            rep.error(f"{it.where}.derived_from", f"level {it.asset!r} is derived from {it.derived_from!r}, "
                                                  f"{why}; placed by its shape")
            placed[it.asset] = _derived(placed.get(items[0].asset, PIXELS), it, base, arrays.get(it.asset), dims)
    return placed, geo


def _derived(source: Affine, item: LayoutItem, src: object, arr: object, dims: tuple[int, int] | None) -> Affine:
    """A level's transform from its source's and its relative ``transform`` (translation in the
    source's pixels), else from the two shapes."""
    sy = sx = 1.0
    if item.scale is not None and dims is not None:
        n = len(item.scale)
        y, x = dims if n > max(dims) else (0, 1) if n == 2 else (-1, -1)
        if y >= 0:
            sy, sx = item.scale[y], item.scale[x]
    elif isinstance(src, Array) and isinstance(arr, Array) and dims is not None and arr.ndim == src.ndim:
        y, x = dims
        sy = src.shape[y] / max(1, arr.shape[y])
        sx = src.shape[x] / max(1, arr.shape[x])
    ty = tx = 0.0
    if item.translation is not None and dims is not None and len(item.translation) in (2, max(dims) + 1):
        y, x = dims if len(item.translation) > 2 else (0, 1)
        ty, tx = item.translation[y], item.translation[x]
    return source.coarser(sx, sy, tx, ty)


def _levels(items: tuple[LayoutItem, ...], opened: list, affines: dict[str, Affine], base: Array,
            dims: tuple[int, int] | None, offset: float, variable: str | None,
            rep: Reporter) -> tuple[tuple[Level, ...], tuple[Affine, ...]]:
    ref = affines[items[0].asset] if items else PIXELS
    signs = (1.0 if ref.e > 0 else -1.0, 1.0 if ref.a > 0 else -1.0)
    levels, kept = [], []
    for i, (it, (arr, why, _)) in enumerate(zip(items, opened)):
        path = f"{it.asset}/{variable}" if variable else it.asset
        aff = affines[it.asset]
        if isinstance(arr, Array) and (arr.ndim < 2 or arr.dtype.names or arr.dtype.kind in "OSUV"):
            why = f"{arr.ndim}-D {arr.dtype}: a pyramid level must be a grid of numbers of two or more dimensions"
            rep.error(it.where, f"level {path!r} is {why}")
            arr = None
        if isinstance(arr, Array) and arr.ndim != base.ndim:
            why = f"{arr.ndim} dimensions, not {base.ndim}"
            rep.error(it.where, f"level {path!r} has {why} (as {base.path} has)")
            arr = None
        if dims is not None and (aff.e * signs[0] <= 0 or aff.a * signs[1] <= 0):
            rep.error(it.where, f"level {path!r} runs the other way from the first level along Y or X")
            arr, why = None, "flipped against the first level"
        shape = tuple(arr.shape) if isinstance(arr, Array) else ()
        scale = [1.0] * base.ndim
        shift = [0.0] * base.ndim
        if dims is not None:
            y, x = dims
            scale[y], shift[y] = signs[0] * aff.e, signs[0] * (aff.f + aff.e * offset)
            scale[x], shift[x] = signs[1] * aff.a, signs[1] * (aff.c + aff.a * offset)
            _check_shape(it, arr, dims, rep)
        levels.append(_level(i, path, arr if isinstance(arr, Array) else None, tuple(scale), tuple(shift), shape, why))
        kept.append(aff)
    return tuple(levels), tuple(kept)


def _check_shape(item: LayoutItem, arr: object, dims: tuple[int, int], rep: Reporter) -> None:
    stated = item.raw.get("spatial:shape")
    if stated is None or not isinstance(arr, Array):
        return
    actual = [arr.shape[dims[0]], arr.shape[dims[1]]]
    if stated != actual:
        rep.warning(f"{item.where}.spatial:shape", f"level {item.asset!r} states spatial:shape {stated!r:.40}; its "
                                                   f"array is {actual[0]} × {actual[1]}")


def _level(i: int, path: str, arr: Array | None, scale: tuple[float, ...], shift: tuple[float, ...],
           shape: tuple[int, ...], why: str | None) -> Level:
    if arr is None:
        return Level(i, path, None, scale, shift, shape, error=why)
    shards = arr.shards
    shard_counts = tuple(-(-s // c) for s, c in zip(arr.shape, shards)) if shards else None
    dtype = arr.data_type_name if arr.dtype.kind == "O" else str(arr.dtype)
    return Level(i, path, arr, scale, shift, shape, tuple(arr.chunks), shards, arr.chunk_grid_shape(),
                 shard_counts, dtype)


def _finest_first(levels: tuple[Level, ...], affines: tuple[Affine, ...]) -> tuple[tuple[Level, ...], tuple[Affine, ...]]:
    """Levels from the finest to the coarsest (a layout may list an upsampled level after its
    source), renumbered in that order."""
    import dataclasses

    order = sorted(range(len(levels)), key=lambda i: abs(affines[i].a * affines[i].e))
    return (tuple(dataclasses.replace(levels[i], index=n) for n, i in enumerate(order)),
            tuple(affines[i] for i in order))


def _axes(arr: Array, dims: tuple[int, int] | None, unit: str | None) -> tuple[Axis, ...]:
    names = [str(n) if n else f"dim_{d}" for d, n in enumerate(arr.dimension_names or (None,) * arr.ndim)]
    shown = dims or ()
    return tuple(Axis(n, "space" if d in shown else None, unit if d in shown else None) for d, n in enumerate(names))
