"""Open read-only descriptors of a local store's shard files, shared by every reading thread.

A sharded read fetches many runs of inner chunks from the same few shard files. Opening each
file per run costs four system calls (open, fstat, pread, close), and each one hands the GIL
to another thread and waits to take it back: with many threads every wait is a place in the
GIL convoy. With the file kept open, a run is one ``os.preadv``, which is positional and so
safe to issue from any number of threads on one descriptor.

``FdCache`` keeps at most ``capacity`` descriptors (least recently used first out), each with
the file's size when it was opened; only regular files are ever put in (the caller checks
with ``fstat`` once, when it opens). A descriptor evicted or closed while a thread still reads
from it is closed by the last such thread, never under it (its number could otherwise be
reused by another file mid-read). A store that is dropped without ``close()`` closes them
when it is collected.

Files replaced on disk: a cached descriptor keeps reading the file it opened (for a file
replaced by a rename, the old inode, as it was; for one rewritten in place, its current bytes,
never past the size it had when opened). The shard index a reader keeps for an open array is
read once too, and every index read opens the file afresh and replaces the cached descriptor
(``LocalStore.get_range``), so a run's bytes come from the file whose index located them.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

#: descriptors kept per store: a viewport or a plane touches a handful of shards, an XZ
#: section of a deep stack a few dozen; far below the usual limit of 1024 per process
CAPACITY = 64


class OpenFile:
    """One cached descriptor: ``fd``, the file's ``size`` at open, and who still reads it."""

    __slots__ = ("fd", "size", "users", "dropped")

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size
        self.users = 0
        self.dropped = False  # evicted or replaced: closed when the last user lets go


class FdCache:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._files: OrderedDict[str, OpenFile] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    def acquire(self, path: str) -> OpenFile | None:
        """The open file for ``path`` (marked in use: ``release`` it), or None if not cached."""
        with self._lock:
            f = self._files.get(path)
            if f is None:
                return None
            self._files.move_to_end(path)
            f.users += 1
            return f

    def release(self, f: OpenFile) -> None:
        with self._lock:
            f.users -= 1
            if not (f.dropped and f.users == 0):
                return
        os.close(f.fd)

    def put(self, path: str, fd: int, size: int) -> OpenFile:
        """Keep ``fd`` (a regular file, already checked) for ``path``, replacing what was there,
        and hand it back in use. Once the cache is closed nothing is kept: ``release`` closes it."""
        to_close: list[int] = []
        f = OpenFile(fd, size)
        f.users = 1
        with self._lock:
            if self._closed:
                f.dropped = True
                return f
            old = self._files.pop(path, None)
            if old is not None:
                self._drop(old, to_close)
            self._files[path] = f
            while len(self._files) > self.capacity:
                _, evicted = self._files.popitem(last=False)
                self._drop(evicted, to_close)
        for n in to_close:
            os.close(n)
        return f

    def close(self) -> None:
        """Close every descriptor not in use now (the others when their reads end); nothing is
        cached afterwards."""
        to_close: list[int] = []
        with self._lock:
            self._closed = True
            for f in self._files.values():
                self._drop(f, to_close)
            self._files.clear()
        for n in to_close:
            os.close(n)

    def __del__(self) -> None:  # a store dropped without close(): nothing reads from it any more
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __len__(self) -> int:
        return len(self._files)

    @staticmethod
    def _drop(f: OpenFile, to_close: list[int]) -> None:
        f.dropped = True
        if f.users == 0:
            to_close.append(f.fd)
