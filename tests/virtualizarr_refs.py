"""Kerchunk reference sets written by VirtualiZarr 2.8 (in the Python 3.12 oracle venv) of a
NetCDF4 file, with what h5py and xarray read from the file itself: the truth the reference
tests compare against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import py312_env

#: VirtualiZarr 2.8 and what its NetCDF4 parser and kerchunk JSON/Parquet writers import
VIRTUALIZARR = py312_env.ORACLES

WRITER = Path(__file__).parent / "zarrlib" / "virtualizarr_writer.py"


def write_reference_sets(out: Path) -> dict[str, Any]:
    """Write the NetCDF file and its reference sets into ``out``; the writer's ``expected.json``
    with ``root`` (``out``) added. Skips the calling test where no 3.12 oracle can be built."""
    python = py312_env.require(VIRTUALIZARR)
    py312_env.run(python, WRITER, str(out), timeout=300)
    doc: dict[str, Any] = json.loads((out / "expected.json").read_text())
    doc["root"] = out
    return doc
