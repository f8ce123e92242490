"""Drawing a LinePlot: a line of exact values, or an envelope of vertical min-max segments, one
per screen column; a date axis for datetime64 values, ticks in a coordinate's words (dates of
any calendar, ``45.25 °N``) through ``FormatAxis``; the title and the axes' names; the point
under the mouse in words; the visible x range reported back once the user stops zooming."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ..viewing.line.array import LinePlot

SETTLE_MS = 150
#: a line of at most this many values is drawn with a dot at each (a value between two gaps shows)
MAX_DOTS = 200


class LineView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(axisItems={"bottom": FormatAxis("bottom"), "left": FormatAxis("left")})
        self._dates = False
        #: ``hovered(text)``: the point under the mouse in words (the status bar's readout)
        self.hovered: Callable[[str], None] = lambda text: None
        self.plot.scene().sigMouseMoved.connect(self._moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.curve = self.plot.plot([], [])
        self.range_changed: Callable[[float, float, int], None] = lambda x0, x1, n: None
        self._drawn: LinePlot | None = None
        self._setting = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self._report)
        self.plot.getViewBox().sigXRangeChanged.connect(lambda *_: None if self._setting else self._timer.start())
        follow_data_in_y(self.plot.getViewBox())
        self._pen = pg.mkPen("#3daee9", width=1.5)

    def follow_palette(self, pal: QPalette) -> None:
        """Plots follow the light or dark colour scheme."""
        self.plot.setBackground(pal.color(QPalette.ColorRole.Base))
        pen = pg.mkPen(pal.color(QPalette.ColorRole.Text))
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pen)
            axis.setTextPen(pen)
        self._pen = pg.mkPen(pal.color(QPalette.ColorRole.Highlight), width=1.5)

    def draw(self, plot: LinePlot) -> None:
        if plot.y is None or plot is self._drawn or (self._drawn is not None and plot.y is self._drawn.y):
            self._drawn = plot if plot.y is not None else self._drawn
            return
        first = self._drawn is None or self._drawn.y is None
        self._drawn = plot
        if plot.dates != self._dates:
            self._dates = plot.dates
            axis = pg.DateAxisItem(orientation="left") if plot.dates else FormatAxis("left")
            self.plot.getPlotItem().setAxisItems({"left": axis})
        self._label(plot)
        dots = not plot.envelope and plot.x is not None and len(plot.x) <= MAX_DOTS  # a value between gaps is seen
        self.curve.setData(plot.x, plot.y, connect="pairs" if plot.envelope else "finite", pen=self._pen,
                           symbol="o" if dots else None, symbolSize=4, symbolPen=None,
                           symbolBrush=self._pen.color())
        if first:
            self._setting = True
            try:
                self.plot.getViewBox().autoRange(padding=0.02)
                follow_data_in_y(self.plot.getViewBox())  # autoRange turned the automatic y range off
            finally:
                self._setting = False

    def _label(self, plot: LinePlot) -> None:
        """The title, the axes' names and the words of their ticks (dates, coordinate values)."""
        item = self.plot.getPlotItem()
        item.setTitle(plot.title or None)
        for side, fmt, text in (("bottom", plot.x_format, plot.x_label), ("left", plot.y_format, plot.y_label)):
            axis = item.getAxis(side)
            if isinstance(axis, FormatAxis):
                axis.set_format(fmt)
            axis.setLabel(text or None)

    def readout(self, x: float) -> str:
        """The drawn point nearest ``x`` in words (the line's own ``readout``)."""
        return "" if self._drawn is None else self._drawn.readout(x)

    def _moved(self, pos: Any) -> None:
        box = self.plot.getViewBox()
        if self._drawn is not None and box.sceneBoundingRect().contains(pos):
            text = self.readout(box.mapSceneToView(pos).x())
            if text:
                self.hovered(text)

    def reset(self) -> None:
        self._drawn = None
        self.curve.setData([], [])
        item = self.plot.getPlotItem()
        item.setTitle(None)
        for side in ("bottom", "left"):
            axis = item.getAxis(side)
            if isinstance(axis, FormatAxis):
                axis.set_format(None)
            axis.setLabel(None)

    def _report(self) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        width = int(self.plot.getViewBox().sceneBoundingRect().width())
        self.range_changed(x0, x1, max(16, width))


class FormatAxis(pg.AxisItem):
    """An axis whose tick labels come from a formatter (a coordinate's), else pyqtgraph's numbers."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.format: Callable[[float], str] | None = None

    def set_format(self, fmt: Callable[[float], str] | None) -> None:
        if fmt is not self.format:
            self.format = fmt
            self.picture = None  # pyqtgraph's cached drawing of the labels
            self.update()

    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:  # noqa: N802
        if self.format is None:
            return super().tickStrings(values, scale, spacing)
        out = []
        for v in values:
            try:
                out.append(self.format(float(v)))
            except Exception:  # a formatter that fails on a tick between coordinates shows the number
                out.append(f"{v:g}")
        return out


def follow_data_in_y(box: pg.ViewBox) -> None:
    """The wheel and drags move along x only; y follows the values in view, as a plot of a
    series is read (the extremes of what is shown, not of the whole line)."""
    box.setMouseEnabled(x=True, y=False)
    box.enableAutoRange(axis=pg.ViewBox.YAxis, enable=True)
    box.setAutoVisible(y=True)
