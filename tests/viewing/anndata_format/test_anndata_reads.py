"""The AnnData views' reads as view models on a driver, without Qt: the sparse block in view
(``BlockModel``), an embedding's points (``PointsModel``) and the pages of the rows on screen
(``PagesModel``). Each says what the status bar says, hands over only the newest answer, reads
nothing again for what is drawn or being read, and keeps what a read finishing meanwhile read."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from zarrview.viewing.anndata.embedding import Points
from zarrview.viewing.anndata.paging import PagedTable, PagesModel, PagesShown, RowsInView
from zarrview.viewing.anndata.reads import BlockAsk, BlockModel, PointsAsk, PointsModel, Said
from zarrview.zarrlib import ChunkFailure, StoreError

from driven import Driven


class Run(Driven):
    """A driver of ``model`` on a pool, its answers queued as the GUI thread gets them."""

    def said(self) -> list[str]:
        return [d.said for d in self.drawn if d.said is not None]


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    made: list[Run] = []
    yield made
    for run in made:
        run.close()


@dataclass
class Matrix:
    """A sparse matrix's block reads: each waits for ``gate`` and is listed."""

    dense: np.ndarray
    path: str = "/X"
    gate: threading.Event = field(default_factory=threading.Event)
    reads: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    fail: bool = False

    def __post_init__(self) -> None:
        self.gate.set()

    @property
    def shape(self) -> tuple[int, int]:
        return self.dense.shape

    def block(self, rows: tuple[int, int], cols: tuple[int, int], **read: Any) -> np.ndarray:
        assert {"cancel", "cache", "failures"} <= set(read)
        self.reads.append((rows, cols))
        assert self.gate.wait(10)
        if self.fail:
            raise StoreError("/X/data/c/0: connection reset")
        if rows == (0, 2):
            read["failures"].append(ChunkFailure("/X/data/c/1", (0, 1), (rows, cols), "gone"))
        return self.dense[rows[0]:rows[1], cols[0]:cols[1]]


def test_the_block_in_view_is_read_once_and_only_the_newest_is_drawn(runs: list[Run]) -> None:
    model = BlockModel()
    run = Run(model)
    runs.append(run)
    matrix: Any = Matrix(np.arange(100.0).reshape(10, 10))
    matrix.gate.clear()
    run.driver.show(BlockAsk(matrix, (0, 4), (0, 4)))
    run.driver.show(BlockAsk(matrix, (0, 4), (0, 4)))  # being read: nothing new
    run.driver.show(BlockAsk(matrix, (3, 3), (0, 4)))  # empty: the read goes on
    assert run.driver.requests == 1 and run.said() == ["Reading /X[0:4, 0:4]…"]
    run.driver.show(BlockAsk(matrix, (2, 6), (1, 5)))  # panned: the newest replaces it
    matrix.gate.set()
    run.drain()
    answered = [d for d in run.drawn if d.answered]
    assert len(answered) == 1 and answered[0].value is not None  # the block panned away from is never drawn
    block = answered[0].value
    assert (block.rows, block.cols) == ((2, 6), (1, 5))
    np.testing.assert_array_equal(block.values, matrix.dense[2:6, 1:5])
    assert answered[0].said.startswith("Read /X[2:6, 1:5] in ") and answered[0].said.endswith(" ms")
    run.driver.show(BlockAsk(matrix, (2, 6), (1, 5)))  # drawn: nothing read
    run.driver.show(BlockAsk(matrix, (0, 2), (0, 2)))
    run.drain()
    assert run.driver.requests == 3
    assert run.drawn[-1].said.endswith(" ms; 1 chunks could not be read")


def test_a_block_that_cannot_be_read_says_why_and_is_read_again_when_asked(runs: list[Run]) -> None:
    model = BlockModel()
    run = Run(model)
    runs.append(run)
    matrix: Any = Matrix(np.ones((4, 4)), fail=True)
    ask = BlockAsk(matrix, (0, 4), (0, 4))
    run.driver.show(ask)
    run.drain()
    last: Said[Any] = run.drawn[-1]
    assert last.answered and last.value is None
    assert last.said == "Cannot read /X[0:4, 0:4]: /X/data/c/0: connection reset"
    matrix.fail = False
    run.driver.show(BlockAsk(matrix, (0, 4), (0, 4)))
    run.drain()
    assert run.driver.requests == 2 and run.drawn[-1].value is not None
    model.clear()  # another matrix: the block drawn is not counted as drawn
    run.driver.clear()
    run.driver.show(BlockAsk(matrix, (0, 4), (0, 4)))
    run.drain()
    assert run.driver.requests == 3


@dataclass
class Embedding:
    path: str = "/obsm/X_umap"
    shape: tuple[int, int] = (10, 2)

    def read(self, selection: Any, **read: Any) -> np.ndarray:
        rows = np.arange(10, dtype=np.float32)
        return np.stack([rows, rows * 2], axis=1)[selection]


def test_each_ask_of_points_is_read_anew_and_says_how_many(runs: list[Run], monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrview.viewing.anndata.jobs as jobs

    def points(array: Any, dims: tuple[int, int], colour: Any, max_points: int, **read: Any) -> Points:
        x = np.arange(0, 10, 2, dtype=np.float32)
        return Points(x, x * 2, np.zeros((5, 3), np.uint8), step=2, total=10)

    monkeypatch.setattr(jobs, "read_points", points)
    model = PointsModel()
    run = Run(model)
    runs.append(run)
    array = Embedding()
    run.driver.show(PointsAsk(array, (0, 1)))
    run.driver.show(PointsAsk(array, (1, 0)))  # another pair: the first is never drawn
    run.drain()
    answered = [d for d in run.drawn if d.answered]
    assert len(answered) == 1 and answered[0].value is not None and answered[0].value.total == 10
    assert answered[0].said.startswith("Read 5 points of /obsm/X_umap in ")
    assert answered[0].said.endswith(" ms, every 2th of 10 cells")
    assert run.said()[:2] == ["Reading points of /obsm/X_umap…"] * 2
    assert not run.driver.busy()


def test_pages_of_the_rows_on_screen(runs: list[Run]) -> None:
    gate = threading.Event()
    reads: list[tuple[int, int]] = []

    def read_page(start: int, stop: int, **read: Any) -> list[int]:
        reads.append((start, stop))
        assert gate.wait(10)
        return list(range(start, stop))

    model = PagesModel()
    run = Run(model)
    runs.append(run)
    table: PagedTable[list[int]] = PagedTable(1000, read_page, "/obs", page=100)
    run.driver.show(RowsInView(table, 0, 50))
    run.driver.show(RowsInView(table, 10, 60))  # the same page: the read goes on
    run.driver.show(RowsInView(table, -5, -1))  # rows that need nothing: the read goes on, and its page is kept
    assert run.driver.requests == 1
    gate.set()
    run.drain()
    shown: list[PagesShown] = run.drawn
    assert shown[0].said == "Reading rows 0–100 of /obs…" and shown[0].spans == ()
    assert shown[-1].spans == ((0, 100),) and shown[-1].again and shown[-1].said is not None
    assert shown[-1].said.startswith("Read rows 0–100 of /obs in ")
    assert table.get(50) == list(range(100))
    gate.clear()
    run.driver.show(RowsInView(table, 250, 320))
    run.driver.show(RowsInView(table, 720, 760))  # scrolled on: only the newest pages are read
    gate.set()
    run.drain()
    assert table.get(250) is None and table.get(750) == list(range(700, 800))
    assert [s.spans for s in run.drawn if s.spans] == [((0, 100),), ((700, 800),)]
    other: PagedTable[list[int]] = PagedTable(10, lambda a, b, **_: list(range(a, b)), "/var", page=100)
    gate.clear()
    run.driver.show(RowsInView(table, 900, 950))
    run.driver.show(RowsInView(other, 0, 9))  # another table: what the first reads is dropped
    gate.set()
    run.drain()
    assert run.drawn[-1].table is other and run.drawn[-1].spans == ((0, 10),)
    assert all(s.table is other for s in run.drawn[-2:]) and table.get(900) is None


def test_a_page_that_cannot_be_read_is_named(runs: list[Run]) -> None:
    def read_page(start: int, stop: int, **read: Any) -> list[int]:
        raise StoreError("/obs/x/c/0: connection reset")

    run = Run(PagesModel())
    runs.append(run)
    table: PagedTable[list[int]] = PagedTable(100, read_page, "/obs", page=100)
    run.driver.show(RowsInView(table, 0, 10))
    run.drain()
    last: PagesShown = run.drawn[-1]
    assert last.said == "Cannot read rows 0–100 of /obs: /obs/x/c/0: connection reset"
    assert last.spans == ((0, 100),) and not last.again
    assert table.error(5) == "/obs/x/c/0: connection reset"
    run.driver.show(RowsInView(table, 0, 10))  # not read again
    assert run.driver.requests == 1
