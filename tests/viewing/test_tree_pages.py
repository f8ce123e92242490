"""A group's members a page at a time, without Qt: each ask reads one page and hands on the
listing that gives the rest, a remote group's first page is cut short, a store that cannot list
gives what the group's metadata names, and groups asked under their own keys list side by side."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Answer, Driver, WorkerPool
from zarrview.viewing.tree import pages as tree_pages
from zarrview.viewing.tree.pages import Page, PageAsk, PageRequest, Pages, PagesModel
from zarrview.zarrlib import ReadCancelled
from zarrview.zarrlib.storage import LocalStore


class Listing:
    """A driver of ``PagesModel`` whose answers are queued as the GUI thread would get them."""

    def __init__(self) -> None:
        self.pool = WorkerPool(threads=2)
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.pages: list[Page] = []
        self.driver: Driver[PageAsk, PageRequest, Page] = Driver(
            PagesModel(), self.pool, self.pages.append, post=self.inbox.put, name="tree pages")

    def read(self, *asks: PageAsk) -> list[Page]:
        """Each ask under its group's key, as the tree asks; the pages in the order answered."""
        start = len(self.pages)
        for ask in asks:
            self.driver.ask(self.driver.model.request(ask), key=id(ask.group))
        while self.driver.busy():
            self.inbox.get(timeout=30)()
        return self.pages[start:]

    def close(self) -> None:
        self.pool.close()


@pytest.fixture
def listing() -> Iterator[Listing]:
    out = Listing()
    yield out
    out.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = zarr.open_group(tmp_path / "p.zarr", mode="w", zarr_format=3)
    for i in range(7):
        root.create_array(f"a{i}", shape=(2,), dtype="u1")
    other = root.create_group("other")
    other.create_array("x", shape=(1,), dtype="u1")
    return tmp_path / "p.zarr"


def names(page: Page) -> list[str]:
    return [m.name for m in page.members]


def test_each_ask_reads_one_page_and_hands_on_the_rest(listing: Listing, store: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_pages, "PAGE", 3)
    group = zl.open(store)
    assert isinstance(group, zl.Group)
    seen: list[str] = []
    ask = PageAsk(group, about="row")
    while True:
        (page,) = listing.read(ask)
        assert page.ask is ask and page.error is None and page.first == (ask.pages is None)
        seen += names(page)
        if page.pages is None:
            break
        ask = PageAsk(group, page.pages, "row")
    assert sorted(seen) == sorted([f"a{i}" for i in range(7)] + ["other"])
    assert len(listing.pages) == 4  # 3 + 3 + 2, then the end of the listing: nothing, no more pages
    assert listing.pages[-1].members == [] and listing.pages[-1].pages is None


class Remote(LocalStore):
    """A local store that says batches are cheaper, as a network store does."""

    prefers_batches = True


def test_a_remote_groups_first_page_is_cut_short(listing: Listing, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_pages, "PAGE", 5)
    monkeypatch.setattr(tree_pages, "FIRST_REMOTE", 2)
    group = zl.open(Remote(str(store)))
    assert isinstance(group, zl.Group)
    (first,) = listing.read(PageAsk(group))
    assert len(first.members) == 2 and first.pages is not None and first.first
    seen = names(first)
    pages: Pages | None = first.pages
    while pages is not None:  # the rest of the first page, then the next pages
        (page,) = listing.read(PageAsk(group, pages))
        assert not page.first and len(page.members) <= 5
        seen, pages = seen + names(page), page.pages
    assert sorted(seen) == sorted([f"a{i}" for i in range(7)] + ["other"])


class CannotList(LocalStore):
    """A plain HTTP server, as far as listing goes."""

    @property
    def can_list(self) -> bool:
        return False


def test_a_group_that_cannot_be_listed_gives_what_its_metadata_names(listing: Listing, tmp_path: Path) -> None:
    root = zarr.open_group(tmp_path / "ad.zarr", mode="w", zarr_format=3,
                           attributes={"encoding-type": "anndata", "encoding-version": "0.1.0"})
    root.create_array("X", shape=(2, 2), dtype="f4")
    root.create_group("obs")
    group = zl.open(CannotList(str(tmp_path / "ad.zarr")))
    assert isinstance(group, zl.Group) and not group.can_list_members
    (page,) = listing.read(PageAsk(group))
    assert sorted(names(page)) == ["X", "obs"] and page.pages is None and page.error is None


def test_groups_list_side_by_side(listing: Listing, store: Path) -> None:
    root = zl.open(store)
    assert isinstance(root, zl.Group)
    other = root["other"]
    assert isinstance(other, zl.Group)
    got = listing.read(PageAsk(root, about="root"), PageAsk(other, about="other"))
    by = {page.ask.about: names(page) for page in got}
    assert by["other"] == ["x"] and len(by["root"]) == 8


def test_a_cancelled_page_says_the_listing_was_cancelled(store: Path) -> None:
    model = PagesModel()
    group = zl.open(store)
    assert isinstance(group, zl.Group)
    request = model.request(PageAsk(group))
    page = model.apply(request, Answer(1, "members of /", cancelled=True))
    assert isinstance(page.error, ReadCancelled) and page.members == [] and page.pages is None
    failed = model.apply(request, Answer(2, "members of /", error=OSError("gone")))
    assert isinstance(failed.error, OSError) and page.first
