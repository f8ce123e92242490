"""SpatialData stores written by spatialdata 0.8 itself (in the Python 3.12 oracle venv), with
what spatialdata reads back from them: the truth the SpatialData tests of the view models and
of the window compare against (``viewing/spatialdata_writer.py`` says what is written)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import py312_env
from written_once import written_once

WRITER = Path(__file__).parent / "viewing" / "spatialdata_writer.py"
SPATIALDATA = ("spatialdata==0.8.0", "pyarrow")


def write_stores(out: Path) -> dict[str, Any]:
    """Write the stores into ``out``; for each (``blobs``, ``moved``, ``v01``, ``geoarrow``) spatialdata's
    element listing, transformation matrices, coordinates and array files, with ``root``.
    Skips the calling test where no 3.12 oracle can be built."""
    python = py312_env.require(SPATIALDATA)
    py312_env.run(python, WRITER, str(out), timeout=300)
    doc: dict[str, Any] = json.loads((out / "expected.json").read_text())
    doc["root"] = out
    return doc


@pytest.fixture(scope="session")
def spatialdata_written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The stores, written once a test run for every module that reads them (registered in the
    root ``conftest.py``, so one definition serves them all); tests only read them."""
    out = written_once(tmp_path_factory, "spatialdata", write_stores)
    doc: dict[str, Any] = json.loads((out / "expected.json").read_text())
    doc["root"] = out
    return doc
