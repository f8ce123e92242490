"""The window as a person uses it, offscreen: open, select, slide, and see exactly the data."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication, QSettings, Qt  # noqa: E402

from zarrview.app.bridge import init_bridge  # noqa: E402
from zarrview.app.gui_gc import collect_garbage_on_gui_thread  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.scheduling import WorkerPool  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402

from store_wrappers import CountingStore  # noqa: E402
from drawn import drawn

DATA = np.arange(6 * 40 * 50, dtype="f4").reshape(6, 40, 50)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("app") / "s.zarr"
    g = zarr.open_group(root, mode="w")
    a = g.create_array("vol", shape=DATA.shape, chunks=(1, 16, 16), dtype="f4", dimension_names=["t", "y", "x"])
    a[...] = DATA
    g.create_group("sub").create_array("line", shape=(30,), chunks=(7,), dtype="i2")[...] = np.arange(30)
    (root / "broken").mkdir()
    (root / "broken" / "zarr.json").write_text("{not json")
    return root


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    QCoreApplication.setOrganizationName("zarrview-tests")
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path))
    init_bridge()
    collect_garbage_on_gui_thread()
    w = MainWindow(WorkerPool())
    qtbot.addWidget(w)
    w.show()
    yield w
    w.pool.close()


def _settle(qtbot, w: MainWindow) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(w.is_settled, timeout=60_000)
    qtbot.wait(50)
    qtbot.waitUntil(w.is_settled, timeout=60_000)


def plotted(qtbot, w: MainWindow, length: int | None = None) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The values of the window's line plot, once it holds a line (of ``length`` values where
    given). A line is read after its array's CF attributes, by a second job whose answer can
    reach the GUI thread after the pool has gone idle: the plot is waited for, not assumed."""
    curve = w.data.plot.getPlotItem().listDataItems()[0]
    qtbot.waitUntil(lambda: curve.yData is not None and (len(curve.yData) > 0 if length is None
                                                         else len(curve.yData) == length), timeout=15000)
    return np.asarray(curve.yData)


def test_model_passes_qtmodeltester(qtmodeltester, qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(str(store))
    _settle(qtbot, window)
    model = window.model
    root = model.index(0, 0)
    for row in range(model.rowCount(root)):
        child = model.index(row, 0, root)
        if model.canFetchMore(child):
            model.fetchMore(child)
    _settle(qtbot, window)
    qtmodeltester.check(model)
    names = [model.data(model.index(r, 0, root)) for r in range(model.rowCount(root))]
    assert names == ["broken", "sub", "vol"]
    assert model.item(model.index(0, 0, root)).error  # shown in place, the rest still works


def test_selected_slice_shows_exact_values_and_slider_updates(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(f"{store}::/vol", plane={0: 2})
    _settle(qtbot, window)
    shown = drawn(window.data)
    np.testing.assert_array_equal(shown, DATA[2])
    window.data.set_index(0, 5)
    _settle(qtbot, window)
    np.testing.assert_array_equal(drawn(window.data), DATA[5])
    window.data.plane.x_combo.setCurrentIndex(0)  # show (y, t): columns are time
    _settle(qtbot, window)
    np.testing.assert_array_equal(drawn(window.data), DATA[:, :, 0].T)


def test_stale_results_never_show(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(f"{store}::/vol")
    _settle(qtbot, window)
    shown: list[tuple[object, object]] = []
    window.data.loaded.connect(lambda: shown.append((window.data.scene.detail.plane_key, window.data.state.plane_key())))
    for t in (1, 3, 4, 0, 5):
        window.data.set_index(0, t)
    _settle(qtbot, window)
    assert shown and all(tile == wanted for tile, wanted in shown)  # never a plane the sliders have left
    np.testing.assert_array_equal(drawn(window.data), DATA[5])


def test_one_dimensional_arrays_plot(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(f"{store}::/sub/line")
    _settle(qtbot, window)
    np.testing.assert_array_equal(plotted(qtbot, window, 30), np.arange(30))


def test_bad_location_shows_error_and_app_keeps_working(qtbot, window: MainWindow, store: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(str(tmp_path / "missing.zarr"))
    _settle(qtbot, window)
    assert "does not exist" in window.status_label.text()
    window.open_location(f"{store}::/vol")
    _settle(qtbot, window)
    np.testing.assert_array_equal(drawn(window.data), DATA[0])


def test_event_loop_keeps_ticking_while_a_slow_store_loads(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every request to the store is made on a worker, never on the GUI thread, and the GUI
    thread runs its timers while the store answers. What is checked is where the reads run,
    not how long a gap between two ticks is: a loaded machine stretches those gaps whoever
    reads, while a read on the GUI thread is a fault however fast the store answers."""
    from PySide6.QtCore import QTimer

    import zarrview.zarrlib as zl
    from zarrview.zarrlib.storage import LocalStore

    a = zarr.create_array(tmp_path / "slow", shape=(64, 64), chunks=(8, 8), dtype="u1")
    a[...] = 7

    class Asked(CountingStore):
        """Which thread made each request, and when its answer was back."""

        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            self.asked: list[tuple[threading.Thread, float, float]] = []

        def _record(self, reqs, batch=False) -> None:  # type: ignore[no-untyped-def]
            start = time.monotonic()
            super()._record(reqs, batch)  # sleeps the latency
            with self._lock:
                self.asked.append((threading.current_thread(), start, time.monotonic()))

    store = Asked(LocalStore(tmp_path / "slow"), latency=0.02)
    arr = zl.open(store)
    store.asked.clear()  # opening happened here, in the test; from now on the window reads
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(10)
    window.data.set_array(arr)  # 64 chunks x 20 ms on workers
    _settle(qtbot, window)
    timer.stop()
    np.testing.assert_array_equal(drawn(window.data), np.full((64, 64), 7))
    assert store.asked, "the window read nothing"
    on_gui = [r for r in store.asked if r[0] is threading.main_thread()]
    assert on_gui == [], f"{len(on_gui)} of {len(store.asked)} requests made on the GUI thread"
    first, last = min(r[1] for r in store.asked), max(r[2] for r in store.asked)
    assert any(first <= t <= last for t in ticks), "the GUI thread ran no timer while the store was read"


def test_demo_screenshot_command(tmp_path: Path) -> None:
    out = tmp_path / "demo.png"
    env = {"QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
           "XDG_CONFIG_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "zarrview", "--demo", "--screenshot", str(out)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert img.width() > 600 and img.height() > 400
    colours = {img.pixel(x, y) for x in range(0, img.width(), 37) for y in range(0, img.height(), 37)}
    assert len(colours) > 20  # a rendered image, not a blank window


def test_large_plane_previews_within_budget_then_reads_only_the_visible_chunks(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]

    import zarrview.zarrlib as zl

    values = (np.arange(400 * 400, dtype="u4") % 65521).reshape(400, 400).astype("u2")
    a = zarr.create_array(tmp_path / "big", shape=values.shape, chunks=(20, 20), dtype="u2")
    a[...] = values

    store = CountingStore(LocalStore(tmp_path / "big"))
    window.data.budget_chunks = 16
    window.data.set_array(zl.open(store))
    _settle(qtbot, window)
    base = window.data.scene.coarse
    assert base is not None and not base.full_resolution
    preview_keys = store.chunk_keys()
    assert 0 < len(preview_keys) <= 16  # 400 chunks in the plane, 16 allowed
    np.testing.assert_array_equal(drawn(window.data),
                                  values[::base.step_r, ::base.step_c])
    store.reset()
    window.data.image.view.setRange(xRange=(200, 260), yRange=(100, 160), padding=0)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=10000)
    _settle(qtbot, window)
    plan = window.data.scene.detail
    assert plan is not None and plan.full_resolution
    expected = {f"c/{r // 20}/{c // 20}" for r in range(plan.r0, plan.r1) for c in range(plan.c0, plan.c1)}
    # exactly the visible chunks, less those the preview already decoded (served by the cache)
    keys = store.chunk_keys()
    assert set(keys) == expected - set(preview_keys) and len(keys) == len(set(keys))
    assert plan.r0 <= 100 and plan.r1 >= 160 and plan.c0 <= 200 and plan.c1 >= 260
    assert len(expected) <= 16
    np.testing.assert_array_equal(drawn(window.data, "detail"), values[plan.r0:plan.r1, plan.c0:plan.c1])


def test_colour_dimension_shows_as_rgb(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import zarrview.zarrlib as zl

    rgb = np.random.default_rng(1).integers(0, 255, size=(3, 30, 40), dtype="u1")
    a = zarr.create_array(tmp_path / "rgb", shape=rgb.shape, chunks=(1, 16, 16), dtype="u1", dimension_names=["c", "y", "x"])
    a[...] = rgb
    window.data.set_array(zl.open(tmp_path / "rgb"))
    _settle(qtbot, window)
    np.testing.assert_array_equal(drawn(window.data), rgb[0])
    assert window.data.plane.rgb_box is not None
    window.data.plane.rgb_box.setChecked(True)
    _settle(qtbot, window)
    np.testing.assert_array_equal(drawn(window.data), np.moveaxis(rgb, 0, -1))


def test_open_url_from_a_loopback_http_server(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from http_server import serve

    site = tmp_path / "site"
    g = zarr.open_group(site / "web.zarr", mode="w")
    g.create_array("vol", shape=DATA.shape, chunks=(1, 16, 16), dtype="f4")[...] = DATA
    g.create_group("sub")
    zarr.consolidate_metadata(site / "web.zarr")  # a plain HTTP server cannot list: consolidated metadata can
    with serve(site) as (url, state):
        window.open_location(f"{url}/web.zarr::/vol", plane={0: 3})
        _settle(qtbot, window)
        np.testing.assert_array_equal(drawn(window.data), DATA[3])
        gets = [r[1] for r in state.requests("GET")]
        assert any(p.endswith("/web.zarr/zarr.json") for p in gets)
        assert not any(p.endswith("/vol/zarr.json") for p in gets)  # the consolidated copy answers
        root = window.model.index(0, 0)
        names = [window.model.data(window.model.index(r, 0, root)) for r in range(window.model.rowCount(root))]
        assert names == ["sub", "vol"]


def test_dropping_a_folder_opens_it(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(store))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    _settle(qtbot, window)
    assert window.model.rowCount() == 1
    assert window.model.node(window.model.index(0, 0)).url == str(store.resolve())


def test_string_table_pages_in_rows_as_it_scrolls(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import zarrview.zarrlib as zl
    from zarrview.app import other_views as data_view

    words = np.array([f"row {i} ✓" for i in range(5000)], dtype=object)
    a = zarr.create_array(tmp_path / "s", shape=words.shape, chunks=(700,), dtype=str)
    a[...] = words
    window.data.set_array(zl.open(tmp_path / "s"))
    _settle(qtbot, window)
    model = window.data.table.model()
    assert model.rowCount() == data_view.TABLE_PAGE
    assert model.data(model.index(1234, 0)) == "row 1234 ✓"
    while model.canFetchMore(model.index(-1, -1)):
        model.fetchMore(model.index(-1, -1))
        _settle(qtbot, window)
    assert model.rowCount() == 5000
    assert [model.data(model.index(i, 0)) for i in (0, 2000, 4999)] == [words[0], words[2000], words[4999]]


def test_records_table_has_a_column_per_field(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    import zarrview.zarrlib as zl

    arr = zl.open(Path(__file__).parents[1] / "data" / "zarr2" / "v2_dtypes")
    rec = next(m for m in arr.members() if isinstance(m, zl.Array) and m.dtype.names and m.ndim >= 1)
    window.data.set_array(rec)
    _settle(qtbot, window)
    model = window.data.table.model()
    expected = rec[...].reshape(rec.shape[0], -1)[:, 0] if rec.ndim > 1 else rec[...]
    assert model.columnCount() == len(rec.dtype.names)
    assert [model.headerData(i, Qt.Orientation.Horizontal) for i in range(model.columnCount())] == list(rec.dtype.names)
    first = rec.dtype.names[0]
    value = expected[0][first]
    assert model.data(model.index(0, 0)) == repr(value.item() if isinstance(value, np.generic) else value)


def test_preferences_set_cache_and_budget(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.settings.setValue("cache_mib", 64)
    window.settings.setValue("chunk_budget", 32)
    window.apply_settings()
    assert window.pool.cache.max_bytes == 64 << 20
    assert window.data.budget_chunks == 32


def test_qt_bindings_do_not_leak_references_to_none() -> None:
    """PySide6 6.12.0 under Python 3.11 dropped a reference to None on every void call, which
    aborts the interpreter after a few minutes of use; the pin in pyproject.toml excludes it."""
    from PySide6.QtCore import QTimer

    timer = QTimer()
    before = sys.getrefcount(None)
    for _ in range(20_000):
        timer.stop()
    assert sys.getrefcount(None) > before - 1_000


def test_panning_by_a_chunk_is_served_from_the_prefetched_ring(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]

    import zarrview.zarrlib as zl

    values = np.arange(400 * 400, dtype="u4").reshape(400, 400)
    a = zarr.create_array(tmp_path / "pan", shape=values.shape, chunks=(20, 20), dtype="u4")
    a[...] = values

    store = CountingStore(LocalStore(tmp_path / "pan"))
    window.data.budget_chunks = 16
    window.data.set_array(zl.open(store))
    _settle(qtbot, window)
    window.data.image.view.setRange(xRange=(200, 260), yRange=(100, 160), padding=0)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=10000)
    qtbot.waitUntil(lambda: window.data.driver.prefetch.warmed >= 1, timeout=10000)
    store.reset()
    before = window.data.scene.detail
    window.data.image.view.setRange(xRange=(220, 280), yRange=(120, 180), padding=0)  # one chunk across
    qtbot.waitUntil(lambda: window.data.scene.detail is not before, timeout=10000)
    _settle(qtbot, window)
    plan = window.data.scene.detail
    assert store.chunk_keys() == []  # every chunk came from the ring read ahead
    np.testing.assert_array_equal(drawn(window.data, "detail"), values[plan.r0:plan.r1, plan.c0:plan.c1])


def test_any_array_as_a_table_on_request(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(f"{store}::/vol")
    _settle(qtbot, window)
    window.data.as_table.setChecked(True)
    _settle(qtbot, window)
    model = window.data.table.model()  # the image's plane: y as rows, x as columns, at t 0
    assert model.rowCount() == DATA.shape[1] and model.columnCount() == DATA.shape[2]
    assert model.data(model.index(2, 7)) == repr(float(DATA[0, 2, 7]))


def test_auto_contrast_uses_percentiles_of_the_loaded_plane(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(f"{store}::/vol", plane={0: 4})
    _settle(qtbot, window)
    hist = window.data.image.ui.histogram.item
    hist.setLevels(0, 1)  # a drag to other levels
    _settle(qtbot, window)
    assert window.data.scene.levels == pytest.approx((0, 1))
    window.data.auto_contrast()
    _settle(qtbot, window)
    want = np.percentile(DATA[4], (0.5, 99.5))
    np.testing.assert_allclose(hist.getLevels(), want, rtol=1e-6)
    np.testing.assert_allclose(window.data.scene.levels, want, rtol=1e-6)


def test_opening_an_open_store_again_selects_it(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    """A store dropped or typed a second time is not listed twice; the open one is
    selected, and a node path in the second location is opened in it."""
    window.open_location(str(store))
    _settle(qtbot, window)
    window.open_location(str(store.parent / "." / store.name) + "/")  # the same folder, spelled otherwise
    _settle(qtbot, window)
    assert "open already" in window.status_label.text()
    assert window.model.rowCount() == 1
    assert window.model.node(window.proxy.mapToSource(window.tree.currentIndex())).path == "/"
    window.open_location(f"{store}::/sub/line")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.model.node(window.proxy.mapToSource(window.tree.currentIndex())) is not None
                    and window.model.node(window.proxy.mapToSource(window.tree.currentIndex())).path == "/sub/line",
                    timeout=5000)
    assert window.model.rowCount() == 1


@pytest.mark.parametrize("plane,words", [({0: 6}, "index 6 is out of range for t"), ({0: -1}, "index -1"),
                                         ({3: 0}, "names 4 dimensions"), ("2,:", "gives 2 dimensions; /vol has 3")])
def test_a_slice_out_of_range_is_an_error_not_clamped(qtbot, window: MainWindow, store: Path, plane, words) -> None:  # type: ignore[no-untyped-def]
    from zarrview.viewing.image.slice_spec import read_slice

    window.open_location(f"{store}::/vol", plane=read_slice(plane).positions if isinstance(plane, str) else plane)
    _settle(qtbot, window)
    assert words in window.status_label.text()
    assert window.data.array is None  # nothing shown in its place


def test_a_level_of_a_plain_array_is_said_as_export_says_it(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.data.pending_level = 1
    window.open_location(f"{store}::/vol")
    _settle(qtbot, window)
    assert "--level is for an OME-Zarr image group; /vol is an array" in window.status_label.text()
    assert window.data.array is None  # nothing shown in its place


def test_the_free_dimensions_of_a_slice_are_the_displayed_ones(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    """``--slice :,20,:`` shows rows t and columns x at y = 20 (an XZ-like view)."""
    window.open_location(f"{store}::/vol", plane={1: 20})
    _settle(qtbot, window)
    np.testing.assert_array_equal(drawn(window.data), DATA[:, 20, :])
    assert (window.data.plane.y_combo.currentIndex(), window.data.plane.x_combo.currentIndex()) == (0, 2)
