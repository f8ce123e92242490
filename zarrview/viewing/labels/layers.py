"""Label overlays (OME-Zarr ``labels/``): what a label image is in a view, and its colours.

A :class:`LabelLayer` is one label image of the viewed image as the view draws it: its pyramid
levels, its colours (``image-label.colors``, the last entry winning where a value repeats; a
generated palette for every other value, 0 transparent as the background), its properties per
value, its opacity and whether it is shown. ``ViewState.labels`` holds them; the controller reads
the planes of the visible layers in the same request as the image (``reads.py``) and each
tile carries them (``image.scene.LabelPlane``) as RGBA from :func:`colorize`. A layer's opacity and
visibility change how the loaded planes are drawn, never what is read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ...zarrlib import Group, ZarrError
from ..ome.model import Level, OmeImage, OmeLabels

if TYPE_CHECKING:
    from ..image.scene import LabelPlane, Scene, Tile

RGBA = tuple[int, int, int, int]
#: how a label layer opens
DEFAULT_OPACITY = 0.5


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class LabelLayer:
    #: the label image's path under ``labels/`` ("nuclei")
    name: str
    #: its readable levels, finest first, in its own physical space
    levels: tuple[Level, ...]
    #: the names of its axes (matched by name with the image's), or () where unnamed
    axes: tuple[str, ...] = ()
    #: label value -> RGBA (0-255) from ``image-label.colors``; other values get :func:`palette`
    colors: Mapping[int, RGBA] = field(default_factory=_empty, hash=False)
    #: label value -> its properties (``label-value`` left out)
    properties: Mapping[int, Mapping[str, Any]] = field(default_factory=_empty, compare=False)
    opacity: float = DEFAULT_OPACITY
    visible: bool = True
    #: varies the generated palette ("shuffle"); 0 is the palette every viewer of zarrview sees
    seed: int = 0

    def with_(self, **changes: Any) -> LabelLayer:
        return replace(self, **changes)

    def with_color(self, value: int, rgba: RGBA | None) -> LabelLayer:
        """The layer with ``value`` drawn in ``rgba`` (None: back to the generated palette)."""
        colors = dict(self.colors)
        if rgba is None:
            colors.pop(int(value), None)
        else:
            colors[int(value)] = tuple(int(c) for c in rgba)  # type: ignore[assignment]
        return replace(self, colors=MappingProxyType(colors))

    def color_of(self, value: int) -> RGBA:
        """The colour ``value`` is drawn in."""
        return tuple(int(c) for c in colorize(np.array([value]), self)[0])  # type: ignore[return-value]

    def same_colours(self, other: LabelLayer) -> bool:
        return self.seed == other.seed and dict(self.colors) == dict(other.colors)

    def describe(self, value: Any) -> str:
        """``nuclei 17 (area: 341, class: "cell")``: the value and its properties."""
        v = int(value)
        props = self.properties.get(v)
        text = f"{self.name} {v}"
        if props:
            text += " (" + ", ".join(f"{k}: {_json(p)}" for k, p in props.items()) + ")"
        return text

    @cached_property
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        """The stated colours as (values sorted, RGBA rows), for a vectorised lookup."""
        keys = sorted(self.colors)
        rgba = np.array([self.colors[k] for k in keys], dtype=np.uint8).reshape(-1, 4)
        return np.array(keys, dtype=object), rgba


def layer_of(name: str, image: OmeImage, **changes: Any) -> LabelLayer | None:
    """The layer of the label image ``image`` (found under ``labels/name``), or None where it has
    no readable level."""
    if not image.multiscales:
        return None
    ms = image.first
    levels = ms.readable_levels
    if not levels:
        return None
    colors: dict[int, RGBA] = {}
    properties: dict[int, dict[str, Any]] = {}
    if image.label is not None:
        for c in image.label.colors:  # the last entry wins on repeats
            if c.rgba is not None:
                colors[c.value] = c.rgba
            else:
                colors.pop(c.value, None)
        for p in image.label.properties:
            properties.setdefault(int(p["label-value"]), {}).update({k: v for k, v in p.items() if k != "label-value"})
    first = levels[0].array
    axes = tuple(a.name for a in ms.axes) if first is not None and len(ms.axes) == first.ndim else ()
    return LabelLayer(name, levels, axes, MappingProxyType(colors), MappingProxyType(properties), **changes)


def labels_group(image: Group, found: OmeImage | None = None) -> OmeLabels | None:
    """The ``labels`` group of an image (``found``: its OME node, detected again where not
    given), with its label images' checks against the image (``ome.detect.image_labels``); None
    without one."""
    from ..ome import detect
    from ..ome.detect import image_labels

    node = found if found is not None else detect(image, labels=False)
    if not isinstance(node, OmeImage):
        return None
    levels = len(node.multiscales[0].levels) if node.multiscales else None
    return image_labels(image, node.version, levels)


def layers_of(labels: OmeLabels | None) -> tuple[LabelLayer, ...]:
    """Every readable label image of an image's ``labels`` group, as a layer (it opens their level
    arrays: call it off the GUI thread). A label image that cannot be read is left out."""
    from ..ome import detect  # detect imports the whole model; only needed here

    if labels is None:
        return ()
    out = []
    for name in labels.labels:
        try:
            node = labels.group[name]
            found = detect(node) if isinstance(node, Group) else None
        except ZarrError:
            continue
        layer = layer_of(name, found) if isinstance(found, OmeImage) else None
        if layer is not None:
            out.append(layer)
    return tuple(out)


# -- colours ------------------------------------------------------------------------------------
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: consecutive values get far-apart hues


def palette(values: np.ndarray, seed: int = 0) -> np.ndarray:
    """A colour for each integer value (RGBA uint8, shape ``values.shape + (4,)``): distinct
    hues for neighbouring values (Fibonacci hashing), varied lightness, always the same colour
    for a value and ``seed``; 0 is transparent (the background)."""
    v = np.asarray(values)
    u = v.astype(np.uint64) if v.dtype.kind in "iu" else np.asarray(v, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = (u + np.uint64(seed % (1 << 64)) * np.uint64(0xD1B54A32D192ED03)) * _GOLDEN
        mixed = (h ^ (h >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    hue = (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    light = 0.55 + 0.25 * ((mixed >> np.uint64(40)) & np.uint64(0xFF)).astype(np.float64) / 255.0
    sat = 0.75 + 0.25 * ((mixed >> np.uint64(20)) & np.uint64(0xFF)).astype(np.float64) / 255.0
    rgb = _hsv(hue, sat, light)
    out = np.empty(v.shape + (4,), dtype=np.uint8)
    out[..., :3] = np.clip(np.rint(rgb * 255), 0, 255).astype(np.uint8)
    out[..., 3] = np.where(u == 0, 0, 255).astype(np.uint8)
    out[u == 0, :3] = 0
    return out


def _hsv(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    i = np.floor(h * 6.0).astype(np.int64) % 6
    f = h * 6.0 - np.floor(h * 6.0)
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = np.empty(h.shape + (3,))
    for k, (r, g, b) in enumerate(choices):
        sel = i == k
        out[sel] = np.stack([r[sel], g[sel], b[sel]], axis=-1)
    return out


def colorize(values: np.ndarray, layer: LabelLayer) -> np.ndarray:
    """The RGBA image (uint8, ``values.shape + (4,)``) of a plane of label values: each distinct
    value coloured once (``np.unique``), from the layer's colours where stated, else the palette."""
    values = np.asarray(values)
    if values.dtype.kind not in "iu":  # a float label image: its integral values
        values = np.nan_to_num(values, nan=0).astype(np.int64)
    uniq, inverse = _distinct(values)
    colours = palette(uniq, layer.seed)
    keys, rgba = layer._table  # noqa: SLF001
    if len(keys):
        info = np.iinfo(uniq.dtype)
        inside = [i for i, k in enumerate(keys) if info.min <= k <= info.max]  # values this dtype can hold
        if inside:
            stated = np.array([keys[i] for i in inside], dtype=uniq.dtype)
            at = np.searchsorted(stated, uniq)
            at_c = np.minimum(at, len(stated) - 1)
            hit = stated[at_c] == uniq
            colours[hit] = rgba[np.array(inside)][at_c[hit]]
    return colours[inverse.reshape(values.shape)]


def recolour(planes: tuple[LabelPlane, ...], layers: tuple[LabelLayer, ...]) -> tuple[LabelPlane, ...]:
    """``planes`` whose colours are not those of their layer in ``layers`` (by name) coloured
    again; the values stay. The same tuple when none needs it."""
    by_name = {layer.name: layer for layer in layers}
    stale = [p.name in by_name and p.values.size > 0 and p.coloured_by is not None
             and not p.coloured_by.same_colours(by_name[p.name]) for p in planes]
    if not any(stale):
        return planes
    return tuple(replace(p, rgba=colorize(p.values, by_name[p.name]), coloured_by=by_name[p.name]) if s else p
                 for p, s in zip(planes, stale))


def recoloured(scene: Scene, layers: tuple[LabelLayer, ...]) -> Scene:
    """``scene`` with its label planes in the colours of ``layers`` (after a user's edit, on the
    GUI thread: planes of screen size); nothing is read."""
    def tile(t: Tile | None) -> Tile | None:
        if t is None:
            return None
        planes = recolour(t.labels, layers)
        return t if planes is t.labels else replace(t, labels=planes)

    return replace(scene, coarse=tile(scene.coarse), detail=tile(scene.detail))


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the values to colour, each element's index among them): every value of a narrow range
    (an index is then the value less the lowest: no sort), else ``np.unique``'s."""
    if values.size:
        lo, hi = values.min(), values.max()
        if int(hi) - int(lo) < min(1 << 16, max(256, values.size)):
            uniq = np.array(range(int(lo), int(hi) + 1), dtype=values.dtype)
            wide = values.astype(np.int64) if values.dtype.itemsize < 8 else values  # the difference fits
            return uniq, (wide - wide.dtype.type(lo)).astype(np.intp)
    return np.unique(values, return_inverse=True)


def _json(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, float | int):
        return repr(v) if isinstance(v, float) else str(v)
    try:
        return json.dumps(v, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(v)
