"""The tree model's listing of a group meeting rows opened by path while it ran."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPersistentModelIndex  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app.bridge import init_bridge  # noqa: E402
from zarrview.app.tree.model import HierarchyModel  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402


class GatedListing(LocalStore):
    """Listing waits for the test to open the gate, so a path can be opened meanwhile."""

    gate = threading.Event()

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        self.gate.wait(10)
        return super().list_dir(prefix)


@pytest.fixture
def hierarchy(tmp_path: Path) -> Path:
    g = zarr.open_group(tmp_path / "h.zarr", mode="w", zarr_format=3)
    for name in ("alpha", "delta", "kappa", "omega"):
        g.create_array(name, shape=(2,), chunks=(2,), dtype="u1")
    return tmp_path / "h.zarr"


def names(model: HierarchyModel, parent) -> list[str]:  # type: ignore[no-untyped-def]
    return [model.index(r, 0, parent).data() for r in range(model.rowCount(parent))]


def test_rows_opened_by_path_survive_the_listing(qtbot, hierarchy: Path, worker_pool) -> None:  # type: ignore[no-untyped-def]
    init_bridge()
    GatedListing.gate.clear()
    store = GatedListing(hierarchy)
    root = zl.open(store)
    model = HierarchyModel(worker_pool)
    top = model.add_store(root, "h.zarr")
    model.fetchMore(top)  # the listing starts on a worker and waits at the gate
    assert names(model, top) == ["Loading…"]
    opened = model.insert_path(top.row(), [root["kappa"]])  # File ▸ Go to Path while it lists
    kept = QPersistentModelIndex(opened)
    GatedListing.gate.set()
    qtbot.waitUntil(lambda: "Loading…" not in names(model, top) and model.rowCount(top) > 2, timeout=5000)
    assert names(model, top) == ["alpha", "delta", "kappa", "omega"]  # once each, in order
    assert kept.isValid() and kept.row() == 2  # the path-opened row itself, still there
    assert model.node(model.index(2, 0, top)).path == "/kappa"


class Unlistable(LocalStore):
    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        raise zl.StoreError(f"cannot list {self.key_url(prefix)}: permission denied")


def test_a_listing_error_shows_its_message_not_a_type_name(qtbot, hierarchy: Path, worker_pool) -> None:  # type: ignore[no-untyped-def]
    init_bridge()
    model = HierarchyModel(worker_pool)
    top = model.add_store(zl.open(Unlistable(hierarchy)), "h.zarr")
    model.fetchMore(top)
    qtbot.waitUntil(lambda: names(model, top) == ["(cannot list)"], timeout=5000)
    item = model.item(model.index(0, 0, top))
    assert item.error is not None and item.error.startswith("cannot list") and "permission denied" in item.error


def test_store_url_is_what_the_opened_store_reports(hierarchy: Path, tmp_path: Path) -> None:
    """How the window knows a location is open already, without opening it again."""
    import shutil

    from zarrview.zarrlib.storage import store_url

    archive = Path(shutil.make_archive(str(tmp_path / "h"), "zip", hierarchy))
    for location in (str(hierarchy), str(hierarchy) + "/", f"{hierarchy.parent}/./{hierarchy.name}",
                     f"file://{hierarchy}", str(archive)):
        root = zl.open(location)
        assert store_url(location) == root.url, location
        root.store.close()
    assert store_url("https://example.org/data.zarr") == "https://example.org/data.zarr"
