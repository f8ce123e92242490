"""Saved views and view links for the window: ``.zarrview`` files read and written on a worker,
the command line and ``zarrview://`` link of the view shown put on the clipboard.

The window gives it what it needs as callables (open a view, say a line) and the view to
write; it reaches into nothing of the window.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QWidget

from ..scheduling import Done, Driver, Task, Tasks, WorkerPool, call_job
from ..viewing.export.files import write_bytes
from ..viewing.export.plane import PlaneSpec
from ..viewing.snippets import snippet
from ..viewing.saved_views import (MOST_BYTES, SCHEME, SUFFIX, SavedView, ViewFileError, command_line, from_json,
                                   link, saved_from_link, to_json)
from .bridge import post


class ViewSharing:
    def __init__(self, pool: WorkerPool, open_view: Callable[[SavedView], None], say: Callable[[str], None],
                 refused: Callable[[str], None], remember: Callable[[str], None], parent: QWidget) -> None:
        self.open_view, self.say, self.refused, self.parent = open_view, say, refused, parent
        #: a view file opened goes to File ▸ Open Recent, as a store does
        self.remember = remember
        #: files read and written, each on its own (a key per file)
        self.files: Driver[Task[Any], Task[Any], Done[Any]] = Driver(
            Tasks(), pool, self._done, post=lambda fn: post(fn, parent), name="view files")

    def open(self, location: str) -> None:
        """Open the view a ``zarrview://`` link or a ``.zarrview`` file holds (the file read on a
        worker); a view that cannot be read is said where the data would be."""
        if location.startswith(f"{SCHEME}://"):
            try:
                saved = saved_from_link(location)
            except ViewFileError as e:
                self.refused(str(e))
                return
            self.open_view(saved)
            return
        path = Path(location).expanduser()
        self.say(f"Opening the view {path}…")
        self.files.ask(Task(call_job(lambda: read_view(path), label=f"read {path}"), about=("read", path)), key=object())

    def save(self, saved: SavedView | None) -> None:
        """Ask where, then write ``saved`` there (on a worker)."""
        if saved is None:
            self.say("Open a store and select a node to save its view.")
            return
        name = (saved.view.node.rstrip("/").rsplit("/", 1)[-1] or "view") + SUFFIX
        path, _ = QFileDialog.getSaveFileName(self.parent, "Save View", name, f"zarrview views (*{SUFFIX})")
        if not path:
            return
        target = Path(path if path.endswith(SUFFIX) else path + SUFFIX)
        data = to_json(saved).encode()
        self.files.ask(Task(call_job(lambda: write_bytes(target, data), label=f"write {target}"),
                            about=("write", target)), key=object())

    def copy(self, saved: SavedView | None, command: bool) -> None:
        """The view's command line (or link) on the clipboard, and said."""
        if saved is None:
            self.say("Open a store and select a node to copy its view.")
            return
        text = command_line(saved) if command else link(saved)
        QGuiApplication.clipboard().setText(text)
        self.say(f"Copied: {text}")

    def copy_snippet(self, spec: PlaneSpec | None, location: str, options: dict[str, Any], kind: str) -> None:
        """Python that reads the plane shown with ``kind``'s library, made on a worker (the
        xarray one reads the group's metadata), put on the clipboard; why not, where it cannot."""
        if spec is None:
            self.say("Show an array's plane to copy the Python that reads it.")
            return
        self.files.ask(Task(call_job(lambda: snippet(spec, location, options, kind), label=f"{kind} snippet"),
                            about=("snippet", kind)), key=object())

    def _done(self, done: Done[Any]) -> None:
        (what, path), answer = done.task.about, done.answer
        if answer.cancelled:
            return
        if what == "snippet":
            if answer.error is not None:
                self.say(f"No {path} snippet: {answer.error}")
            else:
                QGuiApplication.clipboard().setText(str(answer.value))
                self.say(f"Copied the Python that reads the plane shown with {path} ({len(str(answer.value).splitlines())} lines)")
        elif answer.error is not None:
            self.refused(str(answer.error))
        elif what == "read" and isinstance(answer.value, SavedView):
            self.remember(str(path))
            self.open_view(answer.value)
        else:
            self.say(f"Saved the view to {path}")


def read_view(path: Path) -> SavedView:
    """The view saved in ``path``; ``ViewFileError`` naming it where it cannot be read."""
    try:
        with open(path, "rb") as f:
            text = f.read(MOST_BYTES + 1)
    except OSError as e:
        raise ViewFileError(f"cannot read the view {path}: {e.strerror or e}") from None
    return from_json(text, str(path))
