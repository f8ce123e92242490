"""Where bundled data lives, whether zarrview runs from a checkout, a wheel or a bundle."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    candidates = [
        Path(__file__).resolve().parents[2] / "resources",  # a checkout / editable install
        Path(__file__).resolve().parents[1] / "resources",  # installed package data
    ]
    if hasattr(sys, "_MEIPASS"):
        candidates.insert(0, Path(sys._MEIPASS) / "resources")
    for c in candidates:
        if (c / "demo.zarr").is_dir():
            return c
    return candidates[0]


def demo_path() -> Path:
    return resources_dir() / "demo.zarr"
