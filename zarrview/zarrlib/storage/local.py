"""Local directories read with ``os.pread``: the fast path for the most common case.

fsspec's local filesystem adds several Python layers per call; for a viewer decoding
hundreds of chunks a second the plain system calls are measurably faster.

Only regular files are read, and never past the size they had when opened: a key that is
a FIFO would block ``open()`` forever (it is opened non-blocking and refused), one that is
``/dev/zero`` or a device never ends, and a byte range taken from a corrupt shard index
must not size a buffer beyond the file. Listing skips entries it cannot follow (symlink
loops) and never enters a directory twice.

A read's chunk data (``get_ranges`` with a worker's scratch buffer) is read into that buffer:
a chunk file with open, fstat, one ``os.preadv`` and close; a run of a shard's inner chunks with
one ``os.preadv`` through the store's kept descriptor of the shard (``local_fds``), instead of
four system calls per run, each of which hands the GIL to another thread. Every other range
read (``get_range``: shard indexes) opens the file afresh and leaves its descriptor for the runs
that follow, so a shard replaced on disk is read whole from the new file once its index is read
again; whole objects (metadata, chunk files) are opened, read and closed every time.
``close()`` closes the descriptors.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import overload

from ..cancel import CancelToken
from ..errors import StoreError, TooLargeError
from .base import ByteRequest, Scratch, Store, too_large
from .keys import check_key
from .local_fds import FdCache, OpenFile
from .revision import Revision

#: a URL's scheme (``s3://``, ``file://``); a location without one is a local path
SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_HAS_PREADV = hasattr(os, "preadv")
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
#: a missing key, not a broken store: these mean "no object here"
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EISDIR)


def local_path(location: str) -> Path | None:
    """The path on this machine that ``location`` names, a plain path or a ``file://`` URL (``~``
    expanded, links not followed: callers that compare paths resolve them); None for a URL of
    any other scheme, whose scheme is then everything before the first ``://``."""
    m = SCHEME.match(location)
    if m is not None and m.group(1).lower() != "file":
        return None
    return Path(location[len("file://"):] if m else location).expanduser()


class LocalStore(Store):
    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = Path(root).expanduser().resolve()
        super().__init__(str(path))
        self.root = path
        #: the root as text plus a separator: a key's path is one concatenation, where
        #: ``os.path.join`` over a ``Path`` costs about 4 µs a chunk, holding the GIL
        self._prefix = os.path.join(str(path), "")
        self._fds = FdCache()

    def close(self) -> None:
        self._fds.close()

    def _path(self, key: str) -> str:
        return self._prefix + check_key(key, str(self.root))

    def _open(self, key: str, path: str | None = None) -> tuple[int, int] | None:
        """(descriptor, size) of a regular file; None when there is no such file. Close it with
        ``_close``."""
        path = self._path(key) if path is None else path
        try:
            fd = os.open(path, _FLAGS)
        except OSError as e:
            if e.errno in _ABSENT:
                return None
            raise StoreError(f"cannot read {self.key_url(key)}: {e.strerror or e}") from e
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                os.close(fd)
                return None
            if not stat.S_ISREG(st.st_mode):
                raise StoreError(f"cannot read {self.key_url(key)}: not a regular file ({_kind(st.st_mode)})")
        except BaseException:
            os.close(fd)
            raise
        return fd, st.st_size

    def get(self, key: str) -> bytes | None:
        return self._read(ByteRequest(key))

    def get_range(self, req: ByteRequest) -> bytes | None:
        if req.start is None or not _HAS_PREADV:
            return self._read(req)
        f = self._reopen(req.key, self._path(req.key))
        return None if f is None else self._read_file(req, f.fd, f.size, None, f)

    def _reopen(self, key: str, path: str) -> OpenFile | None:
        """The file opened afresh and kept for later runs (in use: release it); None if absent."""
        opened = self._open(key, path)
        if opened is None:
            return None
        return self._fds.put(path, *opened)

    def _kept(self, key: str, path: str) -> OpenFile | None:
        """The kept descriptor of ``key``'s file, opened and kept if none is (in use: release it);
        None if absent."""
        f = self._fds.acquire(path)
        return f if f is not None else self._reopen(key, path)

    def _read(self, req: ByteRequest) -> bytes | None:
        opened = self._open(req.key)
        return None if opened is None else self._read_file(req, *opened, None, None)

    def read_group(self, req: ByteRequest, scratch: Scratch | None) -> bytes | memoryview | None:
        if scratch is None or not _HAS_PREADV:
            return self.get_range(req)
        if req.start is not None:  # a run of a shard: through the kept descriptor of its file
            f = self._kept(req.key, self._path(req.key))
            return None if f is None else self._read_file(req, f.fd, f.size, scratch, f)
        opened = self._open(req.key)
        return None if opened is None else self._read_file(req, *opened, scratch, None)

    @overload
    def _read_file(self, req: ByteRequest, fd: int, size: int, scratch: None, kept: OpenFile | None) -> bytes: ...
    @overload
    def _read_file(self, req: ByteRequest, fd: int, size: int, scratch: Scratch, kept: OpenFile | None
                   ) -> memoryview: ...
    def _read_file(self, req: ByteRequest, fd: int, size: int, scratch: Scratch | None, kept: OpenFile | None
                   ) -> bytes | memoryview:
        """``req``'s bytes of the open regular file ``fd`` of ``size`` bytes, clipped to it (a
        short answer is the caller's to judge), read into ``scratch`` where given; then the
        descriptor is closed, or released where it is the ``kept`` one. A whole object above the
        request's bound is refused before any buffer is sized."""
        try:
            if req.start is None and size > req.max_bytes():
                raise too_large(self.key_url(req.key), req, size)
            start, stop = req.clip(size)
            if scratch is None:
                return _pread(fd, stop - start, start)
            view = scratch.view(stop - start)
            return view[:_preadv(fd, view, start)]
        except OSError as e:
            raise StoreError(f"cannot read {req.describe()} in {self.url}: {e.strerror or e}") from e
        finally:
            if kept is None:
                os.close(fd)
            else:
                self._fds.release(kept)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        try:
            entries = list(os.scandir(self._path(prefix) if prefix else self.root))
        except OSError as e:
            if e.errno in _ABSENT:
                return [], []
            raise StoreError(f"cannot list {self.key_url(prefix)}: {e.strerror or e}") from e
        keys: list[str] = []
        dirs: list[str] = []
        for entry in entries:
            (dirs if _is_dir(entry) else keys).append(entry.name)
        return sorted(keys), sorted(dirs)

    def iter_dir(self, prefix: str, page: int = 1000) -> Iterator[tuple[list[str], list[str]]]:
        """Pages as ``os.scandir`` reads the folder (each page sorted): the first page of a
        folder of 100,000 entries comes after reading a thousand of them, not all."""
        if type(self).list_dir is not LocalStore.list_dir:  # a subclass lists its own way: honour it
            yield from super().iter_dir(prefix, page)
            return
        try:
            entries = os.scandir(self._path(prefix) if prefix else self.root)
        except OSError as e:
            if e.errno in _ABSENT:
                return
            raise StoreError(f"cannot list {self.key_url(prefix)}: {e.strerror or e}") from e
        keys: list[str] = []
        dirs: list[str] = []
        with entries:
            try:
                for entry in entries:
                    (dirs if _is_dir(entry) else keys).append(entry.name)
                    if len(keys) + len(dirs) >= page:
                        yield sorted(keys), sorted(dirs)
                        keys, dirs = [], []
            except OSError as e:
                raise StoreError(f"cannot list {self.key_url(prefix)}: {e.strerror or e}") from e
        if keys or dirs:
            yield sorted(keys), sorted(dirs)

    def walk_sizes(self, prefix: str, cancel: CancelToken | None = None) -> Iterator[tuple[str, int | None]]:
        """Keys and sizes from the folder entries themselves: one pass, no second ``stat`` per key."""
        if type(self).list_dir is not LocalStore.list_dir:
            yield from super().walk_sizes(prefix, cancel)
            return
        def entries(folder: str) -> Iterator[tuple[str, int | None, bool]]:
            try:
                with os.scandir(self._path(folder) if folder else self.root) as found:
                    for entry in found:
                        if cancel is not None:
                            cancel.raise_if_cancelled()
                        is_dir = _is_dir(entry)
                        yield entry.name, None if is_dir else _file_size(entry), is_dir
            except OSError:
                return  # gone meanwhile, or unreadable: nothing stored there to count

        yield from self._walk(prefix, entries)

    def list_prefix(self, prefix: str) -> list[str]:
        """Every key below ``prefix``, each directory entered once (a symlink back to an
        ancestor would otherwise be followed until paths grow too long)."""
        def entries(folder: str) -> list[tuple[str, int | None, bool]]:
            keys, dirs = self.list_dir(folder)
            found: list[tuple[str, int | None, bool]] = [(k, None, False) for k in keys]
            return found + [(d, None, True) for d in dirs]

        return [key for key, _ in self._walk(prefix, entries)]

    def _walk(self, prefix: str, entries: Callable[[str], Iterable[tuple[str, int | None, bool]]]
              ) -> Iterator[tuple[str, int | None]]:
        """(key, size) below ``prefix`` from ``entries(folder)`` ((name, size, is folder) each),
        every folder entered once, depth first in name order."""
        seen: set[tuple[int, int]] = set()
        todo = [prefix]
        while todo:
            current = todo.pop()
            if not self._first_visit(current, seen):
                continue
            dirs: list[str] = []
            for name, size, is_dir in entries(current):
                if is_dir:
                    dirs.append(name)
                else:
                    yield current + name, size
            todo.extend(current + d + "/" for d in sorted(dirs, reverse=True))

    def _first_visit(self, prefix: str, seen: set[tuple[int, int]]) -> bool:
        """Whether the folder ``prefix`` exists and was not entered yet (then it is marked)."""
        try:
            st = os.stat(self._path(prefix) if prefix else self.root)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) in seen or not stat.S_ISDIR(st.st_mode):
            return False
        seen.add((st.st_dev, st.st_ino))
        return True

    def revision(self, key: str) -> Revision | None:
        try:
            return Revision(modified=os.stat(self._path(key)).st_mtime)
        except OSError:
            return None

    def size(self, key: str) -> int | None:
        try:
            st = os.stat(self._path(key))
        except OSError as e:
            if e.errno in _ABSENT:
                return None
            raise StoreError(f"cannot read {self.key_url(key)}: {e.strerror or e}") from e
        return st.st_size if stat.S_ISREG(st.st_mode) else None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """Follows symlinks; a loop or a dangling link is not a directory. Anything else is a key,
    regular or not: a zarr.json that is a FIFO or a device must show as a broken node when
    read, not make its node vanish from the listing."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _file_size(entry: os.DirEntry[str]) -> int | None:
    try:
        st = entry.stat()
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _pread(fd: int, n: int, offset: int) -> bytes:
    if n <= 0:
        return b""
    if hasattr(os, "pread"):
        return os.pread(fd, n, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # Windows
    return os.read(fd, n)


def _preadv(fd: int, view: memoryview, offset: int) -> int:
    return os.preadv(fd, [view], offset) if len(view) else 0


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def read_regular(path: str | os.PathLike[str], bound: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``bound`` of them: opened without blocking
    (a FIFO cannot hang the open) and refused as what it is when it is not a regular file (a link
    to /dev/zero would never end). ``what`` names the document in the errors."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as e:
        raise StoreError(f"cannot read {path}: {e.strerror or e}") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StoreError(f"cannot read {path}: not a regular file ({_kind(st.st_mode)})")
        if st.st_size > bound:
            raise TooLargeError(f"{path}: {st.st_size} bytes, more than the {bound} allowed for {what}")
        return _pread(fd, st.st_size, 0)
    except OSError as e:
        raise StoreError(f"cannot read {path}: {e.strerror or e}") from e
    finally:
        os.close(fd)
