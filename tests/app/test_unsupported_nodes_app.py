"""An array with a codec or data type zarrlib lacks, in the window: its row is
marked, the metadata panel shows what its document says and the error, the data view shows the
error instead of an image, and its siblings open normally; a root array like it opens too.

Stores are written by zarr-python, then one ``zarr.json`` is edited by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from _window_helpers import assert_sentence, assert_shows, click, drop, model_colour, seen  # noqa: E402
from test_app import _settle, window  # noqa: E402,F401  (the window fixture)
from zarrview.app.window import MainWindow  # noqa: E402

pytestmark = pytest.mark.timeout(60)

GOOD = np.arange(20, dtype="f4").reshape(4, 5)


def edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = zarr.open_group(tmp_path / "s.zarr", mode="w", zarr_format=3)
    root.create_array("good", shape=(4, 5), chunks=(2, 5), dtype="f4")[:] = GOOD
    bad = root.create_array("badcodec", shape=(6, 7), chunks=(3, 7), dtype="i2")
    bad[:] = 1
    bad.attrs["note"] = "kept"
    root.create_array("baddtype", shape=(9,), chunks=(4,), dtype="u1")[:] = 2
    edit(tmp_path / "s.zarr" / "badcodec" / "zarr.json", lambda d: d["codecs"].append({"name": "nonexistent_codec"}))
    edit(tmp_path / "s.zarr" / "baddtype" / "zarr.json", lambda d: d.__setitem__("data_type", "float7_e3m3"))
    return tmp_path / "s.zarr"


def attributes(w: MainWindow) -> dict[str, str]:
    top = w.meta.attrs.invisibleRootItem()
    return {top.child(i).text(0): top.child(i).text(1) for i in range(top.childCount())}


def test_unsupported_child_shows_metadata_and_error_and_siblings_work(qtbot, window: MainWindow, store: Path) -> None:  # type: ignore[no-untyped-def]
    drop(qtbot, window, store)
    index = click(qtbot, window, "badcodec")
    s = seen(window, index)
    assert s.row == ["badcodec", "(6, 7)", "error"] and model_colour(window, index) == (200, 40, 40)
    assert_sentence(s.tooltip, "codec 'nonexistent_codec'", "/badcodec/zarr.json", "is not supported")
    assert s.meta["Path"] == "/badcodec" and s.meta["Kind"] == "array" and s.meta["Shape"] == "(6, 7)"
    assert s.meta["Chunk shape"] == "(3, 7)" and s.meta["Data type"] == "int16"
    assert s.meta["Codecs"] == "bytes → zstd → nonexistent_codec"
    assert_sentence(s.meta["Error"], "codec 'nonexistent_codec'", "is not supported (supported: ")
    assert attributes(window) == {"note": "kept"}
    qtbot.waitUntil(lambda: window.meta.json.toPlainText().startswith("{"), timeout=5000)  # written on a worker
    assert json.loads(window.meta.json.toPlainText())["codecs"][-1] == {"name": "nonexistent_codec"}
    assert s.message is not None and "nonexistent_codec" in s.message and window.data.array is None

    index = click(qtbot, window, "baddtype")
    s = seen(window, index)
    assert s.row[:2] == ["baddtype", "(9,)"] and s.meta["Data type"] == "float7_e3m3"
    assert s.message is not None and "data type 'float7_e3m3'" in s.message

    assert_shows(qtbot, window, "good", GOOD)


def test_unsupported_root_array_opens_with_its_metadata(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    arr = zarr.create_array(tmp_path / "r.zarr", shape=(4,), chunks=(2,), dtype="i4", zarr_format=3)
    arr[:] = 5
    edit(tmp_path / "r.zarr" / "zarr.json", lambda d: d["codecs"].append({"name": "nonexistent_codec"}))
    window.open_location(str(tmp_path / "r.zarr"))
    _settle(qtbot, window)
    assert window.model.rowCount() == 1
    index = window.model.index(0, 0)
    assert window.proxy.mapToSource(window.tree.currentIndex()) == index
    s = seen(window, index)
    assert s.row == ["r.zarr", "(4,)", "error"]
    assert s.meta["Path"] == "/" and s.meta["Shape"] == "(4,)" and "nonexistent_codec" in s.meta["Codecs"]
    assert_sentence(s.meta["Error"], "codec 'nonexistent_codec'", "/zarr.json", "is not supported")
    assert s.message is not None and "nonexistent_codec" in s.message
