"""``omero`` (transitional): channels with colour, window, label, visibility; ``rdefs``."""

from __future__ import annotations

import re
from typing import Any

from .doc import Reporter, is_int, is_number, kind_of
from .model import Channel, Multiscale, Omero, Rdefs, Window

_HEX6 = re.compile(r"[0-9A-Fa-f]{6}")


def parse_omero(value: Any, rep: Reporter, multiscale: Multiscale | None, *, labelled_only: bool = False) -> Omero | None:
    """``labelled_only``: channels may carry a label alone (what spatialdata writes, ``flavour.py``)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        rep.error("omero", f'"omero" must be an object, not {kind_of(value)}')
        return None
    raw = rep.get_list(value, "channels", "omero", required=True) or []
    channels = tuple(_channel(c, f"omero.channels[{i}]", i, rep, labelled_only) for i, c in enumerate(raw))
    _check_count(channels, multiscale, rep)
    rdefs = value.get("rdefs")
    parsed = Rdefs()
    if isinstance(rdefs, dict):
        model = rdefs.get("model")
        if model is not None and model not in ("color", "greyscale"):
            rep.warning("omero.rdefs.model", f'rdefs model is "color" or "greyscale", not {model!r}')
            model = None
        parsed = Rdefs(rep.get_int(rdefs, "defaultZ", "omero.rdefs", minimum=0),
                       rep.get_int(rdefs, "defaultT", "omero.rdefs", minimum=0), model)
    elif rdefs is not None:
        rep.error("omero.rdefs", f'"rdefs" must be an object, not {kind_of(rdefs)}')
    name = value.get("name") if isinstance(value.get("name"), str) else None
    ident = value.get("id") if is_int(value.get("id")) else None
    return Omero(channels, parsed, name, ident)


def _channel(c: Any, where: str, i: int, rep: Reporter, labelled_only: bool = False) -> Channel:
    if not isinstance(c, dict):
        rep.error(where, f"channel {i}: a channel must be an object, not {kind_of(c)}")
        return Channel()
    label = c.get("label") if isinstance(c.get("label"), str) else None
    if labelled_only and is_int(c.get("label")):
        label = str(c["label"])
    who = f"channel {i}" + (f" ({label!r})" if label else "")
    color = c.get("color")
    if color is None and labelled_only:
        pass
    elif color is None:
        rep.error(where, f'{who} has no "color"; each channel MUST have one (6 hexadecimal digits, RRGGBB)')
    elif not isinstance(color, str) or not _HEX6.fullmatch(color):
        rep.error(f"{where}.color", f'{who}: "color" MUST be 6 hexadecimal digits (RRGGBB), not {color!r}')
        color = None
    window = None if labelled_only and "window" not in c else _window(c.get("window"), f"{where}.window", who, rep)
    active = c.get("active", True)
    inverted = c.get("inverted", False)
    for key, val in (("active", active), ("inverted", inverted)):
        if not isinstance(val, bool):
            rep.error(f"{where}.{key}", f'{who}: "{key}" must be true or false, not {val!r}')
    coefficient = c.get("coefficient")
    return Channel(label, color, window, active if isinstance(active, bool) else True,
                   inverted if isinstance(inverted, bool) else False,
                   c.get("family") if isinstance(c.get("family"), str) else None,
                   float(coefficient) if is_number(coefficient) else None)


def _window(w: Any, where: str, who: str, rep: Reporter) -> Window | None:
    if w is None:  # said of the channel, as a missing colour is
        rep.error(where[: -len(".window")], f'{who} has no "window"; each channel MUST have one with start, end, min and max')
        return None
    if not isinstance(w, dict):
        rep.error(where, f'{who}: "window" must be an object, not {kind_of(w)}')
        return None
    missing = [k for k in ("start", "end", "min", "max") if k not in w]
    if missing:
        rep.error(where, f'{who}: the window MUST have {", ".join(missing)}')
    vals = {k: (float(w[k]) if is_number(w.get(k)) else None) for k in ("start", "end", "min", "max")}
    for k in ("start", "end", "min", "max"):
        if k in w and vals[k] is None:
            rep.error(f"{where}.{k}", f"{who}: window {k} must be a number, not {w[k]!r}")
    return Window(vals["start"], vals["end"], vals["min"], vals["max"])


def _check_count(channels: tuple[Channel, ...], ms: Multiscale | None, rep: Reporter) -> None:
    if ms is None:
        return
    c = next((i for i, a in enumerate(ms.axes) if a.type == "channel"), None)
    level = next((lv for lv in ms.levels if lv.shape), None)
    if level is None:
        return
    size = level.shape[c] if c is not None and c < len(level.shape) else 1
    if len(channels) != size:
        rep.warning("omero.channels", f"{len(channels)} channels are described; the image has {size}"
                    + ("" if c is not None else " (no channel axis)"))
