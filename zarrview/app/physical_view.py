"""Physical space for an image with pixel sizes (OME-Zarr): the right proportions, axes ticked in
the axes' units, and a scale bar.

The view keeps working in level-0 pixel coordinates (tiles, regions and the readout stay exact);
only the presentation changes: the aspect lock takes the ratio of the pixel sizes (an XZ view of
a stack with 0.2 µm pixels and 2 µm planes is ten times wider than tall per pixel), the axes
multiply their ticks by the pixel size, and the scale bar's length is a round physical number.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from ..viewing.ome.view import symbol
from .image_view import ImagePane

#: the scale bar's length, as a share of the visible width
BAR_SHARE = 0.2


class PhysicalSpace:
    def __init__(self, pane: ImagePane) -> None:
        self.pane = pane
        self.size: tuple[float, float] | None = None  # physical size of a level-0 pixel (rows, columns)
        self.unit = ""
        self.bar = pg.ScaleBar(size=10, suffix="")
        self.bar.setParentItem(pane.view.getViewBox())
        self.bar.anchor((1, 1), (1, 1), offset=(-20, -20))
        self.bar.hide()
        pane.view.getViewBox().sigRangeChanged.connect(lambda *_: self._fit_bar())

    def apply(self, size: tuple[float, float] | None, unit: str | None) -> None:
        """``size``: the pixel size along rows and columns, or None for plain pixels."""
        vb = self.pane.view.getViewBox()
        self.size = size if size and all(s > 0 and math.isfinite(s) for s in size) else None
        self.unit = symbol(unit)
        plot = self.pane.view
        if self.size is None:
            vb.setAspectLocked(True, ratio=1.0)
            for side in ("left", "bottom"):
                plot.getAxis(side).setScale(1.0)
            self.bar.hide()
            return
        sy, sx = self.size
        vb.setAspectLocked(True, ratio=sx / sy)
        plot.getAxis("left").setScale(sy)
        plot.getAxis("bottom").setScale(sx)
        self.bar.show()
        self._fit_bar()

    def proportions(self, size: tuple[float, float]) -> None:
        """Pixels drawn ``size`` (rows, columns) in proportion, without a scale bar or scaled
        ticks: for axes ticked in coordinates of their own (a GeoZarr pyramid's CRS)."""
        sy, sx = size
        if sy > 0 and sx > 0 and math.isfinite(sy) and math.isfinite(sx):
            self.pane.view.getViewBox().setAspectLocked(True, ratio=sx / sy)

    def axis_label(self, name: str) -> str:
        return f"{name} ({self.unit})" if self.size is not None and self.unit else name

    def _fit_bar(self) -> None:
        if self.size is None:
            return
        (x0, x1), _ = self.pane.view.getViewBox().viewRange()
        sx = self.size[1]
        length = nice_length((x1 - x0) * sx * BAR_SHARE)
        self.bar.size = length / sx
        self.bar.text.setText(f"{length:g} {self.unit}".strip())
        self.bar.updateBar()


def slider_text(name: str, index: int, scale: float, translation: float, unit: str | None) -> str:
    """A slider's label with where its plane lies: ``z  24 µm`` (the plane's centre), ``t  30 s``."""
    if not unit and scale == 1.0 and translation == 0.0:
        return name
    where = index * scale + translation
    return f"{name}  {where:.6g} {symbol(unit)}".rstrip()


def nice_length(x: float) -> float:
    """The largest 1, 2 or 5 times a power of ten not above ``x``. A width a hair under a power
    of ten (9.999999999999997e-07, from a view range's arithmetic) has a logarithm that rounds up
    to it: the power is then stepped down, so there is always a length to show."""
    if not (x > 0 and math.isfinite(x)):
        return 1.0
    power = 10.0 ** math.floor(math.log10(x))
    if power > x:
        power /= 10
    return max(m * power for m in (1, 2, 5) if m * power <= x)
