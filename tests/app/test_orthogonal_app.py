"""Orthogonal views in the window, offscreen: View ▸ Orthogonal Views shows the XZ and YZ
sections of a zarr-python-written volume beside the image, clicks on the image and on the
panels move the point and the Z slider, the panels hold numpy's sections of the same data,
and their reads never open a file of the store on the GUI thread."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtGui import QAction  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app.orthogonal_view import SectionPanel  # noqa: E402
from zarrview.app.shortcuts import shortcut_rows  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.zarrlib.storage import LocalStore  # noqa: E402

from monkey.health import GuiThreadIO, Problems  # noqa: E402
from store_wrappers import CountingStore  # noqa: E402
from drawn import drawn, expected_rgba  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401

DATA = np.random.default_rng(5).standard_normal((8, 24, 32)).astype("f4")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ortho") / "s.zarr"
    g = zarr.open_group(root, mode="w")
    g.create_array("vol", shape=DATA.shape, chunks=(2, 8, 8), dtype="f4", dimension_names=["z", "y", "x"])[...] = DATA
    g.create_array("flat", shape=(5, 6), chunks=(5, 6), dtype="i2")[...] = np.arange(30).reshape(5, 6)
    return root


def action(w: MainWindow) -> QAction:
    view = next(a.menu() for a in w.menuBar().actions() if a.text() == "&View")
    return next(a for a in view.actions() if a.text() == "&Orthogonal Views")


def press(qtbot, panel, x: float, y: float) -> None:  # type: ignore[no-untyped-def]
    """A left click where data coordinates (x, y) of ``panel`` (the image's or a section's) are."""
    plot = panel.plot if isinstance(panel, SectionPanel) else panel.view
    view = panel if isinstance(panel, SectionPanel) else panel.ui.graphicsView
    scene = plot.getViewBox().mapViewToScene(QPointF(x, y))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(scene))


def sections(qtbot, w: MainWindow) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    _settle(qtbot, w)
    o = w.orthogonal
    qtbot.waitUntil(lambda: o.pending is None and o.xz.item.image is not None and o.sections is not None, timeout=10000)
    return o.sections.xz, o.sections.yz  # the values drawn (their colours: test_sections_are_coloured_as_the_image)


def test_toggling_clicking_and_what_the_panels_hold(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(f"{store}::/vol", plane={0: 3})
    _settle(qtbot, window)
    o = window.orthogonal
    assert not o.visible
    assert shortcut_rows(window).count(("View ▸ Orthogonal Views", "Ctrl+Shift+O")) == 1  # Help ▸ Keyboard Shortcuts
    action(window).trigger()
    xz, yz = sections(qtbot, window)
    assert o.visible and o.point == (12, 16)  # the centre of the plane
    np.testing.assert_array_equal(xz, DATA[:, 12, :])
    np.testing.assert_array_equal(yz, DATA[:, :, 16].T)
    pane = window.data.image  # drawn as the image is: its histogram's levels, its colours
    levels = tuple(float(v) for v in pane.ui.histogram.item.getLevels())
    np.testing.assert_array_equal(o.xz.item.image, expected_rgba(DATA[:, 12, :], levels, pane.table))
    np.testing.assert_array_equal(o.yz.item.image, expected_rgba(DATA[:, :, 16].T, levels, pane.table))

    press(qtbot, window.data.image, 9.5, 5.5)  # column 9, row 5 of the image
    xz, yz = sections(qtbot, window)
    assert o.point == (5, 9) and o.cross[0].value() == 5.5 and o.cross[1].value() == 9.5
    np.testing.assert_array_equal(xz, DATA[:, 5, :])
    np.testing.assert_array_equal(yz, DATA[:, :, 9].T)

    press(qtbot, o.xz, 20.5, 6.5)  # the XZ panel: column 20, Z 6
    xz, yz = sections(qtbot, window)
    assert window.data.state.indices[0] == 6 and window.data.plane.sliders[0][1].value() == 6
    np.testing.assert_array_equal(drawn(window.data), DATA[6])
    np.testing.assert_array_equal(yz, DATA[:, :, 20].T)
    assert o.xz.across.value() == 6.5 and o.yz.down.value() == 6.5

    press(qtbot, o.yz, 1.5, 17.5)  # the YZ panel: Z 1, row 17
    xz, yz = sections(qtbot, window)
    assert window.data.state.indices[0] == 1 and o.point == (17, 20)
    np.testing.assert_array_equal(xz, DATA[:, 17, :])
    np.testing.assert_array_equal(drawn(window.data), DATA[1])

    window.data.plane.y_combo.setCurrentIndex(0)  # rows z, columns x: the sections run along y
    xz, yz = sections(qtbot, window)
    (r, c), z = o.point, window.data.state.indices[1]
    assert o.z_dim == 1 and o.z_combo.currentText() == "y (24)"
    np.testing.assert_array_equal(xz, DATA[r, :, :])  # rows y, columns x
    np.testing.assert_array_equal(yz, DATA[:, :, c])  # rows z, columns y
    assert o.xz.across.value() == z + 0.5

    action(window).trigger()
    assert not o.visible
    action(window).trigger()
    assert o.visible
    window.open_location(f"{store}::/flat")  # two dimensions: no section to show
    _settle(qtbot, window)
    assert not o.visible


def test_section_reads_run_off_the_gui_thread(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "data"
    zarr.create_array(folder / "v", shape=DATA.shape, chunks=(2, 8, 8), dtype="f4")[...] = DATA
    counting = CountingStore(LocalStore(folder / "v"))
    arr = zl.open(counting)  # the test opens it; the window only reads it
    problems = Problems()
    io = GuiThreadIO(folder, problems)
    try:
        window.data.set_array(arr)
        _settle(qtbot, window)
        action(window).trigger()
        sections(qtbot, window)
        counting.reset()
        press(qtbot, window.data.image, 30.5, 2.5)
        xz, yz = sections(qtbot, window)
    finally:
        io.close()
    assert problems.items == []
    np.testing.assert_array_equal(xz, DATA[:, 2, :])
    np.testing.assert_array_equal(yz, DATA[:, :, 30].T)
    # the last Z chunk of row 2 and of column 30: read for the sections (the plane shown is Z 0)
    assert {"c/3/0/0", "c/3/0/3", "c/3/2/3"} <= set(counting.chunk_keys())


def test_the_mouse_over_a_section_reads_out_its_value(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    window.open_location(f"{store}::/vol", plane={0: 3})
    _settle(qtbot, window)
    action(window).trigger()
    sections(qtbot, window)
    o = window.orthogonal
    for panel, (x, y), want in ((o.xz, (20.5, 6.5), f"x 20, z 6 (y 12): {DATA[6, 12, 20]!s}"),
                                (o.yz, (1.5, 22.5), f"y 22, z 1 (x 16): {DATA[1, 22, 16]!s}")):
        scene = panel.plot.getViewBox().mapViewToScene(QPointF(x, y))
        qtbot.mouseMove(panel.viewport(), pos=panel.mapFromScene(scene))
        qtbot.waitUntil(lambda want=want: window.status_label.text() == want, timeout=3000)


@pytest.fixture(scope="module")
def south_to_north(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, np.ndarray]:
    """A CF field written by xarray, latitude ascending, values missing over 10-30 °S."""
    xr = pytest.importorskip("xarray")
    root = tmp_path_factory.mktemp("ortho") / "sn.zarr"
    lat = np.arange(-87.5, 90, 5.0)
    values = np.random.default_rng(3).normal(280, 8, (4, len(lat), 24)).astype("f4")
    gap = (lat > -30) & (lat < -10)
    values[:, gap, :] = np.nan
    ds = xr.Dataset({"t": (("time", "lat", "lon"), values, {"units": "K"})},
                    coords={"time": np.arange(4), "lat": ("lat", lat, {"units": "degrees_north"}),
                            "lon": ("lon", np.arange(0, 360, 15.0), {"units": "degrees_east"})})
    ds.to_zarr(root, zarr_format=2, consolidated=True)
    return root, values, lat


def test_sections_of_a_south_to_north_field_share_its_north_up(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                south_to_north) -> None:
    root, values, lat = south_to_north
    window.open_location(f"{root}::/t")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.state is not None and window.data.state.cf is not None, timeout=10000)
    action(window).trigger()
    o = window.orthogonal
    press(qtbot, window.data.image, 5.5, 12.5)  # lon 75 °E, lat index 12
    xz, yz = sections(qtbot, window)
    assert o.point == (12, 5)
    image_box = window.data.image.view.getViewBox()
    assert not image_box.yInverted() and not o.yz.plot.getViewBox().yInverted()  # both north up
    np.testing.assert_array_equal(yz, values[:, :, 5].T)  # rows: latitude, as the image's rows
    # time is no length of the map's: the sections fill their panels, not a strip of four pixels
    qtbot.waitUntil(lambda: np.allclose(o.xz.plot.getViewBox().viewRange()[1], (0, 4))
                    and np.allclose(o.yz.plot.getViewBox().viewRange()[0], (0, 4)), timeout=5000)
    levels = tuple(float(v) for v in window.data.image.ui.histogram.item.getLevels())
    want = expected_rgba(values[:, :, 5].T, levels, window.data.image.table)
    np.testing.assert_array_equal(o.yz.item.image, want)  # the missing values in the missing colour
    gap = np.flatnonzero((lat > -30) & (lat < -10))
    assert (o.yz.item.image[gap] == expected_rgba(np.array([[np.nan]], "f4"), levels, None)[0, 0]).all()
    row = int(gap[0])
    view = window.data.image.ui.graphicsView

    def screen_rows() -> tuple[int, int]:
        """Where latitude ``row`` is on the screen, in the YZ panel and in the image."""
        panel_at = o.yz.plot.getViewBox().mapViewToScene(QPointF(0.0, row + 0.5))
        image_at = image_box.mapViewToScene(QPointF(0.0, row + 0.5))
        return o.yz.mapToGlobal(o.yz.mapFromScene(panel_at)).y(), view.mapToGlobal(view.mapFromScene(image_at)).y()

    qtbot.waitUntil(lambda: abs(screen_rows()[0] - screen_rows()[1]) <= 1, timeout=5000)  # the same screen row
    scene = o.yz.plot.getViewBox().mapViewToScene(QPointF(1.5, row + 0.5))
    qtbot.mouseMove(o.yz.viewport(), pos=o.yz.mapFromScene(scene))  # the cursor over it reads out that latitude
    qtbot.waitUntil(lambda: f"lat {abs(lat[row]):g} °S" in window.status_label.text(), timeout=5000)


def test_sections_follow_a_switch_to_the_composite(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ome_zarr.writer import write_image

    from zarrview.viewing.image.channels import composite

    data = np.random.default_rng(9).integers(0, 4000, (3, 6, 20, 24), dtype="u2")
    root = zarr.open_group(str(tmp_path / "c.zarr"), mode="w")
    write_image(data, root, axes="czyx", scale_factors=[])
    window.open_location(str(tmp_path / "c.zarr"))
    _settle(qtbot, window)
    view = window.data
    view.set_state(view.state.with_channel_mode("single"))
    action(window).trigger()
    sections(qtbot, window)
    assert not window.orthogonal.sections.request.state.composite
    view.set_state(view.state.with_channel_mode("composite"))
    o = window.orthogonal
    qtbot.waitUntil(lambda: o.pending is None and o.sections is not None and o.sections.request is not None
                    and o.sections.request.state.composite, timeout=10000)
    state = o.sections.request.state
    r, c = o.point
    want = composite(data[:, :, :, c].transpose(2, 1, 0).astype("f4"), state.channels)  # rows y, columns z
    np.testing.assert_allclose(o.sections.yz, want, atol=1e-6)
    rgb = o.yz.item.image[..., :3].astype(int)
    assert rgb.max() > 0 and np.abs(rgb - np.round(want * 255)).max() <= 1  # drawn in the channels' colours
