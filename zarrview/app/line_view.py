"""Drawing a LinePlot: a line of exact values, or an envelope of vertical min-max segments, one
per screen column; a date axis for datetime64 values; the visible x range reported back once
the user stops zooming."""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ..viewing.line.array import LinePlot

SETTLE_MS = 150


class LineView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget()
        self._dates = False
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
            axis = pg.DateAxisItem(orientation="left") if plot.dates else pg.AxisItem(orientation="left")
            self.plot.getPlotItem().setAxisItems({"left": axis})
        self.curve.setData(plot.x, plot.y, connect="pairs" if plot.envelope else "finite", pen=self._pen)
        if first:
            self._setting = True
            try:
                self.plot.getViewBox().autoRange(padding=0.02)
                follow_data_in_y(self.plot.getViewBox())  # autoRange turned the automatic y range off
            finally:
                self._setting = False

    def reset(self) -> None:
        self._drawn = None
        self.curve.setData([], [])

    def _report(self) -> None:
        (x0, x1), _ = self.plot.getViewBox().viewRange()
        width = int(self.plot.getViewBox().sceneBoundingRect().width())
        self.range_changed(x0, x1, max(16, width))


def follow_data_in_y(box: pg.ViewBox) -> None:
    """The wheel and drags move along x only; y follows the values in view, as a plot of a
    series is read (the extremes of what is shown, not of the whole line)."""
    box.setMouseEnabled(x=True, y=False)
    box.enableAutoRange(axis=pg.ViewBox.YAxis, enable=True)
    box.setAutoVisible(y=True)
