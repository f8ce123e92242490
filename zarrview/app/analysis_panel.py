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
from ..viewing.analysis.stats import RegionStats, channel_rows, rows_of

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
        self.grid.setVerticalSpacing(1)  # nine lines of a colour dimension's table within the panel
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
        self.setMaximumHeight(PANEL_HEIGHT)  # a plot is read at the panel's full height
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
        """Two figures a line; a colour dimension's as a table, a column per channel and one for
        all of them. ``values`` has each figure by name (``"mean"``; ``"mean:red"`` a channel's)."""
        self.title.setText(f"Statistics of {stats.title}: {stats.value_name}")
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.values = {}
        for k in range(max(self.grid.columnCount(), self.grid.rowCount())):
            self.grid.setColumnStretch(k, 0)
            self.grid.setRowStretch(k, 0)
        if stats.by_channel:
            self._channel_table(stats)
        else:
            for k, (name, text) in enumerate(rows_of(stats)):
                # the region on a line of its own, then two statistics a line: min and max, mean and std…
                row, col = (0, 0) if k == 0 else ((k + 1) // 2, 0 if k % 2 else 2)
                self._cell(f"{name}:", row, col, key=True)
                self._cell(text, row, col + 1, span=3 if k == 0 else 1)
                self.values[name.split(" (")[0]] = text
        # the lines at the top left, the room below and to the right of them
        self.grid.setColumnStretch(self.grid.columnCount(), 1)
        self.grid.setRowStretch(self.grid.rowCount(), 1)
        self.stack.setCurrentWidget(self.table)
        self._fit(self.table)

    def _fit(self, shown: QWidget) -> None:
        """The panel as tall as what it shows needs (a table's lines, a sentence), up to
        ``PANEL_HEIGHT`` (a plot takes it all): the image keeps the rest."""
        layout = self.layout()
        assert layout is not None  # the panel's own, made with it
        margins = layout.contentsMargins()
        top = max(self.title.sizeHint().height(), self.cancel_button.sizeHint().height())
        need = top + shown.sizeHint().height() + margins.top() + margins.bottom() + layout.spacing()
        self.setMaximumHeight(min(PANEL_HEIGHT, need))

    def _channel_table(self, stats: RegionStats) -> None:
        lines = rows_of(stats)
        region, rest = lines[0], [line for line in lines[1:] if line[0] == "unread"]
        self._cell(f"{region[0]}:", 0, 0, key=True)
        self._cell(region[1], 0, 1, span=len(stats.by_channel) + 1)
        self.values[region[0]] = region[1]
        names = [c.name for c in stats.by_channel] + ["all"]
        for col, name in enumerate(names):
            self._cell(name, 1, col + 1, heading=True)
        row = 2
        for row, (what, figures) in enumerate(channel_rows(stats), start=2):
            self._cell(f"{what}:", row, 0, key=True)
            key = what.split(" (")[0]  # "fill (0)": the fill values in the line's name only
            for col, (name, text) in enumerate(zip(names, figures, strict=True)):
                self._cell(text, row, col + 1)
                self.values[key if name == "all" else f"{key}:{name}"] = text
        for k, (what, text) in enumerate(rest, start=row + 1):  # what could not be read
            self._cell(f"{what}:", k, 0, key=True)
            self._cell(text, k, 1, span=len(names))

    def _cell(self, text: str, row: int, col: int, *, key: bool = False, heading: bool = False,
              span: int = 1) -> None:
        label = QLabel(text)
        label.setTextFormat(Qt.TextFormat.PlainText)  # a channel's name comes from the store's metadata
        if heading:
            font = label.font()
            font.setBold(True)
            label.setFont(font)
        if key:
            label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        else:
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.grid.addWidget(label, row, col, 1, span)

    def say(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        self._fit(self.message)

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
