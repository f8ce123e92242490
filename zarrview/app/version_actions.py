"""File ▸ Open Version: the window's side of the Icechunk version picker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog

from ..viewing.versions import icechunk_store, location_at
from .version_dialog import VersionDialog

if TYPE_CHECKING:
    from .window_host import VersionHost


def pick_version(w: VersionHost) -> VersionDialog | None:
    """Ask which version of the current store's repository to open, and open it beside the
    others; the new store shares the open one's authorised prefixes. Returns the dialog (tests
    drive it) or None where the current store is not an Icechunk repository."""
    node = w.current_store()
    store = icechunk_store(node) if node is not None else None
    if store is None:
        w.say("Select a store that is an Icechunk repository to pick one of its versions")
        return None
    dialog = VersionDialog(store, w.pool, w.window())
    dialog.finished.connect(lambda result: _open_chosen(w, dialog, result))
    dialog.open()
    return dialog


def _open_chosen(w: VersionHost, dialog: VersionDialog, result: int) -> None:
    version = dialog.chosen() if result == QDialog.DialogCode.Accepted else None
    store = dialog.store
    if version is not None:
        w.open_location(location_at(store, version), authorize=store.policy)
