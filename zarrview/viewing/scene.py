"""What to draw: tiles placed in data coordinates, the levels, and the words around them.

A scene is everything the Qt layer needs to paint one moment of the view, so the widget holds
no view logic: it draws ``coarse`` (a strided preview) and ``detail`` (full resolution) over
it, each at its rectangle, or ``message`` instead of an image.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..zarrlib import ChunkFailure
from .contrast import displayable


@dataclass(frozen=True)
class Tile:
    """A block of the displayed plane: ``values`` as read (rows, columns[, channels]) and
    ``image`` the same as displayable numbers; it covers rows ``r0`` to ``r0 + rows * step_r``."""

    values: np.ndarray
    image: np.ndarray
    r0: int
    c0: int
    step_r: int
    step_c: int
    #: ``ViewState.plane_key`` of the plane it belongs to
    plane_key: tuple[Any, ...]
    failures: tuple[ChunkFailure, ...] = ()
    #: which chunks were read, for the status bar
    chunks: int = 0

    @property
    def full_resolution(self) -> bool:
        return self.step_r == 1 and self.step_c == 1

    @property
    def r1(self) -> int:
        return self.r0 + self.values.shape[0] * self.step_r

    @property
    def c1(self) -> int:
        return self.c0 + self.values.shape[1] * self.step_c

    def rect(self) -> tuple[float, float, float, float]:
        """(x, y, width, height) in data coordinates, as Qt's QRectF takes them."""
        return (float(self.c0), float(self.r0), float(self.c1 - self.c0), float(self.r1 - self.r0))

    def covers(self, r0: float, r1: float, c0: float, c1: float) -> bool:
        return self.r0 <= r0 and r1 <= self.r1 and self.c0 <= c0 and c1 <= self.c1

    def value_at(self, row: int, col: int) -> Any | None:
        """The value read for data element (row, col): exact at full resolution, else the
        sample nearest to it; None outside the tile."""
        if not (self.r0 <= row < self.r1 and self.c0 <= col < self.c1):
            return None
        i, j = (row - self.r0) // self.step_r, (col - self.c0) // self.step_c
        return self.values[i, j]

    def with_mode(self, complex_mode: str) -> Tile:
        return replace(self, image=np.ascontiguousarray(displayable(self.values, complex_mode)))


@dataclass(frozen=True)
class Scene:
    coarse: Tile | None = None
    detail: Tile | None = None
    levels: tuple[float, float] = (0.0, 1.0)
    #: shown instead of the image (an error, an empty plane); None while there is an image
    message: str | None = None
    status: str = ""
    busy: bool = False
    #: a dimension drawn as colour channels (the tiles then have a third axis)
    channel_dim: int | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def tiles(self) -> list[Tile]:
        return [t for t in (self.coarse, self.detail) if t is not None]

    def value_at(self, row: int, col: int) -> tuple[Any, bool] | None:
        """(value, exact) at a data element: from the full-resolution tile where it is loaded,
        else from the preview (exact only if the preview happens to hold that very element)."""
        for tile in (self.detail, self.coarse):
            if tile is None:
                continue
            v = tile.value_at(row, col)
            if v is not None:
                exact = tile.full_resolution or ((row - tile.r0) % tile.step_r == 0 and (col - tile.c0) % tile.step_c == 0)
                return v, exact
        return None
