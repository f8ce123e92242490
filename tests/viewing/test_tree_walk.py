"""The tree filter's walk, without Qt: every group listed breadth first, with
progress, a cancel token, a bound on the nodes seen, and a note on what it could not list."""

from __future__ import annotations

from pathlib import Path

import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.viewing.tree.walk import walk
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
