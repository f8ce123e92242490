"""The CRS of GeoZarr stores written as WKT2 and as PROJJSON (pyproj writes both and says what
they mean; geozarr-toolkit builds the attributes): named by code and title, with pyproj's axis
unit, geographic axes in degrees north and east, a (lon, lat) array shown with Y as rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import geozarr_stores as gs
from zarrview import zarrlib as zl
from zarrview.cli import main
from zarrview.describe import summary
from zarrview.viewing.cf.view import read_cf
from zarrview.viewing.conventions.crs import read_crs
from zarrview.viewing.conventions.georef import array_view, spatial_plane
from zarrview.viewing.conventions.geozarr import detect_geozarr
from zarrview.viewing.image.readout import readout
from zarrview.viewing.image.scene import Scene
from zarrview.viewing.image.state import initial_state
from zarrview.viewing.ome.doc import Reporter

UNITS = {"degree": "°", "metre": "m"}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("crs")
    return folder, gs.crs_stores(folder)


def test_wkt2_names_the_crs_as_pyproj_reads_it(stores: tuple[Path, dict]) -> None:
    folder, truth = stores
    t = truth["wkt"]
    arr = zl.open(f"{folder / 'wkt.zarr'}::/temperature")
    assert ("CRS", f"{t['code']} ({t['name']})") in summary(arr)
    cf = array_view(arr, read_cf(arr))
    assert cf is not None and cf.crs == t["code"]
    a, _, c, _, e, f = t["transform"]
    # dimension_names are (lon, lat): spatial:dimensions makes dimension 1 Y and dimension 0 X
    np.testing.assert_allclose(cf.axes[1].values, e * (np.arange(arr.shape[1]) + 0.5) + f)
    np.testing.assert_allclose(cf.axes[0].values, a * (np.arange(arr.shape[0]) + 0.5) + c)
    assert t["geographic"] and (cf.axes[1].kind, cf.axes[0].kind) == ("latitude", "longitude")
    crs = read_crs(arr.attrs, Reporter(arr.path, "$", []))
    assert crs is not None and (crs.name, crs.title, crs.units, crs.geographic) == \
        (t["code"], t["name"], UNITS[t["unit"]], True)
    state = spatial_plane(initial_state(arr))
    assert (state.y_dim, state.x_dim) == (1, 0)  # north up, whatever the storage order
    state = state.with_(cf=cf)
    scene_free = readout(state, Scene(), 30, 90)
    lat, lon = e * 30.5 + f, a * 90.5 + c
    assert scene_free.startswith(f"lat {abs(lat):g} °{'N' if lat >= 0 else 'S'}, lon {abs(lon):g} °"
                                 f"{'E' if lon >= 0 else 'W'} [{t['code']}]"), scene_free


def test_projjson_names_the_crs_and_the_pyramid_is_placed_by_its_levels(stores: tuple[Path, dict],
                                                                       tmp_path: Path) -> None:
    import zarr

    folder, truth = stores
    t = truth["projjson"]
    found = detect_geozarr(zl.open(str(folder / "projjson.zarr")))
    assert found is not None and found.problems == ()
    assert found.crs is not None
    assert (found.crs.name, found.crs.title, found.crs.units, found.crs.geographic) == \
        (t["code"], t["name"], UNITS[t["unit"]], t["geographic"])
    for level, aff in zip(found.multiscale.levels, found.transforms):
        assert [aff.a, aff.b, aff.c, aff.d, aff.e, aff.f] == t["transforms"][level.path]
    out = tmp_path / "b.npy"
    assert main(["export", str(folder / "projjson.zarr"), "--level", "1", "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), zarr.open_array(str(folder / "projjson.zarr" / "b"), mode="r")[...])
