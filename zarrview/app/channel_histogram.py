"""A channel's histogram with its window as two handles, small enough for a row of the channel panel.

It only draws: the counts come from the view model (``viewing.image.histograms``, counted on a
worker), the window from the view state. Bars rise with the logarithm of their counts, so the
few bright pixels of a fluorescence channel show beside its dark background. The value axis
spans the channel's values and the window, so both handles are always in reach; dragging one
says the new window (``on_window``) while the mouse moves, and the view state that comes back
places the handles again.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from ..viewing.image.histograms import ChannelHistogram

HEIGHT = 36
#: pixels kept free at each end so a handle at the end of the axis can be grabbed
MARGIN = 5
HANDLES = ("lo", "hi")


class WindowHistogram(QWidget):
    """One channel's histogram; ``on_window((lo, hi))`` while a handle is dragged."""

    def __init__(self, on_window: Callable[[tuple[float, float]], None], decimals: int = 4,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.on_window = on_window
        #: the window's values are rounded to these decimals (0 for integers), as its number fields are
        self.decimals = decimals
        self.histogram: ChannelHistogram | None = None
        self.value_window: tuple[float, float] | None = None
        self.colour = QColor(255, 255, 255)
        #: the handle being dragged and the value axis fixed for the drag (it would follow the handle)
        self.dragging: str | None = None
        self._drag_span: tuple[float, float] | None = None
        self.setFixedHeight(HEIGHT)
        self.setMinimumWidth(80)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(200, HEIGHT)

    # -- what it shows -------------------------------------------------------------------------
    def set_histogram(self, histogram: ChannelHistogram | None) -> None:
        self.histogram = histogram
        self.update()

    def set_window(self, window: tuple[float, float] | None) -> None:
        self.value_window = window
        self.update()

    def set_colour(self, rgb: tuple[int, int, int]) -> None:
        self.colour = QColor(*rgb)
        self.update()

    def span(self) -> tuple[float, float] | None:
        """The values at the left and right ends: the histogram's bins and the window together."""
        if self._drag_span is not None:
            return self._drag_span
        ends = [*(self.histogram.span if self.histogram is not None else ()), *(self.value_window or ())]
        if not ends:
            return None
        lo, hi = min(ends), max(ends)
        return (lo, hi) if hi > lo else (lo - 0.5, lo + 0.5)

    def x_of(self, value: float) -> float:
        span = self.span()
        if span is None:
            return float(MARGIN)
        lo, hi = span
        return MARGIN + (value - lo) / (hi - lo) * (self.width() - 2 * MARGIN)

    def value_of(self, x: float) -> float:
        """The value under ``x``, within the axis, rounded as the number fields round it."""
        span = self.span()
        assert span is not None
        lo, hi = span
        t = min(1.0, max(0.0, (x - MARGIN) / max(1.0, self.width() - 2 * MARGIN)))
        return round(lo + t * (hi - lo), self.decimals)

    # -- dragging ------------------------------------------------------------------------------
    def drag(self, handle: str, value: float) -> None:
        """Move ``handle`` ("lo" or "hi") to ``value`` (kept on its side of the other handle) and
        say the new window."""
        if self.value_window is None:
            return
        lo, hi = self.value_window
        lo, hi = (min(value, hi), hi) if handle == "lo" else (lo, max(value, lo))
        self.value_window = (lo, hi)
        self.update()
        self.on_window((lo, hi))

    def nearest(self, x: float) -> str:
        """The handle a press at ``x`` takes: the nearer one (the upper where they meet, when pressed right of them)."""
        assert self.value_window is not None
        lo, hi = (self.x_of(v) for v in self.value_window)
        if abs(x - lo) < abs(x - hi) or (lo == hi and x < lo):
            return "lo"
        return "hi"

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() != Qt.MouseButton.LeftButton or self.value_window is None or self.span() is None:
            return super().mousePressEvent(event)
        self._drag_span = self.span()
        x = event.position().x()
        self.dragging = self.nearest(x)
        self.drag(self.dragging, self.value_of(x))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self.dragging is not None:
            self.drag(self.dragging, self.value_of(event.position().x()))
        elif self.value_window is not None and self.span() is not None:
            near = min(abs(event.position().x() - self.x_of(v)) for v in self.value_window) <= MARGIN
            self.setCursor(Qt.CursorShape.SizeHorCursor if near else Qt.CursorShape.ArrowCursor)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self.dragging = None
        self._drag_span = None
        self.update()

    # -- painting ------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.base())
        p.setPen(QPen(pal.mid().color()))
        p.drawRect(QRectF(0.5, 0.5, self.width() - 1, self.height() - 1))
        h = self.height() - 3
        hist = self.histogram
        if hist is not None and len(hist.counts) and self.span() is not None:
            top = math.log1p(float(hist.counts.max())) or 1.0
            bars = QColor(self.colour)
            bars.setAlpha(200)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(bars)
            for i, n in enumerate(hist.counts):
                if n:
                    x0, x1 = self.x_of(float(hist.edges[i])), self.x_of(float(hist.edges[i + 1]))
                    bar = math.log1p(float(n)) / top * (h - 2)
                    p.drawRect(QRectF(x0, h - bar + 1, max(1.0, x1 - x0), bar))
        if self.value_window is not None and self.span() is not None:
            self._paint_window(p, h)
        p.end()

    def _paint_window(self, p: QPainter, h: int) -> None:
        """Outside the window dimmed; each handle a line with a grip at its top."""
        assert self.value_window is not None
        x_lo, x_hi = (self.x_of(v) for v in self.value_window)
        shade = QColor(self.palette().window().color())
        shade.setAlpha(150)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(shade)
        p.drawRect(QRectF(1, 1, max(0.0, x_lo - 1), h))
        p.drawRect(QRectF(x_hi, 1, max(0.0, self.width() - 1 - x_hi), h))
        ink = self.palette().text().color()
        for name, x in zip(HANDLES, (x_lo, x_hi)):
            p.setPen(QPen(ink, 2 if self.dragging == name else 1.5))
            p.drawLine(QPointF(x, 1), QPointF(x, h + 1))
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(ink)
            p.drawPolygon(QPolygonF([QPointF(x - 4, 1), QPointF(x + 4, 1), QPointF(x, 7)]))
