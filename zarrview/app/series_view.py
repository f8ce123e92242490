"""The time series at a clicked point: a plot that fills in as the line's chunks are read.

A thin widget over ``viewing.line.series.SeriesModel``: it shows what the model publishes (the
title, the values read so far, progress while it fills) and turns Cancel and the dimension
picker into model calls. Reads run on the model's own lane, never on the GUI thread;
tick labels on the x axis are the coordinate's own words (dates, ``45.25 °N``) through
``FormatAxis``.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout,
                               QWidget)

from ..scheduling import WorkerPool
from ..viewing.line.series import PointQuery, Series, SeriesModel, date_text
from .bridge import post
from .line_view import FormatAxis, follow_data_in_y

#: the least time between two redraws of a line that is filling in (a line of 10^7 values
#: costs tens of milliseconds to draw; blocks can land faster than that)
REDRAW_MS = 100


class SeriesView(QWidget):
    """Show with ``show_point(query)``; ``model`` is the view model, ``series`` what is drawn."""

    def __init__(self, pool: WorkerPool | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        owned = pool is None
        self.pool = pool or WorkerPool()
        if owned:  # a view on its own (tests, embedding) closes the pool it made
            self.destroyed.connect(self.pool.close)
        self.model = SeriesModel(self.pool, lambda fn: post(fn, self), self._show)
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
        self.cancel.clicked.connect(self.model.cancel)
        self.bottom = FormatAxis("bottom")
        self.left = FormatAxis("left")
        self.plot = pg.PlotWidget(axisItems={"bottom": self.bottom, "left": self.left})
        self.curve = self.plot.plot([], [])
        self.curve.setDownsampling(auto=True, method="peak")  # a line of 10^7 values draws as its envelope
        self.curve.setClipToView(True)
        follow_data_in_y(self.plot.getViewBox())
        self._pen = pg.mkPen("#3daee9", width=1.5)
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
        self.model.request(query)

    def follow_palette(self, pal: QPalette) -> None:
        """The plot follows the light or dark colour scheme."""
        self.plot.setBackground(pal.color(QPalette.ColorRole.Base))
        pen = pg.mkPen(pal.color(QPalette.ColorRole.Text))
        for axis in (self.bottom, self.left):
            axis.setPen(pen)
            axis.setTextPen(pen)
        self._pen = pg.mkPen(pal.color(QPalette.ColorRole.Highlight), width=1.5)
        self.curve.setPen(self._pen)

    # -- the model's side ---------------------------------------------------------------------
    def _along_changed(self, index: int) -> None:
        if not self._setting_dims and index >= 0:
            self.model.along(index)

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
            self.curve.setData([], [])
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
        self._draw()

    def _draw(self) -> None:
        s = self.series
        if s.y is None:
            return
        if s.dates:
            self.left.set_format(date_text)
        self.curve.setData(s.x, s.y, connect="finite", pen=self._pen)

    def finite_points(self) -> int:
        """How many values the curve holds that are drawn (for tests and the status bar)."""
        y = self.curve.yData
        return 0 if y is None else int(np.isfinite(y).sum())
