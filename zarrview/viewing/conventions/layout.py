"""The ``layout`` of a multiscales convention group, read and checked, and the node each level
names opened: an array, or the array of one variable in a level group."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...zarrlib import Array, Group, UnsupportedArray, ZarrError
from ..ome.doc import Reporter, is_number, kind_of

#: levels of a layout that are read (each opens an array): a pyramid of 2**64 pixels has 64
MAX_LEVELS = 64


@dataclass(frozen=True)
class LayoutItem:
    """One level as the layout states it (``scale``/``translation``: the relative ``transform``)."""

    position: int
    asset: str
    derived_from: str | None
    scale: tuple[float, ...] | None
    translation: tuple[float, ...] | None
    raw: dict[str, Any] = field(compare=False, repr=False)

    @property
    def where(self) -> str:
        return f"multiscales.layout[{self.position}]"


def read_layout(value: Any, rep: Reporter) -> tuple[LayoutItem, ...]:
    """The layout's levels; every malformed part is a problem and a level without an asset is left out."""
    if not isinstance(value, dict):
        rep.error("multiscales", f'"multiscales" must be an object with a "layout", not {kind_of(value)}')
        return ()
    layout = rep.get_list(value, "layout", "multiscales", required=True)
    if layout is not None and not layout:
        rep.error("multiscales.layout", '"layout" MUST list at least one level')
    if layout is not None and len(layout) > MAX_LEVELS:
        rep.error("multiscales.layout", f'"layout" lists {len(layout):,} levels; the first {MAX_LEVELS} are read')
        layout = layout[:MAX_LEVELS]
    out = []
    seen: set[str] = set()
    for i, item in enumerate(layout or ()):
        where = f"multiscales.layout[{i}]"
        asset = _asset(item, where, seen, rep)
        if asset is None:
            continue
        assert isinstance(item, dict)
        seen.add(asset)
        derived = rep.get_str(item, "derived_from", where)
        scale = translation = None
        transform = item.get("transform")
        if transform is not None and not isinstance(transform, dict):
            rep.error(f"{where}.transform", f'"transform" must be an object, not {kind_of(transform)}')
        elif isinstance(transform, dict):
            scale = _numbers(transform, "scale", f"{where}.transform", rep, positive=True)
            translation = _numbers(transform, "translation", f"{where}.transform", rep)
        elif derived is not None:
            rep.error(where, f'level {asset!r} is derived from {derived!r} and MUST then have a "transform"')
        out.append(LayoutItem(i, asset, derived, scale, translation, item))
    return tuple(out)


def _asset(item: Any, where: str, seen: set[str], rep: Reporter) -> str | None:
    """A level's ``asset``: a relative path not listed before; None (a problem said) otherwise."""
    asset = rep.get_str(item, "asset", where, required=True) if isinstance(item, dict) else None
    if not isinstance(item, dict):
        rep.error(where, f"a level must be an object, not {kind_of(item)}")
    elif asset is not None and (asset.startswith("/") or any(p in ("", ".", "..") for p in asset.split("/"))):
        rep.error(f"{where}.asset", f'"asset" must be a relative path without "..", not {asset!r:.60}')
        asset = None
    elif asset is not None and asset in seen:
        rep.error(f"{where}.asset", f"level {asset!r} is listed twice")
        asset = None
    return asset


def _numbers(obj: dict[str, Any], key: str, where: str, rep: Reporter, *, positive: bool = False) -> tuple[float, ...] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not (isinstance(value, list) and value and all(is_number(v) and (not positive or v > 0) for v in value)):
        what = "positive numbers" if positive else "numbers"
        rep.error(f"{where}.{key}", f'"{key}" must be a list of {what}, not {value!r:.60}')
        return None
    return tuple(float(v) for v in value)


def level_variables(group: Group, asset: str) -> tuple[str, ...] | None:
    """The arrays of two or more dimensions in the level group ``asset`` (by name), or None where
    ``asset`` is not a group (the level is the array itself). Raises ZarrError where it cannot be read."""
    node = group[asset]
    if not isinstance(node, Group):
        return None
    members = node.load_members(node.member_names()) if node.can_list_members else []
    return tuple(sorted(m.name for m in members if isinstance(m, Array) and m.ndim >= 2))


def open_level(group: Group, item: LayoutItem, variable: str | None, rep: Reporter) -> tuple[Any, str | None, Any]:
    """(array or None, why not, the level group's attributes or None) of one level."""
    path = f"{item.asset}/{variable}" if variable else item.asset
    try:
        node = group[path]
    except ZarrError as e:
        rep.error(f"{item.where}.asset", f"level {path!r} cannot be opened: {e}")
        return None, str(e), None
    level_attrs = None
    if variable:
        try:
            level_attrs = group[item.asset].attrs
        except ZarrError:
            level_attrs = None
    if isinstance(node, UnsupportedArray):
        rep.warning(f"{item.where}.asset", f"level {path!r} cannot be read: {node.error}")
        return None, str(node.error), level_attrs
    if not isinstance(node, Array):
        rep.error(f"{item.where}.asset", f"level {path!r} is a {node.kind}, not an array")
        return None, f"{node.kind}, not an array", level_attrs
    return node, None, level_attrs
