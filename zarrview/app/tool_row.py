"""The image's tools as buttons above it (sections, profile, statistics, series at a point), as
silx and Fiji keep theirs in a toolbar: the buttons are the View menu's own actions, so a button
and its menu entry are checked together, and the row shows only while an image is shown."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget


class ToolRow(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(2)
        self.buttons: dict[str, QToolButton] = {}

    def add(self, action: QAction, text: str) -> QToolButton:
        """A button for ``action`` labelled ``text`` (the menu's longer words are its tooltip)."""
        action.setIconText(text)  # a tool button shows its action's icon text, kept when the action changes
        button = QToolButton(self)
        button.setDefaultAction(action)
        button.setToolTip(f"{action.text().replace('&', '')}: {action.toolTip()}" if action.toolTip() else text)
        self.row.addWidget(button)
        self.buttons[text] = button
        return button
