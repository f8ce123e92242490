"""Measuring the image: "Line Profile" puts a line on it and plots the values along it, "Region
Statistics" a rectangle and tabulates its values' statistics, in a panel under the image.

While a tool is in use a left drag on the image draws a new line or rectangle (the middle
button pans). Dragging the line's ends or the rectangle's edges measures again: the profile while the line
moves (its driver keeps only the newest read), the statistics once the rectangle is let go (a big
rectangle is a long read). Both read level 0 of the array on a worker (``viewing.analysis.measure``),
so what they say is of the data, not of the preview on screen. Another plane (a slider, the
stored/decoded switch) measures the same place again; another array, or Close, removes the tool.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QVBoxLayout, QWidget

from ..scheduling import Driver, WorkerPool
from ..viewing.analysis import profile, stats
from ..viewing.analysis.measure import Measure, Measured, MeasureModel, MeasureRequest
from ..viewing.analysis.plane import Block, PixelSize
from ..viewing.image.state import ViewState
from .analysis_panel import AnalysisPanel
from .bridge import post
from .draw_box import DrawBox
from .image_view import ImagePane

PROFILE, STATS = "profile", "stats"
#: the ROI's colour: visible over grey ramps and the usual colour maps alike
ROI_PEN = pg.mkPen((255, 200, 0), width=2)


class AnalysisTools(QObject):
    """``use(PROFILE | STATS | None)`` from the menu; ``follow(state)`` whenever the view paints;
    ``clear()`` when another array is shown. ``tool_changed(name or None)`` keeps the menu in step."""

    tool_changed = Signal(object)

    def __init__(self, pool: WorkerPool, pane: ImagePane, state: Callable[[], ViewState | None],
                 pixel: Callable[[], PixelSize], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pane, self.state, self.pixel = pane, state, pixel
        self.model = MeasureModel()
        self.driver: Driver[Measure, MeasureRequest, Measured] = Driver(
            self.model, pool, self._answered, post=lambda fn: post(fn, self), name="measurement",
            on_progress=lambda done, total: self.panel.busy(done, total))
        #: where the panel goes under the image; the panel is made on first use (a plot costs
        #: tens of milliseconds the window need not pay at launch)
        self.holder = QWidget()
        QVBoxLayout(self.holder).setContentsMargins(0, 0, 0, 0)
        self.holder.hide()
        self._panel: AnalysisPanel | None = None
        self.tool: str | None = None
        self.roi: pg.ROI | None = None
        self._measured: Any = None  # the plane key last measured
        #: the newest result shown (a ``Profile`` or ``RegionStats``), for tests and export
        self.result: Any = None

    @property
    def panel(self) -> AnalysisPanel:
        if self._panel is None:
            self._panel = AnalysisPanel(self.driver.cancel, lambda: self.use(None))
            self._panel.follow_palette(self.pane.palette())
            layout = self.holder.layout()
            assert layout is not None
            layout.addWidget(self._panel)
        return self._panel

    # -- what the menu and the data view call ------------------------------------------------
    def use(self, tool: str | None) -> None:
        """Start ``tool`` (a line or rectangle over the middle of the view), or close the one in use."""
        state = self.state()
        if tool is not None and (state is None or not self.pane.isVisible()):
            tool = None  # measurements are of an image
        if tool == self.tool:
            return
        self._remove()
        if tool is not None and state is not None:
            r0, r1, c0, c1 = self._visible(state)
            dr, dc = (r1 - r0) / 3, (c1 - c0) / 3
            if tool == PROFILE:
                self.place_line(((r0 + dr, c0 + dc), (r1 - dr, c1 - dc)))
            else:
                self.place_box(Block(round(r0 + dr), round(r1 - dr), round(c0 + dc), round(c1 - dc)))
        else:
            self.tool_changed.emit(None)

    def clear(self) -> None:
        """Another array is shown: the tool and its line or rectangle go."""
        self.use(None)

    def follow(self, state: ViewState) -> None:
        """The view painted ``state``: measure again where its plane changed."""
        if self.roi is not None and state.plane_key() != self._measured:
            self.measure()

    def place_line(self, line: profile.Line) -> None:
        """The profile's line from (row, column) to (row, column), in the plane's data coordinates."""
        (r0, c0), (r1, c1) = line
        if not isinstance(self.roi, pg.LineSegmentROI):
            self._add(PROFILE, pg.LineSegmentROI([(c0, r0), (c1, r1)], pen=ROI_PEN), live=True)
        else:
            self.roi.blockSignals(True)  # one read for the move, not one per end
            for handle, (x, y) in zip(self.roi.getHandles(), ((c0, r0), (c1, r1))):
                self.roi.movePoint(handle, pg.Point(x, y), coords="parent")
            self.roi.blockSignals(False)
        self.measure()

    def place_box(self, box: Block, measure: bool = True) -> None:
        """The statistics' rectangle: rows ``r0:r1``, columns ``c0:c1``; read once ``measure``
        (not while it is being drawn)."""
        pos, size = (box.c0, box.r0), (max(1, box.c1 - box.c0), max(1, box.r1 - box.r0))
        if not isinstance(self.roi, pg.RectROI):
            self._add(STATS, pg.RectROI(pos, size, pen=ROI_PEN, snapSize=1.0, translateSnap=True, scaleSnap=True),
                      live=False)
        else:
            self.roi.blockSignals(True)
            self.roi.setPos(pos, update=False)
            self.roi.setSize(size)
            self.roi.blockSignals(False)
        if measure:
            self.measure()

    # -- measuring ---------------------------------------------------------------------------
    def measure(self) -> None:
        state = self.state()
        if state is None or self.roi is None:
            return
        self._measured = state.plane_key()
        if isinstance(self.roi, pg.LineSegmentROI):
            a, b = (self.roi.mapToParent(h.pos()) for h in self.roi.getHandles())
            ask = Measure(state, line=((a.y(), a.x()), (b.y(), b.x())), pixel=self.pixel())
        else:
            pos, size = self.roi.pos(), self.roi.size()
            r0, c0 = round(pos.y()), round(pos.x())
            ask = Measure(state, box=Block(r0, r0 + round(size.y()), c0, c0 + round(size.x())))
        self.driver.show(ask)

    def _answered(self, got: Measured) -> None:
        self.panel.busy(0, 0)
        if got.said:
            self.panel.say(got.said)
        elif got.plot is not None:
            self.result = got.result
            self.panel.show_profile(got.plot, got.colours)
        elif isinstance(got.result, stats.RegionStats):
            self.result = got.result
            self.panel.show_stats(got.result)
        if got.unread_chunks:
            self.panel.title.setText(f"{self.panel.title.text()} ({got.unread_chunks} chunks could not be "
                                     "read: their fill value counts instead)")

    # -- the item on the image ---------------------------------------------------------------
    def _drag(self, ev: Any) -> bool:
        """A left drag on the image while a tool is in use: a new line or rectangle from where
        it started to where the mouse is (the rectangle read when let go)."""
        if self.tool is None:
            return False
        box = self.pane.view.getViewBox()
        a, b = box.mapSceneToView(ev.buttonDownScenePos()), box.mapSceneToView(ev.scenePos())
        if self.tool == PROFILE:
            self.place_line(((a.y(), a.x()), (b.y(), b.x())))
        else:
            (r0, r1), (c0, c1) = sorted((a.y(), b.y())), sorted((a.x(), b.x()))
            self.place_box(Block(math.floor(r0), math.ceil(r1), math.floor(c0), math.ceil(c1)), ev.isFinish())
        return True

    def _add(self, tool: str, roi: pg.ROI, live: bool) -> None:
        """``roi`` on the image for ``tool``, in place of any other; the panel shown."""
        self._remove()
        self.tool = tool
        roi.setZValue(1000)  # above the tiles, labels and failure boxes
        (roi.sigRegionChanged if live else roi.sigRegionChangeFinished).connect(lambda *_: self.measure())
        self.pane.view.addItem(roi)
        self.roi = roi
        view_box = self.pane.view.getViewBox()
        if isinstance(view_box, DrawBox):
            view_box.drawing = self._drag
        self.panel.show()
        self.holder.show()
        self.tool_changed.emit(tool)

    def _remove(self) -> None:
        self.driver.discard()
        if self.roi is not None:
            self.pane.view.removeItem(self.roi)
            self.roi = None
        view_box = self.pane.view.getViewBox()
        if isinstance(view_box, DrawBox):
            view_box.drawing = None
        self.tool, self.result, self._measured = None, None, None
        if self._panel is not None:
            self._panel.busy(0, 0)
        self.holder.hide()

    def _visible(self, state: ViewState) -> tuple[float, float, float, float]:
        """The part of the plane in view (the whole plane where the view is wider)."""
        rows, cols = state.plane_shape
        (x0, x1), (y0, y1) = self.pane.view.viewRange()
        r0, r1, c0, c1 = max(0.0, y0), min(float(rows), y1), max(0.0, x0), min(float(cols), x1)
        return (r0, r1, c0, c1) if r1 > r0 and c1 > c0 else (0.0, float(rows), 0.0, float(cols))


def add_analysis_actions(menu: QMenu, tools: AnalysisTools) -> tuple[QAction, QAction]:
    """"Line Profile" and "Region Statistics" in ``menu``, checked while their tool is in use."""
    actions = []
    for text, tool, keys, tip in (("Line &Profile", PROFILE, "Ctrl+Shift+P",
                                   "Draw a line on the image and plot the values along it"),
                                  ("Region &Statistics", STATS, "Ctrl+Shift+S",
                                   "Draw a rectangle on the image and see the min, max, mean and spread of its values")):
        act = QAction(text, menu)
        act.setShortcut(QKeySequence(keys))
        act.setCheckable(True)
        act.setToolTip(tip)
        act.toggled.connect(lambda on, tool=tool: tools.use(tool if on else None) if on or tools.tool == tool else None)
        menu.addAction(act)
        actions.append((act, tool))

    def checked(tool: str | None) -> None:
        for act, name in actions:
            act.blockSignals(True)
            act.setChecked(name == tool)
            act.blockSignals(False)

    tools.tool_changed.connect(checked)
    return actions[0][0], actions[1][0]
