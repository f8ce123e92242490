"""The series at a point: a dock under the data with ``SeriesView`` (made on first use, so the
window does not pay for it at launch). While it is shown, a click on the image plots the values
through that pixel along a dimension (time where there is one, else z: ``viewing.line.at_point``
decides), one line per channel shown, with the dimension's coordinates (CF) or physical
positions (OME scale and unit) on the x axis and the values CF-decoded as the image shows them;
moving a slider of another dimension, or clicking elsewhere, moves the lines with it. A dimension
picked in the dock is kept for the next click on the same array.

The panel knows no other widget: the window hands it the view state and the OME image to read,
connects the data view's clicks and slider moves to its slots, and keeps its menu action in step
with ``shown_changed``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow

from ..scheduling import WorkerPool
from ..viewing.image.state import ViewState
from ..viewing.line.at_point import point_query

if TYPE_CHECKING:
    from ..viewing.ome.model import Axis, OmeImage
    from .series_view import SeriesView

#: the least height of the dock's plot: room for its ticks, its axis label and a few lines
PLOT_MIN_HEIGHT = 180


class SeriesPanel(QObject):
    """``show(on)`` from the menu, ``point_clicked(row, col)`` for a click on the image and
    ``plane_moved()`` for a slider moved; ``shown_changed(visible)`` when the dock appears or is
    closed (by its own button too). ``state`` is the view state of the data shown and ``image``
    the OME image it shows (None for a plain array), read when the line is drawn so that they
    are always the current ones."""

    shown_changed = Signal(bool)

    def __init__(self, pool: WorkerPool, host: QMainWindow, state: Callable[[], ViewState | None],
                 image: Callable[[], OmeImage | None] = lambda: None) -> None:
        super().__init__(host)
        self.pool = pool
        self.host = host  # the window the dock is docked in
        self.state = state
        self.image = image
        self.dock: QDockWidget | None = None
        self.view: SeriesView | None = None
        #: (row, column) of the point in the plane, with the array it belongs to
        self.point: tuple[Any, int, int] | None = None

    @property
    def shown(self) -> bool:
        return self.dock is not None and self.dock.isVisible()

    def show(self, on: bool = True) -> None:
        if not on:
            if self.dock is not None:
                self.dock.hide()
                if self.view is not None:
                    self.view.stop()
            return
        if self.dock is None:
            from .series_view import SeriesView

            self.view = SeriesView(self.pool)
            self.view.plot.setMinimumHeight(PLOT_MIN_HEIGHT)
            self.view.follow_palette(self.host.palette())
            self.dock = QDockWidget("Series at a point", self.host)
            self.dock.setObjectName("series")
            self.dock.setWidget(self.view)
            self.host.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
            self.dock.visibilityChanged.connect(self._visibility)
        self.dock.show()
        # the height its content needs (a title, the picker, the plot with its ticks and label, the
        # status), a quarter of the window where that is more
        need = self.view.minimumSizeHint().height() if self.view is not None else 0
        self.host.resizeDocks([self.dock], [max(need, self.host.height() // 4)], Qt.Orientation.Vertical)
        state = self.state()
        if self.point is None and state is not None:  # opened from the menu: the centre of the view
            r0, r1, c0, c1 = state.region or (0.0, *state.plane_shape[:1], 0.0, state.plane_shape[1])
            self.show_at(int((r0 + r1) / 2), int((c0 + c1) / 2))

    def show_at(self, row: int, col: int) -> bool:
        """Plot the line through pixel (``row``, ``col``) of the plane shown; False where there is
        none (no image, or no dimension beyond the image's)."""
        state = self.state()
        if state is None or self.view is None:
            return False
        rows, cols = state.plane_shape
        if not (0 <= row < rows and 0 <= col < cols):
            return False
        image = self.image()
        axes: tuple[Axis, ...] | None = None
        variable = ""
        if image is not None and image.multiscales and len(image.first.axes) == state.array.ndim:
            axes = image.first.axes
            variable = image.name or image.first.name or image.path.rstrip("/").rsplit("/", 1)[-1]
        kept = self.view.model.query
        dim = kept.dim if kept is not None and kept.array is state.array else None
        query = point_query(state, row, col, axes, dim=dim, variable=variable)
        if query is None:
            self.view.title.setText(f"{state.array.path} has no dimension beyond the image's to plot along.")
            return False
        self.point = (state.array, row, col)
        self.view.show_point(query)
        return True

    def point_clicked(self, row: int, col: int) -> None:
        """A click on pixel (``row``, ``col``) of the image: the line through it, while shown."""
        if self.shown:
            self.show_at(row, col)

    def plane_moved(self) -> None:
        """A slider of the data shown moved, or its channels shown changed: the lines through
        the same point of the plane shown now."""
        state = self.state()
        if self.shown and self.point is not None and state is not None and state.array is self.point[0]:
            self.show_at(self.point[1], self.point[2])

    def _visibility(self, visible: bool) -> None:
        if not visible and self.view is not None:
            self.view.stop()
        self.shown_changed.emit(visible)

