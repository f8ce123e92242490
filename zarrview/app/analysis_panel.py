"""The panel under the image that shows a measurement: the profile along a drawn line as a plot,
or the statistics of a drawn rectangle as a small table, with progress, Cancel and Close.

It only draws what ``viewing.analysis`` computed; ``AnalysisTools`` decides what is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (QGridLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton, QStackedWidget,
                               QVBoxLayout, QWidget)

from ..viewing.analysis.profile import ProfilePlot
from ..viewing.analysis.stats import RegionStats, rows_of

#: curve colours of a colour dimension's channels (red, green, blue, alpha) and of others in turn
CHANNEL_COLOURS = ((220, 50, 47), (60, 170, 60), (38, 110, 210), (130, 130, 130))
#: the panel's height: room for a readable plot without taking the image's place
PANEL_HEIGHT = 210


class AnalysisPanel(QWidget):
    """``show_profile`` / ``show_stats`` draw a result, ``say`` a sentence instead; ``cancel`` and
    ``close_tool`` are called by its buttons."""

    def __init__(self, cancel: Callable[[], None], close_tool: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMaximumHeight(PANEL_HEIGHT)
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(cancel)
        self.cancel_button.hide()
        close = QPushButton("Close")
        close.setToolTip("Close the measurement and remove its line or rectangle from the image")
        close.clicked.connect(close_tool)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)
        top.addWidget(close)
        self.plot = pg.PlotWidget()
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.legend = self.plot.addLegend(offset=(-10, 10))
        self.table = QWidget()
        self.grid = QGridLayout(self.table)
        self.grid.setColumnStretch(4, 1)
        self.grid.setRowStretch(9, 1)  # the lines at the top, the room below them
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack = QStackedWidget()
        for w in (self.plot, self.table, self.message):
            self.stack.addWidget(w)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        self._pen_colour = (30, 120, 220)
        self.values: dict[str, str] = {}  # the statistics shown, by name (what the table says)

    def show_profile(self, plot: ProfilePlot, colours: Sequence[tuple[int, int, int]] = ()) -> None:
        """``plot``'s curves, in ``colours`` where given (a composite's channel colours)."""
        self.title.setText(f"Profile of {plot.title}: {len(plot.x):,} samples")
        self.plot.clear()
        self.legend.clear()
        self.legend.setVisible(len(plot.curves) > 1)
        for k, (name, y) in enumerate(plot.curves):
            colour = colours[k] if k < len(colours) else self._pen_colour if len(plot.curves) == 1 \
                else CHANNEL_COLOURS[k % len(CHANNEL_COLOURS)]
            self.plot.plot(plot.x, y, pen=pg.mkPen(colour, width=1.5), name=name, connect="finite")
        self.plot.setLabel("bottom", plot.x_label)
        self.plot.setLabel("left", plot.y_label)
        self.plot.enableAutoRange()
        self.stack.setCurrentWidget(self.plot)

    def show_stats(self, stats: RegionStats) -> None:
        self.title.setText(f"Statistics of {stats.title}: {stats.value_name}")
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item is not None and item.widget() is not None:
                item.widget().deleteLater()
        self.values = {}
        for k, (name, text) in enumerate(rows_of(stats)):
            # the region on a line of its own, then two statistics a line: min and max, mean and std…
            row, col = (0, 0) if k == 0 else ((k + 1) // 2, 0 if k % 2 else 2)
            key = QLabel(f"{name}:")
            key.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            value = QLabel(text)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.grid.addWidget(key, row, col)
            self.grid.addWidget(value, row, col + 1, 1, 3 if k == 0 else 1)
            self.values[name.split(" (")[0]] = text
        self.stack.setCurrentWidget(self.table)

    def say(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def busy(self, done: int, total: int) -> None:
        """Progress of a read in ``total`` pieces; hidden again at ``done == total``."""
        shown = 0 <= done < total and total > 1
        self.progress.setVisible(shown)
        self.cancel_button.setVisible(shown)
        if shown:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def follow_palette(self, pal: QPalette) -> None:
        """The plot follows the light or dark colour scheme."""
        self.plot.setBackground(pal.color(QPalette.ColorRole.Base))
        pen = pg.mkPen(pal.color(QPalette.ColorRole.Text))
        for side in ("bottom", "left"):
            axis = self.plot.getAxis(side)
            axis.setPen(pen)
            axis.setTextPen(pen)
        highlight = pal.color(QPalette.ColorRole.Highlight)
        self._pen_colour = (highlight.red(), highlight.green(), highlight.blue())
