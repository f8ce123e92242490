"""az:// and abfs:// through obstore, which they take by default, against Azure's Blob service
on 127.0.0.1 (the loopback HTTP server with buckets: ranged GETs, HEADs, List Blobs).

Stores written by zarr-python on disk are served as blobs of a container; the truth is the
numpy data and zarr-python's own read. Azure lists, so hierarchies need no consolidated metadata.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from conformance_helpers import assert_same_tree, write_bucket_fixtures
from http_server import ServerState, serve

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

CONTAINER = "zarr-data"
ACCOUNT = "devstoreaccount1"
DATA = np.arange(3 * 40 * 30, dtype="<f4").reshape(3, 40, 30)


@pytest.fixture(scope="module")
def blobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, ServerState]]:
    served = tmp_path_factory.mktemp("azure")
    local = served / CONTAINER
    write_bucket_fixtures(local, DATA, "on azure", ("run #3", "Zürich"))
    with serve(served, buckets=True) as (endpoint, state):
        yield endpoint, local, state


@pytest.mark.parametrize("scheme", ["az", "abfs"])
@pytest.mark.parametrize("name", ["v3.zarr", "sharded.zarr", "v2.zarr"])
def test_arrays_read_like_zarr_python(blobs: tuple[str, Path, ServerState], name: str, scheme: str) -> None:
    endpoint, local, state = blobs
    arr = zl.open(f"{scheme}://{CONTAINER}/{name}", account_name=ACCOUNT, endpoint_url=endpoint)
    assert type(arr.store).__name__ == "ObstoreStore"
    state.clear()
    np.testing.assert_array_equal(arr[...], DATA)
    np.testing.assert_array_equal(arr[1, 5:33, 7:29], zarr.open_array(local / name, mode="r")[1, 5:33, 7:29])
    assert state.requests() and all(unquote(path).startswith(f"/{CONTAINER}/{name}/")
                                    for _, path, _ in state.requests()), state.requests()


def test_hierarchy_is_listed_like_on_disk(blobs: tuple[str, Path, ServerState]) -> None:
    endpoint, local, state = blobs
    state.clear()
    remote = zl.open(f"az://{CONTAINER}/tree.zarr", account_name=ACCOUNT, endpoint_url=endpoint)
    assert_same_tree(remote, zl.open(local / "tree.zarr"), 4)  # names URLs escape ("run #3", "Zürich") included
    assert remote.attrs == {"title": "on azure"}
    assert any("comp=list" in path for _, path, _ in state.requests("GET")), "listed, not guessed"


def test_missing_store_and_account_are_named(blobs: tuple[str, Path, ServerState]) -> None:
    endpoint, _, _ = blobs
    with pytest.raises(zl.StoreNotFoundError, match=r"no Zarr metadata at az://zarr-data/nothing\.zarr/zarr\.json"):
        zl.open(f"az://{CONTAINER}/nothing.zarr", account_name=ACCOUNT, endpoint_url=endpoint)
    with pytest.raises(zl.StoreError, match=r"cannot open az://zarr-data/v3\.zarr: .*[Aa]ccount"):
        zl.open(f"az://{CONTAINER}/v3.zarr", endpoint_url=endpoint)


def test_options_without_an_obstore_spelling_are_named(blobs: tuple[str, Path, ServerState]) -> None:
    """A credential object only adlfs takes keeps the fsspec route, whose driver is not installed."""
    endpoint, _, _ = blobs
    with pytest.raises(zl.StoreError, match=r"no driver for 'az://'; install adlfs"):
        zl.open(f"az://{CONTAINER}/v3.zarr", account_name=ACCOUNT, endpoint_url=endpoint, credential=object())


def test_anonymous_unless_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    from zarrview.zarrlib.storage.credentials import anonymous_unless_credentials

    for name in [n for n in os.environ if n.startswith("AZURE_")]:
        monkeypatch.delenv(name)
    assert anonymous_unless_credentials("az", {"account_name": "a"}) == {"account_name": "a", "anon": True}
    assert anonymous_unless_credentials("abfs", {"account_name": "a", "account_key": "k"}) == \
        {"account_name": "a", "account_key": "k"}
    monkeypatch.setenv("AZURE_STORAGE_SAS_TOKEN", "sv=2024&sig=x")
    assert anonymous_unless_credentials("az", {"account_name": "a"}) == {"account_name": "a"}
