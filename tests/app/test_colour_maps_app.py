"""The colour map beside a plane: chosen by the data at first, picked in plain sight, applied to
the image and its export, remembered per array."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from test_app import _settle, window  # noqa: E402,F401  (the window fixture)

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.image.colour_maps import DIVERGING, GREY, PERCEPTUAL, lookup_table  # noqa: E402


def _store(tmp_path: Path) -> Path:
    g = zarr.open_group(tmp_path / "maps.zarr", mode="w")
    y, x = np.mgrid[0:40, 0:50]
    g.create_array("anomaly", shape=(40, 50), chunks=(20, 25), dtype="f4")[...] = np.sin(x / 7.0) * 3
    t = g.create_array("t2m", shape=(40, 50), chunks=(20, 25), dtype="f4")
    t[...] = 280 + y * 0.5
    t.attrs["units"] = "K"
    g.create_array("cells", shape=(40, 50), chunks=(20, 25), dtype="u2")[...] = (x * y) % 300
    return tmp_path / "maps.zarr"


def _shown(window: MainWindow) -> np.ndarray:
    hist = window.data.image.ui.histogram.item
    return np.asarray(hist.gradient.getLookupTable(256, alpha=True), dtype=np.uint8)


@pytest.mark.parametrize(("name", "want"), [("anomaly", DIVERGING), ("t2m", PERCEPTUAL), ("cells", GREY)])
def test_the_first_map_follows_the_data(qtbot: Any, window: MainWindow, tmp_path: Path, name: str, want: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    gradient = window.data.image.ui.histogram.item.gradient
    built: list[Any] = []  # a map's gradient costs tens of ms of the GUI thread: built once, never twice
    real = gradient.setColorMap
    monkeypatch.setattr(gradient, "setColorMap", lambda cm: (built.append(cm), real(cm))[1])
    window.data.set_array(zl.open(f"{_store(tmp_path)}::/{name}"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    control = window.data.colours
    assert control is not None and control.name == want
    assert len(built) == (0 if want == GREY else 1)
    np.testing.assert_allclose(_shown(window).astype(int), lookup_table(want).astype(int), atol=1)


def test_a_map_picked_is_drawn_exported_and_remembered(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    store = _store(tmp_path)
    window.data.set_array(zl.open(f"{store}::/cells"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    control = window.data.colours
    assert control is not None
    control.combo.setCurrentText("magma")
    control.reverse.setChecked(True)
    want = lookup_table("magma", reverse=True)
    np.testing.assert_allclose(_shown(window).astype(int), want.astype(int), atol=1)
    spec = window.data.plane_spec()
    assert spec is not None and spec.lut is not None
    np.testing.assert_allclose(spec.lut[:, :3].astype(int), want[:, :3].astype(int), atol=1)  # the export's colours
    window.data.set_array(zl.open(f"{store}::/t2m"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    assert window.data.colours is not None and window.data.colours.name == PERCEPTUAL  # another array: its own
    window.data.set_array(zl.open(f"{store}::/cells"))  # type: ignore[arg-type]
    _settle(qtbot, window)
    again = window.data.colours
    assert again is not None and again.name == "magma" and again.reverse.isChecked()
    np.testing.assert_allclose(_shown(window).astype(int), want.astype(int), atol=1)
