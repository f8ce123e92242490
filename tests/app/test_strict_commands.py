"""``--slice`` means what it says in every command: what it fixes stays fixed and only the ':'
dimensions are shown. A selection narrower than a plane is written as what it selects (a
line, a value) where the file holds it, and refused (status 2, one line) where it does not:
never widened to the plane around it. ``--screenshot`` and ``export`` say what they wrote, and
fail with the error on stderr when nothing right was drawn."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from png_decode import decode_png
from test_cli_export import VALUES, store  # noqa: F401  (the store fixture)

@pytest.fixture(scope="module")
def climate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """A CF field written by xarray, its latitude running south to north (as many models write it)."""
    xr = pytest.importorskip("xarray")
    root = tmp_path_factory.mktemp("strict") / "t.zarr"
    rng = np.random.default_rng(5)
    values = rng.normal(280, 10, (3, 18, 36)).astype("f4")
    lat = np.linspace(-85, 85, 18)
    lon = np.arange(0, 360, 10.0)
    time = np.array(["2001-01-01", "2001-02-01", "2001-03-01"], dtype="datetime64[ns]")
    ds = xr.Dataset({"t2m": (("time", "lat", "lon"), values, {"units": "K"})},
                    coords={"time": time, "lat": ("lat", lat, {"units": "degrees_north"}),
                            "lon": ("lon", lon, {"units": "degrees_east"})})
    ds.to_zarr(root, zarr_format=2, consolidated=True)
    return root, values


def export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zarrview", "export", *args], capture_output=True, text=True,
                          timeout=120)


def window(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "zarrview", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def refused_in_one_line(out: subprocess.CompletedProcess[str], *words: str) -> None:
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), out.stderr


@pytest.mark.parametrize("text,expect", [
    ("3,4,5", VALUES[3, 4, 5]), ("2,:,3", VALUES[2, :, 3]), (":,7,3", VALUES[:, 7, 3]),
    ("z=#1,x=#9", VALUES[1, :, 9]), ("1,:,:", VALUES[1]), ("1,:,:", VALUES[1]),
])
def test_npy_holds_exactly_what_the_slice_selects(store: Path, tmp_path: Path, text: str, expect: np.ndarray) -> None:
    out = export(f"{store}::/vol", "--slice", text, "-o", str(tmp_path / "p.npy"))
    assert out.returncode == 0, out.stderr
    back = np.load(tmp_path / "p.npy")
    assert back.shape == np.shape(expect)
    np.testing.assert_array_equal(back, expect)
    assert out.stdout.startswith(f"zarrview: wrote {tmp_path / 'p.npy'}: /vol[")


def test_csv_of_a_line_labels_its_one_dimension(store: Path, tmp_path: Path) -> None:
    out = export(f"{store}::/vol", "--slice", "2,:,3", "-o", str(tmp_path / "p.csv"))
    assert out.returncode == 0, out.stderr
    assert "a line of 30 values" in out.stdout
    head, *rows = list(csv.reader(open(tmp_path / "p.csv", encoding="utf-8", newline="")))
    assert head == ["y", "value"]
    np.testing.assert_array_equal(np.array([r[1] for r in rows], dtype="u2"), VALUES[2, :, 3])


@pytest.mark.parametrize("text,what", [("3,4,5", "one value"), ("2,:,3", "a line of 30 values")])
def test_png_of_less_than_a_plane_is_refused(store: Path, tmp_path: Path, text: str, what: str) -> None:
    out = export(f"{store}::/vol", "--slice", text, "-o", str(tmp_path / "p.png"))
    refused_in_one_line(out, what, "a .png holds a plane")
    assert list(tmp_path.iterdir()) == []


def test_reduce_takes_a_colon_for_the_reduced_dimension(store: Path, tmp_path: Path) -> None:
    out = export(f"{store}::/vol", "--slice", ":,:,:", "--reduce", "max:z", "-o", str(tmp_path / "m.npy"))
    assert out.returncode == 0, out.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "m.npy"), VALUES.max(axis=0))
    out = export(f"{store}::/vol", "--slice", ":,5,:", "--reduce", "max:z", "-o", str(tmp_path / "l.npy"))
    assert out.returncode == 0, out.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), VALUES[:, 5, :].max(axis=0))
    out = export(f"{store}::/vol", "--slice", ":,:,:,:", "--reduce", "max:z", "-o", str(tmp_path / "x.npy"))
    assert out.returncode == 2 and "shows 4 dimensions; a plane shows two besides the reduced one" in out.stderr


def test_an_index_choice_names_its_coordinate_value(climate: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    root, values = climate
    out = export(f"{root}::/t2m", "--slice", "time=#2", "-o", str(tmp_path / "p.npy"))
    assert out.returncode == 0, out.stderr
    assert "zarrview: --slice time=2001-03-01" in out.stderr and "(index 2)" in out.stderr, out.stderr
    assert "no coordinate variable" not in out.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), values[2])  # .npy keeps the stored order


def test_png_of_a_south_to_north_field_is_drawn_north_up(climate: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    root, values = climate
    out = export(f"{root}::/t2m", "--slice", "time=#1", "-o", str(tmp_path / "p.png"))
    assert out.returncode == 0, out.stderr
    img = decode_png((tmp_path / "p.png").read_bytes())[..., 0].astype(int)
    plane = values[1]
    lo, hi = np.percentile(plane, (0.5, 99.5))
    grey = np.clip((plane.astype("f8") - lo) * 255 / (hi - lo), 0, 255)
    north_up = grey[::-1]  # the first stored row is the southernmost: drawn at the bottom
    assert np.abs(img - north_up).max() <= 1
    assert np.abs(img - grey).max() > 50  # the stored order would be a different picture


@pytest.mark.parametrize("text,what", [("2,:,3", "selects a line"), ("3,4,5", "selects one value")])
def test_window_refuses_a_slice_narrower_than_a_plane(store: Path, tmp_path: Path, text: str, what: str) -> None:
    out = window(f"{store}::/vol", "--slice", text, "--screenshot", str(tmp_path / "s.png"))
    refused_in_one_line(out, what, "leave two dimensions as ':'")
    assert not (tmp_path / "s.png").exists()


def test_window_refuses_named_dimensions_that_leave_a_line(store: Path, tmp_path: Path) -> None:
    out = window(f"{store}::/vol", "--slice", "z=#1,y=#2", "--screenshot", str(tmp_path / "s.png"))
    assert out.returncode == 2 and "selects a line" in out.stderr, out.stderr


@pytest.mark.parametrize("node,args,words", [
    ("::/missing", [], "no Zarr node at /missing"),
    ("::/vol", ["--slice", "9,:,:"], "index 9 is out of range for z of /vol (size 4)"),
])
def test_screenshot_of_an_error_fails_with_it_on_stderr(store: Path, tmp_path: Path, node: str, args: list[str],
                                                        words: str) -> None:
    out = window(f"{store}{node}", *args, "--screenshot", str(tmp_path / "s.png"))
    assert out.returncode == 1, out.stderr
    assert words in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "saved" not in out.stdout


def test_screenshot_says_what_it_saved(store: Path, tmp_path: Path) -> None:
    out = window(f"{store}::/vol", "--slice", "2,:,:", "--screenshot", str(tmp_path / "s.png"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"zarrview: saved {tmp_path / 's.png'} (1280x820)"
    assert decode_png((tmp_path / "s.png").read_bytes()).shape[:2] == (820, 1280)


def test_a_reduction_names_the_indices_it_was_not_given(tmp_path: Path) -> None:
    """A channel the image shows one at a time is taken at its first unless --slice says; the
    export says so instead of using channel 0 silently."""
    pytest.importorskip("ome_zarr")
    from ome_stores import ome_zarr_image

    data = np.random.default_rng(1).integers(0, 4000, (3, 5, 20, 24), dtype="u2")
    omero = {"channels": [{"color": c, "window": {"start": 0, "end": 4000, "min": 0, "max": 4000}, "active": True,
                           "label": c} for c in ("FF0000", "00FF00", "0000FF")],
             "rdefs": {"model": "greyscale"}}  # shown one channel at a time
    ome_zarr_image(tmp_path / "c.zarr", "0.4", data, "czyx", scale_factors=[], omero=omero)
    out = export(str(tmp_path / "c.zarr"), "--reduce", "mean:1", "-o", str(tmp_path / "m.npy"))
    assert out.returncode == 0, out.stderr
    assert "zarrview: c=0 (not given in --slice" in out.stderr
    np.testing.assert_allclose(np.load(tmp_path / "m.npy"), data[0].mean(axis=0))
    out = export(str(tmp_path / "c.zarr"), "--slice", "c=#2", "--reduce", "mean:1", "-o", str(tmp_path / "m.npy"))
    assert out.returncode == 0 and "not given" not in out.stderr, out.stderr
    np.testing.assert_allclose(np.load(tmp_path / "m.npy"), data[2].mean(axis=0))
