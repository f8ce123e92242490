"""What to draw: tiles placed in data coordinates, the levels, and the words around them.

A scene is everything the Qt layer needs to paint one moment of the view, so the widget holds
no view logic: it draws ``coarse`` (a strided preview) and ``detail`` (full resolution) over
it, each at its rectangle, or ``message`` instead of an image.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...zarrlib import ChunkFailure


def _element(r0: float, c0: float, step_r: float, step_c: float, shape: tuple[int, ...], row: int,
             col: int) -> tuple[int, int] | None:
    """Which element of a block placed at (r0, c0) with these steps holds level-0 element (row,
    col) (by its centre), or None."""
    i = math.floor((row + 0.5 - r0) / step_r)
    j = math.floor((col + 0.5 - c0) / step_c)
    return (i, j) if 0 <= i < shape[0] and 0 <= j < shape[1] else None


@dataclass(frozen=True, eq=False)
class LabelPlane:
    """The plane of a label layer (``labels.layers.LabelLayer``) read with a tile: ``values`` (rows,
    columns) as read and ``rgba`` their colours, placed in level-0 coordinates like a tile, with
    the steps of the label level read (which may differ from the image's)."""

    name: str
    values: np.ndarray
    rgba: np.ndarray
    r0: float
    c0: float
    step_r: float
    step_c: float
    level: int = 0
    #: why some or all of it could not be read (its values are then the background there)
    error: str | None = None
    #: the layer whose colours ``rgba`` holds (``labels.layers.LabelLayer``): an edit colours it again
    coloured_by: Any = field(default=None, compare=False, repr=False)

    def rect(self) -> tuple[float, float, float, float]:
        h, w = self.values.shape[:2]
        return (float(self.c0), float(self.r0), float(w * self.step_c), float(h * self.step_r))

    def value_at(self, row: int, col: int) -> Any | None:
        where = _element(self.r0, self.c0, self.step_r, self.step_c, self.values.shape, row, col)
        return None if where is None else self.values[where]


@dataclass(frozen=True, eq=False)  # tiles are compared by identity: they hold arrays
class Tile:
    """A block of the displayed plane: ``values`` as read (rows, columns[, channels]) and
    ``image`` the values as displayable numbers (``rendering`` makes the colours from them).
    Placed in level-0 coordinates: element ``i`` of its rows spans ``r0 + i * step_r`` to ``r0 + (i + 1) * step_r`` (a strided preview, or a
    coarser pyramid level, has steps above 1; a level's translation can make ``r0`` fractional)."""

    values: np.ndarray
    image: np.ndarray
    r0: float
    c0: float
    step_r: float
    step_c: float
    #: ``ViewState.plane_key`` of the plane it belongs to
    plane_key: tuple[Any, ...]
    failures: tuple[ChunkFailure, ...] = ()
    #: which chunks were read, for the status bar
    chunks: int = 0
    #: the pyramid level it was read from
    level: int = 0
    #: the planes of the label layers read with it (by layer name)
    labels: tuple[LabelPlane, ...] = ()

    @property
    def full_resolution(self) -> bool:
        return self.step_r == 1 and self.step_c == 1 and self.r0 == int(self.r0) and self.c0 == int(self.c0)

    @property
    def r1(self) -> float:
        return self.r0 + self.values.shape[0] * self.step_r

    @property
    def c1(self) -> float:
        return self.c0 + self.values.shape[1] * self.step_c

    def rect(self) -> tuple[float, float, float, float]:
        """(x, y, width, height) in data coordinates, as Qt's QRectF takes them."""
        return (float(self.c0), float(self.r0), float(self.c1 - self.c0), float(self.r1 - self.r0))

    def covers(self, r0: float, r1: float, c0: float, c1: float) -> bool:
        eps = 1e-9 * max(1.0, abs(r1), abs(c1))
        return self.r0 <= r0 + eps and r1 <= self.r1 + eps and self.c0 <= c0 + eps and c1 <= self.c1 + eps

    def element(self, row: int, col: int) -> tuple[int, int] | None:
        """Which element of the tile holds level-0 element (row, col) (by its centre), or None."""
        return _element(self.r0, self.c0, self.step_r, self.step_c, self.values.shape, row, col)

    def label(self, name: str) -> LabelPlane | None:
        return next((p for p in self.labels if p.name == name), None)

    def value_at(self, row: int, col: int) -> Any | None:
        """The value read for data element (row, col): exact at full resolution, else the
        sample nearest to it; None outside the tile."""
        where = self.element(row, col)
        return None if where is None else self.values[where]

    def with_image(self, image: np.ndarray) -> Tile:
        """The same values drawn otherwise (another complex mode, other channel settings)."""
        return replace(self, image=image)


@dataclass(frozen=True)
class Scene:
    coarse: Tile | None = None
    detail: Tile | None = None
    levels: tuple[float, float] = (0.0, 1.0)
    #: shown instead of the image (an error, an empty plane); None while there is an image
    message: str | None = None
    #: what went wrong (a read that failed), where ``message`` says it; None for an empty plane
    problem: str | None = None
    status: str = ""
    busy: bool = False
    #: a dimension drawn as colour channels (the tiles then have a third axis)
    channel_dim: int | None = None
    #: the tiles are drawn as the composite of their channels (``channels``): the histogram does not apply
    composite: bool = False
    #: how each channel is drawn in a composite (``channels.ChannelSetting``)
    channels: tuple[Any, ...] = ()
    #: the label layers (``ViewState.labels``): which of the tiles' label planes are drawn, how opaque
    labels: tuple[Any, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def tiles(self) -> list[Tile]:
        return [t for t in (self.coarse, self.detail) if t is not None]

    def label_at(self, name: str, row: int, col: int) -> Any | None:
        """The value of label layer ``name`` at a data element, from the finest tile that has it."""
        for tile in (self.detail, self.coarse):
            plane = None if tile is None else tile.label(name)
            value = None if plane is None else plane.value_at(row, col)
            if value is not None:
                return value
        return None

    def label_error(self, name: str) -> str | None:
        """Why label layer ``name`` could not be read (wholly or in part), where it could not."""
        return next((p.error for t in (self.detail, self.coarse) if t is not None
                     for p in t.labels if p.name == name and p.error), None)

    def value_at(self, row: int, col: int) -> tuple[Any, bool] | None:
        """(value, exact) at a data element: from the full-resolution tile where it is loaded,
        else from the preview (exact only if the preview happens to hold that very element)."""
        for tile in (self.detail, self.coarse):
            if tile is None:
                continue
            where = tile.element(row, col)
            if where is not None:
                i, j = where
                exact = tile.full_resolution or (tile.level == 0 and tile.r0 + i * tile.step_r == row
                                                 and tile.c0 + j * tile.step_c == col)
                return tile.values[i, j], exact
        return None


def background(a: Tile | None, b: Tile | None, over: Tile) -> Tile | None:
    """Of two tiles of a plane, the one to keep under new detail ``over``: the one covering more of
    the plane (a preview or a coarse level of the whole plane beats an old zoomed-in region); none
    that ``over`` hides entirely (the same region read again, with label layers)."""
    a, b = (None if t is None or over.covers(t.r0, t.r1, t.c0, t.c1) and over.step_r <= t.step_r
            and over.step_c <= t.step_c else t for t in (a, b))
    if a is None or b is None:
        return a or b
    area = lambda t: (t.r1 - t.r0) * (t.c1 - t.c0)  # noqa: E731
    return a if area(a) >= area(b) else b


def at_level(tile: Tile | None, level: int) -> Tile | None:
    """``tile`` where it belongs to pyramid ``level``, else None."""
    return tile if tile is not None and tile.level == level else None
