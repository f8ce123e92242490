"""ML data types in the window: a bfloat16 image and a float8 line show ml_dtypes' float32 values
of what is stored, the readout prints those values, and the metadata panel names the stored type
with what it is shown as."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from PySide6.QtCore import QPointF

pytest.importorskip("pytestqt")

from _window_helpers import click, drop, seen  # noqa: E402
from test_app import _settle, plotted, window  # noqa: E402,F401  (the window fixture)
from zarrview.app.window import MainWindow  # noqa: E402
from drawn import drawn

pytestmark = pytest.mark.timeout(60)

rng = np.random.default_rng(17)
IMAGE = (rng.normal(size=(30, 40)) * 100).astype(ml_dtypes.bfloat16)
LINE = np.linspace(-200, 200, 50).astype(ml_dtypes.float8_e4m3fn)


def array(root: Path, name: str, values: np.ndarray, data_type: str, dims: list[str]) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": list(values.shape), "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(values.shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}}, "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "dimension_names": dims}))
    (folder / ".".join("c" + "0" * values.ndim)).write_bytes(values.view(f"<u{values.dtype.itemsize}").tobytes())


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "ml.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))
    array(root, "image", IMAGE, "bfloat16", ["y", "x"])
    array(root, "line", LINE, "float8_e4m3fn", ["t"])
    return root


def test_a_bfloat16_image_shows_float32_values_and_names_its_type(qtbot: Any, window: MainWindow, store: Path) -> None:
    drop(qtbot, window, store)
    index = click(qtbot, window, "image")
    s = seen(window, index)
    assert s.meta["Data type"] == "bfloat16 (shown as float32)" and s.meta["Fill value"] == "0.0"
    assert s.meta["Logical size"] == "2.3 KiB (2,400 bytes)"  # 30 x 40 two-byte elements
    _settle(qtbot, window)
    shown = drawn(window.data)
    assert shown.dtype == np.float32
    np.testing.assert_array_equal(shown, IMAGE.astype(np.float32))
    vb = window.data.image.view.getViewBox()
    window.data.image._mouse_moved(vb.mapViewToScene(QPointF(17.5, 11.5)))  # column 17, row 11
    assert window.status_label.text() == f"y 11, x 17: {float(IMAGE[11, 17].astype(np.float32))!r}"


def test_a_float8_line_plots_its_float32_values(qtbot: Any, window: MainWindow, store: Path) -> None:
    drop(qtbot, window, store)
    index = click(qtbot, window, "line")
    assert seen(window, index).meta["Data type"] == "float8_e4m3fn (shown as float32)"
    _settle(qtbot, window)
    np.testing.assert_array_equal(plotted(qtbot, window, len(LINE)), LINE.astype(np.float32).astype(np.float64))



def test_cli_export_writes_the_float32_values_shown(store: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    from png_decode import decode_png

    for name in ("p.npy", "p.png"):
        out = subprocess.run([sys.executable, "-m", "zarrview", "export", f"{store}::/image", "-o", str(tmp_path / name)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
    back = np.load(tmp_path / "p.npy")
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, IMAGE.astype(np.float32))
    assert decode_png((tmp_path / "p.png").read_bytes()).shape == (30, 40, 3)
