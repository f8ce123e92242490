"""View ▸ Compare in the window: a second array picked in the tree shows beside the first at the
matching plane (by coordinate value where both have coordinates), follows its slider, reads its
value under the cursor, and draws A − B with statistics equal to numpy's; two versions of one
array in an Icechunk repository get the chunks written between them outlined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xarray as xr
import zarr

pytest.importorskip("pytestqt")

from compare_datasets import daily_a, half_degree_b  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)
from zarrview.app.window import MainWindow  # noqa: E402

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    y, x = np.mgrid[0:60, 0:90]
    a = np.stack([np.sin(x / 7.0) * np.cos(y / 5.0) * 100 + t for t in range(4)]).astype("f4")
    b = a.copy()
    b[:, 10:25, 30:50] += 20
    b[2, 0, 0] = np.nan
    g = zarr.open_group(tmp_path / "pair.zarr", mode="w", zarr_format=3)
    g.create_array("a", shape=a.shape, chunks=(1, 30, 30), dtype="f4", fill_value=0)[:] = a
    g.create_array("b", shape=b.shape, chunks=(1, 20, 45), dtype="f4", fill_value=0)[:] = b
    return tmp_path / "pair.zarr", a, b


def action(w: MainWindow, name: str) -> Any:
    return next(a for a in w.findChildren(type(w.menuBar().actions()[0])) if a.objectName() == name)


def select(qtbot: Any, w: MainWindow, name: str) -> None:
    top = w.model.index(w.model.rowCount() - 1, 0)
    w.tree.expand(w.proxy.mapFromSource(top))
    qtbot.waitUntil(lambda: w.model.rowCount(top) > 0 and not w.model.item(top).loading, timeout=10000)
    row = next(r for r in range(w.model.rowCount(top)) if w.model.index(r, 0, top).data() == name)
    w.tree.setCurrentIndex(w.proxy.mapFromSource(w.model.index(row, 0, top)))
    _settle(qtbot, w)


def comparing(qtbot: Any, w: MainWindow, store: Path, index: int = 0) -> MainWindow:
    """``w`` showing /a at plane ``index``, compared with /b."""
    w.open_location(f"{store}::/a")
    _settle(qtbot, w)
    w.data.set_index(0, index)
    _settle(qtbot, w)
    action(w, "compare").trigger()
    select(qtbot, w, "b")
    return w


def test_compare_follows_a_and_differs_as_numpy_says(qtbot: Any, window: MainWindow,  # noqa: F811
                                                     pair: tuple[Path, np.ndarray, np.ndarray]) -> None:
    store, a, b = pair
    w = comparing(qtbot, window, store, index=1)
    assert w.data.array is not None and w.data.array.path == "/a"  # A stays
    qtbot.waitUntil(lambda: w.compare.b.state is not None and w.compare.b.state.indices[0] == 1, timeout=10000)
    w.data.set_index(0, 2)  # A's slider: B follows
    qtbot.waitUntil(lambda: w.compare.b.state is not None and w.compare.b.state.indices[0] == 2, timeout=10000)
    _settle(qtbot, w)
    w.data.pixel_hovered.emit(12, 33)
    assert f"{b[2, 12, 33]:.6g}"[:5] in w.compare.readout.text(), w.compare.readout.text()

    w.compare.mode.setCurrentText("A − B")
    qtbot.waitUntil(lambda: w.compare.diff.array is not None and "differ" in w.compare.stats.text(), timeout=15000)
    _settle(qtbot, w)
    want = a[2].astype(np.float64) - b[2].astype(np.float64)
    got = w.compare.diff.array[...]
    np.testing.assert_array_equal(got, want)  # NaN where B is NaN, A − B elsewhere
    differ = int(np.sum(~((a[2] == b[2]) | (np.isnan(a[2]) & np.isnan(b[2])))))
    text = w.compare.stats.text()
    assert f"{differ:,} of {a[2].size:,} differ" in text, text
    assert f"RMSE {np.sqrt(np.nanmean(want ** 2)):.6g}" in text, text
    assert f"max |A−B| {np.nanmax(np.abs(want)):.6g}" in text, text
    lo, hi = w.compare.diff.state.contrast
    assert lo == -hi and hi > 0  # centred on 0

    w.compare.whole.click()
    qtbot.waitUntil(lambda: w.compare.whole_stats.text().startswith("Whole arrays: max"), timeout=20000)
    every = a.astype(np.float64) - b.astype(np.float64)
    all_differ = int(np.sum(~((a == b) | (np.isnan(a) & np.isnan(b)))))
    text = w.compare.whole_stats.text()
    assert f"{all_differ:,} of {a.size:,} differ" in text, text
    assert f"RMSE {np.sqrt(np.nanmean(every ** 2)):.6g}" in text, text
    assert f"max |A−B| {np.nanmax(np.abs(every)):.6g}" in text, text


def test_planes_are_linked_by_coordinate_value(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """A daily on a 1° grid, B 12-hourly on a 0.5° grid from two days later: B shows the time
    nearest A's, as xarray's nearest selection finds it, and a time B lacks is said."""
    a_path = daily_a(tmp_path / "a.zarr")
    b_path = half_degree_b(tmp_path / "b.zarr")
    ds_a, ds_b = xr.open_zarr(a_path), xr.open_zarr(b_path)
    w = window
    w.open_location(f"{a_path}::/t")
    _settle(qtbot, w)
    w.open_location(f"{b_path}")
    _settle(qtbot, w)
    top_a = w.model.index(0, 0)
    w.tree.expand(w.proxy.mapFromSource(top_a))
    qtbot.waitUntil(lambda: w.model.rowCount(top_a) > 0 and not w.model.item(top_a).loading, timeout=10000)
    row = next(r for r in range(w.model.rowCount(top_a)) if w.model.index(r, 0, top_a).data() == "t")
    w.tree.setCurrentIndex(w.proxy.mapFromSource(w.model.index(row, 0, top_a)))
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.state is not None and w.data.state.cf is not None, timeout=10000)
    w.data.set_index(0, 4)  # 2001-01-05
    _settle(qtbot, w)
    action(w, "compare").trigger()
    select(qtbot, w, "t")  # B's t (the last store's)
    want = int(np.argmin(np.abs(ds_b.time.values - ds_a.time.values[4])))
    qtbot.waitUntil(lambda: w.compare.b.state is not None and w.compare.b.state.cf is not None, timeout=10000)
    w.compare.follow()
    qtbot.waitUntil(lambda: w.compare.b.state.indices[0] == want, timeout=10000)
    assert "time" in w.compare.matched.text()
    w.data.set_index(0, 0)  # 2001-01-01: before B's first time
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: "not matched" in w.compare.matched.text(), timeout=10000)


def test_two_versions_outline_the_chunks_written_between_them(qtbot: Any, window: MainWindow,  # noqa: F811
                                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    """Main and another version of one array of a repository written by icechunk: the chunks
    icechunk's own diff says were written between them are outlined on both, where the plane
    shows them."""
    from icechunk_repos import repositories

    import zarrview.zarrlib as zl

    repos = repositories(tmp_path_factory)
    repo = "repo2.icechunk"
    versions = repos["repos"][repo]["versions"]
    chosen = None
    for entry in repos["changes"][repo]["pairs"]:
        truth = entry.get("icechunk") or entry.get("model")
        if entry["from"] != "branch.main" or entry["to"] == "branch.main":
            continue
        for path, chunks in truth["updated_chunks"].items():
            if path in versions["branch.main"]["arrays"] and path in versions[entry["to"]]["arrays"] \
                    and np.load(versions["branch.main"]["arrays"][path]).ndim == 2:
                chosen = (entry["to"], path, [tuple(c) for c in chunks])
                break
        if chosen:
            break
    assert chosen is not None, "the history writes chunks of a 2-D array between main and another version"
    version, path, chunks = chosen
    location = repos["root"] / repo
    w = window
    w.open_location(str(location), authorize=[repos["prefix"]])
    _settle(qtbot, w)
    w.open_location(f"{location}@{version}", authorize=[repos["prefix"]])
    _settle(qtbot, w)

    def pick(row: int) -> None:
        top = w.model.index(row, 0)
        root = w.model.node(top)
        assert isinstance(root, zl.Group)
        index = w.model.reveal(top, [root[path.strip("/")]])
        w.tree.setCurrentIndex(w.proxy.mapFromSource(index))
        _settle(qtbot, w)

    pick(0)
    assert w.data.array is not None and w.data.array.path == path
    action(w, "compare").trigger()
    pick(1)
    qtbot.waitUntil(lambda: w.data.chunk_grid.changed_chunks != (), timeout=15000)
    assert sorted(w.data.chunk_grid.changed_chunks) == sorted(chunks)
    assert sorted(w.compare.b.chunk_grid.changed_chunks) == sorted(chunks)
    arr = w.data.array
    stored = arr.meta.stored_shape
    want = sorted((c[0] * stored[0], min((c[0] + 1) * stored[0], arr.shape[0]),
                   c[1] * stored[1], min((c[1] + 1) * stored[1], arr.shape[1])) for c in chunks)
    assert sorted(w.data.chunk_grid.changed_boxes) == want
    assert f"{len(chunks):,} chunk" in w.compare.versions_note.text()


def test_blend_draws_b_over_a(qtbot: Any, window: MainWindow,  # noqa: F811
                              pair: tuple[Path, np.ndarray, np.ndarray]) -> None:
    """Blend: B's own frame, as B's pane draws it, over A's image at the opacity the slider sets."""
    store, a, b = pair
    w = comparing(qtbot, window, store)
    w.compare.mode.setCurrentText("Blend")
    _settle(qtbot, w)
    base, over = w.compare.blend
    qtbot.waitUntil(lambda: base.rendered is not None or over.rendered is not None, timeout=10000)
    shown = [i for i in (base, over) if i.rendered is not None]
    assert all(i.isVisible() for i in shown)
    b_pane = w.compare.b.image
    assert {id(i.rendered) for i in shown} <= {id(b_pane.getImageItem().rendered), id(b_pane.detail.rendered)}
    w.compare.opacity.setValue(30)
    assert all(abs(i.opacity() - 0.3) < 1e-9 for i in (base, over))
    assert "30 % of B" in w.compare.stats.text()
    w.compare.mode.setCurrentText("Side by side")
    assert not any(i.isVisible() for i in (base, over))
