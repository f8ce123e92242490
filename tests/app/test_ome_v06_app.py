"""OME-Zarr 0.6 in the window, written by ngff-zarr 0.50: a coarse level's tile lies over level 0
where ngff-zarr's scale and translation put it (not a quarter-size image in a corner), a zoomed
corner reads level 0's values, and the OME tab lists the coordinate systems and levels as
ngff-zarr reads them back; a scene group tabulates its links."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytestqt")
nz = pytest.importorskip("ngff_zarr")

from _window_helpers import show_image, zoom_to_corner  # noqa: E402
from ome_stores import spec_example, write_group  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.viewing.ome import OmeScene  # noqa: E402


def _written(tmp_path: Path) -> tuple[Path, np.ndarray, Any]:
    y, x = np.mgrid[0:2048, 0:2048]
    data = ((y // 16 + x // 16) % 2 * 1000 + x).astype("u2")
    image = nz.to_ngff_image(data, dims=["y", "x"], scale={"y": 0.5, "x": 0.25}, translation={"y": 20.0, "x": -4.0},
                             axes_units={"y": "micrometer", "x": "micrometer"}, name="checks")
    path = tmp_path / "checks.ome.zarr"
    nz.to_ngff_zarr(str(path), nz.to_multiscales(image, scale_factors=[2, 4, 8], chunks=128), version="0.6")
    return path, data, nz.from_ngff_zarr(str(path))


def test_a_coarse_level_lies_over_level_0(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path, data, ref = _written(tmp_path)
    state, tile = show_image(qtbot, window, str(path))
    assert state is not None and state.pyramid is not None and len(state.pyramid) == 4
    assert tile is not None and tile.level > 0  # the whole image fits the view only from a coarser level
    s0, sk = ref.images[0], ref.images[tile.level]
    for step, origin, axis in ((tile.step_r, tile.r0, "y"), (tile.step_c, tile.c0, "x")):
        assert step == pytest.approx(sk.scale[axis] / s0.scale[axis])
        edge = (sk.translation[axis] - sk.scale[axis] / 2) - (s0.translation[axis] - s0.scale[axis] / 2)
        assert origin == pytest.approx(edge / s0.scale[axis])
    np.testing.assert_array_equal(tile.values, np.asarray(sk.data)[: tile.values.shape[0], : tile.values.shape[1]])
    tile = zoom_to_corner(qtbot, window)
    np.testing.assert_array_equal(tile.values, data[tile.r0:tile.r1, tile.c0:tile.c1])
    assert "Error" not in window.status_label.text()


def test_the_ome_tab_lists_coordinate_systems_and_levels(qtbot: Any, window: MainWindow,  # noqa: F811
                                                        tmp_path: Path) -> None:
    path, _, ref = _written(tmp_path)
    window.open_location(str(path))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.meta.ome.node is not None, timeout=15000)
    ome = window.meta.ome
    units = ref.images[0].axes_units
    assert ome.rows("Axes") == [["0", "y", "space", units["y"]], ["1", "x", "space", units["x"]]]
    system = ref.metadata.coordinateSystems[0]
    assert ome.rows("Coordinate systems") == [[system.name, f"y (space, {units['y']}), x (space, {units['x']})"]]
    for row, im in zip(ome.rows("Levels"), ref.images):
        assert row[3] == f"({im.scale['y']:g}, {im.scale['x']:g})"
        assert row[4] == f"({im.translation['y']:g}, {im.translation['x']:g})"
    assert ome.titles()[-1] == "Problems"


def test_a_scene_lists_its_links(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    attrs = spec_example("0.6", "scene/scene_stitching")
    root = write_group(tmp_path / "scene.zarr", "0.6", attrs)
    axes = [{"name": "x", "type": "space", "unit": "micrometer"}, {"name": "y", "type": "space", "unit": "micrometer"}]
    links = attrs["ome"]["scene"]["coordinateTransformations"]
    for t in links:
        ms = {"coordinateSystems": [{"name": "physical", "axes": axes}], "datasets": [
            {"path": "s0", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0], "input": {"path": "s0"},
                                                         "output": {"name": "physical"}}]}]}
        write_group(root / t["input"]["path"], "0.6", {"ome": {"version": "0.6rc0", "multiscales": [ms]}},
                    {"s0": {"shape": (4, 4), "dimension_names": ["x", "y"]}})
    window.open_location(str(root))
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.meta.ome.node is not None, timeout=15000)
    ome = window.meta.ome
    assert isinstance(ome.node, OmeScene)
    assert ome.rows("Transformations") == [
        [f"translation ({t['name']}): 'physical' of {t['input']['path']!r} -> 'world'"] for t in links]
    assert ome.rows("Coordinate systems") == [["world", "x (space, micrometer), y (space, micrometer)"]]
    assert ome.titles()[-1] == "Problems"
