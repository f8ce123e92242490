"""Hostile and corrupt stores through the real window: one test per defect class.

Each store holds the broken node next to good siblings, is opened the way a person opens one
(a dropped folder, ``zarrview PATH::/node``, File ▸ Open URL), and the broken node is clicked in
the tree. The test then checks what a person sees: the error naming the node or key on its tree
row, in the metadata panel and in the data view (or in the status bar, for what only reading
finds), or the red hatching over the chunks that failed while the rest of the plane renders.
Then it proves the app is still usable: a good sibling shows exactly the values zarr-python
wrote, and a timer on the GUI thread kept ticking (tests/_window_helpers.py).

Stores start as good ones written by zarr-python (tests/_good_stores.py) and are broken on disk
as in test_hostile_stores.py, which checks the library side of each class.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import TransposeCodec

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from _bad_helpers import edit_json, read_shard_index, write_shard_index  # noqa: E402
from _good_stores import DATA, DATA8, _templates, meta_key, store, v2, v3  # noqa: E402,F401 (fixtures)
from _window_helpers import (Heartbeat, assert_hatched, assert_sentence,  # noqa: E402
                             assert_shows, broken_node_then_sibling, click, drop, heartbeat, open_url,  # noqa: F401
                             python_peak, seen, shown_image)
from http_server import ENDLESS_CAP, Body, Faults, serve  # noqa: E402
from test_app import _settle, plotted, window  # noqa: E402,F401  (the window fixture)
from zarrview.app.plane_controls import LongIndexBox  # noqa: E402
from zarrview.app.table_model import UNREADABLE  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from drawn import drawn

pytestmark = pytest.mark.timeout(60)

TESTS = Path(__file__).parents[1]
DRAFT = TESTS / "data" / "zarr2" / "v3draft"


@pytest.fixture
def small_limits() -> Iterator[zl.limits.Limits]:
    """Bounds small enough that a bomb or an endless body is cut off quickly; restored afterwards."""
    old = zl.limits.configure(chunk_bytes=8 << 20, object_bytes=8 << 20, metadata_bytes=256 << 10)
    yield zl.limits.limits()
    zl.limits.restore(old)


# ----------------------------------------------------------------------------------------------
# 1-5, 11, 16-18: metadata no reader can use; the node is an error row, its siblings work


@pytest.mark.parametrize("breakage", ["deep", "long_int"])
def test_unusable_json_shows_on_the_node(qtbot, window: MainWindow, heartbeat: Heartbeat,  # noqa: F811
                                         store: tuple[int, Path], breakage: str) -> None:  # noqa: F811
    fmt, root = store
    key = meta_key(fmt, "arr")
    text = (root / key).read_text().rstrip()[:-1]
    text += ', "x": ' + ("[" * 1000 + "]" * 1000 if breakage == "deep" else "1" + "0" * 5000) + "}"
    (root / key).write_text(text)
    broken_node_then_sibling(qtbot, window, heartbeat, root, "arr", (key,), "gz", DATA)


@pytest.mark.parametrize("data_type", ["r800000000000", "r²"])
def test_data_type_numpy_cannot_make(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path,  # noqa: F811
                                     data_type: str) -> None:
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.update(data_type=data_type, fill_value=0))
    broken_node_then_sibling(qtbot, window, heartbeat, v3, "arr", ("arr/zarr.json", data_type), "bl", DATA)


def test_bad_codec_configuration(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    edit_json(v3 / "arr" / "zarr.json", lambda d: d["codecs"][-1]["configuration"].__setitem__("level", "x"))
    broken_node_then_sibling(qtbot, window, heartbeat, v3, "arr", ("arr/zarr.json", "zstd", "level"), "gz", DATA)


def test_storage_transformers_not_a_list(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.__setitem__("storage_transformers", 5))
    parts = ("arr/zarr.json", "storage_transformers")
    broken_node_then_sibling(qtbot, window, heartbeat, v3, "arr", parts, "raw", DATA)


def test_65_dimensions(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.update(
        shape=[1] * 65, chunk_grid={"name": "regular", "configuration": {"chunk_shape": [1] * 65}}))
    broken_node_then_sibling(qtbot, window, heartbeat, v3, "arr", ("arr/zarr.json", "65 dimensions"), "crc", DATA)


def test_fixed_length_utf32_of_2_gib(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.update(
        data_type={"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**31}}, fill_value=""))
    parts = ("arr/zarr.json", "fixed_length_utf32", "2 GiB")
    broken_node_then_sibling(qtbot, window, heartbeat, v3, "arr", parts, "gz", DATA)


def test_group_attributes_not_an_object(qtbot, window: MainWindow, heartbeat: Heartbeat, tmp_path: Path) -> None:  # noqa: F811
    draft = tmp_path / "draft.zarr"
    shutil.copytree(DRAFT, draft)
    edit_json(draft / "meta" / "root" / "g1.group.json", lambda d: d.__setitem__("attributes", [1, 2]))
    expected = np.load(TESTS / "data" / "zarr2_expected" / "v3draft" / "u1_none.npy")  # what zarr 2.18 wrote
    broken_node_then_sibling(qtbot, window, heartbeat, draft, "g1", ("g1.group.json", "attributes"), "u1_none", expected)


def test_transpose_order_of_the_wrong_length(qtbot, window: MainWindow, heartbeat: Heartbeat, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "t.zarr"
    g = zarr.open_group(root, mode="w", zarr_format=3)
    values = np.arange(24, dtype="<i2").reshape(4, 6)
    for name in ("t", "ok"):
        a = g.create_array(name, shape=values.shape, chunks=(2, 3), dtype="<i2", compressors=None,
                           filters=[TransposeCodec(order=(1, 0))])
        a[:] = values
    edit_json(root / "t" / "zarr.json", lambda d: d["codecs"][0]["configuration"].__setitem__("order", [2, 1, 0]))
    broken_node_then_sibling(qtbot, window, heartbeat, root, "t", ("t/zarr.json", "transpose", "[2, 1, 0]"), "ok", values)


def test_zero_length_unicode_in_v2(qtbot, window: MainWindow, heartbeat: Heartbeat, v2: Path) -> None:  # noqa: F811
    edit_json(v2 / "arr" / ".zarray", lambda d: d.update(dtype="<U0", fill_value=None, compressor=None))
    broken_node_then_sibling(qtbot, window, heartbeat, v2, "arr", ("arr/.zarray", "<U0", "zero-length"), "gz", DATA)


# ----------------------------------------------------------------------------------------------
# 6, 8, 9, 15: chunks that cannot be read; hatched and named while the rest renders


def test_chunk_shape_beyond_int64_fails_every_read_and_nothing_else(qtbot, window: MainWindow,  # noqa: F811
                                                                    heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    edit_json(v3 / "arr" / "zarr.json", lambda d: d["chunk_grid"]["configuration"].__setitem__(
        "chunk_shape", [2**32, 2**31]))
    heartbeat.start()
    drop(qtbot, window, v3)
    for _ in range(2):  # the first failure must not break the next read of it, or of anything else
        click(qtbot, window, "arr")
        assert seen(window, window.proxy.mapToSource(window.tree.currentIndex())).meta["Chunk shape"] == \
            "(4294967296, 2147483648)"
        np.testing.assert_array_equal(shown_image(window), np.zeros((10, 10)))  # fill value, not the last image
        assert_hatched(window, [(0, 0, 10, 10)], "arr/c/0/0", "more than")
        assert_shows(qtbot, window, "gz", DATA)
    heartbeat.assert_responsive()


def _shard_index_entry(v3: Path, offset: int, nbytes: int) -> None:
    key = v3 / "sh" / "c" / "0" / "0"
    blob = key.read_bytes()
    index = read_shard_index(blob, 4)
    index[1] = (offset, nbytes)  # inner chunk (0, 1) of shard (0, 0): rows 0:2, columns 2:4
    key.write_bytes(write_shard_index(blob, index))


def test_shard_index_entry_claiming_8_gib(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    _shard_index_entry(v3, 0, 8 << 30)
    heartbeat.start()
    drop(qtbot, window, v3)
    peak = python_peak(lambda: click(qtbot, window, "sh"))
    expected = DATA8.copy()
    expected[0:2, 2:4] = 0
    np.testing.assert_array_equal(shown_image(window), expected)
    assert_hatched(window, [(2, 0, 2, 2)], "sh/c/0/0")
    assert peak < 64 << 20, f"{peak >> 20} MiB allocated for one corrupt index entry"
    assert_shows(qtbot, window, "raw", DATA)
    heartbeat.assert_responsive()


def test_byte_swapped_shard_index(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    key = v3 / "sh" / "c" / "1" / "1"
    blob = key.read_bytes()
    key.write_bytes(write_shard_index(blob, read_shard_index(blob, 4).byteswap()))
    heartbeat.start()
    drop(qtbot, window, v3)
    click(qtbot, window, "sh")
    expected = DATA8.copy()
    expected[4:, 4:] = 0
    np.testing.assert_array_equal(shown_image(window), expected)
    assert_hatched(window, [(4, 4, 2, 2), (6, 4, 2, 2), (4, 6, 2, 2), (6, 6, 2, 2)], "sh/c/1/1", "index")
    assert_shows(qtbot, window, "raw", DATA)
    heartbeat.assert_responsive()


@pytest.mark.parametrize("codec", ["v3_gzip", "v2_delta_zlib"])
def test_decompression_bomb(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path, v2: Path,  # noqa: F811
                            small_limits: zl.limits.Limits, codec: str) -> None:
    """A chunk of 64 KiB that inflates to 64 MiB of zeros: v3 gzip, where the decoded size is known
    from the chunk shape, and a v2 Delta filter, which leaves the decoder only the chunk bound."""
    zeros = bytes(64 << 20)
    if codec == "v3_gzip":
        root, node, key, blob = v3, "gz", "gz/c/1/1", numcodecs.GZip(level=1).encode(zeros)
    else:
        root, node, key, blob = v2, "delta", "delta/1.1", numcodecs.Zlib(level=1).encode(zeros)
        zarr.open_group(v2, mode="a").create_array(
            "delta", shape=DATA.shape, chunks=(5, 5), dtype="<i4", filters=[numcodecs.Delta("<i4")],
            compressors=numcodecs.Zlib())[...] = DATA
    del zeros
    (root / key).write_bytes(blob)
    heartbeat.start()
    drop(qtbot, window, root)
    peak = python_peak(lambda: click(qtbot, window, node))
    expected = DATA.copy()
    expected[5:, 5:] = 0
    np.testing.assert_array_equal(shown_image(window), expected)
    assert_hatched(window, [(5, 5, 5, 5)], key)
    assert peak < 3 * small_limits.chunk_bytes, f"{peak >> 20} MiB for a bound of {small_limits.chunk_bytes >> 20}"
    assert_shows(qtbot, window, "raw", DATA)
    heartbeat.assert_responsive()


# ----------------------------------------------------------------------------------------------
# 10: a string array, shown as a table, with a chunk whose item count is a lie


def test_vlen_item_count_flipped_marks_those_rows(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    words = [f"word {i} ✓" for i in range(8)]
    zarr.open_group(v3, mode="a").create_array("words", shape=(8,), chunks=(4,), dtype=str, compressors=None)[:] = words
    chunk = v3 / "words" / "c" / "1"
    blob = bytearray(chunk.read_bytes())
    blob[0:4] = (2**31).to_bytes(4, "little")
    chunk.write_bytes(bytes(blob))
    heartbeat.start()
    drop(qtbot, window, v3)
    peak = python_peak(lambda: click(qtbot, window, "words"))
    assert peak < 64 << 20
    table = window.data.table.model()
    assert window.data.stack.currentWidget() is window.data.table and table.rowCount() == 8
    cells = [table.data(table.index(r, 0)) for r in range(8)]
    assert cells == words[:4] + [UNREADABLE] * 4  # not empty strings that pass for data
    for r in range(8):
        tip = table.data(table.index(r, 0), Qt.ItemDataRole.ToolTipRole)
        brush = table.data(table.index(r, 0), Qt.ItemDataRole.BackgroundRole)
        if r < 4:
            assert tip is None and brush is None
        else:
            assert_sentence(tip, "words/c/1", "2147483648 items")
            assert brush.style() == Qt.BrushStyle.BDiagPattern and brush.color().red() == 255
    assert_sentence(window.status_label.text(), "1 chunk of /words", "could not be read", "words/c/1", "2147483648")
    assert_shows(qtbot, window, "raw", DATA)
    click(qtbot, window, "sub/inner")  # and a good 1-D sibling plots
    np.testing.assert_array_equal(plotted(qtbot, window, 3), [1.5, 2.5, 3.5])
    heartbeat.assert_responsive()


# ----------------------------------------------------------------------------------------------
# 7, 12: files that are not plain files


def test_symlink_loops_inside_the_store(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    os.symlink("loop_b", v3 / "loop_a")
    os.symlink("loop_a", v3 / "loop_b")
    os.symlink("..", v3 / "arr" / "c" / "up")  # a directory cycle among the chunks
    heartbeat.start()
    drop(qtbot, window, v3)
    top = window.model.index(0, 0)
    window.tree.expand(window.proxy.mapFromSource(top))
    qtbot.waitUntil(lambda: window.model.item(top).children is not None and not window.model.item(top).loading)
    names = [window.model.data(window.model.index(r, 0, top)) for r in range(window.model.rowCount(top))]
    assert names == ["arr", "bl", "crc", "gz", "raw", "sh", "sub"]
    arr = click(qtbot, window, "arr")
    np.testing.assert_array_equal(shown_image(window), DATA)
    assert window.model.node(arr).stored_objects() == (4, sum(
        p.stat().st_size for p in (v3 / "arr" / "c").rglob("*") if p.is_file() and "up" not in p.parts))
    click(qtbot, window, "sub/inner")
    np.testing.assert_array_equal(plotted(qtbot, window, 3), [1.5, 2.5, 3.5])
    heartbeat.assert_responsive()


@pytest.fixture
def fifo(v3: Path) -> Iterator[Path]:
    """A FIFO in place of chunk gz/c/0/1; whoever blocked opening it is released at the end."""
    path = v3 / "gz" / "c" / "0" / "1"
    path.unlink()
    os.mkfifo(path)
    yield path
    try:  # a reader stuck in open() would hold a worker thread for the rest of the session
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # no reader waiting: nothing was blocked


def test_metadata_on_dev_zero_and_a_fifo_chunk(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path,  # noqa: F811
                                               fifo: Path) -> None:
    (v3 / "arr" / "zarr.json").unlink()
    os.symlink("/dev/zero", v3 / "arr" / "zarr.json")
    # `zarrview STORE::/arr`: the store opens, the node's error is shown where the node would be
    heartbeat.start()
    window.open_location(f"{v3}::/arr")
    _settle(qtbot, window)
    top = window.model.index(0, 0)
    assert window.model.rowCount() == 1 and window.model.node(top).path == "/"
    assert_sentence(window.status_label.text(), f"Cannot open {v3}::/arr", "arr/zarr.json", "character device")
    meta = seen(window, top).meta
    assert meta["Path"] == "/arr"
    assert_sentence(meta["Error"], "arr/zarr.json", "character device")
    assert window.data.stack.currentWidget() is window.data.message
    assert_sentence(window.data.message.text(), "/arr", "arr/zarr.json", "character device")
    click(qtbot, window, "gz")  # the siblings list and read; the FIFO chunk fails at once
    expected = DATA.copy()
    expected[0:5, 5:10] = 0
    np.testing.assert_array_equal(shown_image(window), expected)
    assert_hatched(window, [(5, 0, 5, 5)], "gz/c/0/1", "FIFO")
    assert_shows(qtbot, window, "raw", DATA)
    heartbeat.assert_responsive()


# ----------------------------------------------------------------------------------------------
# 13: a declared shape no machine could hold


@pytest.mark.timeout(20)  # planning from the declared shape hung here: fail fast
def test_shape_2_62_squared_previews_and_zooms(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    """The view must sample a preview within its chunk budget, never plan or allocate from the
    declared shape (counting 10**18 chunks per row hung the GUI thread; QSlider overflowed)."""
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.update(shape=[2**62, 2**62], fill_value=-1))
    drop(qtbot, window, v3)
    peak = python_peak(lambda: click(qtbot, window, "arr"))
    assert peak < 16 << 20
    # responsiveness is timed without tracemalloc, which slows every allocation several times
    # over: the same planning and building again, from a sibling back to the huge array
    click(qtbot, window, "gz")
    heartbeat.start()
    click(qtbot, window, "arr")
    assert seen(window, window.proxy.mapToSource(window.tree.currentIndex())).meta["Shape"] == \
        f"({2**62}, {2**62})"
    plan = window.data.scene.coarse
    assert plan is not None and not plan.full_resolution and plan.chunks <= window.data.budget_chunks
    image = shown_image(window)
    assert image.shape == (len(range(0, 2**62, plan.step_r)), len(range(0, 2**62, plan.step_c)))
    expected = np.full(image.shape, -1)
    expected[0, 0] = DATA[0, 0]  # the one sample that falls on a stored chunk
    np.testing.assert_array_equal(image, expected)
    assert "Preview of /arr" in window.status_label.text()
    window.data.image.view.setRange(xRange=(0, 12), yRange=(0, 12), padding=0)  # zoom in on the stored corner
    qtbot.waitUntil(lambda: window.data.scene.detail is not None, timeout=10000)
    _settle(qtbot, window)
    detail = window.data.scene.detail
    assert detail.full_resolution and detail.r0 == 0 and detail.c0 == 0 and detail.r1 >= 10 and detail.c1 >= 10
    expected = np.full((detail.r1, detail.c1), -1)
    expected[:10, :10] = DATA
    np.testing.assert_array_equal(drawn(window.data, "detail"), expected)
    assert_shows(qtbot, window, "gz", DATA)
    heartbeat.assert_responsive()


def test_a_dimension_of_2_62_gets_a_usable_slider(qtbot, window: MainWindow, heartbeat: Heartbeat, v3: Path) -> None:  # noqa: F811
    planes = np.arange(3 * 10 * 10, dtype="<i4").reshape(3, 10, 10)
    zarr.open_group(v3, mode="a").create_array("stack", shape=planes.shape, chunks=(1, 5, 5), dtype="<i4",
                                               fill_value=-1)[...] = planes
    edit_json(v3 / "stack" / "zarr.json", lambda d: d.update(shape=[2**62, 10, 10]))
    heartbeat.start()
    drop(qtbot, window, v3)
    click(qtbot, window, "stack")
    np.testing.assert_array_equal(shown_image(window), planes[0])
    slider, box = window.data.plane.sliders[0]
    assert isinstance(box, LongIndexBox) and box.isVisible() and slider.isVisible()
    for index, expected in [(2, planes[2]), (2**62 - 1, np.full((10, 10), -1)), (1, planes[1])]:
        window.data.set_index(0, index)
        _settle(qtbot, window)
        assert box.text() == str(index)
        np.testing.assert_array_equal(shown_image(window), expected)
    slider.setValue(slider.maximum())  # dragging the slider to its end reaches the last index
    _settle(qtbot, window)
    assert box.value() == 2**62 - 1
    np.testing.assert_array_equal(shown_image(window), np.full((10, 10), -1))
    assert_shows(qtbot, window, "gz", DATA)
    heartbeat.assert_responsive()


# ----------------------------------------------------------------------------------------------
# 14: a hostile HTTP server, through File ▸ Open URL


def test_endless_metadata_over_http(qtbot, window: MainWindow, heartbeat: Heartbeat, tmp_path: Path,  # noqa: F811
                                    small_limits: zl.limits.Limits) -> None:
    g = zarr.open_group(tmp_path / "web.zarr", mode="w")
    for name in ("bad", "vol"):
        g.create_array(name, shape=DATA.shape, chunks=(5, 5), dtype="<i4")[...] = DATA
    with serve(tmp_path, Faults(bodies={"/web.zarr/bad/zarr.json": Body()})) as (url, state):
        heartbeat.start()
        open_url(qtbot, window, f"{url}/web.zarr::/bad", '{"io_timeout": 5, "io_retries": 2}')
        assert state.wait_quiet(), "the server is still sending: the app never hung up"
        # cut off near the bound: past it only what the sockets' buffers held (the kernel grows a
        # loopback receive buffer up to tcp_rmem's 32 MiB under load); an unbounded read takes it all
        assert state.sent_to("/bad/zarr.json") < ENDLESS_CAP // 4
        where = f"{url}/web.zarr/bad/zarr.json"
        assert_sentence(window.status_label.text(), f"Cannot open {url}/web.zarr::/bad", where, "256 KiB")
        top = window.model.index(0, 0)
        assert window.model.rowCount() == 1 and window.model.node(top).path == "/"
        meta = seen(window, top).meta
        assert meta["Path"] == "/bad"
        assert_sentence(meta["Error"], where, "256 KiB")
        assert_sentence(window.data.message.text(), "/bad", where)
        window.paths.go_to(top, "vol")  # File ▸ Go to Path…: the store is still open and answers
        _settle(qtbot, window)
        np.testing.assert_array_equal(shown_image(window), DATA)
    heartbeat.assert_responsive()
