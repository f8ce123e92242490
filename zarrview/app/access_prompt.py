"""The question a person answers when a store points outside itself.

A reference set (or another store that follows pointers) refuses reads outside its own folder
or host with ``AccessDeniedError``; the read records that as a chunk failure and goes on, so no
worker ever waits for a person. Here, on the GUI thread, the window asks whether to allow the
prefix, widens the store's ``AccessPolicy`` and reads again; a prefix remembered in QSettings
is allowed at once, in later sessions too (and given to stores as they open).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QCheckBox, QMessageBox, QWidget

from ..zarrlib.storage.access import AccessDeniedError, AccessPolicy

__all__ = ["AccessPrompt", "ask_allow", "SETTINGS_KEY"]

SETTINGS_KEY = "access/allowed_prefixes"
#: (parent, store name, prefix) -> (allow, remember)
Question = Callable[[QWidget | None, str, str], tuple[bool, bool]]


def ask_allow(parent: QWidget | None, name: str, prefix: str) -> tuple[bool, bool]:
    """A modal Yes/No question with a "Remember for this prefix" box."""
    box = QMessageBox(QMessageBox.Icon.Question, "Allow reads?",
                      f"{name} points to files at {prefix}. Allow reads from {prefix}?",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    remember = QCheckBox("Remember for this prefix")
    box.setCheckBox(remember)
    return box.exec() == QMessageBox.StandardButton.Yes, remember.isChecked()


class AccessPrompt:
    """Asks once per store and prefix; a refusal stands until the store is opened again."""

    def __init__(self, parent: QWidget, settings: QSettings, question: Question = ask_allow) -> None:
        self.parent = parent
        self.settings = settings
        self.question = question
        self._asked: set[tuple[int, str]] = set()

    def remembered(self) -> list[str]:
        value = self.settings.value(SETTINGS_KEY, [])
        if isinstance(value, str):  # QSettings gives a one-element list back as a string
            value = [value]
        return [str(v) for v in value if v] if isinstance(value, list | tuple) else []

    def policy(self) -> AccessPolicy:
        """A policy for a store being opened: the prefixes remembered so far."""
        return AccessPolicy(self.remembered())

    def denied(self, error: AccessDeniedError, store: object, reread: Callable[[], None]) -> None:
        """A read of ``store`` was refused: allow a remembered prefix and read again, or ask
        (after this call returns: the answer being handled is not held up by the dialog)."""
        policy = getattr(store, "policy", None)
        if not isinstance(policy, AccessPolicy):
            return  # not a store that can be widened
        if policy.permits(error.url):  # a read that started before the policy was widened
            reread()
            return
        key = (id(policy), error.prefix)
        if key in self._asked:
            return  # asked already: refused, or the question is open
        self._asked.add(key)
        if error.prefix in self.remembered():
            policy.allow(error.prefix)
            reread()
            return
        name = str(getattr(store, "name", "") or PurePosixPath(str(getattr(store, "url", "the store"))).name)
        QTimer.singleShot(0, lambda: self._ask(name, error.prefix, policy, reread))

    def _ask(self, name: str, prefix: str, policy: AccessPolicy, reread: Callable[[], None]) -> None:
        allow, remember = self.question(self.parent, name, prefix)
        if not allow:
            return
        policy.allow(prefix)
        if remember and prefix not in self.remembered():
            self.settings.setValue(SETTINGS_KEY, [*self.remembered(), prefix])
        reread()
