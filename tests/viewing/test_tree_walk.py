"""The tree filter's walk, without Qt: every group listed breadth first, with
progress, a cancel token, a bound on the nodes seen, and a note on what it could not list; run
by a driver as ``WalkModel``, it fills the index, reports the nodes seen while it is the newest,
and is walked once."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Answer, Driver, WorkerPool
from zarrview.viewing.tree.index import NodeIndex
from zarrview.viewing.tree.walk import WalkAsk, Walked, Walking, WalkModel, WalkRequest, walk
from zarrview.zarrlib.storage import LocalStore


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = zarr.open_group(tmp_path / "w.zarr", mode="w", zarr_format=3)
    for g in ("a", "b"):
        sub = root.create_group(g)
        for i in range(3):
            sub.create_group(f"g{i}").create_array("leaf", shape=(2,), dtype="u1")
    root.create_array("top", shape=(1,), dtype="u1")
    return tmp_path / "w.zarr"


def test_lists_every_group_breadth_first_with_progress(store: Path) -> None:
    seen: list[tuple[str, list[str]]] = []
    counts: list[int] = []
    out = walk([zl.open(store)], lambda which, g, m: seen.append((g.path, [n.name for n in m])), zl.CancelToken(),
               counts.append)
    assert [p for p, _ in seen] == ["/", "/a", "/b", "/a/g0", "/a/g1", "/a/g2", "/b/g0", "/b/g1", "/b/g2"]
    assert seen[0][1] == ["a", "b", "top"] and seen[3][1] == ["leaf"]
    assert out.nodes == 3 + 3 + 3 + 6 == counts[-1] and counts == sorted(counts)
    assert not (out.cancelled or out.truncated or out.unlisted or out.errors) and out.note() is None


def test_stops_at_the_bound_and_says_so(store: Path) -> None:
    seen: list[str] = []
    out = walk([zl.open(store)], lambda which, g, m: seen.append(g.path), zl.CancelToken(), limit=5)
    assert seen == ["/", "/a"] and out.truncated and out.nodes == 6
    assert out.note(5) == "Search stopped at 5 nodes: the filter covers only those"


def test_cancel_stops_between_groups(store: Path) -> None:
    token = zl.CancelToken()
    seen: list[str] = []

    def listed(which: int, group: zl.Group, members: list[zl.Node]) -> None:
        seen.append(group.path)
        if group.path == "/a":
            token.cancel()

    out = walk([zl.open(store)], listed, token)
    assert seen == ["/", "/a"] and out.cancelled and out.nodes == 6
    assert out.note() is not None and out.note().startswith("Search cancelled after 6 nodes")


class CannotList(LocalStore):
    """A plain HTTP server, as far as listing goes."""

    @property
    def can_list(self) -> bool:
        return False


def test_a_store_that_cannot_list_is_named_in_the_note(store: Path) -> None:
    seen: list[str] = []
    out = walk([zl.open(CannotList(store))], lambda which, g, m: seen.append(g.path), zl.CancelToken())
    assert seen == [] and out.unlisted == ["/"] and out.nodes == 0
    assert "cannot be listed" in (out.note() or "") and "listed nodes" in (out.note() or "")


def test_the_walk_imports_no_qt() -> None:
    import subprocess
    import sys

    code = "import sys, zarrview.viewing.tree.walk; sys.exit(any(m.startswith('PySide6') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


class Walks:
    """A driver of ``WalkModel`` whose answers and reports are queued as the GUI thread gets them."""

    def __init__(self) -> None:
        self.pool = WorkerPool(threads=2)
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.news: list[Walking | Walked] = []
        self.driver: Driver[WalkAsk, WalkRequest, Walking | Walked] = Driver(
            WalkModel(every_s=0.0), self.pool, self.news.append, post=self.inbox.put, name="filter walk")

    def settle(self) -> None:
        while self.driver.busy() or not self.inbox.empty():
            self.inbox.get(timeout=30)()
        assert self.pool.wait_until_idle(30)
        while not self.inbox.empty():
            self.inbox.get_nowait()()


@pytest.fixture
def walks() -> Iterator[Walks]:
    out = Walks()
    yield out
    out.pool.close()


def test_the_walk_model_fills_the_index_reports_as_it_goes_and_walks_once(walks: Walks, store: Path) -> None:
    root = zl.open(store)
    assert isinstance(root, zl.Group)
    index = NodeIndex([root])
    walks.driver.show(WalkAsk([root], index))
    walks.settle()
    *going, walked = walks.news
    assert isinstance(walked, Walked) and walked.error is None and walked.outcome is not None
    assert walked.outcome.nodes == len(index) == 15 and not walked.outcome.cancelled
    assert going and all(isinstance(n, Walking) for n in going)
    assert [n.nodes for n in going] == sorted(n.nodes for n in going)  # type: ignore[union-attr]
    assert walks.driver.requests == 1  # the same ask wants nothing more once walked


def test_a_newer_walk_owns_the_news(walks: Walks, store: Path) -> None:
    root = zl.open(store)
    assert isinstance(root, zl.Group)
    walks.driver.show(WalkAsk([root], NodeIndex([root])))
    newer = NodeIndex([root])
    walks.driver.show(WalkAsk([root], newer))
    walks.settle()
    walked = [n for n in walks.news if isinstance(n, Walked)]
    assert len(walked) == 1 and walked[0].outcome is not None and walked[0].outcome.nodes == len(newer) == 15


def test_a_walk_cancelled_before_it_began_says_so_and_a_failed_one_its_error(store: Path) -> None:
    model = WalkModel()
    root = zl.open(store)
    assert isinstance(root, zl.Group)
    request = model.request(WalkAsk([root], NodeIndex([root])))
    assert request is not None
    cancelled = model.apply(request, Answer(1, "filter walk", cancelled=True))
    assert cancelled.outcome is not None and cancelled.outcome.cancelled
    assert cancelled.outcome.note() == "Search cancelled after 0 nodes: the filter covers the nodes listed so far"
    failed = model.apply(request, Answer(2, "filter walk", error=OSError("gone")))
    assert failed.outcome is None and isinstance(failed.error, OSError)
    assert model.request(request.ask) is None  # answered: not walked again
