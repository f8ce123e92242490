"""Qt runs offscreen in tests; settings go to a throwaway location."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# moto's request recorder (the S3 tests count requests with it) writes where this says, read once
# when moto is first imported: into the temporary folder, removed at exit, never into the checkout
_MOTO_RECORDING = os.path.join(tempfile.gettempdir(), f"zarrview-tests-moto-{os.getpid()}")
os.environ.setdefault("MOTO_RECORDER_FILEPATH", _MOTO_RECORDING)


@atexit.register
def _remove_moto_recording() -> None:
    with contextlib.suppress(OSError):
        os.remove(_MOTO_RECORDING)


# Writers that use dask (ngff-zarr, xarray) compute on its threads, and dask switches the cyclic
# collector back on for the length of a compute: a collection it starts on one of its threads can
# find a window an earlier app test left in a cycle and destroy it there, and Qt's destructor then
# waits for the GIL that thread holds (the app keeps collection on the GUI thread: gui_gc.py). The
# tests' own dask work is small; computed on the calling thread, it collects only there.
with contextlib.suppress(ImportError):
    import dask

    dask.config.set(scheduler="synchronous")


from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

TESTS = Path(__file__).resolve().parent

# Stores written by oracles in the 3.12 venv, once a run: a session fixture is one definition
# only where it is defined (or imported) here; imported into each test module, it would be one
# definition per module, each writing its stores again.
from anndata_stores import anndata_million, anndata_v2, anndata_v3, anndata_v3_default  # noqa: E402,F401
from spatialdata_stores import spatialdata_written  # noqa: E402,F401

#: the tests that take a minute or more, run first: begun last, one of them would leave the
#: other worker idle for its length at the end of the run
LONGEST = ("tests/app/test_monkey.py::test_a_seeded_monkey_keeps_the_window_healthy",
           "tests/test_packaging.py::test_bundle_builds_runs_the_demo_and_leaves_test_packages_out")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    first = [item for item in items if item.nodeid in LONGEST]
    if first:
        items[:] = first + [item for item in items if item.nodeid not in LONGEST]


@pytest.fixture(scope="session")
def files_over_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One loopback HTTP server (ranges, no listing) for every file the conformance tests write
    or read: URL paths are absolute file paths below the test roots."""
    from http_server import serve

    roots = (tmp_path_factory.getbasetemp(), TESTS / "data")
    with serve(Path("/"), roots=roots) as (url, _):
        yield url


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_gui_thread() -> Iterator[None]:
    """Once an app test has moved cyclic garbage collection to the GUI thread (as the app does),
    tests that run no event loop still collect, here on the main thread, after each test."""
    yield
    gui_gc = sys.modules.get("zarrview.app.gui_gc")
    collector = gui_gc.installed() if gui_gc is not None else None
    if collector is not None:
        collector.collect()


@pytest.fixture
def worker_pool() -> Iterator[Any]:
    """The pool a widget made without the window runs its jobs on (a widget takes one; it makes
    none of its own), closed after the test."""
    from zarrview.scheduling import WorkerPool

    pool = WorkerPool(threads=2)
    yield pool
    pool.close()
