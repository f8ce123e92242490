"""Deliver results from worker threads to the GUI thread, as superqt does.

A callable posted here runs on the GUI thread through a queued signal; if the receiving
widget was deleted meanwhile, the call is silently dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

try:
    from shiboken6 import isValid
except ImportError:  # pragma: no cover
    def isValid(obj: object) -> bool:  # noqa: N802
        return True


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


def run_in_thread(work: Callable[[], Any], done: Callable[[Any, BaseException | None], None],
                  owner: QObject | None = None) -> None:
    """Run ``work`` on a daemon thread, then ``done(result, error)`` on the GUI thread."""
    def target() -> None:
        try:
            result, error = work(), None
        except BaseException as e:  # delivered, never raised in the thread
            result, error = None, e
        post(lambda: done(result, error), owner)

    threading.Thread(target=target, daemon=True, name="zarrview-io").start()
