"""``--slice`` by coordinate value, ``zarrview export`` of CF values and ``zarrview info``'s CF rows.

The truth is what xarray decodes from the same store: ``.sel(..., method="nearest")`` for the
plane and the index chosen, its (cftime) dates and coordinate values for the labels printed, and
zarr-python's stored values for ``--raw``. Stores are written by xarray at test time: 4-D
(time, level, lat, lon) with latitude descending, packed int16 with scale_factor/add_offset/
_FillValue and a noleap calendar, in Zarr v2 and v3, consolidated and not.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

from cf_datasets import set_attributes
from png_decode import decode_png
from zarrview.cli import main

xr = pytest.importorskip("xarray")
cftime = pytest.importorskip("cftime")

LEVELS = np.array([1000.0, 850.0, 500.0, 250.0])
LATS = np.array([60.0, 30.5, 0.0, -30.5, -60.0])
LONS = np.arange(0.0, 360.0, 45.0)
MAGENTA = (255, 0, 255)


def era_dataset() -> Any:
    times = xr.date_range("2004-02-28", periods=6, freq="12h", calendar="noleap", use_cftime=True)
    rng = np.random.default_rng(14)
    t = rng.uniform(200.0, 300.0, (6, 4, 5, 8))
    t[2:4, 2, ::2, 1::3] = np.nan  # becomes the _FillValue
    return xr.Dataset(
        {"t": (("time", "level", "lat", "lon"), t, {"long_name": "temperature", "units": "K"}),
         "noc": (("time", "y", "x"), rng.uniform(0, 1, (6, 3, 4)).astype(np.float32))},
        coords={"time": times, "level": ("level", LEVELS, {"units": "hPa"}),
                "lat": ("lat", LATS, {"units": "degrees_north"}), "lon": ("lon", LONS, {"units": "degrees_east"})})


def write(path: Path, zarr_format: int, consolidated: bool) -> Path:
    encoding = {"t": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 250.0, "_FillValue": -32767},
                "time": {"units": "hours since 2004-01-01", "calendar": "noleap"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        era_dataset().to_zarr(path, zarr_format=zarr_format, consolidated=consolidated, mode="w", encoding=encoding)
    return path


@pytest.fixture(scope="module", params=[(2, True), (2, False), (3, True), (3, False)],
                ids=lambda p: f"v{p[0]}-{'cons' if p[1] else 'plain'}")
def era(request: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    fmt, consolidated = request.param
    path = write(tmp_path_factory.mktemp("era") / "era.zarr", fmt, consolidated)
    return path, xr.open_zarr(path, consolidated=consolidated)


@pytest.fixture(scope="module")
def v3(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    path = write(tmp_path_factory.mktemp("v3") / "era.zarr", 3, False)
    return path, xr.open_zarr(path, consolidated=False)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def noleap(text: str) -> Any:
    y, m, rest = text.split("-", 2)
    d, _, hh = rest.partition(" ")
    return cftime.datetime(int(y), int(m), int(d), int(hh.split(":")[0] or 0) if hh else 0, calendar="noleap")


def nearest(ds: Any, dim: str, value: Any) -> int:
    return int(ds.indexes[dim].get_indexer([value], method="nearest")[0])


@pytest.mark.parametrize("part,says", [("time=2010-01-01", "time: '2010-01-01' is outside the times, which run from 2004-"),
                                       ("level=1", "'1' is outside level, which runs from 250 hPa to 1000 hPa"),
                                       ("level=1300 hPa", "outside level")])
def test_a_value_beyond_the_coordinate_is_refused_with_its_range(era: tuple[Path, Any], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str], part: str,
                                                                says: str) -> None:
    """xarray's nearest would take the axis' end; a command line says the value is not there."""
    path, _ = era
    code, _, err = run(capsys, "export", f"{path}::/t", "--slice", part, "-o", str(tmp_path / "p.npy"))
    assert code == 2 and says in err, err
    assert not (tmp_path / "p.npy").exists()


@pytest.mark.parametrize("when,level", [("2004-03-01 11:00", "500"), ("2004-02-28", "900 hPa"), ("2004-03-02", "260")])
def test_export_by_value_is_xarrays_nearest_plane(era: tuple[Path, Any], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str], when: str, level: str) -> None:
    path, ds = era
    code, _, err = run(capsys, "export", f"{path}::/t", "--slice", f"time={when},level={level}",
                       "-o", str(tmp_path / "p.npy"))
    assert code == 0, err
    date, hpa = noleap(when), float(level.split()[0])
    truth = ds["t"].sel(time=date, level=hpa, method="nearest").values
    got = np.load(tmp_path / "p.npy")
    assert got.shape == truth.shape == (5, 8) and got.dtype == truth.dtype
    np.testing.assert_array_equal(got, truth)  # NaN where xarray masks, same unpacked numbers
    i, k = nearest(ds, "time", date), nearest(ds, "level", hpa)
    chosen = ds["time"].values[i].strftime("%Y-%m-%d %H:%M")
    assert err.splitlines() == [f"zarrview: --slice time={chosen} (index {i})",
                                f"zarrview: --slice level={ds['level'].values[k]:g} hPa (index {k})"]


def test_csv_and_raw_export(v3: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, ds = v3
    assert run(capsys, "export", f"{path}::/t", "--slice", "time=2004-03-01 12:00,level=#2",
               "-o", str(tmp_path / "p.csv"))[0] == 0
    truth = ds["t"].isel(time=3, level=2).values
    assert np.isnan(truth).any()
    head, *rows = list(csv.reader(open(tmp_path / "p.csv", encoding="utf-8", newline="")))
    np.testing.assert_array_equal(np.array([r[1:] for r in rows], dtype=np.float64), truth)
    # the dimensions by name, each position by its coordinate value: xarray's own
    assert head[0] == "lat \\ lon"
    np.testing.assert_array_equal(np.array(head[1:], dtype=np.float64), ds["lon"].values)
    np.testing.assert_array_equal(np.array([r[0] for r in rows], dtype=np.float64), ds["lat"].values)
    code, _, err = run(capsys, "export", f"{path}::/t", "--slice", "time=2004-03-01 12:00,level=#2", "--raw",
                       "-o", str(tmp_path / "raw.npy"))
    assert code == 0 and "level=500 hPa (index 2)" in err
    raw = np.load(tmp_path / "raw.npy")
    stored = zarr.open_array(path / "t", mode="r")[3, 2]
    assert raw.dtype == np.int16 and (raw == -32767).any()
    np.testing.assert_array_equal(raw, stored)


def test_positions_still_work_and_descending_latitude_by_value(v3: tuple[Path, Any], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path, ds = v3
    assert run(capsys, "export", f"{path}::/t", "--slice", "4,1,:,:", "-o", str(tmp_path / "p.npy"))[0] == 0
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), ds["t"].isel(time=4, level=1).values)
    code, _, err = run(capsys, "export", f"{path}::/t", "--slice", "lat=20N,lon=50W", "-o", str(tmp_path / "q.npy"))
    assert code == 0, err
    j = int(np.argmin(np.abs(ds["lat"].values - 20.0)))
    k = int(np.argmin(np.abs((ds["lon"].values - (360 - 50) + 180) % 360 - 180)))  # 50 °W is 310 °E
    assert (j, k) == (1, 7)
    np.testing.assert_array_equal(np.load(tmp_path / "q.npy"), ds["t"].isel(lat=j, lon=k).values)
    assert err.splitlines() == [f"zarrview: --slice lat={LATS[j]:g} °N (index {j})",
                                f"zarrview: --slice lon={360 - LONS[k]:g} °W (index {k})"]


def test_a_dimension_without_coordinate_takes_an_index(v3: tuple[Path, Any], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path, ds = v3
    code, _, err = run(capsys, "export", f"{path}::/noc", "--slice", "y=2", "-o", str(tmp_path / "p.npy"))
    assert code == 0 and err.splitlines() == ["zarrview: --slice y=index 2 (no coordinate variable)"]
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), ds["noc"].isel(y=2).values)


@pytest.mark.parametrize("text,words", [
    ("height=3", "/t has no dimension 'height' (its dimensions: time, level, lat, lon)"),
    ("time=2004-02-29", "'2004-02-29' is not a time on time"),  # no 29 February in noleap
    ("level=#7", "index 7 is out of range for level of /t (size 4)"),
    ("level=warm", "--slice level=warm: "),
    ("3,level=500", "mixes positions and names"),
    ("level=500,level=250", "names level twice"),
    ("lat=", "needs a dimension name and a value"),
])
def test_bad_names_and_values_are_one_line_and_status_2(v3: tuple[Path, Any], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str], text: str, words: str) -> None:
    code, out, err = run(capsys, "export", f"{v3[0]}::/t", "--slice", text, "-o", str(tmp_path / "p.npy"))
    assert code == 2 and out == "" and not (tmp_path / "p.npy").exists()
    assert len(err.splitlines()) == 1 and err.startswith("zarrview: ") and words in err


def test_no_coordinate_refuses_a_value(v3: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "export", f"{v3[0]}::/noc", "--slice", "x=far", "-o", str(tmp_path / "p.npy"))
    assert code == 2 and "x has no coordinate variable: give an index (x=5 or x=#5)" in err


def test_png_is_decoded(v3: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, ds = v3
    assert run(capsys, "export", f"{path}::/t", "--slice", "time=#2,level=#2", "-o", str(tmp_path / "p.png"))[0] == 0
    truth = ds["t"].isel(time=2, level=2).values
    img = decode_png((tmp_path / "p.png").read_bytes())
    nan = np.isnan(truth)
    assert nan.any() and (img[nan] == MAGENTA).all() and not (img[~nan] == MAGENTA).all(axis=-1).any()
    lo, hi = np.nanpercentile(truth, (0.5, 99.5))  # the levels of the decoded values, not the stored ones
    inside = ~nan & (truth > lo) & (truth < hi)
    np.testing.assert_array_equal(img[inside, 0], np.clip((truth[inside] - lo) * 255 / (hi - lo), 0, 255).astype("u1"))


def test_window_slice_is_matched_before_the_window(v3: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    from zarrview.app.main import parse_args, plane_argument, run_app
    from zarrview.viewing.image.slice_spec import read_slice

    path, ds = v3
    args = parse_args([f"{path}::/t", "--slice", "time=2004-03-02,level=300"])
    plane = plane_argument(args, read_slice(args.slice))
    k = nearest(ds, "level", 300.0)
    assert plane == {0: nearest(ds, "time", noleap("2004-03-02")), 1: k} == {0: 4, 1: 3}
    assert capsys.readouterr().err.splitlines() == ["zarrview: --slice time=2004-03-02 00:00 (index 4)",
                                                     f"zarrview: --slice level={LEVELS[k]:g} hPa (index {k})"]
    assert run_app([f"{path}::/t", "--slice", "depth=5"]) == 2  # before any window: no Qt application made
    assert "no dimension 'depth'" in capsys.readouterr().err
    assert run_app([str(path / "missing"), "--slice", "time=2004-03-02"]) == 1


def test_info_shows_cf_rows(era: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    path, ds = era
    code, out, _ = run(capsys, "info", f"{path}::/t")
    assert code == 0
    cf = _section(out, "CF conventions:")
    times = [d.strftime("%Y-%m-%d %H:%M") for d in ds["time"].values[[0, -1]]]
    assert cf["Long name"] == ds["t"].attrs["long_name"] and cf["Units"] == ds["t"].attrs["units"]
    assert cf["Dimension time"] == f"6: {times[0]} … {times[1]} (calendar {ds['time'].encoding['calendar']})"
    assert cf["Dimension level"] == f"4: {ds['level'].values[0]:g} hPa … {ds['level'].values[-1]:g} hPa"
    assert cf["Dimension lat"] == f"5: {ds['lat'].values[0]:g} °N … {-ds['lat'].values[-1]:g} °S"
    enc = ds["t"].encoding
    assert cf["Value coding"] == (f"masked where {enc['_FillValue']}; unpacked as stored × {enc['scale_factor']:g} "
                                  f"+ {enc['add_offset']:g} → float64")
    assert "Note" not in cf


def test_bad_attributes_give_notes_and_raw_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "bad.zarr", 2, True)
    set_attributes(path, "t", {"scale_factor": "hundredth"})
    set_attributes(path, "time", {"units": "fortnights since the flood"})
    cf = _section(run(capsys, "info", f"{path}::/t")[1], "CF conventions:")
    assert "scale_factor 'hundredth' is not a number" in cf["Note"]
    stored_times = zarr.open_array(path / "time", mode="r")[:]
    units = "fortnights since the flood"  # not a time: the stored numbers, with the note
    assert cf["Dimension time"] == f"6: {stored_times[0]:g} {units} … {stored_times[-1]:g} {units}"
    assert "'fortnights' is not a unit of time" in cf["Note"]
    code, _, err = run(capsys, "export", f"{path}::/t", "--slice", "time=#1,level=#2", "-o", str(tmp_path / "p.npy"))
    assert code == 0 and "scale_factor 'hundredth' is not a number" in err
    stored = zarr.open_array(path / "t", mode="r")[1, 2]
    expect = np.where(stored == -32767, np.nan, stored.astype(np.float32))  # masked, not unpacked
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), expect)
    code, _, err = run(capsys, "export", f"{path}::/t", "--slice", "time=2004-03-01", "-o", str(tmp_path / "q.npy"))
    assert code == 2 and len(err.splitlines()) == 1 and "fortnights since the flood" in err


def test_plain_arrays_are_written_as_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A v2 array outside CF: its fill value 0 marks unwritten chunks, not missing values."""
    a = zarr.create_array(tmp_path / "plain.zarr", shape=(3, 4), chunks=(3, 4), dtype="u2", zarr_format=2,
                          fill_value=0)
    a[...] = np.arange(12, dtype="u2").reshape(3, 4)
    code, out, _ = run(capsys, "info", str(tmp_path / "plain.zarr"))
    assert code == 0 and "CF conventions:" not in out
    assert run(capsys, "export", str(tmp_path / "plain.zarr"), "-o", str(tmp_path / "p.npy"))[0] == 0
    back = np.load(tmp_path / "p.npy")
    assert back.dtype == np.dtype("u2") and back[0, 0] == 0
    np.testing.assert_array_equal(back, a[...])


def _section(out: str, title: str) -> dict[str, str]:
    """The rows of an ``info`` section as field -> value (a repeated field's values joined by ' | ')."""
    lines = out.split(title + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows: dict[str, str] = {}
    for line in lines:
        key, _, value = line.strip().partition("  ")
        rows[key] = f"{rows[key]} | {value.strip()}" if key in rows else value.strip()
    return rows


def test_help_says_how_values_and_indices_differ(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["export", "--help"], ["--help"]):
        with pytest.raises(SystemExit):
            main(args)
        text = " ".join(capsys.readouterr().out.split())
        assert "time=2001-03-04,level=500" in text and "=#N is index N" in text.replace("name=#N", "=#N")


def test_an_ome_image_is_sliced_by_axis_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ome_stores import hand_image

    path = hand_image(tmp_path / "img.zarr", "0.4", [((6, 8, 10), (1.0, 0.5, 0.5), None)], "zyx")
    code, _, err = run(capsys, "export", str(path), "--slice", "z=4", "-o", str(tmp_path / "p.npy"))
    assert code == 0 and err.splitlines() == ["zarrview: --slice z=index 4 (no coordinate variable)"]
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), zarr.open_array(path / "0", mode="r")[4])
    code, _, err = run(capsys, "export", str(path), "--slice", "t=1", "-o", str(tmp_path / "q.npy"))
    assert code == 2 and "has no dimension 't' (its dimensions: z, y, x)" in err
