"""A local store's ranges read many at once: one system call for a worker's next runs of shard chunks.

zarr-python writes a shard's inner chunks in Morton order, so the chunks a plane or a window needs
are seldom byte-adjacent in their shard: each is a run of its own, and each run read with its own
``os.preadv`` let go of the GIL once (issue 15: on many cores about a context switch each).
Through the thread's io_uring ring (``uring.Uring.read_ranges``) one call reads them all, from the
descriptors the store keeps open for its shards (``local_fds``). Only ranges that lie inside
their file are asked for; the rest are left to the caller's one-by-one path, which reads them
again and names what is wrong (a shard gone or not a regular file, an index entry past the end).
"""

from __future__ import annotations

from itertools import accumulate
from typing import TYPE_CHECKING

import numpy as np

from ..errors import StoreError
from .base import ByteRequest
from .local_fds import OpenFile
from .uring import MAX_RANGES, for_thread

if TYPE_CHECKING:
    from .local import LocalStore


def read_ranges(store: LocalStore, reqs: list[ByteRequest], into: bytearray) -> list[bool] | None:
    """``LocalStore.read_ranges``: see ``Store.read_ranges``."""
    ring = for_thread()
    lengths = [r.max_bytes() for r in reqs]
    if ring is None or len(reqs) > MAX_RANGES or sum(lengths) > len(into):
        return None
    files: dict[str, OpenFile | None] = {}
    asked: list[int] = []  # the requests sent, by their place in ``reqs``
    fds: list[int] = []
    try:
        for i, req in enumerate(reqs):
            f = _open(store, req.key, files)
            start = req.start
            if f is None or start is None or start < 0 or req.stop is None or req.stop > f.size or not lengths[i]:
                continue
            asked.append(i)
            fds.append(f.fd)
        if not asked:
            return [False] * len(reqs)
        dests = list(accumulate(lengths[:-1], initial=np.frombuffer(into, np.uint8).ctypes.data))
        got = ring.read_ranges(fds, [reqs[i].start for i in asked],  # type: ignore[misc]
                               [lengths[i] for i in asked], [dests[i] for i in asked])
    finally:
        for f in files.values():
            if f is not None:
                store._fds.release(f)
    whole = [False] * len(reqs)
    for i, n in zip(asked, got):
        whole[i] = n == lengths[i]
    return whole


def _open(store: LocalStore, key: str, files: dict[str, OpenFile | None]) -> OpenFile | None:
    """The kept descriptor of ``key``'s file (opened and kept if none is; in use until the
    caller releases it), None where it cannot be had (the one-by-one path says why)."""
    try:
        path = store._path(key)
    except StoreError:
        return None
    if path not in files:
        try:
            files[path] = store._kept(key, path)
        except StoreError:
            files[path] = None
    return files[path]
