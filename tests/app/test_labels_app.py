"""Label overlays in the window: an image written by ome-zarr-py with a label image shows the
label's colours over it at known pixels of the rendered view (opacity 1 and 0.5), the panel's
check box hides and shows the layer without a read, and the readout names the label and its
properties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarrview.app.window import MainWindow
from zarrview.viewing.labels.layers import palette

from test_app import _settle, window  # noqa: F401  (the window fixture)
from test_channels_app import _close, _pixel

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402

META = {"colors": [{"label-value": 17, "rgba": [0, 0, 255, 255]}, {"label-value": 17, "rgba": [255, 0, 0, 255]}],
        "properties": [{"label-value": 17, "area": 400, "class": "cell"}]}


def _image(path: Path) -> Path:
    data = np.zeros((64, 64), "u1")
    data[:, 48:] = 200          # the right quarter bright: black is 0 in the auto contrast
    label = np.zeros((64, 64), "u4")
    label[8:28, 8:28] = 17      # red (the last of its two colours)
    label[36:56, 8:28] = 3      # no colour stated: the palette's
    return ome_zarr_image(path, "0.4", data, "yx", scale_factors=(), chunks=(64, 64), labels={"nuclei": label},
                          label_metadata=META)


def _labelled(qtbot: Any, w: MainWindow) -> None:
    _settle(qtbot, w)
    qtbot.waitUntil(lambda: w.data.label_panel is not None and w.data.scene.detail is not None
                    and w.data.scene.detail.label("nuclei") is not None and not w.data.scene.busy, timeout=15000)
    _settle(qtbot, w)


def _mix(rgb: tuple[int, ...], alpha: float) -> tuple[int, int, int]:
    return tuple(round(c * alpha) for c in rgb[:3])  # type: ignore[return-value]


def test_label_colours_on_screen_opacity_and_toggle(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    window.open_location(str(_image(tmp_path / "img.zarr")))
    _labelled(qtbot, window)
    panel = window.data.label_panel
    assert panel is not None and list(panel.boxes) == ["nuclei"] and panel.boxes["nuclei"].isChecked()
    assert panel.sliders["nuclei"].value() == 50
    other = tuple(int(v) for v in palette(np.array([3]))[0])
    # opacity 0.5: half the label's colour over black
    assert _close(_pixel(window, 15, 15), (128, 0, 0)), _pixel(window, 15, 15)
    assert _close(_pixel(window, 45, 15), _mix(other, 0.5)), (_pixel(window, 45, 15), other)
    assert _close(_pixel(window, 32, 40), (0, 0, 0))       # label 0: the image shows through
    assert _close(_pixel(window, 32, 56), (200, 200, 200)) or _close(_pixel(window, 32, 56), (255, 255, 255))
    reads = window.data.driver.requests
    panel.sliders["nuclei"].setValue(100)
    qtbot.waitUntil(lambda: _close(_pixel(window, 15, 15), (255, 0, 0)), timeout=5000)
    assert _close(_pixel(window, 45, 15), other[:3])
    panel.boxes["nuclei"].setChecked(False)
    qtbot.waitUntil(lambda: _close(_pixel(window, 15, 15), (0, 0, 0)), timeout=5000)
    assert "nuclei" not in window.data.controller.readout(15, 15)
    panel.boxes["nuclei"].setChecked(True)
    qtbot.waitUntil(lambda: _close(_pixel(window, 15, 15), (255, 0, 0)), timeout=5000)
    assert window.data.driver.requests == reads  # drawn again from the planes read, nothing read
    assert window.data.controller.readout(15, 15) == 'y 15, x 15: 0 | nuclei 17 (area: 400, class: "cell")'
    assert window.data.controller.readout(45, 15).endswith(": 0 | nuclei 3")


def test_a_zoomed_in_label_is_blended_once_over_the_coarse_one(qtbot: Any, window: MainWindow,  # noqa: F811
                                                               tmp_path: Path) -> None:
    """Zoomed in, the detail tile and its label plane lie over the coarse tile and its own: the
    coarse label is hidden by the detail image, so the colour is half the label's, not blended twice."""
    n = 256
    label = np.zeros((n, n), "u4")
    label[:40, :40] = 17  # the coarse sample of the corner is 17 too: its label lies under the detail
    data = np.zeros((n, n), "u1")
    data[:, 192:] = 200  # black is 0 in the auto contrast
    path = ome_zarr_image(tmp_path / "pyr.zarr", "0.5", data, "yx", scale_factors=(2, 4),
                          chunks=(32, 32), labels={"nuclei": label}, label_metadata=META)
    window.data.budget_chunks = 8
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.label_panel is not None and not window.data.scene.busy
                    and any(t.label("nuclei") is not None for t in window.data.scene.tiles()), timeout=15000)
    window.data.image.show_region((0, 64, 0, 64))
    qtbot.waitUntil(lambda: window.data.scene.detail is not None and window.data.scene.detail.level == 0
                    and window.data.scene.coarse is not None and not window.data.scene.busy, timeout=15000)
    _settle(qtbot, window)
    scene = window.data.scene
    assert scene.coarse.label("nuclei") is not None and scene.detail.label("nuclei") is not None
    assert (scene.coarse.level > 0 or scene.coarse.step_r > 1) and scene.detail.rect() != scene.coarse.rect()
    assert _close(_pixel(window, 20, 20), (128, 0, 0)), _pixel(window, 20, 20)
    assert _close(_pixel(window, 50, 50), (0, 0, 0))


def test_label_colours_edited_shuffled_reset_and_exported(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    """A label's colour set by hand, the generated colours shuffled and the metadata's colours
    back: each redrawn from the planes already read (no read), and an exported PNG of the plane
    shows the labels in the colours on screen."""
    from zarrview.viewing.export.plane import export_plane

    from png_decode import decode_png

    window.open_location(str(_image(tmp_path / "img.zarr")))
    _labelled(qtbot, window)
    panel = window.data.label_panel
    panel.sliders["nuclei"].setValue(100)
    qtbot.waitUntil(lambda: _close(_pixel(window, 15, 15), (255, 0, 0)), timeout=5000)
    reads = window.data.driver.requests
    panel.set_colour("nuclei", 17, (0, 200, 255, 255))
    qtbot.waitUntil(lambda: _close(_pixel(window, 15, 15), (0, 200, 255)), timeout=5000)
    panel.shuffle("nuclei")
    shuffled = tuple(int(v) for v in palette(np.array([3]), seed=1)[0][:3])
    assert shuffled != tuple(int(v) for v in palette(np.array([3]))[0][:3])
    qtbot.waitUntil(lambda: _close(_pixel(window, 45, 15), shuffled), timeout=5000)
    assert _close(_pixel(window, 15, 15), (0, 200, 255))  # a colour set by hand stays
    spec = window.data.plane_spec()
    assert spec is not None and [o.layer.name for o in spec.labels] == ["nuclei"]
    export_plane(spec, tmp_path / "shown.png")
    png = decode_png((tmp_path / "shown.png").read_bytes())
    assert tuple(png[15, 15, :3]) == (0, 200, 255) and tuple(png[45, 15, :3]) == shuffled
    assert tuple(png[32, 40, :3]) == (0, 0, 0)  # no label: the image
    panel.reset("nuclei")
    qtbot.waitUntil(lambda: _close(_pixel(window, 15, 15), (255, 0, 0)), timeout=5000)
    assert _close(_pixel(window, 45, 15), tuple(int(v) for v in palette(np.array([3]))[0][:3]))
    assert window.data.driver.requests == reads  # nothing read again
    panel.boxes["nuclei"].setChecked(False)
    qtbot.waitUntil(lambda: window.data.plane_spec() is not None and not window.data.plane_spec().labels, timeout=5000)


def test_a_label_image_opened_alone_has_no_colour_bar_of_its_own(qtbot: Any, window: MainWindow,  # noqa: F811
                                                                   tmp_path: Path) -> None:
    """A label image is drawn in its labels' colours: no grey colour bar or colour map claims
    otherwise; an image opened after it gets both back."""
    path = _image(tmp_path / "img.zarr")
    window.open_location(f"{path}::/labels/nuclei")
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.data.scene.detail is not None and not window.data.scene.busy, timeout=15000)
    data = window.data
    assert data.ome is not None and data.ome.label is not None
    assert not data.image.ui.histogram.isVisible() and data.colours is None
    window.open_location(str(path))
    _labelled(qtbot, window)
    assert window.data.image.ui.histogram.isVisible() and window.data.colours is not None
