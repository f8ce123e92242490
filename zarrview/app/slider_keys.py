"""The keys that step the image's sliders wherever the focus is in the window: Left/Right one
index, Page Up/Page Down ten, on the slider last moved (else the first one shown), as in Fiji
and napari, where a z or time step never needs a click on the slider first.

A text field, a spin box or a combo box keeps every key (they edit with them), and a tree or
table keeps Left and Right (they open, close and move across with them). The filter sits on the
application, so it sees a key before the widget with the focus does; it acts only for widgets
inside its own window.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (QAbstractItemView, QAbstractSpinBox, QApplication, QComboBox, QLineEdit,
                               QPlainTextEdit, QTextEdit, QWidget)

#: key -> indices stepped
STEPS = {Qt.Key.Key_Right: 1, Qt.Key.Key_Left: -1, Qt.Key.Key_PageDown: 10, Qt.Key.Key_PageUp: -10}
_EDITORS = (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit, QComboBox)


class Steppable(Protocol):
    """What the keys step: the data view's sliders."""

    def step_slider(self, delta: int) -> bool:
        """Move the current slider by ``delta`` (clamped); False where there is none to move."""
        ...


class SliderKeys(QObject):
    """Installed on the application for ``window``; removed with it."""

    def __init__(self, window: QWidget, target: Steppable) -> None:
        super().__init__(window)
        self.window, self.target = window, target
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def remove(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        delta = STEPS.get(Qt.Key(event.key()))
        if delta is None or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        focus = QApplication.focusWidget() or watched
        if not isinstance(watched, QWidget) or watched is not focus:
            return False  # once per key: at the widget with the focus, not at each of its parents
        if not (focus is self.window or self.window.isAncestorOf(focus)):
            return False
        if isinstance(focus, _EDITORS) or (isinstance(focus, QAbstractItemView) and abs(delta) == 1):
            return False
        return self.target.step_slider(delta)
