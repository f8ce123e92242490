"""Choosing the remote backend, and the storage options obstore is given for each scheme.

The truth for the mapping is what obstore's own stores report back as their configuration
(``store.config``), and for reads the numpy data zarr-python wrote and the requests the
loopback server counted.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from http_server import Faults, serve
from zarrview.zarrlib.storage import ByteRequest, open_store
from zarrview.zarrlib.storage.fsspec_store import FsspecStore
from zarrview.zarrlib.storage.http_store import HttpStore
from zarrview.zarrlib.storage.obstore_options import Unmapped, map_options

pytest.importorskip("obstore", reason="obstore is part of the cloud and test extras")

from zarrview.zarrlib.storage.obstore_store import ObstoreStore  # noqa: E402

pytestmark = pytest.mark.timeout(60)

DATA = np.arange(4 * 64 * 48, dtype="<u2").reshape(4, 64, 48)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("backend")
    a = zarr.create_array(root / "chunked.zarr", shape=DATA.shape, chunks=(1, 16, 16), dtype="u2")
    a[...] = DATA
    return root


def test_backend_is_chosen_by_url_and_options(site: Path) -> None:
    """obstore reads plain http(s) URLs, a URL with a query (a signature sent with each
    request) too, unless fsspec is named."""
    with serve(site) as (url, _):
        assert isinstance(open_store(f"{url}/chunked.zarr"), ObstoreStore)
        assert isinstance(open_store(f"{url}/chunked.zarr", backend="obstore"), ObstoreStore)
        assert type(open_store(f"{url}/chunked.zarr", backend="fsspec")) is HttpStore
        assert isinstance(open_store(f"{url}/chunked.zarr?sig=abc"), ObstoreStore)
        assert type(open_store(f"{url}/chunked.zarr?sig=abc", backend="fsspec")) is HttpStore
        with pytest.raises(zl.StoreError, match="backend must be one of"):
            open_store(f"{url}/chunked.zarr", backend="curl")


def test_an_option_obstore_cannot_take_keeps_fsspec_or_is_named(site: Path) -> None:
    import aiohttp

    aiohttp_only = {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=5)}}
    with serve(site) as (url, _):
        with pytest.raises(Unmapped, match=r"client_kwargs\['timeout'\]"):
            open_store(f"{url}/chunked.zarr", backend="obstore", **aiohttp_only)
        assert type(open_store(f"{url}/chunked.zarr", **aiohttp_only)) is HttpStore
    # what only fsspec reaches stays with fsspec under the automatic choice, and is refused by name
    assert type(open_store("memory://nothing-here")) is FsspecStore
    with pytest.raises(Unmapped, match="memory://"):
        open_store("memory://nothing-here", backend="obstore")


def test_a_server_that_states_no_sizes_is_read_through_fsspec(site: Path) -> None:
    """A server that sends every body in chunked transfer encoding (no Content-Length, which
    obstore refuses) is handed to the fsspec route at its first answer: the values are
    zarr-python's, every request after that goes out once, and a body past its bound is still
    refused there."""
    with serve(site, Faults(chunked=True)) as (url, state):
        arr = zl.open(f"{url}/chunked.zarr", io_retries=1)
        store = arr.reader.store
        assert isinstance(store, ObstoreStore)
        np.testing.assert_array_equal(arr[...], DATA)
        assert isinstance(store.handed, HttpStore)
        state.clear()
        np.testing.assert_array_equal(arr[1, 16:40, 8:30], DATA[1, 16:40, 8:30])
        chunk_gets = [r for r in state.requests("GET") if "/c/" in r[1]]
        assert len(chunk_gets) == len({r[1] for r in chunk_gets}) == 2 * 2  # each chunk once, by the fsspec route
    size = (site / "chunked.zarr" / "zarr.json").stat().st_size
    old = zl.limits.configure(metadata_bytes=size // 2)
    try:
        with serve(site, Faults(chunked=True)) as (url, _):
            with pytest.raises(zl.StoreError, match=r"zarr\.json.*ran past"):
                zl.open(f"{url}/chunked.zarr", io_retries=1)
    finally:
        zl.limits.restore(old)


def test_s3_options_as_s3fs_spells_them() -> None:
    mapped = map_options("s3", "s3://bucket/a.zarr", {
        "anon": True, "endpoint_url": "http://127.0.0.1:9000", "client_kwargs": {"region_name": "eu-west-1"}})
    assert mapped.url == "s3://bucket/a.zarr"
    assert mapped.config == {"skip_signature": True, "region": "eu-west-1", "endpoint": "http://127.0.0.1:9000",
                             "virtual_hosted_style_request": False}
    assert mapped.client == {"allow_http": True}
    keyed = map_options("s3a", "s3a://bucket/x", {"key": "K", "secret": "S", "token": "T", "region": "us-east-2"})
    assert keyed.url == "s3://bucket/x" and keyed.client == {}
    assert keyed.config == {"access_key_id": "K", "secret_access_key": "S", "session_token": "T", "region": "us-east-2"}
    with pytest.raises(Unmapped, match="profile"):
        map_options("s3", "s3://bucket/x", {"profile": "work"})


def test_gcs_and_azure_options() -> None:
    gcs = map_options("gcs", "gcs://bucket/a.zarr", {"token": "anon", "endpoint_url": "http://127.0.0.1:4443/"})
    assert gcs.url == "gs://bucket/a.zarr"
    assert gcs.config == {"skip_signature": True, "base_url": "http://127.0.0.1:4443"} and gcs.client == {"allow_http": True}
    assert map_options("gs", "gs://b/x", {"token": "/keys/sa.json"}).config == {"service_account": "/keys/sa.json"}
    with pytest.raises(Unmapped, match="token"):
        map_options("gs", "gs://b/x", {"token": object()})
    az = map_options("abfs", "abfs://container/x", {"account_name": "acct", "sas_token": "sv=1", "anon": False})
    assert az.config == {"account_name": "acct", "sas_key": "sv=1"}


def test_mapped_options_reach_obstores_stores() -> None:
    """obstore reports back what it was configured with: the mapping is the one it uses."""
    s3 = open_store("s3://bucket/root", backend="obstore", anon=True, endpoint_url="http://127.0.0.1:1",
                    region="eu-west-1")
    assert isinstance(s3, ObstoreStore)
    config = {str(k).lower(): v for k, v in s3.store.config.items()}
    assert config["bucket"] == "bucket" and config["skip_signature"] in (True, "true")
    assert config["endpoint"] == "http://127.0.0.1:1" and config["region"] == "eu-west-1"
    assert s3.store.prefix == "root"
    gcs = open_store("gs://bucket/root", backend="obstore", token="anon", endpoint_url="http://127.0.0.1:1")
    config = {str(k).lower(): v for k, v in gcs.store.config.items()}  # type: ignore[attr-defined]
    assert config["bucket"] == "bucket" and config["base_url"] == "http://127.0.0.1:1"


def test_a_plane_costs_what_it_costs_on_fsspec(site: Path) -> None:
    """The same requests, one per chunk, whichever backend reads."""
    logs = {}
    for backend in ("fsspec", "obstore"):
        with serve(site) as (url, state):
            arr = zl.open(f"{url}/chunked.zarr", backend=backend)
            state.clear()
            np.testing.assert_array_equal(arr[2], DATA[2])
            logs[backend] = sorted(state.requests())
    # the same objects, one request each; obstore asks for a chunk as its first bytes up to its bound
    assert [r[:2] for r in logs["obstore"]] == [r[:2] for r in logs["fsspec"]]
    assert len(logs["obstore"]) == (64 // 16) * (48 // 16)
    assert all(r[2] is None for r in logs["fsspec"]) and all(r[2] and r[2].startswith("bytes=0-") for r in logs["obstore"])


def test_cancel_stops_issuing_requests_and_io_concurrency_bounds_them(site: Path) -> None:
    """With two requests in flight and a slow server, a read cancelled early has sent two chunk
    requests, not twelve, and sends none after."""
    with serve(site, Faults(delay=0.6, delay_match="/c/")) as (url, state):
        arr = zl.open(f"{url}/chunked.zarr", backend="obstore", io_concurrency=2, io_timeout=30)
        token = zl.CancelToken()
        threading.Timer(0.3, token.cancel).start()
        t0 = time.monotonic()
        with pytest.raises(zl.ReadCancelled):
            arr.read(2, cancel=token)
        assert time.monotonic() - t0 < 1.5
        time.sleep(1.0)
        assert len([r for r in state.requests("GET") if "/c/" in r[1]]) == 2


def test_a_range_to_the_end_is_bounded_from_the_range_the_answer_states(tmp_path: Path) -> None:
    data = bytes(range(256)) * 100
    (tmp_path / "blob").write_bytes(data)
    with serve(tmp_path) as (url, _):
        store = open_store(url, backend="obstore")
        assert store.get_range(ByteRequest("blob", 100)) == data[100:]
        old = zl.limits.configure(object_bytes=1000)
        try:
            with pytest.raises(zl.TooLargeError, match=r"/blob: 24\.9 KiB, more than the 1000 bytes"):
                store.get_range(ByteRequest("blob", 100))
            assert store.get_range(ByteRequest("blob", len(data) - 900)) == data[-900:]
        finally:
            zl.limits.restore(old)
