"""Channels in colour without Qt: settings from ``omero`` (written by ome-zarr-py) or a palette,
the composite checked against numpy written here from the specification's rules, and the view
model's composite mode (read whole, re-composited without a read, windows from the data, the
readout of every channel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.viewing.image.channels import (ChannelSetting, auto_windows, channel_axis, composite, palette,
                                       settings_from_omero)
from zarrview.viewing.image.pixels import unpack
from zarrview.viewing.image.rendering import Look, render_tile
from zarrview.viewing.image.scene import Scene
from zarrview.viewing.ome import OmeImage, detect
from zarrview.viewing.ome.model import Axis, Channel, Omero, Rdefs, Window
from zarrview.viewing.ome.view import image_state
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore
from view_harness import Harness

pytest.importorskip("ome_zarr")
from ome_stores import ome_zarr_image  # noqa: E402

OMERO = {"channels": [
    {"label": "DAPI", "color": "0000FF", "window": {"start": 100, "end": 1100, "min": 0, "max": 4095}, "active": True},
    {"label": "GFP", "color": "00FF00", "window": {"start": 0, "end": 2000, "min": 0, "max": 4095}, "active": True,
     "inverted": True},
    {"label": "RFP", "color": "FF8000", "window": {"start": 50, "end": 450, "min": 0, "max": 4095}, "active": False}],
    "rdefs": {"defaultZ": 1, "model": "color"}}


def truth(values: np.ndarray, chans: list[dict[str, Any]]) -> np.ndarray:
    """The composite by the specification's words, one pixel at a time for a small image."""
    rows, cols, _ = values.shape
    out = np.zeros((rows, cols, 3))
    for r in range(rows):
        for c in range(cols):
            for i, ch in enumerate(chans):
                if not ch.get("active", True):
                    continue
                v = float(values[r, c, i])
                if np.isnan(v):
                    continue
                start, end = ch["window"]["start"], ch["window"]["end"]
                t = min(1.0, max(0.0, (v - start) / (end - start)))
                if ch.get("inverted", False):
                    t = 1.0 - t
                rgb = [int(ch["color"][k:k + 2], 16) / 255 for k in (0, 2, 4)]
                out[r, c] += [t * x for x in rgb]
    return np.minimum(out, 1.0)


@pytest.fixture(scope="module", params=["0.4", "0.5"])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    rng = np.random.default_rng(11)
    data = rng.integers(0, 4096, (3, 2, 64, 48), dtype="u2")
    path = ome_zarr_image(tmp_path_factory.mktemp("ch") / "img.zarr", request.param, data, "czyx",
                          scale_factors=(2,), chunks=(1, 1, 32, 32), omero=OMERO)
    return path, data


def _image(path: Path, store: Any = None) -> OmeImage:
    img = detect(zl.open(store if store is not None else str(path)))
    assert isinstance(img, OmeImage)
    return img


def test_settings_from_omero_written_by_ome_zarr_py(written: tuple[Path, np.ndarray]) -> None:
    img = _image(written[0])
    settings = settings_from_omero(img.omero, 3)
    assert [s.label for s in settings] == ["DAPI", "GFP", "RFP"]
    assert [s.color for s in settings] == [(0, 0, 255), (0, 255, 0), (255, 128, 0)]
    assert [s.window for s in settings] == [(100, 1100), (0, 2000), (50, 450)]
    assert [s.limits for s in settings] == [(0, 4095)] * 3
    assert [(s.active, s.inverted) for s in settings] == [(True, False), (True, True), (False, False)]
    # more channels than described: the rest from the palette, windows from the data
    more = settings_from_omero(img.omero, 5)
    assert [s.index for s in more] == list(range(5)) and more[4].window is None and more[4].color == palette(5)[4]


def test_defaults_and_palette() -> None:
    # a channel without colour, window, active or inverted takes the defaults
    omero = Omero((Channel(label=None, color=None, window=Window(min=0, max=10)),), Rdefs())
    [s] = settings_from_omero(omero, 1)
    assert (s.label, s.color, s.window, s.limits, s.active, s.inverted) == ("channel 0", (255, 255, 255), None,
                                                                          (0, 10), True, False)
    assert palette(1) == [(255, 255, 255)]
    assert palette(2) == [(0, 255, 0), (255, 0, 255)]
    assert len(set(palette(7))) == 7
    many = palette(40)
    assert len(set(many)) == 40 and all(max(c) == 255 for c in many)
    assert settings_from_omero(None, 3) == tuple(ChannelSetting(i, f"channel {i}", c) for i, c in enumerate(palette(3)))
    assert channel_axis([Axis("t", "time"), Axis("ch", "channel"), Axis("y", "space")]) == 1
    assert channel_axis(None, ["z", "c", "y", "x"]) == 1 and channel_axis(None, ["z", "y", "x"]) is None


def test_composite_matches_the_rules() -> None:
    rng = np.random.default_rng(2)
    values = rng.uniform(-100, 2500, (9, 7, 3)).astype("f4")
    values[2, 3, 0] = np.nan
    values[4, 4, :] = np.nan
    values[1, 1, 1] = np.inf
    settings = settings_from_omero(_omero_model(), 3)
    got = composite(values, settings)
    assert got.shape == (9, 7, 3) and got.dtype == np.float32
    np.testing.assert_allclose(got, truth(values, OMERO["channels"]), atol=1e-5)
    assert (got[4, 4] == 0).all()  # NaN everywhere: nothing, not the inverted channel's full colour
    off = [s.with_(active=False) for s in settings]
    assert (composite(values, off) == 0).all()


def _omero_model() -> Omero:
    chans = tuple(Channel(c["label"], c["color"], Window(**c["window"]), c.get("active", True), c.get("inverted", False))
                  for c in OMERO["channels"])
    return Omero(chans, Rdefs(1, None, "color"))


#: a composite is drawn in bytes: within half a step of 255 of the exact colour
ROUNDING = 0.5 / 255 + 1e-5


def _drawn(scene: Scene) -> np.ndarray:
    """The composite the screen shows of the scene's tile, as RGB in [0, 1]."""
    tile = scene.detail or scene.coarse
    assert tile is not None and scene.composite
    return unpack(render_tile(tile, Look((0.0, 1.0), channels=scene.channels), (1, 1)).pixels)[..., :3] / 255


def test_auto_windows_from_finite_values() -> None:
    v = np.zeros((50, 40, 2), "f4")
    v[..., 0] = np.arange(2000).reshape(50, 40)
    v[..., 1] = 7.0
    v[0, 0, 0] = np.nan
    v[0, 1, 0] = np.inf
    finite = v[..., 0][np.isfinite(v[..., 0])]
    a, b = auto_windows(v, settings_from_omero(None, 2))
    np.testing.assert_allclose(a.window, np.percentile(finite, (0.5, 99.5)))
    assert b.window == (6.5, 7.5)  # uniform: a unit range around the value


def test_image_state_composite_reads_channels_whole_and_recomposites(written: tuple[Path, np.ndarray]) -> None:
    path, data = written
    store = CountingStore(LocalStore(str(path)))
    img = _image(path, store)
    state = image_state(img)
    assert state is not None and state.composite and state.channel_dim == state.channel_axis == 0
    assert state.indices[1] == 1  # rdefs defaultZ
    h = Harness()
    try:
        scene = h.show(state)
        tile = scene.detail or scene.coarse
        assert tile is not None and tile.level == 0 and scene.composite and scene.levels == (0.0, 1.0)
        np.testing.assert_array_equal(tile.values, np.moveaxis(data[:, 1], 0, -1))
        np.testing.assert_allclose(_drawn(scene), truth(tile.values, OMERO["channels"]), atol=ROUNDING)
        reads = len(store.chunk_keys())
        # a channel's window, colour and visibility: drawn again, nothing read
        chans = list(h.ctl.state.channels)
        chans[0] = chans[0].with_(window=(0.0, 4095.0), color=(255, 0, 0))
        chans[2] = chans[2].with_(active=True)
        scene = h.show(h.ctl.state.with_(channels=tuple(chans)))
        assert len(store.chunk_keys()) == reads
        spec = [dict(c) for c in OMERO["channels"]]
        spec[0] = {**spec[0], "window": {"start": 0, "end": 4095}, "color": "FF0000"}
        spec[2] = {**spec[2], "active": True}
        np.testing.assert_allclose(_drawn(scene), truth(tile.values, spec), atol=ROUNDING)
        # the readout lists every channel
        text = h.ctl.readout(5, 6)
        v = data[:, 1, 5, 6]
        assert text.endswith(f"DAPI {v[0]}, GFP {v[1]}, RFP {v[2]}"), text
        # auto contrast: each channel's window from its own values
        h.auto_contrast()
        wins = [c.window for c in h.ctl.state.channels]
        for i, w in enumerate(wins):
            np.testing.assert_allclose(w, np.percentile(data[i, 1].astype(float), (0.5, 99.5)))
        assert len(store.chunk_keys()) == reads
        # single mode: one channel on a slider, the histogram's levels
        single = h.ctl.state.with_(channel_mode="single", channel_dim=None)
        scene = h.show(single)
        tile = scene.detail or scene.coarse
        assert not scene.composite and tile.image.ndim == 2
        np.testing.assert_array_equal(tile.values, data[0, 1])
    finally:
        h.close()


def test_without_omero_a_palette_and_windows_from_the_data(tmp_path: Path) -> None:
    data = np.zeros((2, 32, 32), "u2")
    data[0, :16] = 1000
    data[1, :, :16] = 50
    path = ome_zarr_image(tmp_path / "plain.zarr", "0.4", data, "cyx", scale_factors=(), chunks=(1, 32, 32))
    state = image_state(_image(path))
    assert state is not None and state.composite and [c.color for c in state.channels] == palette(2)
    h = Harness()
    try:
        scene = h.show(state)
        assert all(c.window is not None for c in h.ctl.state.channels)
        img = _drawn(scene)
        # top left: both channels at their top; green + magenta = white
        np.testing.assert_allclose(img[0, 0], [1, 1, 1])
        np.testing.assert_allclose(img[0, 20], [0, 1, 0])
        np.testing.assert_allclose(img[20, 0], [1, 0, 1])
        np.testing.assert_allclose(img[20, 20], [0, 0, 0])
    finally:
        h.close()


def test_greyscale_model_opens_single(tmp_path: Path) -> None:
    omero = {**OMERO, "rdefs": {"model": "greyscale"}}
    data = np.zeros((3, 16, 16), "u2")
    path = ome_zarr_image(tmp_path / "grey.zarr", "0.5", data, "cyx", scale_factors=(), omero=omero)
    state = image_state(_image(path))
    assert state is not None and state.channel_mode == "single" and not state.composite
    assert state.channel_dim is None and state.channel_axis == 0 and len(state.channels) == 3
    # a channel picked on the command line is shown alone too
    state = image_state(_image(path), {0: 2})
    assert state is not None and not state.composite and state.indices[0] == 2
