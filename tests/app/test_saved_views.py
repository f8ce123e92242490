"""Views as values in the window: a view set up by hand is saved to a .zarrview file, copied as
a command line and as a zarrview:// link; each, opened in a second window of the same size,
gives an equal view and draws the same pixels. Credentials never leave the window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication, QSettings  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402

from _window_helpers import drop  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)
from zarrview.app.bridge import init_bridge  # noqa: E402
from zarrview.app.main import parse_args, view_arguments  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.scheduling import WorkerPool  # noqa: E402
from zarrview.viewing.saved_views import SavedView, flags, saved_from_arguments, saved_from_link, to_json  # noqa: E402

pytestmark = pytest.mark.timeout(120)

SIZE = (1100, 760)


@pytest.fixture
def cube(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    zarr.create_array(tmp_path / "cube.zarr", shape=(12, 90, 120), chunks=(1, 45, 60), dtype="u2",
                      fill_value=0)[:] = rng.integers(0, 1000, (12, 90, 120))
    return tmp_path / "cube.zarr"


@pytest.fixture
def second(qtbot: Any, tmp_path: Path) -> Any:
    """Another window, as a second person (or a second run) opens it."""
    QCoreApplication.setOrganizationName("zarrview-tests")
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path / "second"))
    init_bridge()
    w = MainWindow(WorkerPool())
    w.remembers_layout = False
    qtbot.addWidget(w)
    w.resize(*SIZE)
    w.split.setSizes([330, SIZE[0] - 330])
    w.show()
    yield w
    w.pool.close()


def shown(qtbot: Any, w: MainWindow) -> None:
    """Drawn and read: a layout change (a tool widening the tree) reaches the view's region when
    it is painted, so the window is painted first."""
    w.repaint()
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.scene is not None and w.data.scene.detail is not None and not w.data.scene.busy,
                    timeout=30000)
    _settle(qtbot, w)
    # the chunk grid tints the chunks in the cache once its lookup answers: a picture waits for it
    qtbot.waitUntil(lambda: not w.data.chunk_grid.busy, timeout=30000)
    _settle(qtbot, w)


def opened(qtbot: Any, w: MainWindow, location: str) -> MainWindow:
    """``w`` at the second window's size, showing ``location``."""
    w.remembers_layout = False
    w.resize(*SIZE)
    w.split.setSizes([330, SIZE[0] - 330])
    w.open_location(location)
    shown(qtbot, w)
    return w


def picture(w: MainWindow, least: int = 200) -> np.ndarray:
    """The plane as drawn on screen, what lies over it included (the chunk grid), inside its axes:
    two windows drawing the same range were seen to antialias one tick label's edge a level or two
    apart, under load (the histogram beside the plane shows whatever was read since the array was
    opened, a history a reopened view lacks)."""
    view = w.data.image.ui.graphicsView
    box = view.mapFromScene(w.data.image.view.getViewBox().sceneBoundingRect()).boundingRect()
    image = view.grab(box).toImage()
    assert image.width() > 200 and image.height() > least, "the plane is on screen"
    image = image.convertToFormat(image.Format.Format_RGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())[:, :image.width() * 4].copy()


def set_up_by_hand(qtbot: Any, w: MainWindow, tool: str | None = "grid") -> None:
    """Slider, colour map, typed contrast, a zoomed region and a tool, as a person sets them."""
    w.data.set_index(0, 7)
    shown(qtbot, w)
    assert w.data.colours is not None
    w.data.colours.choose("magma_r")
    contrast = w.data.plane.contrast if w.data.plane is not None else None
    assert contrast is not None
    for box, value in ((contrast.lo, "100"), (contrast.hi, "850")):
        box.setText(value)
        box.setModified(True)
        box.editingFinished.emit()
    w.data.image.view.setRange(xRange=(20, 80), yRange=(10, 50), padding=0)
    shown(qtbot, w)
    if tool is not None:
        action = next(a for a in w.findChildren(type(w.menuBar().actions()[0])) if a.objectName() == tool)
        action.trigger()
        shown(qtbot, w)


def test_a_saved_view_reopens_equal_and_draws_the_same(qtbot: Any, window: MainWindow, second: MainWindow,  # noqa: F811
                                                       cube: Path, tmp_path: Path) -> None:
    w = opened(qtbot, window, f"{cube}::/")
    set_up_by_hand(qtbot, w)
    saved = w.current_view()
    assert saved is not None
    look = saved.view
    assert (look.location, look.node) == (str(cube), "/")
    assert look.indices == (7, 0, 0) and (look.y_dim, look.x_dim) == (1, 2)
    assert look.colormap == "magma_r" and look.contrast == (100.0, 850.0)
    assert look.region is not None and abs(look.region[2] - 20) < 1 and abs(look.region[3] - 80) < 1
    assert saved.tools == ("grid",)

    path = tmp_path / "cube.zarrview"
    path.write_text(to_json(saved))
    doc = json.loads(path.read_text())
    assert doc["format"] == "zarrview-view" and doc["view"]["colormap"] == "magma_r"

    drop(qtbot, second, path)  # dropped on the window, as from a file manager
    shown(qtbot, second)
    again = second.current_view()
    assert again == saved
    assert second.data.chunk_grid.cached_chunks == w.data.chunk_grid.cached_chunks  # the tints drawn alike
    np.testing.assert_array_equal(picture(second), picture(w))
    assert second.data.state is not None and second.data.state.indices[0] == 7
    grid = next(a for a in second.findChildren(type(second.menuBar().actions()[0])) if a.objectName() == "grid")
    assert grid.isChecked()
    assert str(path) in second.recent.locations()  # File ▸ Open Recent opens it again


def test_the_command_line_and_the_link_open_the_same_view(qtbot: Any, window: MainWindow, second: MainWindow,  # noqa: F811
                                                          cube: Path) -> None:
    w = opened(qtbot, window, str(cube))
    set_up_by_hand(qtbot, w, None)  # the tools' round trip is the file's test
    saved = w.current_view()
    assert saved is not None and saved.tools == ()

    w.copy_view_command()
    command = QGuiApplication.clipboard().text()
    assert command.startswith("zarrview ") and "--colormap magma_r" in command and "--slice 7,:,:" in command
    argv = flags(saved)
    from_command = saved_from_arguments(view_arguments(parse_args(argv)))
    assert from_command == saved

    w.copy_view_link()
    url = QGuiApplication.clipboard().text()
    assert url.startswith("zarrview://open?")
    assert saved_from_link(url) == saved
    assert saved_from_arguments(view_arguments(parse_args([url]))) == saved  # the link given to the program

    second.open_location(url)  # a link dropped or pasted: the same view
    shown(qtbot, second)
    assert second.current_view() == saved
    np.testing.assert_array_equal(picture(second), picture(w))


def test_credentials_never_leave_the_window(qtbot: Any, window: MainWindow, cube: Path, tmp_path: Path) -> None:  # noqa: F811
    w = window
    w.open_location(str(cube), secret="s3cr3t", key="AKIDEXAMPLE", endpoint_url="http://127.0.0.1:1")
    shown(qtbot, w)
    saved = w.current_view()
    assert saved is not None
    assert dict(saved.view.options) == {"endpoint_url": "http://127.0.0.1:1"}
    for text in (to_json(saved), " ".join(flags(saved))):
        assert "s3cr3t" not in text and "AKIDEXAMPLE" not in text


def test_a_broken_view_file_is_named_with_what_is_wrong(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    w = window
    for name, text, words in (
        ("notjson.zarrview", "{", "is not JSON"),
        ("other.zarrview", json.dumps({"format": "something"}), "is not a zarrview view"),
        ("tool.zarrview", json.dumps({"format": "zarrview-view", "version": 1, "view": {"location": "x"},
                                      "tools": ["paint"]}), "no tool is named 'paint'"),
        ("map.zarrview", json.dumps({"format": "zarrview-view", "version": 1,
                                     "view": {"location": "x", "colormap": "rainbow9"}}), "no colour map"),
    ):
        path = tmp_path / name
        path.write_text(text)
        w.open_location(str(path))
        qtbot.waitUntil(lambda words=words: words in w.status_label.text(), timeout=10000)
        assert str(path) in w.status_label.text()
    w.open_location(str(tmp_path / "missing.zarrview"))
    qtbot.waitUntil(lambda: "cannot read the view" in w.status_label.text(), timeout=10000)


def test_saved_view_value_round_trips(cube: Path) -> None:
    """Every field through JSON, the command line and the link, without a window."""
    from zarrview.viewing.saved_views import ChannelLook, ViewLook, from_json, link

    look = ViewLook(str(cube), "/img", {"anon": True, "region": "eu-west-1"}, (0, 3, 0, 0, 0), 3, 4, 0, 1,
                    (10.5, 90.25, 0.0, 64.0), "viridis", (0.0, 1234.5), False, "phase", "composite",
                    (ChannelLook(0, "FF0000", (0.0, 100.0), True, False), ChannelLook(1, "00FF80", None, False, True)),
                    True)
    saved = SavedView(look, ("sections", "io"))
    assert from_json(to_json(saved)) == saved
    assert saved_from_link(link(saved)) == saved
    assert saved_from_arguments(view_arguments(parse_args(flags(saved)))) == saved


def test_an_ome_composite_with_a_level_and_a_channel_off(qtbot: Any, window: MainWindow, second: MainWindow,  # noqa: F811
                                                         tmp_path: Path) -> None:
    pytest.importorskip("ome_zarr")
    from PySide6.QtWidgets import QComboBox

    from ome_stores import ome_zarr_image

    rng = np.random.default_rng(4)
    data = rng.integers(0, 1000, (3, 128, 160)).astype("u2")
    omero = {"channels": [{"label": n, "color": c, "window": {"start": 0, "end": 1000, "min": 0, "max": 65535}}
                          for n, c in (("red", "FF0000"), ("green", "00FF00"), ("blue", "0000FF"))],
             "rdefs": {"model": "color"}}
    store = ome_zarr_image(tmp_path / "img.zarr", "0.4", data, "cyx", scale_factors=(2,), chunks=(1, 64, 64),
                           omero=omero)
    w = opened(qtbot, window, str(store))
    assert w.data.state is not None and w.data.state.composite and w.data.channels is not None
    w.data.channels.rows[1].active.setChecked(False)  # green off
    picker = next(c for c in w.data.findChildren(QComboBox) if c.count() and c.itemText(0).startswith("auto: the coarsest"))
    picker.setCurrentIndex(picker.findData(1))  # level 1, whatever the zoom
    shown(qtbot, w)
    saved = w.current_view()
    assert saved is not None
    assert saved.view.level == 1 and saved.view.channel_mode == "composite"
    assert [c.active for c in saved.view.channels] == [True, False, True]
    assert [c.color for c in saved.view.channels] == ["FF0000", "00FF00", "0000FF"]

    again = saved_from_arguments(view_arguments(parse_args(flags(saved))))  # through its command line
    assert again == saved
    second.open_view(again)
    shown(qtbot, second)
    assert second.current_view() == saved
    assert second.data.state is not None and second.data.state.level == 1
    np.testing.assert_array_equal(picture(second), picture(w))


@pytest.mark.parametrize("kind", ["zarrlib", "zarr", "tensorstore"])
def test_copy_as_python_reads_what_the_window_exports(qtbot: Any, window: MainWindow, cube: Path,  # noqa: F811
                                                      tmp_path: Path, kind: str) -> None:
    """File ▸ Copy as Python: the snippet, run as it is, leaves in ``data`` the plane the window's
    own export writes (its .npy), for the plane shown."""
    from zarrview.viewing.export.plane import export_plane

    w = opened(qtbot, window, f"{cube}::/")
    w.data.set_index(0, 5)
    shown(qtbot, w)
    QGuiApplication.clipboard().setText("")
    action = next(a for a in w.findChildren(type(w.menuBar().actions()[0])) if a.objectName() == f"snippet-{kind}")
    action.trigger()
    qtbot.waitUntil(lambda: QGuiApplication.clipboard().text().strip() != "", timeout=20000)
    code = QGuiApplication.clipboard().text()
    assert "data" in code and "secret" not in code
    spec = w.data.plane_spec()
    assert spec is not None
    out = tmp_path / "plane.npy"
    export_plane(spec, str(out))
    namespace: dict[str, Any] = {}
    exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102 - the snippet is run as a person would
    want = np.load(out)
    got = np.asarray(namespace["data"])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_a_compared_pair_is_saved_and_reopened(qtbot: Any, window: MainWindow, second: MainWindow,  # noqa: F811
                                               tmp_path: Path) -> None:
    """A view comparing two arrays (their difference shown) holds both; opened again it
    compares the same pair the same way, with the same figures."""
    rng = np.random.default_rng(8)
    g = zarr.open_group(tmp_path / "pair.zarr", mode="w", zarr_format=3)
    a = rng.normal(size=(3, 40, 50)).astype("f4")
    g.create_array("a", shape=a.shape, chunks=(1, 20, 25), dtype="f4", fill_value=0)[:] = a
    g.create_array("b", shape=a.shape, chunks=(1, 40, 50), dtype="f4", fill_value=0)[:] = a * 1.5
    w = opened(qtbot, window, f"{tmp_path / 'pair.zarr'}::/a")
    w.data.set_index(0, 1)
    shown(qtbot, w)
    next(x for x in w.findChildren(type(w.menuBar().actions()[0])) if x.objectName() == "compare").trigger()
    top = w.model.index(0, 0)
    row = next(r for r in range(w.model.rowCount(top)) if w.model.index(r, 0, top).data() == "b")
    w.tree.setCurrentIndex(w.proxy.mapFromSource(w.model.index(row, 0, top)))
    w.compare.mode.setCurrentText("A − B")
    qtbot.waitUntil(lambda: "differ" in w.compare.stats.text(), timeout=15000)
    shown(qtbot, w)  # laid out: the pane opened beside A resized it
    saved = w.current_view()
    assert saved is not None and saved.compare is not None
    assert (saved.view.node, saved.compare.node, saved.compare_mode) == ("/a", "/b", "a-b")
    assert saved_from_arguments(view_arguments(parse_args(flags(saved)))) == saved
    path = tmp_path / "pair.zarrview"
    path.write_text(to_json(saved))
    second.open_location(str(path))
    qtbot.waitUntil(lambda: second.compare.isVisible() and "differ" in second.compare.stats.text(), timeout=20000)
    shown(qtbot, second)
    again = second.current_view()
    assert again == saved  # the region too: held while the pane beside lays out its words
    assert second.compare.stats.text() == w.compare.stats.text()
    np.testing.assert_array_equal(second.compare.diff.array[...], w.compare.diff.array[...])


@pytest.mark.parametrize("tool", ["sections", "io"])
def test_a_tool_that_resizes_the_plane_reopens_its_region(qtbot: Any, window: MainWindow, second: MainWindow,  # noqa: F811
                                                         cube: Path, tool: str) -> None:
    """A tool beside the plane (the sections, the I/O dock) takes its room as it opens: the
    region saved is the region shown again, not the one the shrunk pane made of it."""
    w = opened(qtbot, window, str(cube))
    set_up_by_hand(qtbot, w, tool)
    saved = w.current_view()
    assert saved is not None and saved.tools == (tool,)
    second.open_view(saved)
    shown(qtbot, second)
    again = second.current_view()
    assert again is not None and again.view.region == saved.view.region
    assert again == saved
    # the I/O dock leaves the plane a strip of the window's height
    np.testing.assert_array_equal(picture(second, 60), picture(w, 60))
