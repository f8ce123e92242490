"""``zarrview export --reduce`` and projections on a dask.distributed cluster: the truth is
numpy's reductions of what zarr-python wrote (and read back)."""

from __future__ import annotations

import csv
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from png_decode import decode_png
from zarrview.cli import main
from zarrview.viewing.projection.cluster import ClusterError, project_on_cluster, source_of
from zarrview.viewing.projection.reduce import plan
from zarrview.viewing.projection.spec import ReduceText, projection

rng = np.random.default_rng(11)
VOLUME = rng.integers(0, 4000, (30, 21, 26), dtype="u2")
FIELD = rng.normal(280.0, 10.0, (4, 30, 21, 26)).astype("f4")
FIELD[rng.random(FIELD.shape) < 0.1] = np.nan


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    z = zarr.create_array(root / "vol.zarr", shape=VOLUME.shape, dtype=VOLUME.dtype, chunks=(4, 8, 8),
                          shards=(8, 16, 16), dimension_names=("z", "y", "x"))
    z[...] = VOLUME
    f = zarr.create_array(root / "field.zarr", shape=FIELD.shape, dtype=FIELD.dtype, chunks=(1, 7, 11, 13),
                          zarr_format=2)
    f[...] = FIELD
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


def test_npy_csv_and_png_of_a_max_projection(stores: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loc = str(stores / "vol.zarr")
    truth = zarr.open_array(loc, mode="r")[5:27].max(axis=0)
    assert run(capsys, "export", loc, "--reduce", "max:z[5:27]", "-o", str(tmp_path / "m.npy"))[0] == 0
    got = np.load(tmp_path / "m.npy")
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, truth)
    assert run(capsys, "export", loc, "--reduce", "max:z[5:27]", "-o", str(tmp_path / "m.csv"))[0] == 0
    with open(tmp_path / "m.csv", newline="") as f:
        head, *rows = list(csv.reader(f))
    assert head == ["y \\ x", *map(str, range(truth.shape[1]))]  # the plane's dimensions, by index
    np.testing.assert_array_equal(np.array([r[1:] for r in rows], dtype=np.int64), truth)
    assert run(capsys, "export", loc, "--reduce", "max:0[5:27]", "-o", str(tmp_path / "m.png"))[0] == 0
    png = decode_png((tmp_path / "m.png").read_bytes())
    assert png.shape == (21, 26, 3)
    brightest = np.unravel_index(np.argmax(truth), truth.shape)
    darkest = np.unravel_index(np.argmin(truth), truth.shape)
    assert png[brightest][0] > png[darkest][0]


def test_a_mean_over_time_of_a_4d_float_array_by_position(stores: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    loc = str(stores / "field.zarr")
    # --slice chooses the plane (y, x) at t=2; the index it gives dimension 1 is not used
    code, err = run(capsys, "export", loc, "--slice", "2,0,:,:", "--reduce", "mean:1[3:29]",
                    "-o", str(tmp_path / "m.npy"))
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.nanmean(zarr.open_array(loc, mode="r")[2, 3:29], axis=0, dtype=np.float64)
    np.testing.assert_allclose(np.load(tmp_path / "m.npy"), want, rtol=1e-12, equal_nan=True)


def test_a_reduced_dimension_is_never_an_axis_of_the_plane(stores: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """x is shown by default; reduced, the plane is chosen among the others (z, y)."""
    loc = str(stores / "vol.zarr")
    assert run(capsys, "export", loc, "--reduce", "max:x", "-o", str(tmp_path / "m.npy"))[0] == 0
    np.testing.assert_array_equal(np.load(tmp_path / "m.npy"), VOLUME.max(axis=2))


@pytest.mark.parametrize("spec, words", [
    ("median:z", "unknown operation 'median' (one of max, min, sum, mean, std)"),
    ("max:w", "has no dimension 'w' (its dimensions: z, y, x)"),
    ("max:z[0:31]", "range [0:31] is outside z of / (size 30"),
    ("max:z[1:b]", "the range takes indices, not 'b'"),
    ("max", "give OP:DIM or OP:DIM[START:STOP]"),
])
def test_a_bad_reduce_is_one_line_and_status_2(stores: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               spec: str, words: str) -> None:
    code, err = run(capsys, "export", str(stores / "vol.zarr"), "--reduce", spec, "-o", str(tmp_path / "m.npy"))
    assert code == 2 and words in err and err.count("\n") == 1, err
    assert not (tmp_path / "m.npy").exists()


def test_a_scheduler_without_reduce_is_refused(stores: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "export", str(stores / "vol.zarr"), "--scheduler", "tcp://127.0.0.1:1",
                    "-o", str(tmp_path / "m.npy"))
    assert code == 2 and "--scheduler runs the reduction of --reduce" in err


# -- a dask.distributed cluster on loopback ---------------------------------------------------------


def needs_distributed() -> Any:
    """dask.distributed, from the test extras; only the cluster's tests need it."""
    return pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    distributed = needs_distributed()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, host="127.0.0.1", protocol="tcp",
                                      dashboard_address=None) as c:
            yield c


@pytest.mark.parametrize("op", ["max", "sum", "mean", "std"])
def test_a_cluster_computes_what_numpy_computes(stores: Path, cluster: Any, op: str) -> None:
    distributed = needs_distributed()
    loc = str(stores / "field.zarr")
    arr = zl.open(loc)
    assert isinstance(arr, zl.Array)
    p = projection(arr, (1, 0, slice(None), slice(None)), ReduceText(op, 1, 2, 27))
    seen: list[int] = []
    slab = 3 * 21 * 26 * 4
    assert len(plan(p, slab).tiles) == 4  # tiled: a task reduces the four tiles of its slab
    with distributed.Client(cluster, set_as_default=False) as client:
        got = project_on_cluster(p, client, source_of(arr, loc), progress=lambda d, _t: seen.append(d),
                                 slab_bytes=slab)
    values = zarr.open_array(loc, mode="r")[1, 2:27].astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = {"max": np.nanmax, "sum": np.nansum, "mean": np.nanmean, "std": np.nanstd}[op](values, axis=0)
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-9, equal_nan=True)
    assert seen == [4, 8, 12, 16]  # four slabs of 2 x 2 chunks of the plane: 2:7, 7:14, 14:21, 21:27


def test_the_cli_runs_on_a_scheduler_address(stores: Path, cluster: Any, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    loc = str(stores / "vol.zarr")
    code, err = run(capsys, "export", f"{loc}::/", "--reduce", "min:z", "--scheduler", cluster.scheduler_address,
                    "-o", str(tmp_path / "m.npy"))
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "m.npy"), zarr.open_array(loc, mode="r")[...].min(axis=0))


def test_worker_processes_open_the_array_themselves(stores: Path) -> None:
    distributed = needs_distributed()
    loc = str(stores / "vol.zarr")
    arr = zl.open(loc)
    assert isinstance(arr, zl.Array)
    p = projection(arr, (0, slice(None), slice(None)), ReduceText("sum", "z", 3, 30))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                      dashboard_address=None) as c:
            got = project_on_cluster(p, c.scheduler_address, source_of(arr, loc))
    np.testing.assert_array_equal(got, VOLUME[3:30].sum(axis=0, dtype=np.uint64))


def test_an_unreachable_scheduler_is_a_cluster_error(stores: Path) -> None:
    needs_distributed()
    arr = zl.open(str(stores / "vol.zarr"))
    assert isinstance(arr, zl.Array)
    p = projection(arr, (0, slice(None), slice(None)), ReduceText("max", "z"))
    with pytest.raises(ClusterError, match="cannot reach the dask scheduler tcp://127.0.0.1:9"):
        project_on_cluster(p, "tcp://127.0.0.1:9", source_of(arr, str(stores / "vol.zarr")), connect_timeout=2)


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_an_ome_image_is_reduced_over_its_named_axis_at_a_level(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 version: str) -> None:
    from ome_stores import ome_zarr_image

    data = rng.integers(0, 3000, (2, 9, 32, 24), dtype="u2")
    path = ome_zarr_image(tmp_path / "img.zarr", version, data, "czyx", scale_factors=(2,), chunks=(1, 2, 16, 16))
    for level in (0, 1):
        out = tmp_path / f"m{level}.npy"
        code, err = run(capsys, "export", str(path), "--slice", "1,0,:,:", "--level", str(level),
                        "--reduce", "max:z[2:8]", "-o", str(out))
        assert code == 0, err
        truth = zarr.open_array(path / f"s{level}", mode="r")[1, 2:8].max(axis=0)
        np.testing.assert_array_equal(np.load(out), truth)
    code, err = run(capsys, "export", str(path), "--reduce", "max:t", "-o", str(tmp_path / "t.npy"))
    assert code == 2 and "has no dimension 't' (its dimensions: c, z, y, x)" in err


def test_labels_are_not_drawn_over_a_projection(stores: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "export", str(stores / "vol.zarr"), "--reduce", "max:z", "--labels",
                    "-o", str(tmp_path / "m.png"))
    assert code == 2 and "a projection (--reduce) has none" in err


def test_an_unreadable_chunk_fails_the_export_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    z = zarr.create_array(tmp_path / "c.zarr", shape=(6, 8, 8), chunks=(2, 8, 8), dtype="f4", zarr_format=2,
                          compressors=None)
    z[...] = np.arange(6 * 8 * 8, dtype="f4").reshape(6, 8, 8)
    (tmp_path / "c.zarr" / "1.0.0").write_bytes(b"short")
    code, err = run(capsys, "export", str(tmp_path / "c.zarr"), "--reduce", "sum:0", "-o", str(tmp_path / "s.npy"))
    assert code == 1 and "1.0.0" in err and "sum over dimension 0[0:6]" in err, err
    assert not (tmp_path / "s.npy").exists()


def test_cancel_stops_a_projection_on_the_cluster(stores: Path, cluster: Any) -> None:
    distributed = needs_distributed()
    loc = str(stores / "field.zarr")
    arr = zl.open(loc)
    assert isinstance(arr, zl.Array)
    p = projection(arr, (0, 0, slice(None), slice(None)), ReduceText("std", 1))  # 5 slabs, one task each
    token = zl.CancelToken()
    seen: list[int] = []

    def stop(done: int, _total: int) -> None:
        seen.append(done)
        token.cancel()

    submitted: list[Any] = []
    with distributed.Client(cluster, set_as_default=False) as client:
        submit = client.submit
        client.submit = lambda *a, **k: submitted.append(a) or submit(*a, **k)  # type: ignore[method-assign]
        with pytest.raises(zl.ReadCancelled):
            project_on_cluster(p, client, source_of(arr, loc), cancel=token, progress=stop, in_flight=1)
    assert seen == [4] and len(submitted) == 1  # the first slab's task came back, no other was sent


def test_cf_packed_values_are_reduced_as_xarray_decodes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import xarray as xr

    temps = np.round(rng.uniform(230.0, 310.0, (10, 6, 7)), 2)
    temps[rng.random(temps.shape) < 0.25] = np.nan
    xr.Dataset({"t2m": (("time", "lat", "lon"), temps)}).to_zarr(
        tmp_path / "cf.zarr", zarr_format=3, consolidated=False, mode="w",
        encoding={"t2m": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 273.15, "_FillValue": -32767,
                          "chunks": (3, 6, 7)}})
    oracle = xr.open_zarr(tmp_path / "cf.zarr", consolidated=False)["t2m"]
    code, err = run(capsys, "export", f"{tmp_path / 'cf.zarr'}::/t2m", "--reduce", "mean:time[1:9]",
                    "-o", str(tmp_path / "m.npy"))
    assert code == 0, err
    np.testing.assert_allclose(np.load(tmp_path / "m.npy"), oracle.isel(time=slice(1, 9)).mean("time").values,
                               rtol=1e-6, equal_nan=True)
    code, err = run(capsys, "export", f"{tmp_path / 'cf.zarr'}::/t2m", "--reduce", "max:time", "--raw",
                    "-o", str(tmp_path / "r.npy"))
    assert code == 0, err
    raw = np.load(tmp_path / "r.npy")
    assert raw.dtype == np.int16
    np.testing.assert_array_equal(raw, zarr.open_array(tmp_path / "cf.zarr" / "t2m", mode="r")[...].max(axis=0))
