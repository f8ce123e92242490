"""Where bundled data (icons, the demo dataset) lives, however zarrview was installed.

``resources/`` at the top of the repository is installed as the package ``zarrview.resources``
(see pyproject), so a wheel and an editable install find it through importlib; a PyInstaller
bundle unpacks it under ``sys._MEIPASS``; a bare checkout run without installing falls back to
the folder beside the package.
"""

from __future__ import annotations

import sys
from importlib import resources as importlib_resources
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2] / "resources"


def resources_dir() -> Path:
    candidates: list[Path] = []
    if hasattr(sys, "_MEIPASS"):
        candidates.append(Path(sys._MEIPASS) / "zarrview" / "resources")
    try:
        found = importlib_resources.files("zarrview.resources")
        candidates.extend(Path(str(p)) for p in getattr(found, "_paths", [found]))
    except (ModuleNotFoundError, TypeError):
        pass
    candidates.append(_CHECKOUT)
    for c in candidates:
        if (c / "icons" / "zarrview.svg").is_file():
            return c
    return _CHECKOUT


def demo_path() -> Path:
    return resources_dir() / "demo.zarr"


def icon_path(name: str) -> Path:
    """``resources/icons/<name>``: ``zarrview.svg``, ``zarrview-256.png``, ``group.svg``, …"""
    return resources_dir() / "icons" / name
