"""The keys that step the image's sliders wherever the focus is in the window: Left/Right one
index, Page Up/Page Down ten, on the slider last moved (else the first one shown), as in Fiji
and napari, where a z or time step never needs a click on the slider first.

A key reaches the window when the widget with the focus leaves it unused: the image, a label,
Page Up/Down on a button. A text field, a spin box or a combo box keeps the keys it edits with.
The tree, which has the focus after a node is picked, keeps Left and Right (they close and open
groups) but gives Page Up/Down to the slider (``PageKeys``, a filter on the tree alone). The
window asks ``slider_step`` what a key means; nothing filters the application's events, so a
slider step costs no Python call per event.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit

#: widgets a text is typed or picked in: every key is theirs, used or not
EDITORS = (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit, QComboBox)
#: key -> indices stepped
STEPS = {Qt.Key.Key_Right: 1, Qt.Key.Key_Left: -1, Qt.Key.Key_PageDown: 10, Qt.Key.Key_PageUp: -10}


def slider_step(event: QKeyEvent) -> int | None:
    """The indices a key press steps the slider by, or None for a key that is no step (one with
    Ctrl, Alt or Shift is another command's, and none is while a text is typed)."""
    if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier or isinstance(QApplication.focusWidget(), EDITORS):
        return None
    return STEPS.get(Qt.Key(event.key()))


class PageKeys(QObject):
    """On a widget that moves with Page Up/Down itself (the tree): those keys ``step`` the slider
    instead, where there is one to step (``step`` returns whether it moved one)."""

    def __init__(self, watched: QObject, step: Callable[[int], bool]) -> None:
        super().__init__(watched)
        self.step = step
        watched.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        delta = slider_step(event)
        return delta is not None and abs(delta) > 1 and self.step(delta)
