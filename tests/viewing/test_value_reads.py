"""The values shown as text as a view model on a driver (``value_reads.ValuesModel``), without
Qt: a 0-d array's value and a table's pages read as the image decodes them, only the newest ask
answered, and what the status bar says of a read, a cancel, an error and chunks that could not
be read (a refused one handed on for the window to ask about)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing.cf.table_plane import TablePlane
from zarrview.viewing.cf.value_reads import TABLE_PAGE, PageAsk, ValueAsk, ValuesModel, ValuesShown
from zarrview.zarrlib import ChunkFailure, StoreError
from zarrview.zarrlib.storage.access import AccessDeniedError

from driven import Driven


class Run(Driven):
    def __init__(self) -> None:
        self.model = ValuesModel()
        super().__init__(self.model, "values")
        self.shown: list[ValuesShown] = self.drawn

    def answered(self) -> list[ValuesShown]:
        return [s for s in self.shown if s.answered]


@pytest.fixture
def run() -> Iterator[Run]:
    r = Run()
    yield r
    r.close()


class Refusing:
    """A 2-D array whose reads wait for ``gate``, then fail (``error``) or miss a chunk."""

    path = "/t"
    shape = (5000, 3)
    ndim = 2
    dtype = np.dtype("i4")

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.gate = threading.Event()
        self.gate.set()

    def read(self, selection: Any, **read: Any) -> np.ndarray:
        assert self.gate.wait(10)
        read["cancel"].raise_if_cancelled()
        if self.error is not None:
            raise self.error
        refused = AccessDeniedError("/t/c/0/0: 403 Forbidden", "https://example.org/t/c/0/0", "https://example.org/")
        read["failures"].append(ChunkFailure("/t/c/0/0", (0, 0), ((0, 10), (0, 3)), "403 Forbidden", refused))
        return np.zeros((10, 3), np.int32)[selection[0]]


def test_a_value_and_pages_as_stored(run: Run, tmp_path: Path) -> None:
    root = zarr.open_group(tmp_path / "v.zarr", mode="w")
    root.create_array("scalar", shape=(), dtype="f8")[...] = 2.5
    grid = np.arange(5000 * 4, dtype="i4").reshape(5000, 4)
    root.create_array("grid", shape=grid.shape, chunks=(1000, 4), dtype="i4")[...] = grid
    scalar = zl.open(f"{tmp_path / 'v.zarr'}::/scalar")
    run.driver.show(ValueAsk(scalar))  # type: ignore[arg-type]
    run.drain()
    (value,) = run.answered()
    assert value.text == "2.5" and value.page is None and value.error is None
    assert run.shown[0].said == ("Reading /scalar[]…",) and not run.shown[0].answered
    assert value.said[0].startswith("Read /scalar[] in ") and value.said[0].endswith(" ms")
    arr = zl.open(f"{tmp_path / 'v.zarr'}::/grid")
    plane = TablePlane(arr, 0, 1)  # type: ignore[arg-type]
    table = object()
    run.driver.show(PageAsk(plane, 0, table))
    run.drain()
    page = run.answered()[-1]
    assert page.request.ask.table is table  # type: ignore[union-attr]
    assert page.page is not None and page.page.shape == (TABLE_PAGE, 4)
    np.testing.assert_array_equal(page.page, grid[:TABLE_PAGE])
    run.driver.show(PageAsk(plane, 4000, table))
    run.drain()
    last = run.answered()[-1]
    assert last.page is not None
    np.testing.assert_array_equal(last.page, grid[4000:])  # the last page is as long as the rows left


def test_only_the_newest_ask_is_answered_and_a_cancel_says_so(run: Run) -> None:
    arr = Refusing()
    arr.gate.clear()
    plane = TablePlane(arr, 0, 1)  # type: ignore[arg-type]
    run.driver.show(PageAsk(plane, 0, "old table"))
    run.driver.show(PageAsk(plane, 0, "new table"))
    arr.gate.set()
    run.drain()
    (page,) = run.answered()
    assert page.request.ask.table == "new table"  # type: ignore[union-attr]
    assert page.said[1] == "1 chunk of /t[0:2000, :] could not be read: 403 Forbidden"
    assert isinstance(page.refused, AccessDeniedError) and len(page.failures) == 1
    arr.gate.clear()
    run.driver.show(PageAsk(plane, 2000, "new table"))
    run.driver.cancel()
    arr.gate.set()
    run.drain()
    cancelled = run.answered()[-1]
    assert cancelled.said == ("Cancelled reading /t[2000:4000, :]",) and cancelled.page is None


def test_an_error_is_shown_instead_of_the_values(run: Run) -> None:
    arr = Refusing(StoreError("/t/c/0/0: connection reset"))
    run.driver.show(PageAsk(TablePlane(arr, 0, 1), 0))  # type: ignore[arg-type]
    run.drain()
    (failed,) = run.answered()
    assert failed.said == ("Error: /t/c/0/0: connection reset",)
    assert isinstance(failed.error, StoreError) and failed.page is None and failed.text is None
    assert not run.driver.busy()
