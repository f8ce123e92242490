"""A view as a value others can reopen: a ``.zarrview`` file, a command line, a ``zarrview://`` link.

A ``SavedView`` holds what a person set up (``ViewLook``: the location and node, the plane and
its sliders, the pyramid level, the region in view, the colour map, contrast, channels, stored
or decoded values) and the tools open. The same value is written three ways, each read back to
an equal value: as JSON (File ▸ Save View…), as the command line that opens it
(``zarrview 'URL::/node' --slice … --region …``) and as a ``zarrview://`` URL whose query holds
those same flags, so one parser serves the command line, the link and a file dropped on the
window. Credentials never enter it: storage options that are secrets and signed query strings
are left out (``public_options``, ``public_location``); the person opening it supplies their own.

A look is applied to the first view of the node it names only where it fits (the same shape,
as many channels), as the session's view memory is: a store rewritten since opens afresh.
No Qt here: the window reads a look off its state and hands one to its data view.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..zarrlib.storage.credentials import public_location, public_options
from .compare.errors import CompareError
from .compare.pairs import parse_spec
from .image.channels import ChannelSetting
from .image.colour_maps import CHOICES
from .image.slice_spec import ArgumentError
from .image.state import ViewState

#: what a ``.zarrview`` file says it is, and the version of its layout
FORMAT = "zarrview-view"
VERSION = 1
SUFFIX = ".zarrview"
SCHEME = "zarrview"
#: the tools a view can have open, by the names the files and links use
TOOLS = ("sections", "profile", "statistics", "series", "grid", "io", "storage-columns")
#: how a compared pair is shown: side by side, B blended over A, their difference, their ratio
COMPARE_MODES = ("side", "blend", "a-b", "a/b")
COMPLEX_MODES = ("magnitude", "phase", "real", "imag")
#: a file larger than this is no saved view (they are a few hundred bytes)
MOST_BYTES = 1 << 20


class ViewFileError(ArgumentError):
    """A saved view, link or command line that cannot be read; the message names it and what is wrong."""


@dataclass(frozen=True)
class ChannelLook:
    """One channel as it was drawn: colour, window, shown or not, inverted."""

    index: int
    color: str  # RRGGBB
    window: tuple[float, float] | None = None
    active: bool = True
    inverted: bool = False


@dataclass(frozen=True)
class ViewLook:
    """What one view shows and how: enough to draw it again the same way."""

    location: str
    node: str = "/"
    options: Mapping[str, Any] = field(default_factory=dict)
    #: every dimension's index (those shown are ignored), None: the node's first plane
    indices: tuple[int, ...] | None = None
    y_dim: int | None = None
    x_dim: int | None = None
    channel_dim: int | None = None
    #: the pyramid level read; None: chosen by the zoom
    level: int | None = None
    #: the part of the plane in view (rows, columns in level-0 pixels), None: the whole plane
    region: tuple[float, float, float, float] | None = None
    #: the colour map chosen, with "_r" for reversed; None: chosen from the data
    colormap: str | None = None
    contrast: tuple[float, float] | None = None
    auto_per_plane: bool = False
    complex_mode: str = "magnitude"
    channel_mode: str | None = None
    channels: tuple[ChannelLook, ...] = ()
    raw: bool = False

    @property
    def target(self) -> str:
        """The location with its node, as the command line takes it."""
        return self.location if self.node == "/" else f"{self.location}::{self.node}"


@dataclass(frozen=True)
class SavedView:
    view: ViewLook
    tools: tuple[str, ...] = ()
    #: the array compared with (View ▸ Compare): its location and node (its plane follows A's)
    compare: ViewLook | None = None
    #: how the pair is shown: one of ``COMPARE_MODES``
    compare_mode: str = "side"
    #: B is A itself taken another way (``compare.pairs.SPEC``: ``stored``, ``level@1``,
    #: ``index:2@5``), in place of an array of its own (``compare`` is then None)
    compare_against: str | None = None

    @property
    def compares(self) -> bool:
        return self.compare is not None or self.compare_against is not None


# -- from and to the window's state -------------------------------------------------------
def look_of(state: ViewState | None, location: str, node: str, options: Mapping[str, Any],
            colormap: str | None = None) -> ViewLook:
    """The look of a view showing ``state`` (None: a node shown without an image), of the store
    opened as ``location`` with ``options``, credentials left out."""
    base = ViewLook(public_location(location), node, public_options(dict(options)))
    if state is None:
        return base
    channels = tuple(ChannelLook(c.index, c.hex, c.window, c.active, c.inverted) for c in state.channels)
    return replace(base, indices=tuple(state.indices), y_dim=state.y_dim, x_dim=state.x_dim,
                   channel_dim=state.channel_dim, level=state.level, region=_region(state.region),
                   colormap=colormap, contrast=state.contrast, auto_per_plane=state.auto_per_plane,
                   complex_mode=state.complex_mode, channel_mode=state.channel_mode if state.channels else None,
                   channels=channels, raw=state.raw)


#: decimals a region is kept to: a millionth of a pixel, far below what a screen shows, and above
#: the rounding a view's range gathers on its way through the axes' transforms
REGION_DECIMALS = 6


def _region(region: Any) -> tuple[float, float, float, float] | None:
    if region is None:
        return None
    r0, r1, c0, c1 = (round(float(v), REGION_DECIMALS) for v in region)
    return r0, r1, c0, c1


def applied(state: ViewState, look: ViewLook) -> ViewState:
    """``state`` (the first view of the node ``look`` names) as ``look`` has it, in what fits:
    sliders and shown dimensions only where the dimensions exist, channels only where there are
    as many, contrast and modes always."""
    ndim = state.array.ndim
    out = replace(state, contrast=look.contrast, auto_per_plane=look.auto_per_plane, complex_mode=look.complex_mode,
                  raw=look.raw)
    dims = (look.y_dim, look.x_dim)
    if look.indices is not None and len(look.indices) == ndim and all(0 <= i < s for i, s in zip(look.indices, state.array.shape)):
        out = replace(out, indices=tuple(look.indices))
    if None not in dims and len(set(dims)) == 2 and all(0 <= d < ndim for d in dims if d is not None) \
            and (look.channel_dim is None or (0 <= look.channel_dim < ndim and look.channel_dim not in dims)):
        assert look.y_dim is not None and look.x_dim is not None
        out = replace(out, y_dim=look.y_dim, x_dim=look.x_dim, channel_dim=look.channel_dim)
    if look.channels and len(look.channels) == len(out.channels):
        chosen = tuple(_channel(c, s) for c, s in zip(look.channels, out.channels))
        out = replace(out, channels=chosen)
        if look.channel_mode is not None and look.channel_mode != out.channel_mode:
            out = out.with_channel_mode(look.channel_mode)
        out = replace(out, contrast=look.contrast)  # a mode change clears it: the saved one stands
    if look.level is not None and state.pyramid and look.level < len(state.pyramid):
        out = replace(out, level=look.level)
    return out


def _channel(look: ChannelLook, setting: ChannelSetting) -> ChannelSetting:
    rgb = tuple(int(look.color[i:i + 2], 16) for i in (0, 2, 4))
    return setting.with_(color=rgb, window=look.window, active=look.active, inverted=look.inverted)


# -- JSON -----------------------------------------------------------------------------------
def to_json(saved: SavedView) -> str:
    """The ``.zarrview`` file's text: small, readable, keys in a stable order."""
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "view": _look_json(saved.view),
                           "tools": list(saved.tools)}
    if saved.compare is not None:
        doc["compare"] = {"view": _look_json(saved.compare), "mode": saved.compare_mode}
    elif saved.compare_against is not None:
        doc["compare"] = {"against": saved.compare_against, "mode": saved.compare_mode}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def _look_json(look: ViewLook) -> dict[str, Any]:
    out: dict[str, Any] = {"location": look.location, "node": look.node}
    if look.options:
        out["options"] = dict(look.options)
    for name in ("indices", "y_dim", "x_dim", "channel_dim", "level", "region", "colormap", "contrast",
                 "channel_mode"):
        value = getattr(look, name)
        if value is not None:
            out[name] = list(value) if isinstance(value, tuple) else value
    if look.auto_per_plane:
        out["auto_per_plane"] = True
    if look.complex_mode != "magnitude":
        out["complex_mode"] = look.complex_mode
    if look.raw:
        out["raw"] = True
    if look.channels:
        out["channels"] = [{"index": c.index, "color": c.color, "window": None if c.window is None else list(c.window),
                            "active": c.active, "inverted": c.inverted} for c in look.channels]
    return out


def from_json(text: str | bytes, source: str = "the view") -> SavedView:
    """A saved view from its file's text; ``ViewFileError`` naming ``source`` and the field
    that is wrong."""
    if len(text) > MOST_BYTES:
        raise ViewFileError(f"{source}: {len(text):,} bytes is no saved view (at most {MOST_BYTES:,})")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ViewFileError(f"{source} is not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ViewFileError(f"{source} is not a zarrview view (its \"format\" is not {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise ViewFileError(f"{source} is a view of layout version {doc.get('version')!r}; this zarrview reads {VERSION}")
    view = doc.get("view")
    if not isinstance(view, dict):
        raise ViewFileError(f"{source}: \"view\" must be an object")
    compare, mode, against = None, "side", None
    if doc.get("compare") is not None:
        pair = doc["compare"]
        if isinstance(pair, dict) and isinstance(pair.get("against"), str) and "view" not in pair:
            against = _against(pair["against"], f"{source}: compare")
        elif not isinstance(pair, dict) or not isinstance(pair.get("view"), dict):
            raise ViewFileError(f"{source}: \"compare\" must be an object with a \"view\" or an \"against\"")
        else:
            compare = _look_from(pair["view"], f"{source}: compare")
        mode = _compare_mode(pair.get("mode", "side"), source)
    return SavedView(_look_from(view, source), _tools(doc.get("tools", []), source), compare, mode, against)


def _against(text: str, source: str) -> str:
    """``text`` where it names a way to take B from A; ViewFileError otherwise."""
    try:
        parse_spec(text)
    except CompareError as e:
        raise ViewFileError(f"{source}: {e}") from None
    return text.strip()


def _compare_mode(value: Any, source: str) -> str:
    if value not in COMPARE_MODES:
        raise ViewFileError(f"{source}: the compare mode {value!r} is not one of {', '.join(COMPARE_MODES)}")
    return str(value)


def _look_from(doc: Mapping[str, Any], source: str) -> ViewLook:
    fields = _Fields(doc, source)
    channels = tuple(_channel_from(c, f"{source}: channels[{i}]") for i, c in enumerate(fields.items("channels") or []))
    look = ViewLook(
        location=fields.text("location", required=True) or "", node=fields.text("node") or "/",
        options=fields.mapping("options"), indices=fields.ints("indices"), y_dim=fields.integer("y_dim"),
        x_dim=fields.integer("x_dim"), channel_dim=fields.integer("channel_dim"), level=fields.integer("level"),
        region=fields.numbers("region", 4), colormap=fields.text("colormap"), contrast=fields.numbers("contrast", 2),
        auto_per_plane=fields.flag("auto_per_plane"), complex_mode=fields.text("complex_mode") or "magnitude",
        channel_mode=fields.text("channel_mode"), channels=channels, raw=fields.flag("raw"))
    return checked(look, source)


def checked(look: ViewLook, source: str) -> ViewLook:
    """``look`` where every value is one a view can take; ``ViewFileError`` otherwise."""
    if not look.location:
        raise ViewFileError(f"{source}: no location")
    if not look.node.startswith("/"):
        raise ViewFileError(f"{source}: the node {look.node!r} must be a path from the root, /a/b")
    if look.colormap is not None and look.colormap.removesuffix("_r") not in CHOICES:
        raise ViewFileError(f"{source}: no colour map is named {look.colormap!r} (one of {', '.join(CHOICES)}, "
                            "with _r for reversed)")
    if look.complex_mode not in COMPLEX_MODES:
        raise ViewFileError(f"{source}: complex_mode {look.complex_mode!r} is not one of {', '.join(COMPLEX_MODES)}")
    if look.channel_mode not in (None, "single", "composite"):
        raise ViewFileError(f"{source}: channel_mode {look.channel_mode!r} is not single or composite")
    for name in ("indices", "y_dim", "x_dim", "channel_dim", "level"):
        value = getattr(look, name)
        if value is not None and min(value if isinstance(value, tuple) else (value,), default=0) < 0:
            raise ViewFileError(f"{source}: {name} must not be negative")
    if look.region is not None:
        r0, r1, c0, c1 = look.region
        if not (r0 < r1 and c0 < c1):
            raise ViewFileError(f"{source}: the region {list(look.region)} is empty")
    if look.contrast is not None and not look.contrast[0] <= look.contrast[1]:
        raise ViewFileError(f"{source}: the contrast {list(look.contrast)} runs backwards")
    return look


def _channel_from(doc: Any, source: str) -> ChannelLook:
    if not isinstance(doc, dict):
        raise ViewFileError(f"{source} must be an object")
    fields = _Fields(doc, source)
    color = fields.text("color") or "FFFFFF"
    try:
        int(color, 16)
    except ValueError:
        color = ""
    if len(color) != 6:
        raise ViewFileError(f"{source}: color {doc.get('color')!r} is not RRGGBB")
    index = fields.integer("index")
    return ChannelLook(0 if index is None else index, color.upper(), fields.numbers("window", 2),
                       fields.flag("active", True), fields.flag("inverted"))


def _tools(value: Any, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ViewFileError(f"{source}: \"tools\" must be a list of names")
    unknown = [t for t in value if t not in TOOLS]
    if unknown:
        raise ViewFileError(f"{source}: no tool is named {', '.join(map(repr, unknown))} (one of {', '.join(TOOLS)})")
    return tuple(dict.fromkeys(value))


class _Fields:
    """Typed reads of a JSON object's fields, each failing with the field's name."""

    def __init__(self, doc: Mapping[str, Any], source: str) -> None:
        self.doc, self.source = doc, source

    def _bad(self, name: str, what: str) -> ViewFileError:
        return ViewFileError(f"{self.source}: {name} must be {what}, not {self.doc.get(name)!r}")

    def text(self, name: str, required: bool = False) -> str | None:
        value = self.doc.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str):
            raise self._bad(name, "a string")
        return value

    def integer(self, name: str) -> int | None:
        value = self.doc.get(name)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._bad(name, "an integer")
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.doc.get(name, default)
        if not isinstance(value, bool):
            raise self._bad(name, "true or false")
        return value

    def items(self, name: str) -> list[Any] | None:
        value = self.doc.get(name)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self._bad(name, "a list")
        return value

    def ints(self, name: str) -> tuple[int, ...] | None:
        value = self.items(name)
        if value is None:
            return None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise self._bad(name, "a list of integers")
        return tuple(value)

    def numbers(self, name: str, count: int) -> Any:
        value = self.items(name)
        if value is None:
            return None
        if len(value) != count or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                          and math.isfinite(v) for v in value):
            raise self._bad(name, f"a list of {count} finite numbers")
        return tuple(float(v) for v in value)

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.doc.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self._bad(name, "an object")
        return public_options(value)


# -- command line and link ------------------------------------------------------------------
def _pairs(saved: SavedView) -> list[tuple[str, str | None]]:
    """Each flag that opens ``saved`` with its value (None: a flag alone), after the location."""
    look = saved.view
    out: list[tuple[str, str | None]] = []
    if look.options:
        out.append(("options", json.dumps(dict(look.options), separators=(",", ":"), sort_keys=True)))
    if look.indices is not None and look.y_dim is not None and look.x_dim is not None:
        shown = {look.y_dim, look.x_dim}  # a colour dimension keeps its index: --axes names it
        out.append(("slice", ",".join(":" if d in shown else str(i) for d, i in enumerate(look.indices))))
        if look.y_dim > look.x_dim or look.channel_dim is not None:
            out.append(("axes", ",".join(str(d) for d in (look.y_dim, look.x_dim, look.channel_dim) if d is not None)))
    if look.level is not None:
        out.append(("level", str(look.level)))
    if look.region is not None:
        r0, r1, c0, c1 = look.region
        out.append(("region", f"{_num(r0)}:{_num(r1)},{_num(c0)}:{_num(c1)}"))
    if look.auto_per_plane:  # each plane's levels from its values: the ones shown now follow
        out.append(("contrast", "per-plane"))
    elif look.contrast is not None:
        out.append(("contrast", f"{_num(look.contrast[0])},{_num(look.contrast[1])}"))
    if look.colormap is not None:
        out.append(("colormap", look.colormap))
    if look.complex_mode != "magnitude":
        out.append(("complex", look.complex_mode))
    if look.raw:
        out.append(("raw", None))
    if look.channels:
        out.append(("channels", channels_text(look)))
    if saved.tools:
        out.append(("tools", ",".join(saved.tools)))
    if saved.compare is not None:
        out.append(("compare", saved.compare.target))
        if saved.compare.options:
            out.append(("compare-options", json.dumps(dict(saved.compare.options), separators=(",", ":"),
                                                      sort_keys=True)))
    elif saved.compare_against is not None:
        out.append(("compare-against", saved.compare_against))
    if saved.compares and saved.compare_mode != "side":
        out.append(("compare-mode", saved.compare_mode))
    return out


def flags(saved: SavedView) -> list[str]:
    """The command-line arguments that open ``saved`` (after ``zarrview``): the location with
    its node, then a flag for each part of the look that is set (``--flag=value`` where the
    value starts with a minus, which would read as a flag)."""
    out = [saved.view.target]
    for name, value in _pairs(saved):
        if value is None:
            out.append(f"--{name}")
        elif value.startswith("-"):
            out.append(f"--{name}={value}")
        else:
            out += [f"--{name}", value]
    return out


def command_line(saved: SavedView) -> str:
    """The shell command that opens ``saved``, quoted for a POSIX shell."""
    return shlex.join(["zarrview", *flags(saved)])


def _num(value: float) -> str:
    """A number as short as it can be written and read back equal."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 2 ** 53 else repr(float(value))


def channels_text(look: ViewLook) -> str:
    """``--channels``: the mode, then each channel as INDEX:RRGGBB[:LO:HI][:off][:inverted]."""
    parts = [look.channel_mode or "single"]
    for c in look.channels:
        part = f"{c.index}:{c.color}"
        if c.window is not None:
            part += f":{_num(c.window[0])}:{_num(c.window[1])}"
        part += ":off" if not c.active else ""
        part += ":inverted" if c.inverted else ""
        parts.append(part)
    return ";".join(parts)


def read_channels(text: str) -> tuple[str, tuple[ChannelLook, ...]]:
    """The mode and channels of ``--channels`` (``channels_text``'s form)."""
    mode, *rest = text.split(";")
    if mode not in ("single", "composite"):
        raise ViewFileError(f"zarrview: --channels starts with single or composite, not {mode!r}")
    out = []
    for part in rest:
        bits = part.split(":")
        try:
            index, color = int(bits[0]), bits[1].upper()
            int(color, 16)
            flags_ = [b for b in bits[2:] if b in ("off", "inverted")]
            numbers = [float(b) for b in bits[2:] if b not in ("off", "inverted")]
        except (ValueError, IndexError):
            raise ViewFileError(f"zarrview: --channels: {part!r} is not INDEX:RRGGBB[:LO:HI][:off][:inverted]") from None
        if len(color) != 6 or len(numbers) not in (0, 2):
            raise ViewFileError(f"zarrview: --channels: {part!r} is not INDEX:RRGGBB[:LO:HI][:off][:inverted]")
        window = (numbers[0], numbers[1]) if numbers else None
        out.append(ChannelLook(index, color, window, "off" not in flags_, "inverted" in flags_))
    return mode, tuple(out)


def link(saved: SavedView) -> str:
    """The ``zarrview://`` URL of ``saved``: its command line's flags as the query."""
    pairs = [("location", saved.view.target)] + [(name, value or "") for name, value in _pairs(saved)]
    return f"{SCHEME}://open?{urlencode(pairs)}"


def link_arguments(url: str) -> list[str]:
    """The command-line arguments a ``zarrview://`` URL stands for (``link``'s inverse)."""
    parts = urlsplit(url)
    if parts.scheme != SCHEME or parts.netloc != "open":
        raise ViewFileError(f"zarrview: {url!r} is not a zarrview://open?… link")
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    locations = [v for k, v in pairs if k == "location"]
    if len(locations) != 1:
        raise ViewFileError("zarrview: a zarrview:// link names one location")
    out = [locations[0]]
    for key, value in pairs:
        if key == "location":
            continue
        if not key.replace("-", "").isalpha():
            raise ViewFileError(f"zarrview: a zarrview:// link has no part {key!r}")
        out.append(f"--{key}={value}" if value else f"--{key}")
    return out


def tools_text(text: str) -> tuple[str, ...]:
    """The tools of ``--tools`` (comma-separated names)."""
    return _tools([t.strip() for t in text.split(",") if t.strip()], "zarrview: --tools")


def numbers_text(text: str, count: int, flag: str, form: str) -> tuple[float, ...]:
    """``count`` finite numbers separated by ``,`` or ``:`` (``--contrast``, ``--region``)."""
    try:
        values = tuple(float(v) for v in text.replace(":", ",").split(","))
    except ValueError:
        values = ()
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise ViewFileError(f"zarrview: {flag} must look like {form}, not {text!r}")
    return values


def look_from_flags(target: str, *, options: Mapping[str, Any] | None = None, slice_text: str | None = None,
                    axes: str | None = None, level: int | None = None,
                    region: tuple[float, float, float, float] | None = None, contrast: str | None = None,
                    colormap: str | None = None, complex_mode: str | None = None, raw: bool = False,
                    channels: str | None = None) -> ViewLook:
    """The look the command line's flags describe (``flags``' inverse), checked. A positional
    ``--slice`` (5,:,:) gives every index, the ':' dimensions shown (rows, then columns, unless
    ``--axes`` orders them and names the colour dimension); one by name leaves the indices to
    the window, which matches names against the node's coordinates."""
    from ..zarrlib.storage.location import split_node_path
    from .image.slice_spec import read_slice

    location, node = split_node_path(target)
    indices: tuple[int, ...] | None = None
    y_dim = x_dim = channel_dim = None
    request = read_slice(slice_text)
    rank = request.positions.rank
    if slice_text is not None and not request.named and rank is not None:
        indices = tuple(request.positions.get(d, 0) for d in range(rank))
        shown = [d for d in range(rank) if d not in request.positions]
        try:
            order = [int(v) for v in axes.split(",")] if axes else shown
        except ValueError:
            order = []
        if axes is not None and (len(order) not in (2, 3) or sorted(order[:2]) != shown
                                 or (len(order) == 3 and not (0 <= order[2] < rank and order[2] not in shown))):
            raise ViewFileError(f"zarrview: --axes {axes} must order the ':' dimensions of --slice (rows, columns), "
                                "then may name the colour dimension")
        if len(order) in (2, 3):
            y_dim, x_dim = order[0], order[1]
            channel_dim = order[2] if len(order) == 3 else None
    elif axes is not None:
        raise ViewFileError("zarrview: --axes orders the ':' dimensions of a --slice by position (5,:,:)")
    look_contrast, per_plane = None, False
    if contrast == "per-plane":
        per_plane = True
    elif contrast is not None:
        low, high = numbers_text(contrast, 2, "--contrast", "LOW,HIGH or per-plane")
        look_contrast = (low, high)
    mode, chosen = read_channels(channels) if channels else (None, ())
    look = ViewLook(location, node, public_options(dict(options or {})), indices, y_dim, x_dim, channel_dim, level,
                    region, colormap, look_contrast, per_plane, complex_mode or "magnitude", mode, chosen, raw)
    return checked(look, "zarrview")


# -- the flags as argparse reads them -------------------------------------------------------
def add_look_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of a view's look (``flags`` writes them): the window's command line and a
    ``zarrview://`` link read the same ones."""
    from .image.slice_spec import SLICE_HELP

    p.add_argument("--slice", help=SLICE_HELP)
    p.add_argument("--axes", metavar="ROWS,COLS[,COLOUR]",
                   help="which ':' dimensions of a positional --slice are the rows, the columns and the colour channels")
    p.add_argument("--region", help="the initial visible region, Y0:Y1,X0:X1 in plane coordinates")
    p.add_argument("--level", help="the pyramid level of an OME-Zarr image to show (0 is the finest; "
                                   "by default the one the zoom needs)")
    p.add_argument("--contrast", metavar="LOW,HIGH", help="the display range, or per-plane: each plane's own")
    p.add_argument("--colormap", metavar="NAME", help=f"the colour map ({', '.join(CHOICES)}; NAME_r reversed)")
    p.add_argument("--complex", choices=COMPLEX_MODES, help="the part of complex values drawn")
    p.add_argument("--raw", action="store_true", help="draw the stored values, not the CF-decoded ones")
    p.add_argument("--channels", metavar="MODE;I:RRGGBB[:LO:HI][:off]…",
                   help="single or composite, then each channel's colour, window and whether it is shown")
    p.add_argument("--tools", metavar="NAMES", help=f"tools to open: {', '.join(TOOLS)}")
    p.add_argument("--options", metavar="JSON", help="storage options of the location, as a JSON object")
    p.add_argument("--compare", metavar="LOCATION::/node",
                   help="an array to compare with (View ▸ Compare): shown beside, its plane following the first's")
    p.add_argument("--compare-options", metavar="JSON", help="storage options of --compare's location")
    p.add_argument("--compare-against", metavar="stored|level@N|index:DIM@N",
                   help="compare with the array itself: its stored values, level N of its pyramid, or index N "
                        "along dimension DIM")
    p.add_argument("--compare-mode", choices=COMPARE_MODES, help="how the pair is shown (side by default)")


def saved_from_arguments(ns: argparse.Namespace) -> SavedView:
    """The view the parsed flags describe (``add_look_arguments``), with ``ns.location``;
    ``ViewFileError`` (one line) for a malformed value."""
    options = _json_object(ns.options, "--options")
    region = None
    if ns.region:
        r0, r1, c0, c1 = numbers_text(ns.region, 4, "--region", "Y0:Y1,X0:X1")
        if r1 <= r0 or c1 <= c0:  # it may reach past the plane's edges: a view zoomed out shows them
            raise ViewFileError(f"zarrview: --region {ns.region!r} is empty (Y0 < Y1 and X0 < X1)")
        region = (r0, r1, c0, c1)
    level = None
    if ns.level is not None:
        try:
            level = int(ns.level)
        except ValueError:
            level = -1
        if level < 0:
            raise ViewFileError(f"zarrview: --level takes a level number, 0 or more, not {ns.level!r}")
    look = look_from_flags(ns.location or "", options=options, slice_text=ns.slice, axes=ns.axes, level=level,
                           region=region, contrast=ns.contrast, colormap=ns.colormap, complex_mode=ns.complex,
                           raw=ns.raw, channels=ns.channels)
    compare = None
    if ns.compare:
        from ..zarrlib.storage.location import split_node_path

        b_location, b_node = split_node_path(ns.compare)
        compare = checked(ViewLook(b_location, b_node, public_options(_json_object(ns.compare_options,
                                                                                   "--compare-options"))),
                          "zarrview: --compare")
    if ns.compare and ns.compare_against:
        raise ViewFileError("zarrview: --compare and --compare-against name two different B: give one")
    if ns.compare_options and not ns.compare:
        raise ViewFileError("zarrview: --compare-options goes with --compare")
    if ns.compare_mode and not (ns.compare or ns.compare_against):
        raise ViewFileError("zarrview: --compare-mode goes with --compare or --compare-against")
    against = _against(ns.compare_against, "zarrview: --compare-against") if ns.compare_against else None
    return SavedView(look, tools_text(ns.tools) if ns.tools else (), compare, ns.compare_mode or "side", against)


def _json_object(text: str | None, flag: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ViewFileError(f"zarrview: {flag} must be a JSON object: {e}") from None
    if not isinstance(value, dict):
        raise ViewFileError(f"zarrview: {flag} must be a JSON object")
    return value


class _LinkParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ViewFileError(f"zarrview: {message}")


def saved_from_link(url: str) -> SavedView:
    """The view a ``zarrview://`` link opens."""
    p = _LinkParser(prog="zarrview", add_help=False)
    p.add_argument("location")
    add_look_arguments(p)
    return saved_from_arguments(p.parse_args(link_arguments(url)))


def is_view(location: str) -> bool:
    """Whether ``location`` is a saved view or a view link rather than a store."""
    return location.startswith(f"{SCHEME}://") or location.lower().endswith(SUFFIX)
