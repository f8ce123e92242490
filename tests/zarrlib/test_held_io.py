"""Local reads that keep the GIL while the bytes are cached (issue 15), against zarr-python's data.

Each ``os`` call releases the GIL, so counting the ``os`` calls a read makes counts the
hand-offs the held path saves; the values read are checked against zarr-python's.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import os
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrview.zarrlib as zl
from zarrview.zarrlib.storage import held_io
from zarrview.zarrlib.storage.base import ByteRequest, Scratch
from zarrview.zarrlib.storage.held_io import HeldIO, for_directory, mount_type
from zarrview.zarrlib.storage.local import LocalStore

pytestmark = pytest.mark.skipif(held_io._calls is None, reason="statx/preadv2 are Linux calls")
zarr = pytest.importorskip("zarr")


def held_store(root: Path) -> LocalStore:
    """A store reading through ``HeldIO`` whatever file system the test's folder is on."""
    store = LocalStore(root)
    store._held = HeldIO()
    return store


def written(tmp_path: Path, **kw: Any) -> tuple[Path, np.ndarray]:
    data = (np.arange(6 * 40 * 36, dtype="uint16").reshape(6, 40, 36) * 37) % 5003
    z = zarr.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype=data.dtype, chunks=(1, 16, 16),
                          zarr_format=3, **kw)
    z[...] = data
    return tmp_path / "a.zarr", data


@pytest.mark.parametrize("kw", [{}, {"shards": (2, 32, 32)}], ids=["chunk_files", "sharded"])
def test_cached_chunks_are_read_without_an_os_call(tmp_path: Path, os_calls: Counter[str], kw: dict[str, Any]) -> None:
    root, data = written(tmp_path, **kw)
    arr = zl.open(held_store(root))
    expected = zarr.open_array(str(root), mode="r")
    arr[0]  # metadata, and a sharded array's indexes, are read here
    gc.collect()  # stores of earlier tests, closing their kept descriptors, are not this read's
    os_calls.clear()
    for sel in [(slice(None), 20, slice(None)), (3, slice(None), slice(None)), (slice(1, 5), slice(3, 39), 7)]:
        assert np.array_equal(arr[sel], expected[sel])
    assert sum(os_calls.values()) == 0, os_calls


@pytest.mark.parametrize("batched", [True, False])
def test_without_the_held_path_each_chunk_file_costs_os_calls(tmp_path: Path, os_calls: Counter[str],
                                                              monkeypatch: pytest.MonkeyPatch, batched: bool) -> None:
    """The default: held calls are opt-in (``ZARRVIEW_HELD_IO=1``) until measured faster on many
    cores. A chunk file costs open, one read and close: its size is not asked (``fstat``) when
    the read stops short of the room the thread's buffer has, only on a thread's first read
    where chunks are decoded one by one (its buffer is empty then). (Files one by one through
    ``os``: where io_uring is refused, or turned off as here; ``test_file_groups.py`` counts the
    other way.)"""
    monkeypatch.setenv("ZARRVIEW_NO_BATCH", "" if batched else "1")
    monkeypatch.setenv("ZARRVIEW_NO_URING", "1")
    root, data = written(tmp_path)
    store = LocalStore(root)
    assert store._held is None
    arr = zl.open(store)
    one = ThreadPoolExecutor(1)
    os_calls.clear()
    assert np.array_equal(arr.read((slice(None), 20, slice(None)), executor=one), data[:, 20, :])
    chunks = 6 * 3
    assert os_calls["open"] == os_calls["close"] == os_calls["preadv"] == chunks
    assert os_calls["fstat"] == (0 if batched else 1)
    os_calls.clear()
    assert np.array_equal(arr.read((slice(None), 20, slice(None)), executor=one), data[:, 20, :])
    assert os_calls["open"] == os_calls["close"] == os_calls["preadv"] == chunks and os_calls["fstat"] == 0


@pytest.mark.parametrize("more", [None, 1, -1, 0, 4000])
def test_a_file_that_fills_the_room_is_read_whole_after_fstat(tmp_path: Path, os_calls: Counter[str],
                                                             more: int | None) -> None:
    """Read without ``fstat``, a file is trusted only when the read stops short of the room;
    one that fills it (larger than the room: read again, whole) or reads nothing (empty, or not
    a regular file) is asked its size."""
    scratch = Scratch()
    scratch.view(300)
    room = scratch.room()
    size = 0 if more is None else more if more == 1 else room + more
    (tmp_path / "k").write_bytes((bytes(range(256)) * (size // 256 + 1))[:size])
    store = LocalStore(tmp_path)
    os_calls.clear()  # writing the file and making the store may call fstat (Python 3.12's io does)
    got = store.read_into(ByteRequest("k"), scratch)
    assert os_calls["fstat"] == (0 if 0 < size < room else 1)
    assert got is not None and bytes(got) == (tmp_path / "k").read_bytes()


class FakeRead:
    """``preadv2`` answering as a kernel may: too little, or nothing with an error number."""

    def __init__(self, real: Any, mode: str) -> None:
        self.real, self.mode, self.calls = real, mode, 0

    def __call__(self, fd: int, iov: Any, count: int, offset: int, flags: int) -> int:
        self.calls += 1
        if self.mode == "short":
            vec = ctypes.cast(iov, ctypes.POINTER(held_io._IOVec)).contents
            return int(self.real(fd, ctypes.byref(held_io._IOVec(vec.base, max(1, vec.len // 3))), 1, offset, flags))
        ctypes.set_errno({"uncached": errno.EAGAIN, "unsupported": errno.EOPNOTSUPP, "failing": errno.EIO}[self.mode])
        return -1


@pytest.mark.parametrize("mode", ["short", "uncached", "unsupported"])
def test_what_the_page_cache_lacks_is_read_by_os(tmp_path: Path, os_calls: Counter[str], mode: str) -> None:
    root, data = written(tmp_path)
    store = held_store(root)
    assert store._held is not None
    arr = zl.open(store)
    fake = FakeRead(store._held._preadv2, mode)
    store._held._preadv2 = fake
    os_calls.clear()
    assert np.array_equal(arr[2], data[2])
    assert os_calls["preadv"] == 9  # each chunk's remainder, from where the held read stopped
    assert os_calls["open"] == os_calls["fstat"] == 0
    assert store._held.nowait is (mode != "unsupported")
    arr[3]
    assert fake.calls == (18 if mode != "unsupported" else 1)  # refused once: not asked again


def test_a_failing_read_names_the_chunk(tmp_path: Path) -> None:
    root, _ = written(tmp_path)
    store = held_store(root)
    assert store._held is not None
    arr = zl.open(store)
    store._held._preadv2 = FakeRead(store._held._preadv2, "failing")
    with pytest.raises(zl.StoreError, match=r"c/2/0/0.*Input/output error"):
        arr[2, 0, 0]


def test_bytes_evicted_from_the_page_cache_still_read(tmp_path: Path, os_calls: Counter[str]) -> None:
    blob = os.urandom(1 << 20)
    (tmp_path / "k").write_bytes(blob)
    fd = os.open(tmp_path / "k", os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        try:
            os.preadv(fd, [bytearray(4096)], 0, os.RWF_NOWAIT)
            pytest.skip("this file system keeps the pages (tmpfs): the fake reads above cover it")
        except BlockingIOError:
            pass
    except OSError as e:  # RWF_NOWAIT refused on this file system
        pytest.skip(f"no RWF_NOWAIT here: {e}")
    finally:
        os.close(fd)
    store = held_store(tmp_path)
    os_calls.clear()
    got = store.read_into(ByteRequest("k"), Scratch())
    assert bytes(got) == blob
    assert os_calls["preadv"] == 1


def test_only_regular_files_get_a_size(tmp_path: Path) -> None:
    held = HeldIO()
    (tmp_path / "f").write_bytes(b"12345")
    os.mkfifo(tmp_path / "fifo")
    for path, size in [(tmp_path / "f", 5), (tmp_path, None), (tmp_path / "fifo", None), ("/dev/zero", None),
                       ("/dev/null", None)]:
        fd = held.open(str(path))
        assert fd >= 0
        try:
            assert held.regular_size(fd) == size, path
        finally:
            held.close(fd)
    assert held.open(str(tmp_path / "missing")) == -errno.ENOENT
    assert held.open(str(tmp_path / "f" / "below")) == -errno.ENOTDIR


def test_non_regular_chunks_keep_their_messages(tmp_path: Path) -> None:
    root, data = written(tmp_path)
    os.remove(root / "c" / "1" / "0" / "0")
    os.symlink("/dev/zero", root / "c" / "1" / "0" / "0")
    os.remove(root / "c" / "2" / "0" / "0")
    os.mkfifo(root / "c" / "2" / "0" / "0")
    arr = zl.open(held_store(root))
    for i in (1, 2):
        with pytest.raises(zl.StoreError, match=rf"c/{i}/0/0.*not a regular file"):
            arr[i, 0, 0]
    assert np.array_equal(arr[0], data[0])


MOUNTS = r"""22 27 0:21 / /proc rw - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:50 / /data rw - nfs4 server:/export rw
41 40 0:51 / /data/scratch rw - xfs /dev/sdb rw
42 27 0:52 / /mnt/my\040disk rw - btrfs /dev/sdc rw
43 27 0:53 / /home/u/fuse rw - fuse.sshfs host: rw
"""


@pytest.mark.parametrize("path, kind", [
    ("/", "ext4"), ("/work/x.zarr", "ext4"), ("/data", "nfs4"), ("/data/run1/a.zarr", "nfs4"),
    ("/database/a.zarr", "ext4"), ("/data/scratch/a.zarr", "xfs"), ("/mnt/my disk/a.zarr", "btrfs"),
    ("/home/u/fuse/a.zarr", "fuse.sshfs"),
])
def test_mount_types(tmp_path: Path, path: str, kind: str) -> None:
    (tmp_path / "mountinfo").write_text(MOUNTS)
    assert mount_type(path, str(tmp_path / "mountinfo")) == kind


def test_only_local_disks_keep_the_gil(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ZARRVIEW_HELD_IO", "1")
    for kind, held in [("nfs4", False), ("fuse.sshfs", False), ("lustre", False), (None, False),
                       ("ext4", True), ("overlay", True), ("tmpfs", True)]:
        monkeypatch.setattr(held_io, "mount_type", lambda path, kind=kind: kind)
        assert (for_directory(str(tmp_path)) is not None) is held, kind
        assert (LocalStore(tmp_path)._held is not None) is held, kind


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mountinfo is Linux's")
def test_this_machines_mount_is_found(tmp_path: Path) -> None:
    assert mount_type(str(tmp_path.resolve())) is not None


def test_held_calls_are_asked_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(held_io, "mount_type", lambda path: "ext4")
    monkeypatch.delenv("ZARRVIEW_HELD_IO", raising=False)
    assert LocalStore(tmp_path)._held is None
    monkeypatch.setenv("ZARRVIEW_HELD_IO", "1")
    assert LocalStore(tmp_path)._held is not None


def test_light_mode_keeps_the_gil_for_size_and_close_only(tmp_path: Path, os_calls: Counter[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``ZARRVIEW_HELD_IO=fd``: open and read through ``os`` (they may wait on a disk), the size
    and the close held; a missing chunk is still the fill value, a FIFO still named."""
    monkeypatch.setattr(held_io, "mount_type", lambda path: "ext4")
    monkeypatch.setenv("ZARRVIEW_HELD_IO", "fd")
    root, data = written(tmp_path)
    os.remove(root / "c" / "4" / "1" / "1")
    os.remove(root / "c" / "5" / "0" / "0")
    os.mkfifo(root / "c" / "5" / "0" / "0")
    os.remove(root / "c" / "5" / "0" / "1")
    os.symlink("/dev/null", root / "c" / "5" / "0" / "1")
    store = LocalStore(root)
    assert store._held is not None and store._held.light
    arr = zl.open(store)
    os_calls.clear()
    want = data[:, 20, :].copy()
    want[4, 16:32] = 0  # the chunk removed: fill value
    assert np.array_equal(arr[:4, 20, :], want[:4]) and np.array_equal(arr[4, 20, :], want[4])
    chunks = 5 * 3 - 1
    assert os_calls["open"] == chunks + 1 and os_calls["preadv"] == chunks  # the missing one is opened, not read
    assert os_calls["fstat"] == os_calls["close"] == 0
    for key in ("c/5/0/0", "c/5/0/1"):
        with pytest.raises(zl.StoreError, match=rf"{key}.*not a regular file"):
            store.read_into(ByteRequest(key), Scratch())


def test_a_refused_statx_leaves_the_store_on_os(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Where statx is refused (seccomp, an old kernel) the held path would open every file twice:
    the store is not given it."""
    monkeypatch.setattr(held_io, "mount_type", lambda path: "ext4")
    monkeypatch.setenv("ZARRVIEW_HELD_IO", "1")
    assert LocalStore(tmp_path)._held is not None

    def refused(*args: Any) -> int:
        ctypes.set_errno(errno.ENOSYS)
        return -1

    open_, _, preadv2, close = held_io._calls  # type: ignore[misc]
    monkeypatch.setattr(held_io, "_calls", (open_, refused, preadv2, close))
    assert LocalStore(tmp_path)._held is None
