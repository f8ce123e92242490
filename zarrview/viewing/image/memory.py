"""What a person set up on an array's view, kept for the session: the displayed dimensions, the
sliders, the channels (colours, windows, which are shown, composite or single), the contrast,
the complex part and whether contrast follows each plane. Selecting another node and coming back
shows the array as it was left, as napari keeps a layer's settings while it is open.

Kept by the array's location (its store's URL and path), so a node opened again (a new object
for the same array) finds its settings; applied only where they still fit the array (the same
shape, as many channels), so a store rewritten meanwhile starts afresh. What a command line or
a link asks for (``--slice``, a plate's well) comes first: the sliders it sets are not replaced.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

from ...zarrlib import Array
from .channels import ChannelSetting
from .state import ViewState

#: arrays whose view is kept, at most (the least recently shown go first)
KEPT_ARRAYS = 200


@dataclass(frozen=True)
class KeptView:
    """The parts of a ``ViewState`` a person chooses, with the shape they were chosen for."""

    shape: tuple[int, ...]
    y_dim: int
    x_dim: int
    indices: tuple[int, ...]
    channel_dim: int | None
    channels: tuple[ChannelSetting, ...]
    channel_mode: str
    contrast: tuple[float, float] | None
    auto_per_plane: bool
    complex_mode: str


def array_key(arr: Array) -> str:
    """Where an array lives, the same for every node object opened for it."""
    return f"{arr.store.url}::{arr.path}"


def kept_view(state: ViewState) -> KeptView:
    return KeptView(tuple(state.array.shape), state.y_dim, state.x_dim, tuple(state.indices), state.channel_dim,
                    state.channels, state.channel_mode, state.contrast, state.auto_per_plane, state.complex_mode)


def restored(state: ViewState, kept: KeptView | None, plane_given: bool = False) -> ViewState:
    """``state`` (a first view) with what ``kept`` holds, where it fits the array; with
    ``plane_given`` the displayed dimensions and sliders stay as the first view set them."""
    if kept is None or kept.shape != tuple(state.array.shape):
        return state
    out = replace(state, contrast=kept.contrast, auto_per_plane=kept.auto_per_plane, complex_mode=kept.complex_mode)
    if not plane_given:
        out = replace(out, y_dim=kept.y_dim, x_dim=kept.x_dim, indices=kept.indices, channel_dim=kept.channel_dim)
    if state.channels and len(kept.channels) == len(state.channels):
        out = replace(out, channels=kept.channels)
        out = out.with_channel_mode(kept.channel_mode) if kept.channel_mode != out.channel_mode else out
        out = replace(out, contrast=kept.contrast)  # a mode change clears it: the kept one stands
    return out


class ViewMemory:
    """The kept views of the arrays shown this session, the most recent ``KEPT_ARRAYS``."""

    def __init__(self, size: int = KEPT_ARRAYS) -> None:
        self.size = size
        self._kept: OrderedDict[str, KeptView] = OrderedDict()

    def keep(self, state: ViewState) -> None:
        key = array_key(state.array)
        self._kept[key] = kept_view(state)
        self._kept.move_to_end(key)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)

    def restore(self, state: ViewState, plane_given: bool = False) -> ViewState:
        return restored(state, self._kept.get(array_key(state.array)), plane_given)

    def __len__(self) -> int:
        return len(self._kept)
