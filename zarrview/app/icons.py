"""The application and tree icons, loaded once from the bundled resources."""

from __future__ import annotations

from functools import cache

from PySide6.QtGui import QIcon

from .resources import icon_path

APP_ID = "io.github.zarrview.zarrview"  # desktop file, AppStream id and D-Bus-style name
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


@cache
def app_icon() -> QIcon:
    icon = QIcon()
    for size in SIZES:
        icon.addFile(str(icon_path(f"zarrview-{size}.png")))
    return icon


@cache
def node_icon(kind: str) -> QIcon:
    """``group``, ``array``, ``sharded`` or ``error``."""
    return QIcon(str(icon_path(f"{kind}.svg")))
