"""A row of controls that scrolls sideways where the view is narrower than the row.

A data view's controls (axes, sliders, contrast, colours) are one wide grid. Two views side by
side (View ▸ Compare) would otherwise make the window as wide as both grids together, wider
than a laptop's screen; in a narrow view the grid scrolls instead, and its height is the grid's
own (plus the scroll bar while one is needed), so the image keeps the rest.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QSizePolicy, QWidget

#: the narrowest a row of controls makes its view
NARROWEST = 120


class SidewaysScroll(QScrollArea):
    """``inner`` in a frameless area that scrolls sideways only."""

    def __init__(self, inner: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setWidget(inner)
        inner.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.widget() and event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Show,
                                                          QEvent.Type.Hide):
            self.updateGeometry()  # the grid gained or lost a row: the area takes its new height
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: object) -> None:  # noqa: N802
        super().resizeEvent(event)  # type: ignore[arg-type]
        self.updateGeometry()  # the scroll bar comes or goes with the width

    def _height(self) -> int:
        inner = self.widget()
        if inner is None or not inner.isVisibleTo(self):
            return 0
        height = inner.sizeHint().height()
        if inner.minimumSizeHint().width() > self.viewport().width():
            height += self.horizontalScrollBar().sizeHint().height()
        return height

    def sizeHint(self) -> QSize:  # noqa: N802
        inner = self.widget()
        return QSize(inner.sizeHint().width() if inner is not None else NARROWEST, self._height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(NARROWEST, self._height())
