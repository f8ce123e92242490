"""What the user looks at, as one immutable value.

Every input (a slider, a combo box, a pan or zoom, a contrast drag) makes a new state with
``dataclasses.replace``; the controller compares the new state with the last one to decide
what must be read again. Being a value, a state can be handed to a worker or kept with the
response it caused without any widget being read from another thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ...zarrlib import Array
from .axes import colour_axis, colour_by_default, default_axes
from .channels import ChannelSetting

if TYPE_CHECKING:
    from ..cf.values import ValueCoding
    from ..cf.view import CFView
    from ..labels.layers import LabelLayer

#: rows r0:r1, columns c0:c1 of the displayed plane, in data coordinates (floats while panning)
Region = tuple[float, float, float, float]
COMPLEX_MODES = ("magnitude", "phase", "real", "imaginary")


@dataclass(frozen=True)
class ViewState:
    array: Array
    y_dim: int
    x_dim: int
    #: the index of every dimension; those of the displayed and colour dimensions are ignored
    indices: tuple[int, ...]
    #: a dimension shown as RGB(A) colour channels, or None
    channel_dim: int | None = None
    #: the part of the plane on screen; None: the whole plane (before the first layout)
    region: Region | None = None
    #: screen pixels per data pixel along (rows, columns); below 1 the view is zoomed out
    screen_scale: tuple[float, float] = (1.0, 1.0)
    #: fixed display levels, or None for levels from the data (auto contrast)
    contrast: tuple[float, float] | None = None
    #: every new plane (a slider step, another time) takes its levels from its own values on
    #: screen as it lands; False: the levels stay as they are until Auto contrast or a drag
    auto_per_plane: bool = False
    colormap: str = "grays"
    complex_mode: str = "magnitude"
    #: the levels of a multiscale pyramid (``array`` is level 0), finest first; None: a plain array
    pyramid: tuple[Any, ...] | None = None
    #: the pyramid level to read; None: chosen by zoom (the coarsest as fine as the screen)
    level: int | None = None
    #: names of the dimensions where the array's own metadata lacks them (OME-Zarr 0.4 axes)
    axis_names: tuple[str, ...] | None = None
    #: the dimension ``channels`` describe (an OME axis of type "channel", or one named c/channel)
    channel_axis: int | None = None
    #: how each channel is drawn in a composite: colour, window, label, active, inverted
    channels: tuple[ChannelSetting, ...] = ()
    #: "composite": the active channels added in their colours (``channel_dim`` is then
    #: ``channel_axis``, read whole); "single": one channel on a slider, through the histogram
    channel_mode: str = "single"
    #: the label images overlaid on it (``labels.layers.LabelLayer``: levels, colours, opacity, shown)
    labels: tuple[LabelLayer, ...] = ()
    #: the CF conventions of the array (``cf.view.CFView``): decoding, coordinates, units
    cf: CFView | None = None
    #: show the stored values, not the CF-decoded ones
    raw: bool = False

    @property
    def decoding(self) -> ValueCoding | None:
        """The CF masking and unpacking the values go through, or None (stored values)."""
        return self.cf.coding if self.cf is not None and not self.raw and self.cf.coding.active else None

    @property
    def units(self) -> str | None:
        """The units of the values drawn: the CF ``units``, except over stored values that are
        packed (``scale_factor``, ``add_offset``), whose integers are in no unit."""
        cf = self.cf
        if cf is None or not cf.units or cf.units == "1":
            return None
        packed = cf.coding.scale_factor is not None or cf.coding.add_offset is not None
        return None if self.raw and packed else cf.units

    @property
    def heading(self) -> str | None:
        """The title over the plane: the CF title with its units, or "(stored values)"."""
        cf = self.cf
        if cf is None:
            return None
        if self.raw and cf.coding.active:
            return f"{cf.title} (stored values)"
        units = self.units
        return f"{cf.title} ({units})" if units else cf.title

    @property
    def rows_up(self) -> bool:
        """Whether rows are drawn bottom-up (north up, height up, depth down: ``CFView.flipped``):
        the one decision the window, its sections and every picture export follow."""
        return self.cf is not None and self.cf.flipped(self.y_dim)

    @property
    def composite(self) -> bool:
        """Whether the plane is drawn as the composite of its channels."""
        return (self.channel_mode == "composite" and bool(self.channels) and self.channel_axis is not None
                and self.channel_dim == self.channel_axis)

    def with_(self, **changes: Any) -> ViewState:
        return replace(self, **changes)

    def composite_dim(self, y: int, x: int) -> int | None:
        """The dimension read whole for rows ``y`` and columns ``x``: the channel axis in
        composite mode (unless it is displayed), else none."""
        c = self.channel_axis
        return c if self.channel_mode == "composite" and self.channels and c not in (None, y, x) else None

    def with_channel_mode(self, mode: str) -> ViewState:
        """The composite of the channels, or one channel at a time on its slider."""
        state = replace(self, channel_mode=mode)
        return replace(state, channel_dim=state.composite_dim(self.y_dim, self.x_dim), contrast=None)

    def with_channel(self, position: int, **changes: Any) -> ViewState:
        """One channel's setting changed (``color``, ``window``, ``active``, ``inverted``)."""
        channels = list(self.channels)
        channels[position] = channels[position].with_(**changes)
        return replace(self, channels=tuple(channels))

    def with_label(self, name: str, **changes: Any) -> ViewState:
        """One label layer's ``visible`` or ``opacity`` changed."""
        return replace(self, labels=tuple(lay.with_(**changes) if lay.name == name else lay for lay in self.labels))

    def visible_labels(self) -> tuple[LabelLayer, ...]:
        return tuple(lay for lay in self.labels if lay.visible)

    @property
    def plane_dims(self) -> tuple[int, ...]:
        """Displayed dimensions (and the colour one) in the array's own order."""
        return tuple(sorted(d for d in (self.y_dim, self.x_dim, self.channel_dim) if d is not None))

    def fixed(self) -> dict[int, int]:
        """The index of every dimension that is not displayed."""
        shown = self.plane_dims
        return {d: i for d, i in enumerate(self.indices) if d not in shown}

    def plane_selection(self) -> tuple[Any, ...]:
        """The whole displayed plane at full resolution, in the array's index order."""
        shown = self.plane_dims
        return tuple(slice(None) if d in shown else i for d, i in enumerate(self.indices))

    def plane_key(self) -> tuple[Any, ...]:
        """What identifies the plane's values: a change here makes every loaded tile stale (the
        level does not: every level of a pyramid shows the same plane)."""
        return (id(self.array), self.y_dim, self.x_dim, self.channel_dim, tuple(sorted(self.fixed().items())),
                self.decoding is not None)

    @property
    def plane_shape(self) -> tuple[int, int]:
        shape = self.array.shape
        return shape[self.y_dim], shape[self.x_dim]


def initial_state(arr: Array, plane: Mapping[int, int] | None = None, *, colour: bool | None = None,
                  pyramid: tuple[Any, ...] | None = None, axis_names: tuple[str, ...] | None = None) -> ViewState:
    """The first view of an array: ``plane`` holds indices given on the command line
    (``--slice``); the colour dimension is used when ``colour`` says so, or by default for
    an (H, W, 3|4) picture."""
    plane = dict(plane or {})
    cdim = colour_axis(arr)
    use_colour = colour if colour is not None else colour_by_default(arr)
    if cdim is not None and (cdim in plane or (plane and arr.ndim - len(plane) <= 2)):
        use_colour = False  # what --slice leaves free is shown as it is, never widened to colour
    channel = cdim if use_colour else None
    y, x = default_axes(arr, plane, channel)
    indices = tuple(int(plane.get(d, 0)) for d in range(arr.ndim))
    return ViewState(arr, y, x, indices, channel_dim=channel, pyramid=pyramid, axis_names=axis_names)
