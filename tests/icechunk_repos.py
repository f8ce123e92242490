"""Icechunk repositories written by icechunk 2.3 itself (in the Python 3.12 oracle venv), with
what icechunk and zarr-python read back from every version: the truth the Icechunk tests of
the library and of the window compare against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import py312_env
from written_once import written_once

WRITER = Path(__file__).parent / "zarrlib" / "icechunk_writer.py"


def write_repositories(out: Path) -> dict[str, Any]:
    """Write the repositories into ``out``; their refs, ancestry and per-version arrays (.npy
    paths), with ``root`` (``out``) and ``prefix`` (the URL prefix virtual chunks point into).
    Skips the calling test where no 3.12 oracle can be built."""
    python = py312_env.require(py312_env.ICECHUNK)
    py312_env.run(python, WRITER, str(out), timeout=300)
    doc: dict[str, Any] = json.loads((out / "expected.json").read_text())
    doc["root"] = out
    return doc


def repositories(factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The repositories as ``write_repositories`` leaves them, written once a test run."""
    out = written_once(factory, "icechunk", lambda folder: write_repositories(folder))
    doc: dict[str, Any] = json.loads((out / "expected.json").read_text())
    doc["root"] = out
    return doc
