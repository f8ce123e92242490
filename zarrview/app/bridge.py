"""Deliver results from worker threads to the GUI thread, as superqt does.

A callable posted here runs on the GUI thread through a queued signal; if the receiving
widget was deleted meanwhile, the call is silently dropped. Every driver the app makes
(``scheduling.Driver``) posts its answers this way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from shiboken6 import isValid



class _Invoker(QObject):
    call = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.call.connect(self._run, Qt.ConnectionType.QueuedConnection)

    @Slot(object)
    def _run(self, fn: Callable[[], Any]) -> None:
        fn()


_invoker: _Invoker | None = None


def init_bridge() -> None:
    """Create the invoker on the GUI thread (call once, after QApplication exists)."""
    global _invoker
    if _invoker is None:
        _invoker = _Invoker()


def post(fn: Callable[[], Any], owner: QObject | None = None) -> None:
    """Run ``fn`` on the GUI thread; dropped if ``owner`` no longer exists."""
    assert _invoker is not None, "init_bridge() first"

    def guarded() -> None:
        if owner is None or isValid(owner):
            fn()

    _invoker.call.emit(guarded)
