"""References over loopback HTTP: the reference file, its targets beside it, the ranges of one
target read in coalesced requests, and targets on another host refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from zarrview import zarrlib as zl
from zarrview.zarrlib.storage.access import AccessDeniedError

pytest.importorskip("kerchunk")
pytest.importorskip("h5py")

from http_server import serve  # noqa: E402
from reference_sets import kerchunk_json, kerchunk_parquet, truth, write_hdf5  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    h5 = write_hdf5(root / "data.h5")
    doc = kerchunk_json(h5, root / "abs.json")
    for v in doc["refs"].values():  # targets named relative to the reference file, as served
        if isinstance(v, list):
            v[0] = "data.h5"
    (root / "refs.json").write_text(json.dumps(doc))
    kerchunk_parquet(doc, root / "refs.parq", record_size=4)
    return root


@pytest.mark.parametrize("name", ["refs.json", "refs.parq"])
def test_remote_references_read_what_h5py_reads(site: Path, name: str) -> None:
    with serve(site) as (url, state):
        root = zl.open(f"reference::{url}/{name}")
        for array in ("temp", "counts", "level", "grp/deep", "scalar"):
            np.testing.assert_array_equal(root[array][...], truth(site / "data.h5", array))
        node = zl.open(f"reference::{url}/{name}::/temp")
        np.testing.assert_array_equal(node[3:17, 4:29], truth(site / "data.h5", "temp")[3:17, 4:29])


def test_ranges_of_one_target_are_coalesced(site: Path) -> None:
    with serve(site) as (url, state):
        arr = zl.open(f"reference::{url}/refs.json::/temp")
        doc = json.loads((site / "refs.json").read_text())["refs"]
        chunks = [k for k in doc if k.startswith("temp/") and not k.startswith("temp/.z")]
        assert len(chunks) == int(np.prod(arr.chunk_grid_shape())) > 1
        state.clear()
        np.testing.assert_array_equal(arr[...], truth(site / "data.h5", "temp"))
        gets = [r for r in state.requests("GET") if r[1].endswith("/data.h5")]
        assert len(gets) == 1, gets  # the chunks lie one after another in the file: one ranged GET
        assert gets[0][2] is not None and gets[0][2].startswith("bytes=")


def test_a_remote_reference_cannot_point_at_local_files_or_other_hosts(site: Path, tmp_path: Path) -> None:
    doc = json.loads((site / "refs.json").read_text())
    doc["refs"]["temp/0.0"] = [f"file://{site}/data.h5", 0, 10]
    doc["refs"]["temp/0.1"] = ["http://127.0.0.2:1/data.h5", 0, 10]
    (tmp_path / "evil.json").write_text(json.dumps(doc))
    (tmp_path / "data.h5").write_bytes((site / "data.h5").read_bytes())
    with serve(tmp_path) as (url, state):
        arr = zl.open(f"reference::{url}/evil.json::/temp")
        failures: list = []
        arr.read(failures=failures)
        assert sorted(f.key for f in failures) == ["temp/0.0", "temp/0.1"]
        assert all("not authorised" in f.message for f in failures)
        with pytest.raises(AccessDeniedError, match="temp/0.0"):
            arr[0:1, 0:1]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_references_in_an_s3_bucket(site: Path) -> None:
    pytest.importorskip("moto.server")
    import boto3

    from cloud_servers import moto_s3

    with moto_s3() as endpoint:
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket="refs")
        for path in site.rglob("*"):
            if path.is_file():
                client.put_object(Bucket="refs", Key=path.relative_to(site).as_posix(), Body=path.read_bytes())
        doc = json.loads((site / "refs.json").read_text())
        doc["refs"]["temp/0.0"][0] = "s3://refs/data.h5"  # absolute, same bucket: allowed
        doc["refs"]["temp/0.1"][0] = "s3://elsewhere/data.h5"  # another bucket: refused
        client.put_object(Bucket="refs", Key="mixed.json", Body=json.dumps(doc).encode())
        for name in ("refs.json", "refs.parq"):
            root = zl.open(f"reference::s3://refs/{name}", endpoint_url=endpoint)
            np.testing.assert_array_equal(root["counts"][...], truth(site / "data.h5", "counts"))
            np.testing.assert_array_equal(root["grp/deep"][...], truth(site / "data.h5", "grp/deep"))
        split = zl.open("reference::s3://refs/refs.json::/level", target_options={"endpoint_url": endpoint},
                        remote_options={"endpoint_url": endpoint})  # fsspec's names for each side's options
        np.testing.assert_array_equal(split[...], truth(site / "data.h5", "level"))
        arr = zl.open("reference::s3://refs/mixed.json::/temp", endpoint_url=endpoint)
        failures: list = []
        out = arr.read(failures=failures)
        assert [f.key for f in failures] == ["temp/0.1"] and "s3://elsewhere/" in failures[0].message
        np.testing.assert_array_equal(out[:10, :15], truth(site / "data.h5", "temp")[:10, :15])


def test_a_json_url_is_a_reference_set_or_refused(site: Path, tmp_path: Path) -> None:
    (tmp_path / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))
    with serve(site) as (url, _):
        np.testing.assert_array_equal(zl.open(f"{url}/refs.json::/counts")[...], truth(site / "data.h5", "counts"))
    with serve(tmp_path) as (url, _), pytest.raises(zl.StoreError, match="zarr.json is JSON but not a reference set"):
        zl.open(f"{url}/zarr.json")


def test_a_remote_parquet_set_opened_as_a_store_says_how_to_open_it(site: Path) -> None:
    with serve(site) as (url, _):
        with pytest.raises(zl.ZarrError, match=rf"Parquet reference set.*reference::{url}/refs.parq"):
            zl.open(f"{url}/refs.parq")
        np.testing.assert_array_equal(zl.open(f"reference::{url}/refs.parq::/mask")[...], truth(site / "data.h5", "mask"))


def test_presigned_targets_are_read_with_their_own_signatures(site: Path, tmp_path: Path) -> None:
    """Each target URL carries its own query (a presigned URL): it is sent as written, with the
    file's name decoded once, and targets signed alike still share coalesced requests."""
    import shutil

    from http_server import Faults

    shutil.copy(site / "data.h5", tmp_path / "my data.h5")
    doc = json.loads((site / "refs.json").read_text())
    sig = "X-Amz-Expires=600&X-Amz-Signature=0f%2F9e"
    with serve(tmp_path, Faults(signed={"data.h5": sig})) as (url, state):
        for v in doc["refs"].values():
            if isinstance(v, list):
                v[0] = f"{url}/my%20data.h5?{sig}"
        (tmp_path / "signed.json").write_text(json.dumps(doc))
        root = zl.open(f"reference::{url}/signed.json")
        for array in ("temp", "counts", "grp/deep"):
            np.testing.assert_array_equal(root[array][...], truth(site / "data.h5", array))
        gets = [p for m, p, _ in state.requests("GET") if "data.h5" in p]
        assert gets and all(p == f"/my%20data.h5?{sig}" for p in gets)
        doc["refs"]["temp/0.0"][0] = f"{url}/my%20data.h5?X-Amz-Signature=forged"
        (tmp_path / "forged.json").write_text(json.dumps(doc))
        arr = zl.open(f"reference::{url}/forged.json::/temp")
        failures: list = []
        arr.read(failures=failures)
        assert [f.key for f in failures] == ["temp/0.0"]
        assert "forged" not in failures[0].message and "my%20data.h5" in failures[0].message
