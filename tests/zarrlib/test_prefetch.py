"""Opening several nodes of a remote store after ``Group.prefetch`` asks for their metadata in one
batch (one round trip), and nothing more when each is then opened; locally nothing changes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.storage import LocalStore, open_store

from http_server import serve
from store_wrappers import CountingStore


@pytest.mark.parametrize("fmt", [2, 3])
def test_prefetched_metadata_is_one_batch(tmp_path: Path, fmt: int) -> None:
    g = zarr.open_group(tmp_path / "g.zarr", mode="w", zarr_format=fmt)
    for k in range(4):
        g.create_array(str(k), shape=(8 >> k, 8 >> k), chunks=(2, 2), dtype="u1", attributes={"level": k})[...] = k
    with serve(tmp_path) as (url, _):
        store = CountingStore(open_store(f"{url}/g.zarr"))
        root = zl.open(store)
        assert isinstance(root, zl.Group)
        store.reset()
        root.prefetch(["0", "1", "2", "3", "../escape", "missing"])
        assert store.batches == 1
        asked = len(store.requests)
        levels = [root[str(k)] for k in range(4)]
        assert len(store.requests) == asked  # every level opened from the batch: nothing more asked
        for k, arr in enumerate(levels):
            assert isinstance(arr, zl.Array) and arr.attrs == {"level": k} and arr.shape == (8 >> k, 8 >> k)
            np.testing.assert_array_equal(arr[...], np.full(arr.shape, k, "u1"))
        with pytest.raises(zl.NodeNotFoundError):
            root["missing"]  # prefetched as absent: still a clear error


def test_a_local_store_reads_as_before(tmp_path: Path) -> None:
    g = zarr.open_group(tmp_path / "l.zarr", mode="w")
    g.create_array("0", shape=(4,), chunks=(2,), dtype="u1")[...] = 1
    store = CountingStore(LocalStore(tmp_path / "l.zarr"))
    root = zl.open(store)
    store.reset()
    root.prefetch(["0"])  # type: ignore[union-attr]
    assert store.requests == []  # nothing fetched ahead: a local read is no round trip
    assert root["0"].shape == (4,)  # type: ignore[index]
