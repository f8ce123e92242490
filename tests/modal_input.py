"""Filling in a modal dialog as a person would: its ``exec`` blocks the caller, so what to type
is scheduled first and done once the dialog is the active modal widget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox


def answer_dialog(kind: type, fill: Callable[[Any], None], button: QDialogButtonBox.StandardButton,
                  done: list[bool] | None = None) -> None:
    """Once a ``kind`` dialog is open: ``fill`` it, press ``button``, append True to ``done``."""
    def when_open() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, kind):
            QTimer.singleShot(10, when_open)
            return
        fill(dialog)
        dialog.findChild(QDialogButtonBox).button(button).click()
        if done is not None:
            done.append(True)

    QTimer.singleShot(0, when_open)
