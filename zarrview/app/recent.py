"""File ▸ Open Recent: the last locations opened, with the storage options each was opened with.

Options are remembered so that a recent S3 or HTTP location reopens as it was (an endpoint, a
timeout); credentials never are: they would sit in plain text in the settings file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from ..zarrlib.storage.location import CHAINS, split_node_path
from ..zarrlib.storage.credentials import is_secret

MAX_RECENT = 10


class RecentLocations:
    def __init__(self, settings: QSettings, menu: QMenu, reopen: Callable[..., None], owner: QWidget) -> None:
        self.settings = settings
        self.menu = menu
        self.reopen = reopen  # reopen(location, **options)
        self.owner = owner
        self.fill()

    def fill(self) -> None:
        self.menu.clear()
        for loc in self.locations():
            act = QAction(loc, self.owner)
            act.triggered.connect(lambda _=False, loc=loc: self.reopen(loc, **self.options(loc)))
            self.menu.addAction(act)
        self.menu.setEnabled(bool(self.locations()))

    def locations(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]

    def options(self, location: str) -> dict[str, Any]:
        saved = self._saved_options()
        options = saved.get(location)
        return options if isinstance(options, dict) else {}

    def remember(self, location: str, options: dict[str, Any] | None = None) -> None:
        location = absolute_location(location)
        recent = ([location] + [r for r in self.locations() if r != location])[:MAX_RECENT]
        self.settings.setValue("recent", recent)
        saved = {k: v for k, v in self._saved_options().items() if k in recent}
        kept = {k: v for k, v in (options or {}).items() if not is_secret(k, v)}
        if kept:
            saved[location] = kept
        else:
            saved.pop(location, None)
        self.settings.setValue("recent_options", json.dumps(saved))
        self.fill()

    def _saved_options(self) -> dict[str, Any]:
        try:
            saved = json.loads(str(self.settings.value("recent_options", "{}")))
        except json.JSONDecodeError:
            return {}
        return saved if isinstance(saved, dict) else {}


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def absolute_location(location: str) -> str:
    """A local path made absolute (after ``zip::``/``reference::``, before ``::/node``): a store
    opened from one working folder reopens from any. URLs are kept as they are."""
    chain = next((c for c in CHAINS if location.startswith(c)), "")
    store, node = split_node_path(location[len(chain):])
    if not store or _SCHEME.match(store):
        return location
    absolute = os.path.abspath(os.path.expanduser(store))
    return chain + absolute + ("" if node == "/" else "::" + node)
