"""Georeferenced axes: the coordinates a ``spatial:`` transform gives each row and column, in
the units of the ``proj:`` CRS, as the coordinate axes a view ticks, reads out and labels.

They ride in the view state as a :class:`~zarrview.viewing.cf.view.CFView` (the same place CF
coordinate variables do), so the axes, the readout under the cursor and the slider labels need
nothing of their own; the view's ``crs`` names the system beside the readout.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ...zarrlib import Array, ZarrError
from ..cf.coords import CoordAxis
from ..cf.values import initial_range, value_coding, value_title
from ..cf.view import CFView
from ..image.state import ViewState, initial_state
from ..ome.doc import Reporter
from ..ome.model import Problem
from .crs import Crs, read_crs
from .declared import MULTISCALES, conventions
from .geozarr import GeoMultiscale, detect_geozarr
from .spatial import Affine, centre_offset, read_affine, spatial_dims, transform_usable


def coordinate_axes(aff: Affine, offset: float, shape: tuple[int, ...], dims: tuple[int, int], crs: Crs | None,
                    names: tuple[str, ...]) -> dict[int, CoordAxis]:
    """The coordinate of every row and column centre of an array with transform ``aff`` (not rotated)."""
    y, x = dims
    rows = aff.e * (np.arange(shape[y], dtype=np.float64) + offset) + aff.f
    cols = aff.a * (np.arange(shape[x], dtype=np.float64) + offset) + aff.c
    geographic = crs is not None and crs.geographic
    units = None if crs is None or geographic else crs.units
    return {
        y: CoordAxis(y, names[y], rows, units, "latitude" if geographic else "vertical", bool(aff.e < 0), False),
        x: CoordAxis(x, names[x], cols, units, "longitude" if geographic else "other", bool(aff.a < 0), False),
    }


def with_axes(cf: CFView | None, arr: Array, axes: Mapping[int, CoordAxis], crs: Crs | None,
              notes: tuple[str, ...] = ()) -> CFView:
    """``cf`` (the array's CF view, or a plain one) with ``axes`` over its own and the CRS named."""
    if cf is None:
        title, units = value_title(arr)
        cf = CFView(value_coding(arr), title, units, range=initial_range(arr))
    merged = {**cf.axes, **axes}
    return dataclasses.replace(cf, axes=MappingProxyType(merged), notes=cf.notes + notes,
                               crs=crs.name if crs is not None else cf.crs)


def pyramid_view(found: GeoMultiscale, cf: CFView | None) -> CFView | None:
    """The view of a multiscales pyramid's level 0 (``cf``: its CF view) with georeferenced axes."""
    levels = found.multiscale.levels
    if not levels or levels[0].array is None or found.dims is None:
        return cf
    arr = levels[0].array
    if not found.georeferenced:
        return cf
    names = tuple(a.name for a in found.multiscale.axes)
    axes = coordinate_axes(found.transforms[0], found.offset, tuple(arr.shape), found.dims, found.crs, names)
    return with_axes(cf, arr, axes, found.crs)


def array_view(arr: Array, cf: CFView | None) -> CFView | None:
    """``cf`` with the georeferenced axes of a single array: a pyramid level's as the pyramid
    places it; else its own ``spatial:`` transform, else its group's where the group's
    ``spatial:shape`` (if stated) is the array's; the CRS its own ``proj:``, else its group's (the
    convention's inheritance). Reads the groups above it: call it off the GUI thread."""
    level = _pyramid_level(arr)
    if level is not None:  # a level of a pyramid: placed as the pyramid places it
        found, index = level
        if found.georeferenced and found.dims is not None:
            names = tuple(a.name for a in found.multiscale.axes)
            axes = coordinate_axes(found.transforms[index], found.offset, tuple(arr.shape), found.dims, found.crs, names)
            return with_axes(cf, arr, axes, found.crs)
        return cf
    own = arr.attrs if isinstance(arr.attrs, dict) else {}
    try:
        parent = arr.ancestor(1).attrs if arr.path.strip("/") else {}
    except ZarrError:
        parent = {}
    parent = parent if isinstance(parent, dict) else {}
    problems: list[Problem] = []
    rep = Reporter(arr.path, "$", problems)
    dims = spatial_dims(arr, [own, parent], rep)
    if dims is None:
        return cf
    sources = [own]
    shape = parent.get("spatial:shape")
    if shape is None or shape == [arr.shape[dims[0]], arr.shape[dims[1]]]:
        sources.append(parent)
    src = next((s for s in sources if "spatial:transform" in s), None)
    aff = read_affine(src, "spatial:transform", "", rep) if src is not None and transform_usable(src, "", rep) else None
    if aff is None or aff.rotated:
        return cf
    crs = read_crs(own, rep) or read_crs(parent, rep)
    names = tuple(str(n) if n else f"dim_{d}" for d, n in enumerate(arr.dimension_names or (None,) * arr.ndim))
    axes = coordinate_axes(aff, centre_offset(src, rep), tuple(arr.shape), dims, crs, names)
    return with_axes(cf, arr, axes, crs, tuple(str(p) for p in problems))


def _pyramid_level(arr: Array) -> tuple[GeoMultiscale, int] | None:
    """(the pyramid, the level index) where ``arr`` is a level of a multiscales group: an asset
    of its parent, or an array of a level group that is an asset of its grandparent."""
    parts = [p for p in arr.path.split("/") if p]
    for up, variable in ((1, None), (2, parts[-1] if parts else None)):
        if len(parts) < up:
            break
        try:
            group = arr.ancestor(up)
        except ZarrError:
            continue
        if MULTISCALES not in conventions(group.attrs):
            continue
        found = detect_geozarr(group, variable)
        index = next((lv.index for lv in found.multiscale.levels if lv.array is not None
                      and lv.array.path == arr.path), None) if found is not None else None
        if found is not None and index is not None:
            return found, index
    return None


def pyramid_state(found: GeoMultiscale, plane: Mapping[int, int] | None = None) -> ViewState | None:
    """The first view of a multiscales pyramid (levels by zoom, Y and X its spatial dimensions),
    or None where no level can be read."""
    levels = found.multiscale.readable_levels
    if not levels:
        return None
    arr = levels[0].array
    assert arr is not None
    return spatial_plane(initial_state(arr, dict(plane or {}), pyramid=levels), found.dims, plane)


def array_state(arr: Array, plane: Mapping[int, int] | None = None) -> ViewState:
    """The first view of a single array (``plane``: the indices ``--slice`` fixes): Y as rows and
    X as columns where its ``spatial:dimensions`` say which they are, as the window and every
    export orient it."""
    return spatial_plane(initial_state(arr, plane or {}), plane=plane)


def spatial_plane(state: ViewState, dims: tuple[int, int] | None = None,
                  plane: Mapping[int, int] | None = None) -> ViewState:
    """``state`` showing Y as rows and X as columns (``dims``, else the array's own
    ``spatial:dimensions``), north up whatever the storage order, unless ``--slice`` fixed one of
    them or a colour dimension is shown."""
    if dims is None:
        attrs = state.array.attrs
        if not (isinstance(attrs, dict) and "spatial:dimensions" in attrs):
            return state
        dims = spatial_dims(state.array, [attrs], Reporter(state.array.path, "$", []))
    if dims is None or state.channel_dim is not None or dims == (state.y_dim, state.x_dim):
        return state
    y, x = dims
    return state if y in (plane or {}) or x in (plane or {}) else state.with_(y_dim=y, x_dim=x)
