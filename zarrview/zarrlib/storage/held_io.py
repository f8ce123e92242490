"""System calls on page-cached local files made without letting go of the GIL.

Every ``os.open``, ``os.fstat``, ``os.preadv`` and ``os.close`` releases the GIL and takes it
back. With many decode workers each release is a place in the GIL convoy: on 16 cores a read
made about one voluntary context switch per release, and a one-file-per-chunk read made five
per chunk, four of them for opening, sizing, reading and closing the file (issue 15). On a
file whose pages are cached each of those calls takes a microsecond or two, less than a
hand-off, so here they are made through libc with the GIL kept (``ctypes.PyDLL``), and the
only one that could wait on a disk, the read, is asked not to (``RWF_NOWAIT``): bytes not in
the page cache are read with ``os.preadv``, which lets go of the GIL as before, and so are
reads too large to copy holding it (``MAX_HELD_READ``). A small chunk then costs one hand-off
(its decoding), a large one two.

**Off unless asked for** (``ZARRVIEW_HELD_IO=1``; ``=fd`` keeps the GIL only for ``statx`` and
``close``, the calls that cannot wait on a disk): fewer hand-offs are not a faster read.
Measured on 16 cores in issue 15's first pass (16 workers a read, bench/README.md): these calls
cut the switches per chunk of a one-file-per-chunk XZ section from 5.8 to 2.1 but made it
slower (34.6 → 40.3 ms; blosc 34.1 → 42.5), because what each worker then does holding the GIL
(path lookup, ctypes) is time all the others queue for. Reads have since moved to fewer workers
(``decode_pool.read_workers``) and less Python per chunk, so the trade may have moved too: it
stays here to be measured again where many cores are lent (`bench/bench_handoffs.py` counts the
releases on any machine).

Only on Linux (``statx``, ``preadv2``: glibc 2.28 and kernel 4.14 or newer) and only for a
store on a local disk's file system, by its mount's type in ``/proc/self/mountinfo``: on NFS,
SMB, Lustre or a FUSE mount even ``open`` may wait on a server, and a wait holding the GIL
would stall every thread, the window's included. Anywhere else ``for_directory`` answers None
and the store uses ``os``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys

_ENABLE_ENV = "ZARRVIEW_HELD_IO"

#: the most bytes read with the GIL kept. Copying cached pages takes about 10 µs for 64 KiB,
#: less than a hand-off; a 300 KiB chunk file takes 50 µs, and held that long by each of many
#: workers the GIL itself becomes what they queue for (``decode.SMALL_COPY`` weighs the same)
MAX_HELD_READ = 1 << 16

#: file systems whose open, stat and close never wait on another machine
LOCAL_TYPES = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "bcachefs", "jfs", "reiserfs", "nilfs2",
    "tmpfs", "ramfs", "overlay", "squashfs", "erofs", "iso9660", "udf", "vfat", "exfat", "ntfs3",
    "hfsplus",
})

_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_STATX_TYPE = 0x1
_STATX_SIZE = 0x200
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
#: errors after which a call is simply not available here: the ``os`` path is used from then on
_UNSUPPORTED = (errno.ENOSYS, errno.EPERM, errno.EOPNOTSUPP, errno.EINVAL)


class _Statx(ctypes.Structure):
    """The head of ``struct statx`` (the same on every Linux architecture), padded to its size."""

    _fields_ = [("mask", ctypes.c_uint32), ("blksize", ctypes.c_uint32), ("attributes", ctypes.c_uint64),
                ("nlink", ctypes.c_uint32), ("uid", ctypes.c_uint32), ("gid", ctypes.c_uint32),
                ("mode", ctypes.c_uint16), ("spare0", ctypes.c_uint16), ("ino", ctypes.c_uint64),
                ("size", ctypes.c_uint64), ("rest", ctypes.c_uint8 * 200)]


class _IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def _load() -> tuple[object, object, object, object] | None:
    if not sys.platform.startswith("linux") or not hasattr(os, "RWF_NOWAIT"):
        return None
    try:
        libc = ctypes.PyDLL(None, use_errno=True)  # PyDLL: the GIL is kept during each call
        c_open, c_statx, c_preadv2, c_close = libc.open, libc.statx, libc.preadv2, libc.close
    except (OSError, AttributeError):
        return None
    c_open.argtypes, c_open.restype = [ctypes.c_char_p, ctypes.c_int], ctypes.c_int
    c_statx.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_Statx)]
    c_statx.restype = ctypes.c_int
    c_preadv2.argtypes = [ctypes.c_int, ctypes.POINTER(_IOVec), ctypes.c_int, ctypes.c_int64, ctypes.c_int]
    c_preadv2.restype = ctypes.c_ssize_t
    c_close.argtypes, c_close.restype = [ctypes.c_int], ctypes.c_int
    return c_open, c_statx, c_preadv2, c_close


_calls = _load()
_char = ctypes.c_char


class HeldIO:
    """open, size, read and close of one store's files with the GIL kept (see the module)."""

    def __init__(self, light: bool = False) -> None:
        assert _calls is not None
        self._open, self._statx, self._preadv2, self._close = _calls
        #: only the calls that never wait on the disk (statx, close) keep the GIL; open and read
        #: let go of it as ``os`` does (``ZARRVIEW_HELD_IO=fd``: three hand-offs a chunk file, not five)
        self.light = light
        self.nowait = not light  # cleared where the file system refuses RWF_NOWAIT

    def open(self, path: str) -> int:
        """A descriptor, or minus the error number (``-errno.ENOENT`` for a missing file)."""
        if self.light:
            try:
                return os.open(path, _FLAGS)
            except OSError as e:
                return -(e.errno or errno.EIO)
        fd: int = self._open(os.fsencode(path), _FLAGS)  # type: ignore[operator]
        return fd if fd >= 0 else -ctypes.get_errno()

    def regular_size(self, fd: int) -> int | None:
        """The size of a regular file; None for anything else, or where statx is refused (the
        caller then asks ``os.fstat``, which names what the file is)."""
        st = _Statx()
        if self._statx(fd, b"", _AT_EMPTY_PATH, _STATX_TYPE | _STATX_SIZE, ctypes.byref(st)) != 0:  # type: ignore[operator]
            return None
        if st.mask & (_STATX_TYPE | _STATX_SIZE) != (_STATX_TYPE | _STATX_SIZE) or not stat.S_ISREG(st.mode):
            return None
        return int(st.size)

    def answers(self, path: str) -> bool:
        """Whether statx works here at all: a seccomp filter or an old kernel may refuse it, and
        then every file would be opened twice, the held open wasted."""
        st = _Statx()
        return self._statx(_AT_FDCWD, os.fsencode(path), 0, _STATX_TYPE, ctypes.byref(st)) == 0  # type: ignore[operator,no-any-return]

    def read(self, fd: int, view: memoryview, offset: int) -> int:
        """Bytes read into ``view`` from ``offset``: up to ``MAX_HELD_READ``, what the page cache
        holds with the GIL kept; the rest (if any) with ``os.preadv``, which may wait on the disk
        and lets go of the GIL."""
        n = len(view)
        if n == 0:
            return 0
        got = 0
        if self.nowait and n <= MAX_HELD_READ:
            try:
                address = ctypes.addressof(_char.from_buffer(view))
            except (TypeError, ValueError):  # read-only or not contiguous: let os read it
                address = None
            if address is not None:
                got = self._preadv2(fd, ctypes.byref(_IOVec(address, n)), 1, offset, os.RWF_NOWAIT)  # type: ignore[operator]
                if got == n:
                    return n
                if got < 0:
                    err = ctypes.get_errno()
                    if err in _UNSUPPORTED:
                        self.nowait = False
                    elif err not in (errno.EAGAIN, errno.EINTR):
                        raise OSError(err, os.strerror(err))
                    got = 0
        return got + os.preadv(fd, [view[got:]], offset + got)

    def close(self, fd: int) -> None:
        self._close(fd)  # type: ignore[operator]


def mount_type(path: str, mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The type of the file system ``path`` (absolute, resolved) lies on; None if unknown."""
    try:
        with open(mountinfo, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    best, best_type = -1, None
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if not sep or len(fields) < 5 or not tail:
            continue
        point = _unescape(fields[4])
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= best:  # the last of equal mounts is the one on top
            best, best_type = len(point), tail.split()[0]
    return best_type


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (``\\040``)."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def for_directory(root: str) -> HeldIO | None:
    """Held-GIL file calls for a store at ``root``; None unless asked for, or where they could
    wait (see the module)."""
    mode = os.environ.get(_ENABLE_ENV)
    if _calls is None or mode not in ("1", "fd") or mount_type(root) not in LOCAL_TYPES:
        return None
    held = HeldIO(light=mode == "fd")
    return held if held.answers(root) else None
