"""The first view of an OME-Zarr image: its pyramid, its axis names, the planes its rendering
settings ask for, and the words a level picker shows.

OME-Zarr 0.4 arrays carry no dimension names of their own; the image's ``axes`` name them. The
``omero.rdefs`` default Z and T set the first sliders, as OMERO and napari-ome-zarr open them.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..image.channels import channel_axis, initial_mode, settings_from_omero
from ..image.state import ViewState, initial_state
from .model import Level, Multiscale, OmeImage


def image_state(image: OmeImage, plane: Mapping[int, int] | None = None, multiscale: int = 0) -> ViewState | None:
    """The state that shows ``image`` (its ``multiscale``-th pyramid), or None when no level can be read."""
    ms = image.multiscales[multiscale]
    levels = ms.readable_levels
    if not levels:
        return None
    arr = levels[0].array
    assert arr is not None
    names = tuple(a.name for a in ms.axes) if len(ms.axes) == arr.ndim else None
    first = dict(default_plane(image, ms, arr.ndim))
    first.update(plane or {})
    state = initial_state(arr, first, pyramid=levels, axis_names=names)
    return with_channels(state, image, ms, plane or {})


def with_channels(state: ViewState, image: OmeImage, ms: Multiscale, plane: Mapping[int, int]) -> ViewState:
    """The channel axis, every channel's setting from ``omero`` (or the palette) and the mode
    ``rdefs.model`` asks for; a channel picked on the command line (``--slice c=2``) is shown alone."""
    arr = state.array
    c = channel_axis(ms.axes if len(ms.axes) == arr.ndim else None, state.axis_names or arr.dimension_names)
    if c is None or c in (state.y_dim, state.x_dim):
        return state
    n = arr.shape[c]
    mode = "single" if c in plane else initial_mode(image.omero, n)
    state = state.with_(channel_axis=c, channels=settings_from_omero(image.omero, n), channel_mode=mode)
    if mode == "composite":
        state = state.with_(channel_dim=c)
    elif state.channel_dim == c:
        state = state.with_(channel_dim=None)
    return state


def default_plane(image: OmeImage, ms: Multiscale, ndim: int) -> dict[int, int]:
    """``rdefs`` defaultZ/defaultT as slider positions, where the image has those axes."""
    rdefs = image.omero.rdefs if image.omero is not None else None
    if rdefs is None or len(ms.axes) != ndim:
        return {}
    out = {}
    for i, axis in enumerate(ms.axes):
        if axis.type == "time" and rdefs.default_t is not None:
            out[i] = rdefs.default_t
        elif axis.name.lower() == "z" and rdefs.default_z is not None:
            out[i] = rdefs.default_z
    return out


def level_label(ms: Multiscale, level: Level, y: int, x: int) -> str:
    """``level 2: 512 × 512, 0.8 × 0.8 µm/px, 16 chunks`` for the level picker."""
    shape = level.shape or (level.array.shape if level.array is not None else ())
    size = f"{shape[y]:,} × {shape[x]:,}" if len(shape) > max(y, x) else "?"
    unit = ms.axes[x].unit if len(ms.axes) > x else None
    per = f", {_num(level.scale[y])} × {_num(level.scale[x])} {symbol(unit, 'units')}/px" if len(level.scale) > max(y, x) else ""
    chunks = ""
    if level.chunk_counts and len(level.chunk_counts) > max(y, x):
        chunks = f", {level.chunk_counts[y] * level.chunk_counts[x]:,} chunks a plane"
    return f"level {level.index}: {size}{per}{chunks}"


#: the symbols of the OME units a viewer shows most (the specification names them in full)
SYMBOLS = {"micrometer": "µm", "nanometer": "nm", "millimeter": "mm", "centimeter": "cm", "meter": "m",
           "angstrom": "Å", "picometer": "pm", "second": "s", "millisecond": "ms", "microsecond": "µs",
           "minute": "min", "hour": "h"}


def symbol(unit: str | None, default: str = "") -> str:
    """``µm`` for "micrometer"; a unit without a symbol as it is; ``default`` for none."""
    return SYMBOLS.get(unit or "", unit or default)


def _num(v: float) -> str:
    return f"{v:.4g}"
