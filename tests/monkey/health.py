"""What "healthy" means after every step of the monkey, and the instruments that tell.

- Nothing raised outside a reported error: Python exceptions in Qt slots (``sys.excepthook``)
  and on threads (``threading.excepthook``), Qt's critical and fatal messages, and errors logged
  by zarrview (the pool logs a job that failed outside its lane) are all recorded as problems.
  What the window reports instead (status bar, data view message, export failure boxes) must be
  a sentence, not a traceback or a Python type name.
- Every job answered exactly once: the pool's tally (``zarrview.scheduling.Tally``) has no job
  left unanswered once the pool is idle, and no answer delivered twice.
- No I/O on the GUI thread: a file of the stores opened or a folder of them listed from the GUI
  thread is a problem (an audit hook sees ``open``, ``os.listdir`` and ``os.scandir``).
- The GUI thread keeps answering: a 10 ms timer on it; the longest gap between its ticks while
  an action and its aftermath ran is that action's stall.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtCore import QEventLoop, QMessageLogContext, QtMsgType, QTimer, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QMessageBox

from zarrview.scheduling import WorkerPool

#: a Python exception's class name or a traceback where a person should read a sentence
TYPE_NAME = re.compile(r"Traceback|\b[A-Z]\w*(Error|Exception)\b")
#: Qt's warnings that say nothing about the window (the offscreen platform has no fonts or screens)
BENIGN_QT = re.compile(r"offscreen|QFont|propagateSizeHints|This plugin does not support")


@dataclass
class Problems:
    """Everything that went wrong, each with the step it happened in."""

    items: list[str] = field(default_factory=list)
    #: Qt warnings (reported, not failures: Qt says many harmless things)
    warnings: list[str] = field(default_factory=list)
    step: str = "setup"

    def add(self, what: str) -> None:
        self.items.append(f"[{self.step}] {what}")


class Watch:
    """Installs the hooks that record what was raised or logged, until ``close``."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self._old_except = sys.excepthook
        self._old_thread = threading.excepthook
        sys.excepthook = self._except
        threading.excepthook = self._thread_except
        self._old_qt = qInstallMessageHandler(self._qt_message)
        self._log = _Recorder(problems)
        logging.getLogger("zarrview").addHandler(self._log)

    def _except(self, kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        self.problems.add("raised: " + "".join(traceback.format_exception(kind, value, tb)))

    def _thread_except(self, args: Any) -> None:
        self.problems.add(f"raised on thread {args.thread}: "
                          + "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)))

    def _qt_message(self, kind: QtMsgType, _context: QMessageLogContext, message: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            self.problems.add(f"Qt: {message}")
        elif kind == QtMsgType.QtWarningMsg and not BENIGN_QT.search(message):
            self.problems.warnings.append(f"[{self.problems.step}] {message}")

    def close(self) -> None:
        sys.excepthook = self._old_except
        threading.excepthook = self._old_thread
        qInstallMessageHandler(self._old_qt)
        logging.getLogger("zarrview").removeHandler(self._log)


#: the one audit hook of the process (hooks cannot be removed) hands events to this watcher
_io_watch: GuiThreadIO | None = None
_IO_EVENTS = {"open", "os.listdir", "os.scandir"}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    watch = _io_watch
    if watch is not None and event in _IO_EVENTS and threading.current_thread() is threading.main_thread():
        watch.seen(event, args[0] if args else None)


class GuiThreadIO:
    """Records every file under ``folder`` opened, and every folder under it listed, on the GUI
    thread while installed (the window reads its stores only on workers)."""

    hooked = False

    def __init__(self, folder: Path, problems: Problems) -> None:
        global _io_watch
        self.folder = os.fspath(folder)
        self.problems = problems
        if not GuiThreadIO.hooked:
            sys.addaudithook(_audit)
            GuiThreadIO.hooked = True
        _io_watch = self

    def seen(self, event: str, path: Any) -> None:
        if isinstance(path, (str, bytes, os.PathLike)):
            name = os.fsdecode(path)
            if name.startswith(self.folder):
                self.problems.add(f"{event} of {name} on the GUI thread")

    def close(self) -> None:
        global _io_watch
        if _io_watch is self:
            _io_watch = None


class _Recorder(logging.Handler):
    def __init__(self, problems: Problems) -> None:
        super().__init__(logging.ERROR)
        self.problems = problems

    def emit(self, record: logging.LogRecord) -> None:
        self.problems.add(f"logged: {self.format(record)}")


class Heartbeat:
    """A timer on the GUI thread every 10 ms; ``stall`` is the longest gap between its ticks
    since ``restart`` (and since the last tick, so a stall still going on counts)."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.worst = 0.0
        self.timer = QTimer()
        self.timer.setTimerType(self.timer.timerType().PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.timer.start(10)

    def _tick(self) -> None:
        now = time.monotonic()
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def restart(self) -> None:
        self.last = time.monotonic()
        self.worst = 0.0

    def stall(self) -> float:
        return max(self.worst, time.monotonic() - self.last)


def pump(seconds: float) -> None:
    """Run the event loop for ``seconds``, as the app's own loop runs (qtbot.wait does the same):
    a bare ``processEvents`` outside a loop never deletes what ``deleteLater`` marked, and
    widgets a person could no longer reach would stay on screen for the monkey to use."""
    loop = QEventLoop()
    QTimer.singleShot(max(0, round(seconds * 1000)), loop.quit)
    loop.exec()


def wait_until(done: Callable[[], bool], timeout: float) -> bool:
    """Run the event loop until ``done()`` or ``timeout`` seconds; whether it came true."""
    end = time.monotonic() + timeout
    while not done():
        if time.monotonic() > end:
            return False
        pump(0.005)
    return True


def check_answers(pool: WorkerPool, problems: Problems, timeout: float = 20.0) -> None:
    """Every job submitted has been answered once the pool has drained, and none twice. Jobs
    keep coming (a prefetch after each frame), so the check waits for a moment with none open."""
    end = time.monotonic() + timeout
    while True:
        unanswered = pool.tally.unanswered()
        if not unanswered:
            break
        if time.monotonic() > end:
            problems.add(f"jobs never answered after {timeout:.0f} s: {unanswered}")
            break
        pool.wait_until_idle(0.5)
        pump(0.01)
    if pool.tally.twice:
        problems.add(f"answers delivered twice: {pool.tally.twice}")
        pool.tally.twice.clear()


def check_sentences(texts: dict[str, str], problems: Problems) -> None:
    """What the window says (status bar, messages) reads as a sentence, not a traceback."""
    for where, text in texts.items():
        if TYPE_NAME.search(text):
            problems.add(f"{where} shows a Python type name or traceback: {text!r}")


def close_message_boxes(problems: Problems) -> list[str]:
    """Every message box open (an export that failed): its text is checked, then it is closed
    as a person would; the texts, for the caller to count."""
    seen = []
    for w in QApplication.topLevelWidgets():
        if isinstance(w, QMessageBox) and w.isVisible():
            seen.append(w.text())
            check_sentences({f"message box {w.windowTitle()!r}": w.text()}, problems)
            w.close()
    return seen
