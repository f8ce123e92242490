"""Arrays on rectilinear chunk grids written by zarr-python 3.4.2 itself (in the Python 3.12
oracle venv), with zarr-python's own read of each and the chunk sizes it reads and stores
by: the truth the rectilinear tests of the library, the command line and the window use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import py312_env

WRITER = Path(__file__).parent / "zarrlib" / "rectilinear_writer.py"

#: every array the writer makes (a test asserts the manifest names exactly these)
NAMES = ("line", "plane", "cube", "runs", "shrunk", "grown", "empty", "bool", "int8", "uint64", "complex", "strings",
         "transposed", "sharded", "sharded_cube", "sharded_start", "sharded_edge", "sharded_gzip",
         "sharded_crc", "sharded_transposed",
         "line_expanded", "line_overflow", "plane_mixed", "runs_split", "cube_int")


def write_arrays(out: Path) -> dict[str, Any]:
    """Write the arrays into ``out``: per name, ``read`` and ``write`` chunk sizes (clipped to
    the shape, per dimension) and ``sharded``. Skips the calling test where no 3.12 oracle can
    be built."""
    python = py312_env.require(py312_env.ZARR_342)
    py312_env.run(python, WRITER, str(out), timeout=300)
    manifest: dict[str, Any] = json.loads((out / "manifest.json").read_text())
    return manifest
