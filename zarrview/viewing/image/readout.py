"""Words for values and places: the pixel readout under the cursor and request labels.

Values print as a scientist would write them, to their type's precision (``210``, ``0.1``, ``(1+2j)``,
``2020-01-01T00:00``), never as numpy reprs (``np.uint16(210)``), and a value taken from a
coarse preview says so, because it may belong to a neighbouring element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .axes import dim_names
from .scene import Scene
from .state import ViewState


def format_value(v: Any) -> str:
    if isinstance(v, np.ndarray):
        if v.dtype.names is None:
            return "(" + ", ".join(format_value(x) for x in v.reshape(-1)) + ")"
        v = v[()]
    if isinstance(v, np.void) and v.dtype.names:
        return "{" + ", ".join(f"{n}: {format_value(v[n])}" for n in v.dtype.names) + "}"
    if isinstance(v, np.datetime64 | np.timedelta64):
        return "NaT" if np.isnat(v) else str(v)
    if isinstance(v, np.floating):  # to its own type's precision: a float32 287.31, not 287.30999755859375
        return str(v)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytes):
        return text_of_bytes(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def text_of_bytes(b: bytes) -> str:
    """Bytes as text where they decode as UTF-8 (trailing NULs of fixed-width strings dropped),
    else as a Python bytes literal."""
    stripped = b.rstrip(b"\x00")
    try:
        return stripped.decode("utf-8")
    except UnicodeDecodeError:
        return repr(b)


def selection_text(s: Any, length: int | None = None) -> str:
    if isinstance(s, slice) and length is not None and s.step in (None, 1) and (s.start or 0) == 0 \
            and s.stop is not None and s.stop >= length:
        return ":"
    if isinstance(s, slice):
        if s.start is None and s.stop is None and s.step in (None, 1):
            return ":"
        text = f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}"
        return text if s.step in (None, 1) else f"{text}:{s.step}"
    return str(s)


def request_label(path: str, selection: tuple[Any, ...], shape: tuple[int, ...] | None = None) -> str:
    lengths = shape if shape is not None else (None,) * len(selection)
    return f"{path}[{', '.join(selection_text(s, n) for s, n in zip(selection, lengths))}]"


def place_text(state: ViewState, d: int, i: int) -> str:
    """``lat 45.25 °N`` where a CF coordinate names index ``i`` of dimension ``d``, else ``y 120``."""
    value = None if state.cf is None else state.cf.place(d, i)
    name = dim_names(state.array, state.axis_names)[d]
    return f"{name} {i:,}" if value is None else f"{name} {value}"


def value_text(state: ViewState, value: Any) -> str:
    """A value of the view as it is drawn: each channel's of a composite, CF-decoded with its
    units where the view decodes, marked "(stored)" where it could but does not."""
    text = channel_values(state, value) if state.composite else format_value(value)
    cf = state.cf
    if cf is not None and not state.composite:
        text = cf.value_text(value, text) if state.decoding is not None or not cf.coding.active else f"{text} (stored)"
    return text


def readout(state: ViewState, scene: Scene, row: int, col: int) -> str:
    """``y 120, x 33 (t 4): 210`` for the element under the cursor; ``≈ 210 (preview)`` when
    only a coarse sample of that place is loaded; the coordinates alone where nothing is."""
    rows, cols = state.plane_shape
    if not (0 <= row < rows and 0 <= col < cols):
        return ""
    cf = state.cf
    where = f"{place_text(state, state.y_dim, row)}, {place_text(state, state.x_dim, col)}"
    if cf is not None and cf.crs and (state.y_dim in cf.axes or state.x_dim in cf.axes):
        where += f" [{cf.crs}]"
    fixed = state.fixed()
    if fixed:
        where += " (" + ", ".join(place_text(state, d, i) for d, i in sorted(fixed.items())) + ")"
    key = state.plane_key()
    current = Scene(coarse=scene.coarse if scene.coarse is not None and scene.coarse.plane_key == key else None,
                    detail=scene.detail if scene.detail is not None and scene.detail.plane_key == key else None)
    found = current.value_at(row, col)
    if found is None:
        return f"{where}: not loaded"
    value, exact = found
    text = value_text(state, value)
    text = f"{where}: {text}" if exact else f"{where}: ≈ {text} (preview; zoom in for the exact value)"
    return text + label_values(state, current, row, col)


def label_values(state: ViewState, scene: Scene, row: int, col: int) -> str:
    """`` | nuclei 17 (area: 341, class: "cell")``: every shown label layer's value under the
    cursor and its properties."""
    out = ""
    for layer in state.visible_labels():
        value, error = scene.label_at(layer.name, row, col), scene.label_error(layer.name)
        if value is not None:
            out += " | " + layer.describe(value) + (f" (partly unreadable: {error})" if error else "")
        elif error:
            out += f" | {layer.name}: cannot be read ({error})"
    return out


def channel_values(state: ViewState, value: Any) -> str:
    """``DAPI 210, GFP 33`` : every channel's value under the cursor, with its label."""
    flat = np.asarray(value).reshape(-1)
    labels = {c.index: c.label for c in state.channels}
    return ", ".join(f"{labels.get(i, f'channel {i}')} {format_value(v)}" for i, v in enumerate(flat))
