"""gs:// against Google Cloud Storage servers on 127.0.0.1: through gcsfs (``backend="fsspec"``)
against a GCS emulator of the JSON API, and through obstore, which ``gs://`` takes by default,
against GCS's XML API (the loopback HTTP server with buckets: ranged GETs, HEADs, ListObjectsV2).

Stores written by zarr-python on disk are uploaded object by object; the truth is the numpy
data and zarr-python's own read. GCS lists, so hierarchies need no consolidated metadata.
The emulator cannot answer gcsfs's experimental gRPC bucket-type lookup, exactly as public
buckets read anonymously cannot: these reads finishing in seconds is the proof that zarrlib
reads through the JSON API without it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from cloud_servers import gcs_emulator
from conformance_helpers import assert_same_tree, write_bucket_fixtures
from http_server import ServerState, serve

pytest.importorskip("gcsfs", reason="zarrview[cloud] is part of the test extras")
pytest.importorskip("gcp_storage_emulator.server", reason="gcp-storage-emulator is part of the test extras")

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

BUCKET = "zarr-data"
DATA = np.arange(3 * 40 * 30, dtype="<u2").reshape(3, 40, 30)


@pytest.fixture(scope="module")
def gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    from gcsfs.core import GCSFileSystem

    with gcs_emulator(BUCKET) as endpoint:
        local = tmp_path_factory.mktemp("gcssrc")
        write_bucket_fixtures(local, DATA, "on gcs", ("run #3", "Zürich"))
        fs = GCSFileSystem(endpoint_url=endpoint, token="anon", backend="fsspec")
        for path in local.rglob("*"):
            if path.is_file():
                fs.pipe_file(f"{BUCKET}/{path.relative_to(local).as_posix()}", path.read_bytes())
        yield endpoint, local


@pytest.mark.parametrize("name", ["v3.zarr", "sharded.zarr", "v2.zarr"])
def test_arrays_read_like_zarr_python(gcs: tuple[str, Path], name: str) -> None:
    endpoint, local = gcs
    t0 = time.perf_counter()
    arr = zl.open(f"gs://{BUCKET}/{name}", endpoint_url=endpoint, token="anon", backend="fsspec")
    np.testing.assert_array_equal(arr[...], DATA)
    np.testing.assert_array_equal(arr[1, 5:33, 7:29], zarr.open_array(local / name, mode="r")[1, 5:33, 7:29])
    assert time.perf_counter() - t0 < 20  # no per-read gRPC lookup (a minute each when it cannot answer)


def test_hierarchy_is_listed_like_on_disk(gcs: tuple[str, Path]) -> None:
    endpoint, local = gcs
    remote = zl.open(f"gcs://{BUCKET}/tree.zarr", endpoint_url=endpoint, token="anon", backend="fsspec")
    assert_same_tree(remote, zl.open(local / "tree.zarr"), 4)
    assert remote.attrs == {"title": "on gcs"}


def test_missing_store_is_named(gcs: tuple[str, Path]) -> None:
    endpoint, _ = gcs
    with pytest.raises(zl.StoreNotFoundError, match=r"no Zarr metadata at gs://zarr-data/nothing\.zarr/zarr\.json"):
        zl.open(f"gs://{BUCKET}/nothing.zarr", endpoint_url=endpoint, token="anon", backend="fsspec")


# -- through obstore, GCS's XML API ----------------------------------------------------------------


@pytest.fixture(scope="module")
def xml_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, ServerState]]:
    """The same stores in a bucket of the loopback server with buckets (GCS's XML API)."""
    served = tmp_path_factory.mktemp("gcsxml")
    local = served / BUCKET
    write_bucket_fixtures(local, DATA, "on gcs", ("run #3", "Zürich"))
    with serve(served, buckets=True) as (endpoint, state):
        yield endpoint, local, state


@pytest.mark.parametrize("name", ["v3.zarr", "sharded.zarr", "v2.zarr"])
def test_arrays_read_like_zarr_python_through_obstore(xml_api: tuple[str, Path, ServerState], name: str) -> None:
    endpoint, local, state = xml_api
    arr = zl.open(f"gs://{BUCKET}/{name}", endpoint_url=endpoint, token="anon")
    assert type(arr.store).__name__ == "ObstoreStore"
    state.clear()
    np.testing.assert_array_equal(arr[...], DATA)
    np.testing.assert_array_equal(arr[1, 5:33, 7:29], zarr.open_array(local / name, mode="r")[1, 5:33, 7:29])
    assert all(unquote(path).startswith(f"/{BUCKET}/{name}/") for _, path, _ in state.requests()), state.requests()


def test_hierarchy_is_listed_like_on_disk_through_obstore(xml_api: tuple[str, Path, ServerState]) -> None:
    endpoint, local, state = xml_api
    state.clear()
    remote = zl.open(f"gs://{BUCKET}/tree.zarr", endpoint_url=endpoint, token="anon")
    assert_same_tree(remote, zl.open(local / "tree.zarr"), 4)
    assert remote.attrs == {"title": "on gcs"}
    assert any("list-type=2" in path for _, path, _ in state.requests("GET")), "listed, not guessed"


def test_missing_store_is_named_through_obstore(xml_api: tuple[str, Path, ServerState]) -> None:
    endpoint, _, _ = xml_api
    with pytest.raises(zl.StoreNotFoundError, match=r"no Zarr metadata at gs://zarr-data/nothing\.zarr/zarr\.json"):
        zl.open(f"gs://{BUCKET}/nothing.zarr", endpoint_url=endpoint, token="anon")
