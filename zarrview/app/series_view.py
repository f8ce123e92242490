"""The series at a clicked point: a plot that fills in as the lines' chunks are read.

A thin widget over ``viewing.line.series.SeriesModel``: it draws what the model's driver hands
it (the title, the values read so far, progress while it fills) and turns Cancel and the
dimension picker into model calls. Reads run on the driver's lane, never on the GUI thread;
tick labels on the x axis are the coordinate's own words (dates, ``45.25 °N``) through
``FormatAxis``. A series of several channels draws one line per channel in the channel's colour
(made darker or lighter where it would vanish into the background: a white channel on a light
scheme) with a legend of their labels.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette, QPen
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout,
                               QWidget)

from ..scheduling import Driver, WorkerPool
from ..viewing.line.series import RGB, PointQuery, Series, SeriesModel, SeriesRequest, date_text
from .bridge import post
from .line_view import FormatAxis, follow_data_in_y

#: the least time between two redraws of a line that is filling in (a line of 10^7 values
#: costs tens of milliseconds to draw; blocks can land faster than that)
REDRAW_MS = 100
#: the least contrast (WCAG ratio) a line keeps against the plot's background
MIN_CONTRAST = 2.0


class SeriesView(QWidget):
    """Show with ``show_point(query)``; ``model`` is the view model, ``series`` what is drawn."""

    def __init__(self, pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pool = pool
        self.model = SeriesModel()
        self.driver: Driver[PointQuery, SeriesRequest, Series] = Driver(
            self.model, self.pool, self._show, post=lambda fn: post(fn, self), name="series")
        self.series = Series()
        self.title = QLabel("Click a point of the image to plot its values along a dimension.")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.along = QComboBox()
        self.along.setToolTip("The dimension the values are plotted along")
        self.along.currentIndexChanged.connect(self._along_changed)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m chunks")
        self.progress.setVisible(False)
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop reading; the values read so far stay")
        self.cancel.setEnabled(False)
        self.cancel.clicked.connect(self.stop)
        self.bottom = FormatAxis("bottom")
        self.left = FormatAxis("left")
        self.plot = pg.PlotWidget(axisItems={"bottom": self.bottom, "left": self.left})
        self.legend = self.plot.addLegend(offset=(-8, 8))
        #: one curve per line of the series (the first is ``curve``); more are made as needed
        self.curves: list[pg.PlotDataItem] = []
        self.curve = self._curve(0)
        follow_data_in_y(self.plot.getViewBox())
        self._pen = pg.mkPen("#3daee9", width=1.5)
        self._background: RGB = (255, 255, 255)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(QLabel("Along:"))
        row.addWidget(self.along)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addLayout(row)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.status)
        self._generation = -1
        self._pens: list[QPen] = []
        self._setting_dims = False
        self._redraw = QTimer(self)  # while a line fills, at most one redraw per REDRAW_MS
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self._draw)

    # -- the caller's side --------------------------------------------------------------------
    def show_point(self, query: PointQuery) -> None:
        """Plot the line through ``query.point`` along ``query.dim`` (cancelling the previous one)."""
        names = [query.axis(d).name for d in range(len(query.array.shape))]
        self._setting_dims = True
        try:
            if [self.along.itemText(i) for i in range(self.along.count())] != names:
                self.along.clear()
                self.along.addItems(names)
            if 0 <= query.dim < len(names):
                self.along.setCurrentIndex(query.dim)
        finally:
            self._setting_dims = False
        self.driver.show(query)

    def stop(self) -> None:
        """Stop reading the line: the values read so far stay."""
        self.driver.discard()
        stopped = self.model.cancelled()
        if stopped is not None:
            self._show(stopped)

    def follow_palette(self, pal: QPalette) -> None:
        """The plot follows the light or dark colour scheme."""
        base = pal.color(QPalette.ColorRole.Base)
        self._background = (base.red(), base.green(), base.blue())
        self.plot.setBackground(base)
        text = pal.color(QPalette.ColorRole.Text)
        pen = pg.mkPen(text)
        for axis in (self.bottom, self.left):
            axis.setPen(pen)
            axis.setTextPen(pen)
        self.legend.setLabelTextColor(text)
        self.legend.setBrush(pg.mkBrush(base.red(), base.green(), base.blue(), 200))
        self._pen = pg.mkPen(pal.color(QPalette.ColorRole.Highlight), width=1.5)
        if self.series.lines:
            self._generation = -1  # drawn again in the new colours
            self._show(self.series)
        else:
            self.curve.setPen(self._pen)

    # -- the model's side ---------------------------------------------------------------------
    def _along_changed(self, index: int) -> None:
        if not self._setting_dims and index >= 0:
            query = self.model.along(index)
            if query is not None:
                self.driver.show(query)

    def _show(self, s: Series) -> None:
        self.series = s
        self.title.setText(s.title or "")
        self.progress.setVisible(s.busy)
        self.progress.setMaximum(max(1, s.total))
        self.progress.setValue(min(s.done, max(1, s.total)))
        self.cancel.setEnabled(s.busy)
        lines = [s.message] if s.message else []
        lines += [s.status] if s.status else []
        lines += list(s.notes[:3]) + ([f"… and {len(s.notes) - 3} more"] if len(s.notes) > 3 else [])
        self.status.setText("\n".join(lines))
        if s.y is None:
            self._redraw.stop()
            self.legend.clear()
            for curve in self.curves:
                curve.setData([], [])
            return
        new = s.generation != self._generation
        if not new and s.busy:  # a block of the same line: drawn with the next redraw
            if not self._redraw.isActive():
                self._redraw.start()
            return
        self._redraw.stop()
        self._generation = s.generation
        if new:
            self.bottom.set_format(s.x_format)
            self.left.set_format(date_text if s.dates else None)
            self.plot.setLabel("bottom", s.x_label)
            self.plot.setLabel("left", s.y_label)
            self.plot.enableAutoRange()
            self._pens = [self._pen if line.color is None else
                          pg.mkPen(readable(line.color, self._background), width=1.5) for line in s.lines]
            self.legend.clear()
            for i, line in enumerate(s.lines):
                if line.label:
                    self.legend.addItem(self._curve(i), line.label)
            for curve in self.curves[len(s.lines):]:
                curve.setData([], [])
        self._draw()

    def _curve(self, i: int) -> pg.PlotDataItem:
        """The ``i``-th line's curve, made when first needed."""
        while len(self.curves) <= i:
            curve = self.plot.plot([], [])
            curve.setDownsampling(auto=True, method="peak")  # a line of 10^7 values draws as its envelope
            curve.setClipToView(True)
            self.curves.append(curve)
        return self.curves[i]

    def _draw(self) -> None:
        s = self.series
        if s.y is None:
            return
        if s.dates:
            self.left.set_format(date_text)
        for i, line in enumerate(s.lines):
            pen = self._pens[i] if i < len(self._pens) else self._pen
            self._curve(i).setData(s.x, line.y, connect="finite", pen=pen)

    def finite_points(self) -> int:
        """How many values the curve holds that are drawn (for tests and the status bar)."""
        y = self.curve.yData
        return 0 if y is None else int(np.isfinite(y).sum())

    def legend_labels(self) -> list[str]:
        """The names the legend shows, in the order of the lines (for tests and screenshots)."""
        return [label.text for _, label in self.legend.items]


def luminance(color: RGB) -> float:
    """The relative luminance of an sRGB colour (WCAG), 0 for black to 1 for white."""
    def linear(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in color)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: RGB, b: RGB) -> float:
    """The WCAG contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(color: RGB, background: RGB) -> RGB:
    """``color``, or the nearest shade of it (towards black on a light background, towards white
    on a dark one) that stands out from ``background`` by ``MIN_CONTRAST``: a channel's colour
    stays recognisable, and a white or yellow channel stays visible on white."""
    toward = 0 if luminance(background) > 0.5 else 255
    for step in range(11):
        t = step / 10
        shade = tuple(round(c + (toward - c) * t) for c in color)
        rgb = (shade[0], shade[1], shade[2])
        if contrast(rgb, background) >= MIN_CONTRAST:
            return rgb
    return (toward, toward, toward)
