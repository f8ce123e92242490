"""The window's time series at a point: a dock under the data with ``SeriesView`` (made on
first use, so the window does not pay for it at launch). While it is shown, a click on the
image plots the values through that pixel along a dimension (time where there is one), with
the dimension's coordinates on the x axis and the values CF-decoded as the image shows them;
moving a slider of another dimension, or clicking elsewhere, moves the line with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget
from shiboken6 import isValid

from ..viewing.image.axes import dim_names
from ..viewing.image.state import ViewState
from ..viewing.line.series import LineAxis, PointQuery

if TYPE_CHECKING:
    from .series_view import SeriesView
    from .window import MainWindow


class SeriesPanel:
    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.dock: QDockWidget | None = None
        self.view: SeriesView | None = None
        #: (row, column) of the point in the plane, with the array it belongs to
        self.point: tuple[Any, int, int] | None = None
        self._watched: Any = None
        pane = window.data.image
        pane.getImageItem().scene().sigMouseClicked.connect(self._clicked)

    @property
    def shown(self) -> bool:
        return self.dock is not None and self.dock.isVisible()

    def show(self, on: bool = True) -> None:
        if not on:
            if self.dock is not None:
                self.dock.hide()
                if self.view is not None:
                    self.view.model.cancel()
            return
        if self.dock is None:
            from .series_view import SeriesView

            self.view = SeriesView(self.window.data.pool)
            self.view.follow_palette(self.window.palette())
            self.dock = QDockWidget("Series at a point", self.window)
            self.dock.setObjectName("series")
            self.dock.setWidget(self.view)
            self.window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
            self.window.resizeDocks([self.dock], [max(180, self.window.height() // 4)], Qt.Orientation.Vertical)
            self.dock.visibilityChanged.connect(self._visibility)
        self.dock.show()
        state = self.window.data.state
        if self.point is None and state is not None:  # opened from the menu: the centre of the view
            r0, r1, c0, c1 = state.region or (0.0, *state.plane_shape[:1], 0.0, state.plane_shape[1])
            self.show_at(int((r0 + r1) / 2), int((c0 + c1) / 2))

    def show_at(self, row: int, col: int) -> bool:
        """Plot the line through pixel (``row``, ``col``) of the plane shown; False where there is
        none (no image, or no dimension beyond the image's)."""
        state = self.window.data.state
        if state is None or self.view is None:
            return False
        rows, cols = state.plane_shape
        if not (0 <= row < rows and 0 <= col < cols):
            return False
        query = point_query(state, row, col)
        if query is None:
            self.view.title.setText(f"{state.array.path} has no dimension beyond the image's to plot along.")
            return False
        self.point = (state.array, row, col)
        self._watch()
        self.view.show_point(query)
        return True

    def _clicked(self, event: Any) -> None:
        if not self.shown or event.button() != Qt.MouseButton.LeftButton or event.double():
            return
        pane = self.window.data.image
        if pane.shown is None or not pane.shown.tiles():
            return
        p = pane.view.getViewBox().mapSceneToView(event.scenePos())
        self.show_at(int(np.floor(p.y())), int(np.floor(p.x())))

    def _watch(self) -> None:
        """Follow the sliders of the plane shown (a new plane's controls are new widgets)."""
        plane = self.window.data.plane
        if plane is None or plane is self._watched:
            return
        self._watched = plane
        for _, box in plane.sliders.values():
            box.valueChanged.connect(lambda *_: self._moved())

    def _moved(self) -> None:
        state = self.window.data.state
        if self.shown and self.point is not None and state is not None and state.array is self.point[0]:
            self.show_at(self.point[1], self.point[2])

    def _visibility(self, visible: bool) -> None:
        if not visible and self.view is not None:
            self.view.model.cancel()
        if not isValid(self.window):  # the window is going away
            return
        action = getattr(self.window, "series_action", None)  # the dock closed by its own button
        if action is not None and action.isChecked() != visible and not self.window.isMinimized():
            action.setChecked(visible)


def point_query(state: ViewState, row: int, col: int) -> PointQuery | None:
    """The line through (``row``, ``col``) of ``state``'s plane along its time dimension (else
    the first dimension not on screen), described by its CF coordinates where it has them."""
    arr = state.array
    point = list(state.indices)
    point[state.y_dim], point[state.x_dim] = row, col
    free = [d for d in range(arr.ndim) if d not in (state.y_dim, state.x_dim)]
    if not free:
        return None
    cf = state.cf
    times = [d for d in free if cf is not None and d in cf.axes and cf.axes[d].kind == "time"]
    dim = (times or free)[0]
    names = dim_names(arr, state.axis_names)
    axes = []
    for d in range(arr.ndim):
        axis = None if cf is None else cf.axes.get(d)
        axes.append(LineAxis(str(names[d])) if axis is None else LineAxis(str(names[d]), axis.numeric(), axis.format))
    decoding = state.decoding
    return PointQuery(arr, tuple(point), dim, None if decoding is None else decoding.decode, tuple(axes),
                      arr.name, "" if cf is None else cf.heading)
