"""The window against a loopback HTTP server: failed chunks shown, paths typed where the
server cannot list, recent URLs reopened with their options."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
import zarr

pytest.importorskip("pytestqt")

from test_app import DATA, _settle, window  # noqa: E402,F401  (the window fixture)

from http_server import Faults, serve  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from drawn import drawn

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("remote_app")
    g = zarr.open_group(root / "web.zarr", mode="w")
    g.create_group("sub").create_array("vol", shape=DATA.shape, chunks=(1, 16, 16), dtype="f4")[...] = DATA
    return root  # no consolidated metadata: a plain HTTP server cannot list this store


def test_failed_chunk_is_hatched_and_named_while_the_rest_renders(qtbot, window: MainWindow, site: Path) -> None:  # type: ignore[no-untyped-def]
    faults = Faults(fail_5xx=10**6, fail_match="/web.zarr/sub/vol/c/3/1/2")
    with serve(site, faults) as (url, _):
        window.open_location(f"{url}/web.zarr::/sub/vol", plane={0: 3}, io_retries=2, io_timeout=2)
        _settle(qtbot, window)
        image = drawn(window.data)
        expected = DATA[3].copy()
        expected[16:32, 32:48] = 0  # the fill value where the chunk failed
        np.testing.assert_array_equal(image, expected)
        status = window.status_label.text()
        assert "1 chunk of /sub/vol" in status and "could not be read" in status
        assert "web.zarr/sub/vol/c/3/1/2: HTTP 500 after 2 attempts" in status
        boxes = [item.rect() for item in window.data.image.failures.items]
        assert [(r.x(), r.y(), r.width(), r.height()) for r in boxes] == [(32, 16, 16, 16)]
        window.grab().save(str(site / "failed_chunk.png"))
        _assert_hatch_drawn(qtbot, window, (32, 16, 16, 16))
        window.data.set_index(0, 2)  # another plane: no failure, the box goes
        _settle(qtbot, window)
        np.testing.assert_array_equal(drawn(window.data), DATA[2])
        assert window.data.image.failures.items == []


def _hatch_fraction(window: MainWindow, box: tuple[int, int, int, int]) -> tuple[float, float]:
    """The share of the box's screen pixels drawn in the hatch's red, and of those that are not."""
    view = window.data.image.view.getViewBox()
    x, y, w, h = box
    corners = [view.mapViewToDevice(pg.Point(px, py)) for px, py in ((x, y), (x + w, y + h))]
    rows = sorted(int(c.y()) for c in corners)
    cols = sorted(int(c.x()) for c in corners)
    widget = window.data.image.ui.graphicsView
    shot = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    rows = [max(0, rows[0] + 3), min(shot.height(), rows[1] - 3)]
    cols = [max(0, cols[0] + 3), min(shot.width(), cols[1] - 3)]
    data = np.frombuffer(shot.constBits(), np.uint8).reshape(shot.height(), shot.bytesPerLine() // 4, 4)
    inside = data[rows[0]:rows[1], cols[0]:cols[1], :3].reshape(-1, 3).astype(int)  # B, G, R
    red = (inside[:, 2] > 150) & (inside[:, 1] < 110) & (inside[:, 0] < 110)
    return float(red.mean()), float(1 - red.mean())


def _assert_hatch_drawn(qtbot, window: MainWindow, box: tuple[int, int, int, int]) -> None:  # type: ignore[no-untyped-def]
    """A failed chunk reads as hatched at the fitted zoom and zoomed far into it: red lines with
    gaps between them (a tint alone would colour every pixel, or none, alike)."""
    view = window.data.image.view.getViewBox()
    for zoom in (None, (box[0] + 2, box[0] + 6, box[1] + 2, box[1] + 6)):
        if zoom is not None:
            view.setRange(xRange=zoom[:2], yRange=zoom[2:], padding=0)
            qtbot.wait(50)
            shown = (box[0] + 2, box[1] + 2, 4, 4)
        else:
            shown = box
        lines, gaps = _hatch_fraction(window, shown)
        assert lines > 0.08 and gaps > 0.3, (zoom, lines, gaps)


def test_unlistable_store_shows_root_and_opens_typed_paths(qtbot, window: MainWindow, site: Path) -> None:  # type: ignore[no-untyped-def]
    with serve(site) as (url, _):
        window.open_location(f"{url}/web.zarr")
        _settle(qtbot, window)
        root = window.model.index(0, 0)
        rows = [window.model.data(window.model.index(r, 0, root)) for r in range(window.model.rowCount(root))]
        assert len(rows) == 1 and "cannot list" in rows[0] and "Go to Path" in rows[0]
        shown = window.proxy.mapFromSource(window.model.index(0, 0, root))  # its words read whole, not cut
        assert window.tree.isFirstColumnSpanned(shown.row(), shown.parent())
        assert window.model.data(window.model.index(0, 0, root), Qt.ItemDataRole.ToolTipRole) == rows[0]
        window.paths.go_to(root, "sub/vol")
        _settle(qtbot, window)
        sub = window.model.index(0, 0, root)
        assert window.model.data(sub) == "sub"
        vol = window.model.index(0, 0, sub)
        assert window.model.data(vol) == "vol"
        assert window.proxy.mapToSource(window.tree.currentIndex()) == vol
        np.testing.assert_array_equal(drawn(window.data), DATA[0])
        window.paths.go_to(root, "nothing/here")
        _settle(qtbot, window)
        assert "Cannot open nothing/here" in window.status_label.text()
        assert "no Zarr node at /nothing" in window.status_label.text()


def test_opening_a_node_by_url_path_places_it_in_the_tree(qtbot, window: MainWindow, site: Path) -> None:  # type: ignore[no-untyped-def]
    with serve(site) as (url, _):
        window.open_location(f"{url}/web.zarr::/sub/vol", plane={0: 4})
        _settle(qtbot, window)
        vol = window.proxy.mapToSource(window.tree.currentIndex())
        assert window.model.node(vol).path == "/sub/vol"
        np.testing.assert_array_equal(drawn(window.data), DATA[4])


def test_recent_urls_keep_their_options_but_never_secrets(qtbot, window: MainWindow, site: Path) -> None:  # type: ignore[no-untyped-def]
    with serve(site) as (url, _):
        window.open_location(f"{url}/web.zarr::/sub/vol", io_timeout=7)
        _settle(qtbot, window)
    location = f"{url}/web.zarr::/sub/vol"
    assert window.recent.locations()[0] == location
    assert window.recent.options(location) == {"io_timeout": 7}
    window.recent.remember("s3://bucket/x.zarr", {"anon": False, "key": "AKIA", "secret": "s", "endpoint_url": "http://h"})
    saved = json.loads(window.settings.value("recent_options"))
    assert saved["s3://bucket/x.zarr"] == {"anon": False, "endpoint_url": "http://h"}
    assert [a.text() for a in window.recent_menu.actions()][:2] == ["s3://bucket/x.zarr", location]


def test_an_ome_image_a_server_cannot_list_shows_its_levels_and_labels(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The rows come from the image's metadata; ome-zarr-py's listing on disk is the truth."""
    pytest.importorskip("ome_zarr")
    from ome_stores import ome_zarr_image

    rng = np.random.default_rng(5)
    ome_zarr_image(tmp_path / "img.zarr", "0.4", rng.integers(0, 9, (32, 32)).astype("u2"), "yx", scale_factors=(2,),
                   labels={"cells": rng.integers(0, 4, (32, 32)).astype("u1")})
    on_disk = sorted(p.name for p in (tmp_path / "img.zarr").iterdir() if p.is_dir())
    with serve(tmp_path) as (url, _):
        window.open_location(f"{url}/img.zarr")
        _settle(qtbot, window)
        root = window.model.index(0, 0)
        rows = sorted(window.model.data(window.model.index(r, 0, root)) for r in range(window.model.rowCount(root)))
        assert rows == on_disk and "labels" in rows and len(rows) == 3  # two levels and the labels


@pytest.mark.parametrize("zoom", [0.25, 1.0, 12.0])
def test_a_failed_chunk_is_hatched_at_any_zoom(qtbot, window: MainWindow, tmp_path: Path, zoom: float) -> None:  # type: ignore[no-untyped-def]
    """The hatching keeps its screen spacing: stripes of red and of the image inside the box,
    not one red tint (Qt scales a pattern brush with the view)."""
    from PySide6.QtCore import QPointF, QRectF

    import zarrview.zarrlib as zl

    a = zarr.create_array(tmp_path / "bad", shape=(64, 64), chunks=(16, 16), dtype="u1", fill_value=0)
    a[...] = 7
    (tmp_path / "bad" / "c" / "1" / "2").write_bytes(b"not zstd")
    window.data.set_array(zl.open(tmp_path / "bad"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert len(window.data.image.failures.items) == 1
    box = window.data.image.view.getViewBox()
    half = 32 / zoom
    box.setRange(QRectF(40 - half, 24 - half, 2 * half, 2 * half), padding=0)
    qtbot.wait(100)
    gv = window.data.image.ui.graphicsView
    shot = gv.grab().toImage()
    item = window.data.image.failures.items[0]
    corner0 = gv.mapFromScene(item.mapToScene(QPointF(32.5, 16.5)))
    corner1 = gv.mapFromScene(item.mapToScene(QPointF(47.5, 31.5)))
    x0, x1 = sorted((corner0.x(), corner1.x()))
    y0, y1 = sorted((corner0.y(), corner1.y()))
    xs = range(max(x0 + 3, 0), min(x1 - 3, shot.width()))
    ys = range(max(y0 + 3, 0), min(y1 - 3, shot.height()))
    reds = [shot.pixelColor(x, y).red() > 100 for x in xs for y in ys]
    assert len(reds) > 20, (x0, x1, y0, y1)
    share = sum(reds) / len(reds)
    assert 0.05 < share < 0.6, share  # hatched: both stripes and gaps at this zoom
