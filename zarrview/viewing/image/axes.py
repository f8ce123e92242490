"""Which dimensions a plane shows, and which one may be shown as colour.

A size of 3 or 4 alone says little: a (t, c, z, y, x) stack with four z planes is not RGBA,
while an (H, W, 3) photograph is RGB. Names decide first (a dimension called ``c``,
``channel`` or ``band`` is the channel axis, and no other is offered), then position: a last
dimension of size 3 or 4 is colour, as image files store it. Unnamed arrays keep the older
rule of a size-3/4 dimension before the two displayed ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...zarrlib import Array

#: dimension names that mean "channels" in microscopy (OME), remote sensing and photography
CHANNEL_NAMES = frozenset({"c", "ch", "channel", "channels", "band", "bands", "rgb", "rgba", "colour", "color"})
COLOUR_SIZES = (3, 4)
#: data types a colour image can be made of (complex, times and text cannot)
COLOUR_KINDS = "biuf"


def dim_names(arr: Array, names: Sequence[str | None] | None = None) -> list[str]:
    """A label for every dimension: its declared name (``names``, else the array's), else ``dim N``."""
    names = names or arr.dimension_names or ()
    return [str(names[i]) if i < len(names) and names[i] else f"dim {i}" for i in range(arr.ndim)]


def declared_names(arr: Array) -> list[str | None]:
    names = list(arr.dimension_names or ())
    return [str(n).lower() if n else None for n in names] + [None] * (arr.ndim - len(names))


def colour_axis(arr: Array) -> int | None:
    """The dimension that may be shown as RGB(A) channels, or None."""
    if arr.ndim < 3 or arr.dtype.kind not in COLOUR_KINDS or arr.dtype.names:
        return None
    names = declared_names(arr)
    named = [d for d, n in enumerate(names) if n in CHANNEL_NAMES]
    if named:  # a named channel axis is the only candidate, whatever the sizes of the others
        d = named[0]
        return d if arr.shape[d] in COLOUR_SIZES else None
    if arr.shape[-1] in COLOUR_SIZES:
        return arr.ndim - 1
    if any(names):
        return None  # named dimensions, none of them channels: a short z or t is not colour
    before = [d for d in range(arr.ndim - 2) if arr.shape[d] in COLOUR_SIZES]
    return before[-1] if before else None


def colour_by_default(arr: Array) -> bool:
    """An (H, W, 3|4) array of 8- or 16-bit integers is a picture: show it in colour at once."""
    d = colour_axis(arr)
    return d is not None and d == arr.ndim - 1 and arr.ndim == 3 and arr.dtype.kind in "bu" and arr.dtype.itemsize <= 2


def default_axes(arr: Array, plane: Mapping[int, int] | None = None, colour: int | None = None) -> tuple[int, int]:
    """(rows, columns): the last two dimensions that ``plane`` (``--slice``) leaves free and
    are not the colour dimension; a fixed dimension is shown only where fewer than two are
    free, and then the caller narrows what it reads to the fixed index (``export.plane.narrowed``)."""
    free = [d for d in range(arr.ndim) if d not in (plane or {}) and d != colour]
    if len(free) >= 2:
        return free[-2], free[-1]
    rest = [d for d in range(arr.ndim) if d != colour]
    return rest[-2], rest[-1]
