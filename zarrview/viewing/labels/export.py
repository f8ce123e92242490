"""Label overlays in an exported image: the PNG shows what the window shows, labels included.

An export is at full resolution (or at the ``--level`` asked for), so each shown label layer is
read whole at the label level matching the exported level (``reads.plan_label`` with no
chunk budget: nothing is sampled) and drawn over the image's pixels block by block, each output
pixel taking the label element under its centre (nearest, as the view places label tiles by
their level-0 coordinates), coloured by ``layers.colorize`` and blended with the layer's opacity.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ...zarrlib import CancelToken, ReadCancelled, ZarrError
from ..image.levels import level_views
from ..image.planning import PlaneRead
from ..image.state import ViewState
from .layers import LabelLayer, colorize
from .reads import LabelRead, plan_label


class LabelExportError(Exception):
    """A shown label layer could not be read for the export."""


@dataclass(frozen=True, eq=False)
class LabelOverlay:
    """One label layer as an export draws it over the exported plane."""

    read: LabelRead
    #: level-0 coordinate of an exported row (column) = a * index + b
    rows: tuple[float, float]
    cols: tuple[float, float]

    @property
    def layer(self) -> LabelLayer:
        return self.read.layer


def overlays(state: ViewState, level: int | None = 0) -> tuple[LabelOverlay, ...]:
    """The visible label layers of ``state`` over its plane at pyramid ``level`` (level 0: the
    full resolution the window exports); () when no layer is shown or none meets the plane."""
    layers = state.visible_labels()
    if not layers:
        return ()
    view = level_views(state.with_(level=level, region=None))[0]
    ny, nx = view.array.shape[state.y_dim], view.array.shape[state.x_dim]
    plan = PlaneRead((), 0, ny, 0, nx, 1, 1, 0)
    reads = (plan_label(layer, state, view.index, plan, budget=1 << 62) for layer in layers)
    return tuple(LabelOverlay(r, view.rows, view.cols) for r in reads if r.selection is not None)


def read_overlays(overlays_: tuple[LabelOverlay, ...], cancel: CancelToken | None = None,
                  executor: ThreadPoolExecutor | None = None) -> list[np.ndarray]:
    """Each overlay's label plane (rows, columns), read whole, decoded on ``executor`` (the
    export's). Raises :class:`LabelExportError`."""
    planes = []
    for o in overlays_:
        lv = o.read.level
        assert lv is not None and lv.array is not None and o.read.selection is not None
        try:
            values = np.asarray(lv.array.read(o.read.selection, cancel=cancel, executor=executor))
        except ReadCancelled:
            raise
        except ZarrError as e:
            raise LabelExportError(f"the label image {o.layer.name} could not be read: {e}") from None
        planes.append(values.T if o.read.transpose else values)
    return planes


def _nearest(n: int, start: int, ab: tuple[float, float], origin: float, step: float, size: int) -> np.ndarray:
    """For ``n`` exported pixels from index ``start``: the label element under each centre, or -1."""
    centre = ab[0] * (np.arange(start, start + n, dtype=np.float64) + 0.5) + ab[1]
    k = np.floor((centre - origin) / step).astype(np.int64)
    k[(k < 0) | (k >= size)] = -1
    return k


def blend(rgb: np.ndarray, row0: int, overlays_: tuple[LabelOverlay, ...], planes: list[np.ndarray]) -> np.ndarray:
    """``rgb`` (rows, columns, 3|4 uint8: exported rows ``row0`` on) with the label layers drawn over it."""
    h, w = rgb.shape[:2]
    out = rgb.astype(np.float32)
    for o, plane in zip(overlays_, planes):
        if not plane.size:
            continue
        r = o.read
        ks = _nearest(h, row0, o.rows, r.r0, r.step_r, plane.shape[0])
        js = _nearest(w, 0, o.cols, r.c0, r.step_c, plane.shape[1])
        values = plane[np.ix_(np.maximum(ks, 0), np.maximum(js, 0))]
        colours = colorize(values, o.layer).astype(np.float32)
        alpha = colours[..., 3:4] * (o.layer.opacity / 255.0)
        alpha[ks < 0] = 0
        alpha[:, js < 0] = 0
        out[..., :3] = out[..., :3] * (1.0 - alpha) + colours[..., :3] * alpha
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)
