"""LocalStore keeps shard files open between runs (storage/local_fds.py): the bytes read are the
bytes on disk (and zarr-python's), open descriptors are bounded and closed, and a file replaced
or removed while kept behaves as local_fds documents."""

from __future__ import annotations

import gc
import os
import sys
import threading

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.zarrlib.errors import StoreError
from zarrview.zarrlib.storage import ByteRequest, LocalStore
from zarrview.zarrlib.storage.base import Scratch
from zarrview.zarrlib.storage.local_fds import CAPACITY, FdCache
from store_contract import read_into

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts /proc/self/fd")]


def open_fds(*under: object) -> set[str]:
    """This process's descriptors of files below the given folders (or of the given files), as
    "fd -> path": threads that earlier tests left behind may open and close other files meanwhile."""
    roots = tuple(os.path.realpath(str(u)) for u in under)
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith(roots):
            found.add(f"{fd} -> {target}")
    return found


def run(store: LocalStore, key: str, start: int, stop: int, scratch: Scratch | None = None) -> bytes | None:
    """One range as a read's worker asks for it: through ``get_ranges``, into its scratch buffer."""
    return read_into(store, ByteRequest(key, start, stop), scratch or Scratch())


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    blobs = {f"s/{i}": rng.integers(0, 256, 4096 + i, dtype=np.uint8).tobytes() for i in range(12)}
    for k, b in blobs.items():
        (tmp_path / k).parent.mkdir(exist_ok=True)
        (tmp_path / k).write_bytes(b)
    return tmp_path, blobs


def test_runs_read_the_bytes_on_disk_through_one_kept_descriptor(files):
    root, blobs = files
    before = open_fds(root)
    store = LocalStore(root)
    for start in range(0, 4096, 512):
        assert run(store, "s/3", start, start + 700) == blobs["s/3"][start:start + 700]
    assert run(store, "s/3", 4000, 10**9) == blobs["s/3"][4000:]  # clipped to the size
    assert run(store, "s/missing", 0, 10) is None
    assert len(open_fds(root) - before) == 1
    store.close()
    assert open_fds(root) == before
    assert run(store, "s/3", 0, 10) == blobs["s/3"][:10]  # after close: read, nothing kept
    assert open_fds(root) == before


def test_kept_descriptors_are_bounded_and_reused(files):
    root, blobs = files
    before = open_fds(root)
    store = LocalStore(root)
    store._fds = FdCache(capacity=4)
    for _ in range(3):
        for k, b in blobs.items():
            assert run(store, k, 100, 3000) == b[100:3000]
            assert len(open_fds(root) - before) <= 4
    store.close()
    assert open_fds(root) == before


def test_a_descriptor_evicted_while_in_use_is_closed_by_its_last_reader(tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / str(i)
        p.write_bytes(bytes([i]) * 10)
        paths.append(str(p))
    cache = FdCache(capacity=1)
    first = cache.put(paths[0], os.open(paths[0], os.O_RDONLY), 10)  # in use
    cache.release(cache.put(paths[1], os.open(paths[1], os.O_RDONLY), 10))  # evicts the first
    assert os.pread(first.fd, 10, 0) == b"\0" * 10  # still open under its reader
    cache.release(first)
    with pytest.raises(OSError):
        os.fstat(first.fd)
    again = cache.acquire(paths[1])
    assert again is not None and os.pread(again.fd, 3, 0) == b"\1" * 3
    cache.close()  # in use: closed by its release, not under it
    assert os.pread(again.fd, 3, 0) == b"\1" * 3
    cache.release(again)
    with pytest.raises(OSError):
        os.fstat(again.fd)
    assert len(cache) == 0 and cache.acquire(paths[1]) is None


def test_replaced_or_removed_shards_behave_as_documented(tmp_path):
    (tmp_path / "shard").write_bytes(b"old" * 100)
    store = LocalStore(tmp_path)
    assert run(store, "shard", 0, 6) == b"oldold"
    (tmp_path / "new").write_bytes(b"NEW" * 200)
    os.replace(tmp_path / "new", tmp_path / "shard")
    # runs keep reading the file whose index was read (the old inode, whole and unchanged)
    assert run(store, "shard", 0, 6) == b"oldold"
    assert run(store, "shard", 297, 400) == b"old"  # never past the size it had
    # an index read opens the file afresh, and the runs after it read the new file
    assert store.get_range(ByteRequest("shard", -3)) == b"NEW"
    assert run(store, "shard", 0, 6) == b"NEWNEW"
    assert run(store, "shard", 597, 700) == b"NEW"
    os.remove(tmp_path / "shard")
    assert run(store, "shard", 0, 3) == b"NEW"  # still open: the removed file's bytes
    assert store.get_range(ByteRequest("shard", 0, 3)) is None  # a fresh open: gone
    assert run(store, "shard", 0, 3) == b"NEW"  # the kept descriptor was not replaced
    assert store.get(ByteRequest("shard").key) is None  # whole objects are never kept
    store.close()


def test_in_place_rewrites_are_read_up_to_the_size_at_open(tmp_path):
    p = tmp_path / "shard"
    p.write_bytes(b"a" * 10)
    store = LocalStore(tmp_path)
    assert run(store, "shard", 0, 10) == b"a" * 10
    p.write_bytes(b"b" * 20)  # same inode, truncated and rewritten
    assert run(store, "shard", 0, 20) == b"b" * 10
    assert store.get_range(ByteRequest("shard", 0, 20)) == b"b" * 20
    assert run(store, "shard", 0, 20) == b"b" * 20
    store.close()


def test_only_regular_files_are_kept(tmp_path):
    os.symlink("/dev/zero", tmp_path / "zero")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    before = open_fds(tmp_path, "/dev/zero")
    store = LocalStore(tmp_path)
    for key, kind in (("zero", "character device"), ("fifo", "FIFO")):
        with pytest.raises(StoreError, match=kind) as e:
            run(store, key, 0, 10)
        assert key in str(e.value)
    assert run(store, "dir", 0, 10) is None
    assert open_fds(tmp_path, "/dev/zero") == before and len(store._fds) == 0
    store.close()


def test_many_threads_share_and_evict_descriptors(files):
    root, blobs = files
    before = open_fds(root)
    store = LocalStore(root)
    store._fds = FdCache(capacity=3)
    keys = sorted(blobs)
    errors: list[str] = []

    def work(t: int) -> None:
        scratch = Scratch()
        for i in range(300):
            k = keys[(t * 7 + i) % len(keys)]
            a = (i * 37) % 4000
            got = run(store, k, a, a + 96, scratch)
            if got != blobs[k][a:a + 96]:
                errors.append(f"{k} {a}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(open_fds(root) - before) <= 3
    store.close()
    assert open_fds(root) == before


def test_a_dropped_store_closes_its_descriptors(files):
    root, blobs = files
    gc.collect()  # descriptors of earlier tests' garbage must not close during this one
    before = open_fds(root)
    store = LocalStore(root)
    run(store, "s/1", 0, 10)
    assert len(open_fds(root) - before) == 1
    del store
    gc.collect()
    assert open_fds(root) == before


def test_sharded_array_written_by_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = np.arange(6 * 64 * 48, dtype="uint16").reshape(6, 64, 48) * 7
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype=data.dtype,
                          chunks=(1, 8, 8), shards=(2, 32, 24), zarr_format=3)
    z[...] = data
    n_shards = 3 * 2 * 2
    before = open_fds(tmp_path)
    store = LocalStore(tmp_path / "a.zarr")
    arr = zl.open(store)
    assert np.array_equal(arr[...], data)
    assert np.array_equal(arr[:, 40, :], data[:, 40, :])
    assert np.array_equal(arr[3, 5:60, 7:47], data[3, 5:60, 7:47])
    assert 1 <= len(open_fds(tmp_path) - before) <= min(n_shards, CAPACITY)
    store.close()
    assert open_fds(tmp_path) == before
