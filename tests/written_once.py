"""Folders an oracle writes (Icechunk repositories, AnnData and SpatialData stores) built once a
test run, whichever test worker asks first.

A session fixture is per worker process: with two workers, a store that takes an oracle half a
minute to write was written twice, by chance of which tests each worker drew. The first worker
to ask writes the folder under a lock in the run's shared temporary folder; the others wait for
it and read the same files. Tests only read these folders (a test that edits one copies it).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this test run shared by its workers (a worker's own folder lies
    in it); without workers, the run's own."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def written_once(factory: pytest.TempPathFactory, name: str, write: Callable[[Path], object]) -> Path:
    """The folder ``name``, ``write`` having filled it once this run. Where ``write`` fails
    (or skips, where no oracle can be built) the folder is left unmarked, so the next asker
    tries again and fails or skips in the same way."""
    shared = run_folder(factory) / "written-once"
    shared.mkdir(exist_ok=True)
    folder, done = shared / name, shared / f"{name}.done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            write(folder)
            done.touch()
    return folder
