"""Dimension names, coordinate axes and convention keys (viewing/cf: dims, coords, conventions).

The truth is what xarray decodes from the same store (values, dimension names, which variables
are coordinates), numpy's argmin over those values for ``nearest``, labels formatted here from
xarray's values, and CF appendix A for the convention keys. NCZarr stores are built by hand after
netCDF-C's documentation; the 4.8 layout is also read by xarray, which then gives the truth.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cf_coord_stores import LONS, cf_dataset, nczarr_48, nczarr_new, v2_array, v2_group, write_xarray
from zarrview import zarrlib
from zarrview.viewing.cf import coords
from zarrview.viewing.cf.conventions import convention_of, geo_metadata, short_text
from zarrview.viewing.cf.axis_kind import flip_vertical
from zarrview.viewing.cf.coords import CoordError, coordinate_axes
from zarrview.viewing.cf.dims import dimension_names, read_dimensions

xr = pytest.importorskip("xarray")
APPENDIX_A = Path(__file__).resolve().parents[1] / "data" / "cf" / "appa.adoc"
DIMS = ("time", "level", "lat", "lon")


@pytest.fixture(scope="module", params=[(2, True), (2, False), (3, True), (3, False)], ids=lambda p: f"v{p[0]}-{'cons' if p[1] else 'plain'}")
def cf_store(request: Any, tmp_path_factory: Any) -> tuple[Path, bool]:
    fmt, consolidated = request.param
    path = tmp_path_factory.mktemp("cf") / "era.zarr"
    return write_xarray(cf_dataset(), path, fmt, consolidated), consolidated


def _open(store: tuple[Path, bool]) -> tuple[Any, Any]:
    path, consolidated = store
    return zarrlib.open(str(path)), xr.open_zarr(path, consolidated=consolidated)


def _lat_label(v: float) -> str:
    return f"{abs(v):g} °{'S' if v < 0 else 'N'}"


def _lon_label(v: float) -> str:
    return f"{v:g} °E" if v <= 180 else f"{360 - v:g} °W"


def test_axes_are_xarrays_coordinates(cf_store: tuple[Path, bool]) -> None:
    g, ds = _open(cf_store)
    axes, notes = coordinate_axes(g, g["t"], "t")
    assert dimension_names(g["t"]) == ds["t"].dims == DIMS
    assert sorted(axes) == [0, 1, 2, 3]
    for d, dim in enumerate(DIMS[1:], start=1):
        truth = ds["t"][dim].values
        axis = axes[d]
        assert (axis.dim, axis.name, axis.units) == (d, dim, ds[dim].attrs["units"])
        np.testing.assert_array_equal(axis.values, truth)
        np.testing.assert_array_equal(axis.numeric(), truth.astype(np.float64))
        assert axis.descending == bool((np.diff(truth) < 0).all())
    assert [axes[d].kind for d in range(1, 4)] == ["vertical", "latitude", "longitude"]
    assert axes[1].positive_down and not axes[2].positive_down
    # xarray listed the 2-D coordinates in t's `coordinates`; they are named in notes, on no axis
    assert set(g["t"].attrs["coordinates"].split()) == {"lat2d", "lon2d"}
    assert set(ds["t"].coords) >= {"lat2d", "lon2d"}
    assert all(any(name in n and "not on an axis" in n for n in notes) for name in ("lat2d", "lon2d"))
    assert len(notes) == 2


def test_labels_and_ticks(cf_store: tuple[Path, bool]) -> None:
    g, ds = _open(cf_store)
    axes, _ = coordinate_axes(g, g["t"], "t")
    expected = {
        1: [f"{v:g} hPa" for v in ds["level"].values],
        2: [_lat_label(v) for v in ds["lat"].values],
        3: [_lon_label(v) for v in ds["lon"].values],
    }
    for d, labels in expected.items():
        assert axes[d].labels() == labels
        assert [axes[d].format(x) for x in axes[d].numeric()] == labels
    assert "0.125 °N" in expected[2] and "0.25 °W" in expected[3]  # the data needs these decimals


def test_nearest_is_argmin(cf_store: tuple[Path, bool]) -> None:
    g, ds = _open(cf_store)
    axes, _ = coordinate_axes(g, g["t"], "t")
    level, lat, lon = (ds[n].values.astype(float) for n in ("level", "lat", "lon"))
    for q in (990.0, 600.4, 10.0, 2000.0, 380.0):
        i = int(np.argmin(np.abs(level - q)))
        assert axes[1].nearest(f"{q} hPa") == axes[1].nearest(f"{q}") == axes[1].nearest(f"{q}hPa") == i
    for q in (44.0, -0.2, 0.3, -60.0, 80.0, -89.0):
        i = int(np.argmin(np.abs(lat - q)))
        hemi = f"{abs(q)}{'S' if q < 0 else 'N'}"
        assert axes[2].nearest(str(q)) == axes[2].nearest(hemi) == axes[2].nearest(f"{abs(q)} °{hemi[-1]}") == i
    for q in (-12.6, 359.9, 181.3, 0.1, 90.05, -179.9):
        i = int(np.argmin(np.abs((lon - q + 180) % 360 - 180)))
        west = f"{-q} W" if q < 0 else f"{q}E"
        assert axes[3].nearest(str(q)) == axes[3].nearest(west) == i
    assert axes[2].nearest("45 degrees_north") == int(np.argmin(np.abs(lat - 45)))
    assert axes[3].nearest("-12.6 degrees_east") == int(np.argmin(np.abs((lon + 12.6 + 180) % 360 - 180)))
    bad = ((axes[1], "500 K"), (axes[1], "five hundred"), (axes[2], "45E"), (axes[3], "10N"), (axes[2], ""),
           (axes[2], "45 degrees_east"))
    for axis, text in bad:
        with pytest.raises(CoordError, match=re.escape(repr(text))):
            axis.nearest(text)
    assert issubclass(CoordError, ValueError)


def test_time_axis_against_xarray(cf_store: tuple[Path, bool]) -> None:
    g, ds = _open(cf_store)
    axes, _ = coordinate_axes(g, g["t"], "t")
    truth = ds["time"].values
    time = axes[0]
    assert (time.kind, time.name, len(time)) == ("time", "time", len(truth))
    assert time.labels() == [str(np.datetime_as_string(v, unit="m")).replace("T", " ") for v in truth]
    days = (truth - truth[0]) / np.timedelta64(1, "D")
    np.testing.assert_allclose(time.numeric() - time.numeric()[0], days)
    for text in ("2001-03-04 07:00", "2001-03-04T10:00", "2001-03-05", "2000-01-01"):
        assert time.nearest(text) == int(np.argmin(np.abs(truth - np.datetime64(text.replace(" ", "T"))))), text
    assert time.format(time.numeric()[1]) == time.label(1)
    with pytest.raises(CoordError, match="'yesterday'"):
        time.nearest("yesterday")
    assert not flip_vertical(time)


def test_flip_vertical(tmp_path: Path) -> None:
    """North up, depth down: descending latitude and ascending depth are drawn as stored (row 0
    at the top); ascending latitude and descending pressure levels are drawn bottom-up."""
    up = write_xarray(cf_dataset(lat_ascending=True), tmp_path / "up.zarr", 3, False)
    down = write_xarray(cf_dataset(), tmp_path / "down.zarr", 3, False)
    for path, lat_flipped in ((up, True), (down, False)):
        g = zarrlib.open(str(path))
        axes, _ = coordinate_axes(g, g["t"], "t")
        lat = xr.open_zarr(path, consolidated=False)["lat"].values
        assert axes[2].descending == (lat[0] > lat[-1]) == (not lat_flipped)
        assert flip_vertical(axes[2]) is lat_flipped
        assert flip_vertical(axes[1]) is True  # 1000 .. 250 hPa, positive down: 1000 at the bottom
        assert flip_vertical(axes[3]) is False
    g = zarrlib.open(str(nczarr_new(tmp_path / "nc")))
    depth = coordinate_axes(g, g["v"], "v")[0][0]  # 5, 50, 500 m, positive down
    assert (depth.kind, depth.positive_down, depth.descending, flip_vertical(depth)) == ("vertical", True, False, False)


def test_auxiliary_1d_and_text_coordinates(tmp_path: Path) -> None:
    ds = xr.Dataset({"v": (("station", "x"), np.zeros((3, 4)))},
                    coords={"station": ["alpha", "beta", "gamma"], "xc": ("x", [1.5, 2.5, 4.0, 8.0], {"units": "km"})})
    for fmt in (2, 3):
        path = write_xarray(ds, tmp_path / f"aux{fmt}.zarr", fmt, False)
        g, back = zarrlib.open(str(path)), xr.open_zarr(path, consolidated=False)
        assert g["v"].attrs["coordinates"] == "xc"
        axes, notes = coordinate_axes(g, g["v"], "v")
        assert notes == []
        assert axes[1].name == "xc" and axes[1].dim == 1
        np.testing.assert_array_equal(axes[1].values, back["v"]["xc"].values)
        assert axes[1].labels() == [f"{v:g} km" for v in back["xc"].values]
        stations = [str(s) for s in back["station"].values]
        assert axes[0].labels() == stations
        assert axes[0].nearest("beta") == stations.index("beta")
        np.testing.assert_array_equal(axes[0].numeric(), np.arange(3.0))
        with pytest.raises(CoordError, match="'delta'"):
            axes[0].nearest("delta")


def test_nczarr_48_as_xarray_reads_it(tmp_path: Path) -> None:
    path = nczarr_48(tmp_path / "nc48")
    g, ds = zarrlib.open(str(path)), xr.open_zarr(path, consolidated=False)
    dims = read_dimensions(g["v"])
    assert dims.names == ds["v"].dims and dims.source == "NCZarr" and dims.refs == ("/lat", "/lon")
    assert g["v"].dimension_names is None  # zarrlib alone does not know NCZarr
    axes, notes = coordinate_axes(g, g["v"], "v")
    assert notes == []
    for d, dim in enumerate(ds["v"].dims):
        np.testing.assert_array_equal(axes[d].values, ds["v"][dim].values)
    assert axes[1].labels() == [_lon_label(v % 360) for v in ds["lon"].values]


@pytest.mark.parametrize("where", ["zarray", "zattrs"])
@pytest.mark.parametrize("key", ["dimrefs", "dimension_references"])
def test_nczarr_lower_case_keys(tmp_path: Path, where: str, key: str) -> None:
    """4.9's lower-case key in .zarray, and the newer one among the attributes."""
    ref = {"_nczarr_array": {key: ["/grp/y", "/x"]}}
    v2_group(tmp_path, zgroup={"_nczarr_group": {"dims": {"x": 2}}})
    v2_group(tmp_path, "grp", attrs={"_nczarr_group": {"dimensions": [{"name": "y", "size": 3}]}})
    v2_array(tmp_path, "grp/v", np.zeros((3, 2)), **({"zarray": ref} if where == "zarray" else {"attrs": ref}))
    v2_array(tmp_path, "grp/y", np.array([3.0, 2.0, 1.0]), attrs={"axis": "Y", "units": "m"})
    g = zarrlib.open(str(tmp_path))
    dims = read_dimensions(g["grp/v"])
    assert (dims.names, dims.refs, dims.notes) == (("y", "x"), ("/grp/y", "/x"), ())
    axes, notes = coordinate_axes(g, g["grp/v"], "grp/v")
    assert notes == [] and list(axes) == [0] and axes[0].name == "grp/y"
    assert axes[0].kind == "other" and axes[0].labels() == ["3 m", "2 m", "1 m"]


def test_nczarr_dimension_in_a_subgroup(tmp_path: Path) -> None:
    g = zarrlib.open(str(nczarr_new(tmp_path / "nc")))
    axes, notes = coordinate_axes(g, g["v"], "v")
    assert notes == []
    assert axes[0].name == "grp/depth"  # the referenced dimension, not the root's 7-long "depth"
    np.testing.assert_array_equal(axes[0].values, [5.0, 50.0, 500.0])
    assert axes[0].labels() == ["5 m", "50 m", "500 m"]


@pytest.mark.parametrize("nc, note", [
    ({"_NCZARR_ARRAY": {"dimrefs": "/x"}}, "not a list of dimension paths"),
    ({"_NCZARR_ARRAY": {"dimrefs": ["/x", "/y"]}}, "names 2 dimensions for 1"),
    ({"_NCZARR_ARRAY": ["/x"]}, "is not an object"),
    ({"_NCZARR_ARRAY": {"dimrefs": [7]}}, "not a list of dimension paths"),
])
def test_bad_nczarr_gives_notes(tmp_path: Path, nc: dict[str, Any], note: str) -> None:
    v2_group(tmp_path)
    v2_array(tmp_path, "v", np.zeros(3), zarray=nc)
    v2_array(tmp_path, "x", np.arange(3.0))
    g = zarrlib.open(str(tmp_path))
    axes, notes = coordinate_axes(g, g["v"], "v")
    assert dimension_names(g["v"]) == (None,) and axes == {}
    assert len(notes) == 1 and note in notes[0] and "_NCZARR_ARRAY" in notes[0]


def test_nczarr_sizes_and_scalars(tmp_path: Path) -> None:
    v2_group(tmp_path, zgroup={"_NCZARR_GROUP": {"dims": {"x": 5, "s": "big"}}})
    v2_array(tmp_path, "v", np.zeros(3), zarray={"_NCZARR_ARRAY": {"dimrefs": ["/x"]}})
    v2_array(tmp_path, "s", np.zeros(1), zarray={"_NCZARR_ARRAY": {"dimrefs": ["/_scalar_"], "storage": "scalar"}})
    g = zarrlib.open(str(tmp_path))
    _, notes = coordinate_axes(g, g["v"], "v")
    assert any("/x has size 5 but the array has 3" in n for n in notes)
    assert any("'s'" in n and "'big'" in n for n in notes)
    scalar = read_dimensions(g["s"])
    assert (scalar.names, scalar.notes) == ((None,), ())


def test_bad_attributes_give_notes(tmp_path: Path) -> None:
    ds = xr.Dataset({"v": (("z", "y", "q"), np.zeros((3, 2, 3)), {"coordinates": "missing"})},
                    coords={"z": ("z", [1.0, 3.0, 2.0], {"positive": "sideways", "axis": "Q"}),
                            "y": ("y", [0.5, 1.5], {"units": 5, "long_name": ["a"]})})
    path = write_xarray(ds, tmp_path / "bad.zarr", 2, False)
    v2_array(tmp_path / "bad.zarr", "q", np.zeros((3, 2)), attrs={"_ARRAY_DIMENSIONS": ["q", "y"]})
    g = zarrlib.open(str(path))
    axes, notes = coordinate_axes(g, g["v"], "v")
    text = "\n".join(notes)
    for words in ("positive 'sideways'", "axis 'Q'", "units 5 is not a string", "long_name", "not strictly monotonic",
                  "'missing' is not found", "q is named like dimension q"):
        assert words in text, words
    np.testing.assert_array_equal(axes[0].values, [1.0, 3.0, 2.0])  # still shown, raw
    assert axes[1].units is None and axes[1].labels() == ["0.5", "1.5"]
    assert 2 not in axes


def test_unusable_coordinates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v2_group(tmp_path)
    dims = {"_ARRAY_DIMENSIONS": ["a", "b", "c"]}
    v2_array(tmp_path, "v", np.zeros((5, 2, 3)), attrs={**dims, "coordinates": 3})
    v2_array(tmp_path, "a", np.arange(4.0), attrs={"_ARRAY_DIMENSIONS": ["a"]})
    v2_array(tmp_path, "b", np.arange(2.0), attrs={"_ARRAY_DIMENSIONS": ["b"]}, chunk=b"not zlib",
             compressor={"id": "zlib", "level": 1})
    v2_array(tmp_path, "c", np.arange(3.0), attrs={"_ARRAY_DIMENSIONS": ["c"]})
    v2_array(tmp_path, "w", np.zeros(2), attrs={"_ARRAY_DIMENSIONS": "b"})
    g = zarrlib.open(str(tmp_path))
    monkeypatch.setattr(coords, "MAX_COORD_SIZE", 2)
    axes, notes = coordinate_axes(g, g["v"], "v")
    assert axes == {}
    text = "\n".join(notes)
    assert "coordinate a has 4 values for a dimension of 5" in text
    assert "coordinate b cannot be read" in text
    assert "coordinate c has 3 values, more than 2; not read" in text
    assert "coordinates 3 is not a string" in text
    assert dimension_names(g["w"]) == (None,)
    assert "_ARRAY_DIMENSIONS 'b' is not a list of 1 names" in read_dimensions(g["w"]).notes[0]


def test_dimension_sources(cf_store: tuple[Path, bool]) -> None:
    g, ds = _open(cf_store)
    dims = read_dimensions(g["lat"])
    assert dims.names == ds["lat"].dims
    assert dims.source == ("dimension_names" if g.zarr_format == 3 else "_ARRAY_DIMENSIONS")


def _appendix_a() -> list[str]:
    return re.findall(r"^\| \*\*`([A-Za-z_]+)`\*\*", APPENDIX_A.read_text(), flags=re.MULTILINE)


def test_every_appendix_a_attribute_is_cf() -> None:
    names = _appendix_a()
    assert len(names) > 60 and "scale_factor" in names
    assert {n: convention_of(n) for n in names} == {n: "CF" for n in names}


def test_convention_keys(cf_store: tuple[Path, bool]) -> None:
    g, _ = _open(cf_store)
    written = {k for name in g.member_names() for k in g[name].attrs}
    assert "_ARRAY_DIMENSIONS" in written or g.zarr_format == 3
    assert {k: convention_of(k) for k in written if convention_of(k) is None} == {}
    assert convention_of("_ARRAY_DIMENSIONS") == "xarray"
    for key in ("_NCZARR_ARRAY", "_nczarr_attr", "_NCZARR_GROUP", "_nczarr_superblock"):
        assert convention_of(key) == "NCZarr"
    for key in ("zarr_conventions", "proj:code", "spatial:transform"):
        assert convention_of(key) == "GeoZarr"
    assert (convention_of("grid_mapping_name"), convention_of("_Unsigned")) == ("CF", "NetCDF")
    assert convention_of("my_note") is None and convention_of("Units") is None


GEO = {
    "zarr_conventions": [{"uuid": "f17cb550-5864-4468-aeb7-f3180cfb622f", "name": "proj:"},
                         {"uuid": "689b58e2-cf7b-45e0-9fff-9cfc0883d6b4", "name": "spatial"}],
    "proj:code": "EPSG:3857",
    "spatial:dimensions": ["Y", "X"],
    "spatial:transform": [156543.03392804097, 0.0, -20037508.342789244, 0.0, -156543.03392804097, 20037508.342789244],
    "proj:projjson": {"type": "ProjectedCRS", "name": "WGS 84 / Pseudo-Mercator"},
    "proj:wkt2": "PROJCRS[" + "x" * 200 + "]",
    "title": "not geo",
}


def test_geo_metadata(tmp_path: Path) -> None:
    ds = xr.Dataset({"v": (("Y", "X"), np.zeros((2, 2)))}, attrs=GEO)
    g = zarrlib.open(str(write_xarray(ds, tmp_path / "geo.zarr", 3, False)))
    rows = geo_metadata(g.attrs)
    assert rows == geo_metadata(json.loads(json.dumps(GEO)))
    assert [k for k, _ in rows] == [k for k in GEO if k != "title"]
    got = dict(rows)
    assert got["zarr_conventions"] == "proj:, spatial"
    assert got["spatial:transform"] == "[" + ", ".join(f"{x:.10g}" for x in GEO["spatial:transform"]) + "]"
    assert got["proj:projjson"] == "WGS 84 / Pseudo-Mercator (ProjectedCRS)"
    assert len(got["proj:wkt2"]) == 80 and got["proj:wkt2"].endswith("…")
    assert geo_metadata({"units": "K"}) == [] and geo_metadata(None) == []  # type: ignore[arg-type]
    assert short_text([1, None, True]) == "[1, null, true]"


def test_lon_labels_wrap() -> None:
    """Any position wraps to -180 .. 180, written with the decimals the axis' values need."""
    axis = coords.make_axis(0, "lon", LONS, {"units": "degrees_east"}, [])
    assert axis.labels() == [_lon_label(v) for v in LONS]
    assert (axis.format(-12.5), axis.format(372.25), axis.format(-12.3)) == ("12.5 °W", "12.25 °E", "12.3 °W")
    coarse = coords.make_axis(0, "lon", LONS[::240], {"units": "degrees_east"}, [])
    assert coarse.labels() == [_lon_label(v) for v in LONS[::240]]
    assert (coarse.format(-60.0), coarse.format(420.0), coarse.format(-12.4)) == ("60 °W", "60 °E", "12 °W")


def test_missing_coordinate_values() -> None:
    notes: list[str] = []
    axis = coords.make_axis(0, "lat", np.array([10.0, np.nan, 30.0]), {"units": "degrees_north"}, notes)
    assert axis.labels() == ["10 °N", "—", "30 °N"]
    assert axis.nearest("25N") == 2 and axis.nearest("-90") == 0
    assert any("not strictly monotonic" in n for n in notes)


def test_number_labels_are_short_and_tell_neighbours_apart() -> None:
    stored = np.array([0.1, 0.2, 0.3, 0.7, 2.5], dtype=np.float32)  # each the float32 nearest a short decimal
    axis = coords.make_axis(0, "z", stored, {"units": "km"}, [])
    assert axis.labels() == [np.format_float_positional(v, trim="-") + " km" for v in stored]
    thirds = np.arange(7) / 3
    labels = coords.make_axis(0, "x", thirds, {}, []).labels()
    assert len(set(labels)) == len(thirds)
    assert all(abs(float(t) - v) <= 1 / 3 / 1000 for t, v in zip(labels, thirds))
    assert max(len(t) for t in labels) <= 6  # "0.3333", not "0.333333333333"
    assert coords.make_axis(0, "n", np.array([3, 1, 2]), {"units": "1"}, []).labels() == ["3", "1", "2"]


def test_packed_coordinate_is_decoded(tmp_path: Path) -> None:
    """CF allows packing coordinates (appendix A, add_offset): the axis holds what xarray decodes."""
    ds = cf_dataset().isel(time=0, level=0)
    for fmt in (2, 3):
        path = write_xarray(ds, tmp_path / f"packed{fmt}.zarr", fmt, False,
                            lat={"dtype": "int16", "scale_factor": 0.125, "add_offset": 0.0})
        g, back = zarrlib.open(str(path)), xr.open_zarr(path, consolidated=False)
        assert g["lat"].dtype == np.int16
        axes, notes = coordinate_axes(g, g["t"], "t")
        np.testing.assert_array_equal(axes[0].values, back["lat"].values)
        assert axes[0].labels() == [_lat_label(v) for v in back["lat"].values]
        assert not any("lat:" in n for n in notes)


@pytest.mark.parametrize("calendar", ["noleap", "360_day"])
def test_model_calendar_time_axis(tmp_path: Path, calendar: str) -> None:
    times = xr.date_range("2001-02-27", periods=4, freq="D", calendar=calendar, use_cftime=True)
    ds = xr.Dataset({"v": (("time",), np.arange(4.0))}, coords={"time": times})
    path = write_xarray(ds, tmp_path / "model.zarr", 3, False)
    g, back = zarrlib.open(str(path)), xr.open_zarr(path, consolidated=False)
    axes, notes = coordinate_axes(g, g["v"], "v")
    truth = back["time"].values
    assert notes == [] and axes[0].kind == "time"
    assert axes[0].labels() == [d.strftime("%Y-%m-%d") for d in truth]
    assert axes[0].nearest(truth[2].strftime("%Y-%m-%d 11:00")) == 2
