"""GeoZarr pyramids (the multiscales, proj: and spatial: Zarr conventions) as their writers
made them: zarr-cm 0.5 and geozarr-toolkit 0.1.2 build the attributes, zarr-python writes the
arrays and reads them back as the truth. They are detected as what they are (not OME-NGFF),
their levels are placed by the writers' transforms, the view's level-by-zoom and readout use them,
and ``zarrview export`` of the root writes a level's plane."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import geozarr_stores as gs
from zarrview import zarrlib as zl
from zarrview.cli import main
from zarrview.describe import one_line, summary
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.conventions.declared import MULTISCALES, PROJ, SPATIAL, conventions
from zarrview.viewing.conventions.geozarr import GeoMultiscale, detect_geozarr
from zarrview.viewing.conventions.georef import array_view, pyramid_state, pyramid_view
from zarrview.viewing.image.levels import level_views
from zarrview.viewing.image.readout import readout
from zarrview.viewing.image.scene import Scene
from zarrview.viewing.ome import detect
from zarrview.viewing.ome.text import marker as ome_marker


@pytest.fixture(scope="module")
def zcm(tmp_path_factory: pytest.TempPathFactory) -> gs.Written:
    return gs.zarr_cm_pyramid(tmp_path_factory.mktemp("zcm") / "pyramid.zarr")


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory: pytest.TempPathFactory) -> gs.Written:
    return gs.toolkit_pyramid(tmp_path_factory.mktemp("toolkit") / "store.zarr")


def _found(written: gs.Written) -> GeoMultiscale:
    found = detect_geozarr(zl.open(str(written.root)))
    assert found is not None
    return found


def _geo(transform: list[float], col: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b, c, d, e, f = transform
    return a * col + b * row + c, d * col + e * row + f


@pytest.mark.parametrize("which", ["zcm", "toolkit"])
def test_detected_as_geozarr_not_ome(which: str, request: pytest.FixtureRequest) -> None:
    written: gs.Written = request.getfixturevalue(which)
    group = zl.open(str(written.root))
    assert detect(group) is None
    assert ome_marker(group.attrs) == ""
    assert conventions(written.attrs).applied == {MULTISCALES, PROJ, SPATIAL}
    found = _found(written)
    assert found.problems == ()
    assert found.georeferenced
    assert found.crs is not None and found.crs.name == written.attrs["proj:code"] and found.crs.units == "m"
    assert one_line(group).endswith(f"[GeoZarr multiscales, 3 levels, {written.attrs['proj:code']}]")
    assert ("CRS", written.attrs["proj:code"]) in summary(group)
    assert ("Conventions", "multiscales, proj:, spatial:") in summary(group)


@pytest.mark.parametrize("which", ["zcm", "toolkit"])
def test_levels_hold_what_zarr_reads_where_the_writer_put_them(which: str, request: pytest.FixtureRequest) -> None:
    written: gs.Written = request.getfixturevalue(which)
    found = _found(written)
    levels = found.multiscale.levels
    assert [lv.path for lv in levels] == list(written.levels)
    y, x = found.dims or (-1, -1)
    for level, aff in zip(levels, found.transforms):
        truth = written.levels[level.path]
        assert level.array is not None and level.shape == truth.shape
        np.testing.assert_array_equal(level.array[...], truth)
        declared = written.transforms[level.path]
        assert [aff.a, aff.b, aff.c, aff.d, aff.e, aff.f] == pytest.approx(declared)
        # the level's pixel centres, as the view places them, are the declared transform's
        i = np.arange(level.shape[x])
        j = np.arange(level.shape[y])
        gx, _ = _geo(declared, i + 0.5, np.zeros_like(i) + 0.5)
        _, gy = _geo(declared, np.zeros_like(j) + 0.5, j + 0.5)
        sx, sy = np.sign(declared[0]), np.sign(declared[4])
        np.testing.assert_allclose(sx * (level.scale[x] * i + level.translation[x]), gx)
        np.testing.assert_allclose(sy * (level.scale[y] * j + level.translation[y]), gy)


@pytest.mark.parametrize("which", ["zcm", "toolkit"])
def test_level_by_zoom_and_each_levels_tile_lands_on_its_coordinates(which: str, request: pytest.FixtureRequest) -> None:
    written: gs.Written = request.getfixturevalue(which)
    found = _found(written)
    state = pyramid_state(found)
    assert state is not None and (state.y_dim, state.x_dim) == found.dims
    base = written.transforms[found.multiscale.levels[0].path]
    chosen = []
    for zoom in (1.0, 0.3, 0.1):  # one screen pixel: 1, 3.3 and 10 level-0 pixels
        view, _ = level_views(state.with_(screen_scale=(zoom, zoom)))
        chosen.append(view.index)
        declared = written.transforms[found.multiscale.levels[view.index].path]
        # a level pixel edge k maps to level-0 coordinate a*k + b: the same place on the ground
        k = np.array([0.0, 3.0, 7.0])
        gx_level, gy_level = _geo(declared, k, k)
        gx_base, _ = _geo(base, view.cols[0] * k + view.cols[1], np.zeros(3))
        _, gy_base = _geo(base, np.zeros(3), view.rows[0] * k + view.rows[1])
        np.testing.assert_allclose(gx_level, gx_base)
        np.testing.assert_allclose(gy_level, gy_base)
    assert chosen == [0, 1, 2]
    for lv in found.multiscale.levels:  # a picked level is that level
        assert level_views(state.with_(level=lv.index))[0].array.path == lv.array.path  # type: ignore[union-attr]


@pytest.mark.parametrize("which", ["zcm", "toolkit"])
def test_readout_names_coordinates_and_crs(which: str, request: pytest.FixtureRequest) -> None:
    written: gs.Written = request.getfixturevalue(which)
    found = _found(written)
    state = pyramid_state(found)
    assert state is not None
    state = state.with_(cf=pyramid_view(found, read_cf(state.array)))
    declared = written.transforms[found.multiscale.levels[0].path]
    rows, cols = state.plane_shape
    for row, col in ((0, 0), (rows - 1, cols - 1), (rows // 3, cols // 2)):
        gx, gy = _geo(declared, np.array(col + 0.5), np.array(row + 0.5))
        text = readout(state, Scene(), row, col)
        found_text = re.match(r"y (\S+) m, x (\S+) m \[(\S+)\]", text)
        assert found_text is not None, text
        assert (float(found_text[1]), float(found_text[2])) == (float(gy), float(gx))
        assert found_text[3] == written.attrs["proj:code"]


def test_each_band_of_the_level_groups_is_a_pyramid(toolkit: gs.Written) -> None:
    group = zl.open(str(toolkit.root))
    assert _found(toolkit).variables == ("b02", "b03")
    found = detect_geozarr(group, "b03")
    assert found is not None and found.variable == "b03" and found.problems == ()
    assert toolkit.other is not None
    for level in found.multiscale.levels:
        assert level.array is not None
        np.testing.assert_array_equal(level.array[...], toolkit.other[level.path])


@pytest.mark.parametrize("which", ["zcm", "toolkit"])
def test_a_level_array_opened_alone_has_its_levels_coordinates(which: str, request: pytest.FixtureRequest) -> None:
    """Selecting a level's array (not the pyramid) still georeferences it by its own level's
    transform, never the group's base transform."""
    written: gs.Written = request.getfixturevalue(which)
    for path, declared in written.transforms.items():
        arr = zl.open(f"{written.root}::/{path}")
        cf = array_view(arr, read_cf(arr))
        assert cf is not None and cf.crs == written.attrs["proj:code"]
        y, x = arr.ndim - 2, arr.ndim - 1
        gx, _ = _geo(declared, np.arange(arr.shape[x]) + 0.5, np.zeros(arr.shape[x]))
        _, gy = _geo(declared, np.zeros(arr.shape[y]), np.arange(arr.shape[y]) + 0.5)
        np.testing.assert_allclose(cf.axes[x].values, gx)
        np.testing.assert_allclose(cf.axes[y].values, gy)


@pytest.mark.parametrize("which", ["zcm", "toolkit"])
def test_export_of_the_root_writes_a_levels_plane(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    written: gs.Written = request.getfixturevalue(which)
    for level, path in enumerate(written.levels):
        out = tmp_path / f"level{level}.npy"
        assert main(["export", str(written.root), "--level", str(level), "-o", str(out)]) == 0
        truth = written.levels[path]
        np.testing.assert_array_equal(np.load(out), truth[0] if truth.ndim == 3 else truth)


def test_info_describes_the_pyramid(zcm: gs.Written, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(zcm.root)]) == 0
    out = capsys.readouterr().out
    assert "GeoZarr multiscales (multiscales, proj:, spatial:)" in out
    assert "Level 1: 1  2×60×30  transform [30, 0, 500000, 0, -20, 5e+06]" in out
    assert "OME-NGFF" not in out
