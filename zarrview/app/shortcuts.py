"""Help ▸ Keyboard Shortcuts: every action of the window that has a shortcut, read from the menus
themselves, so the list cannot drift from what the keys do."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QMainWindow, QMenu, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str]]:
    """(where ▸ what, keys) for each menu entry with a shortcut, then the window's own actions."""
    rows: list[tuple[str, str]] = []

    def visit(menu: QMenu, trail: str) -> None:
        for act in menu.actions():
            name = act.text().replace("&", "").rstrip("…")
            submenu = act.menu()  # a QObject to Qt's bindings: a QMenu in a menu bar
            if isinstance(submenu, QMenu):
                visit(submenu, f"{trail} ▸ {name}")
            elif not act.shortcut().isEmpty():
                rows.append((f"{trail} ▸ {name}", act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            visit(menu, top.text().replace("&", ""))
    rows += [(act.text().replace("&", ""), act.shortcut().toString(QKeySequence.SequenceFormat.NativeText))
             for act in window.actions() if not act.shortcut().isEmpty()]
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, window: QMainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.verticalHeader().hide()
        for r, (what, keys) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(what))
            self.table.setItem(r, 1, QTableWidgetItem(keys))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(460, 360)
