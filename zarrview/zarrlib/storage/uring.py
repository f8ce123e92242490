"""Many whole files read with one system call (io_uring), not three calls each.

On many cores a read's workers queue for the GIL, and every ``os.open``, ``os.preadv`` and
``os.close`` lets go of it and must take it back: on 16 cores each was about one context switch,
three per chunk file (issue 15). Through io_uring one ``io_uring_enter`` opens, reads and closes a
whole run of files (each opened into a slot of the ring's own file table, its read and close
linked after the open), so a worker lets go of the GIL once for the run. Each file is read into
a region as large as the largest it may be (for a zstd chunk, the bound of its frame); a file
that fills its region is larger than that, and is left to the caller. (Asking the sizes first,
with ``statx`` requests, would pack the files back to back, but the kernel runs those on its
worker threads: 6 µs a file measured, twice an ``os.stat``.)

Each thread has its own ring (``for_thread``). Linux 5.15 or newer on x86-64 or arm64 (direct
descriptors); the first ring proves itself by reading a known file, and where io_uring is refused
(a container's seccomp filter, ``kernel.io_uring_disabled``, an old kernel) or fails its proof,
``for_thread`` answers None from then on and files are read one by one as before. Off with
``ZARRVIEW_NO_URING=1``.

Files are opened non-blocking, so a FIFO cannot hang a worker. A missing file is reported as
such; anything else that is not a whole file read (an empty file, a FIFO, a directory, a device,
a file that fills its region, a read that would have to wait for the disk: ``-EAGAIN`` on a
non-blocking file) is left to the caller's file-by-file path, which waits for the disk where it
must and names what is wrong.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import io
import mmap
import os
import platform
import sys
import threading
from collections.abc import Sequence
from itertools import accumulate

import numpy as np

_SETUP, _ENTER, _REGISTER = 425, 426, 427  # the same numbers on every architecture since 5.1
_ENTER_GETEVENTS = 1
_REGISTER_FILES = 2
_FEAT_SINGLE_MMAP = 1
_OFF_SQ_RING, _OFF_SQES = 0, 0x10000000  # the completion ring shares the first map (single mmap)
_OP_OPENAT, _OP_CLOSE, _OP_READ = 18, 19, 22
_FIXED_FILE, _HARDLINK = 1, 8
_AT_FDCWD = -100
#: no O_CLOEXEC: the kernel refuses it for a slot of the ring's table, which no exec inherits
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY if sys.platform.startswith("linux") else 0

#: the most files one call reads: three requests each, within the ring's 256
MAX_FILES = 64
_ENTRIES = 4 * MAX_FILES
#: the most ranges one call reads, one request each
MAX_RANGES = 64
MISSING = -1  #: a length for a file that does not exist
LEFT = -2  #: a length for a file left to the caller (see the module)

_SQE = np.dtype({
    "names": ["opcode", "flags", "ioprio", "fd", "off", "addr", "len", "op_flags", "user_data",
              "buf_index", "personality", "file_index", "addr3", "pad"],
    "formats": [np.uint8, np.uint8, np.uint16, np.int32, np.uint64, np.uint64, np.uint32, np.uint32,
                np.uint64, np.uint16, np.uint16, np.uint32, np.uint64, np.uint64],
    "offsets": [0, 1, 2, 4, 8, 16, 24, 28, 32, 40, 42, 44, 48, 56], "itemsize": 64})
_CQE = np.dtype({"names": ["user_data", "res", "flags"], "formats": [np.uint64, np.int32, np.uint32],
                 "offsets": [0, 8, 12], "itemsize": 16})


def _address(data: bytes) -> int:
    """Where the bytes of ``data`` are (they stay there while it lives)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0


class UringError(OSError):
    """io_uring cannot be used here (refused, too old, or it answered something unexpected)."""


class _Params(ctypes.Structure):
    _fields_ = [("sq_entries", ctypes.c_uint32), ("cq_entries", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("sq_thread_cpu", ctypes.c_uint32), ("sq_thread_idle", ctypes.c_uint32),
                ("features", ctypes.c_uint32), ("wq_fd", ctypes.c_uint32), ("resv", ctypes.c_uint32 * 3),
                ("sq_off", ctypes.c_uint32 * 10), ("cq_off", ctypes.c_uint32 * 10)]


def _load_syscall() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "aarch64", "arm64"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syscall  # CDLL: the GIL is let go during the call
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_long
    return fn


_syscall = _load_syscall()


def _call(*args: int) -> int:
    assert _syscall is not None
    while True:
        r = int(_syscall(*(ctypes.c_long(a) for a in args)))
        if r >= 0:
            return r
        err = ctypes.get_errno()
        if err != errno.EINTR:
            raise UringError(err, f"io_uring: {os.strerror(err)}")


class Uring:
    """One thread's ring: ``read_whole`` opens, reads and closes up to ``MAX_FILES`` files,
    ``read_ranges`` reads up to ``MAX_RANGES`` ranges of files already open."""

    def __init__(self) -> None:
        params = _Params()
        fd = _call(_SETUP, _ENTRIES, ctypes.addressof(params))
        try:  # the ring's descriptor, closed with this object (a ring of a thread that has
            # ended goes with its thread-local data, whenever the collector gets to it)
            self._owner = io.FileIO(fd, "r", closefd=True)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        self._maps: list[mmap.mmap] = []
        try:
            if not params.features & _FEAT_SINGLE_MMAP:
                raise UringError(errno.ENOSYS, "io_uring: kernel too old (no single mmap)")
            sq, cq = params.sq_off, params.cq_off
            size = max(sq[6] + params.sq_entries * 4, cq[5] + params.cq_entries * _CQE.itemsize)
            ring = self._map(size, _OFF_SQ_RING)
            sqes = self._map(params.sq_entries * _SQE.itemsize, _OFF_SQES)
            self._u32 = np.frombuffer(ring, np.uint32)
            self._sq_tail, self._sq_mask = sq[1] // 4, int(self._u32[sq[2] // 4])
            self._cq_head, self._cq_tail, self._cq_mask = cq[0] // 4, cq[1] // 4, int(self._u32[cq[2] // 4])
            #: plain words, not the structured dtypes: numpy copies those field by field, 6 µs
            #: for 30 requests where a copy of words takes well under one
            self._sqes = np.frombuffer(sqes, np.uint64).reshape(-1, _SQE.itemsize // 8)
            self._cqes = np.frombuffer(ring, np.uint64, count=2 * params.cq_entries, offset=cq[5]).reshape(-1, 2)
            array = np.frombuffer(ring, np.uint32, count=params.sq_entries, offset=sq[6])
            array[:] = np.arange(params.sq_entries, dtype=np.uint32)  # ring place i: SQE i
            del array
            slots = (ctypes.c_int32 * MAX_FILES)(*([-1] * MAX_FILES))
            _call(_REGISTER, self.fd, _REGISTER_FILES, ctypes.addressof(slots), MAX_FILES)
            self._template = _chains()
        except BaseException:
            self.close()
            raise
        self.pid = os.getpid()

    def _map(self, size: int, offset: int) -> mmap.mmap:
        m = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=offset)
        self._maps.append(m)
        return m

    def close(self) -> None:
        for name in ("_u32", "_sqes", "_cqes"):
            self.__dict__.pop(name, None)
        for m in self._maps:
            try:
                m.close()
            except BufferError:  # a view still alive: the map goes with it
                pass
        self._maps = []
        if self.fd >= 0:
            self._owner.close()
            self.fd = -1

    def __del__(self) -> None:
        if getattr(self, "fd", -1) >= 0:
            self.close()

    def _submit(self, sq: np.ndarray) -> list[int]:
        """Run the requests ``sq`` (rows of words; one call, waiting for all of them); their
        results in the order of their ``user_data`` (which must be 0..len-1). The requests go
        to the ring's places as they are (SQE i at place i), in at most two slices; answers are
        read as Python numbers: for a few dozen, numpy's per-call cost is larger, and its fancy
        indexing lets go of the GIL (a hand-off each: ``bench_handoffs.py --who``)."""
        n = len(sq)
        u32, sqes = self._u32, self._sqes
        tail = int(u32[self._sq_tail])
        first = tail & self._sq_mask
        wrap = max(0, first + n - len(sqes))
        sqes[first:first + n - wrap] = sq[:n - wrap]
        if wrap:
            sqes[:wrap] = sq[n - wrap:]
        u32[self._sq_tail] = (tail + n) & 0xFFFFFFFF
        got = _call(_ENTER, self.fd, n, n, _ENTER_GETEVENTS, 0, 0)
        if got != n:
            raise UringError(errno.EIO, f"io_uring took {got} of {n} requests")
        res: list[int | None] = [None] * n
        seen = 0
        while True:
            head, ctail = int(u32[self._cq_head]), int(u32[self._cq_tail])
            m, first = (ctail - head) & 0xFFFFFFFF, head & self._cq_mask
            wrap = max(0, first + m - len(self._cqes))
            rows = self._cqes[first:first + m - wrap].tolist()
            if wrap:
                rows += self._cqes[:wrap].tolist()
            u32[self._cq_head] = ctail
            for ud, word in rows:
                if ud >= n or res[ud] is not None:
                    raise UringError(errno.EIO, "io_uring answered a request it was not asked")
                res[ud] = ((word & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000  # the low half, signed
            seen += m
            if seen >= n:
                return res  # type: ignore[return-value]
            _call(_ENTER, self.fd, 0, n - seen, _ENTER_GETEVENTS, 0, 0)

    def read_whole(self, paths: Sequence[bytes], dest: int, region: int) -> list[int]:
        """Read each file (at most ``MAX_FILES``) whole into its region of ``region`` bytes, the
        first at address ``dest`` and each next one ``region`` further; its length (between 0
        and ``region``, exclusive), ``MISSING`` or ``LEFT`` (see the module)."""
        k = len(paths)
        blob = b"\0".join(paths) + b"\0"
        words = self._template[:k].copy()
        base = _address(blob)
        words[:, 0, 2] = list(accumulate((len(p) + 1 for p in paths[:-1]), initial=base))  # open: the path
        words[:, 1, 2] = range(dest, dest + k * region, region)  # read: where
        words[:, 1, 3] = region  # read: how much (the flags word above it is 0)
        res = self._submit(words.reshape(3 * k, 8))
        out = []
        for f in range(k):
            opened, got, closed = res[3 * f:3 * f + 3]
            if opened == 0 and 0 < got < region and closed == 0:
                out.append(got)
            else:
                out.append(MISSING if opened in (-errno.ENOENT, -errno.ENOTDIR) else LEFT)
        return out

    def read_ranges(self, fds: Sequence[int], offsets: Sequence[int], lengths: Sequence[int],
                    dests: Sequence[int]) -> list[int]:
        """Read each range (at most ``MAX_RANGES``: ``lengths[i]`` bytes from ``offsets[i]`` of
        the open file ``fds[i]``) to the address ``dests[i]``; the bytes each read, or -errno.
        A read that must wait for the disk waits (the descriptors are blocking ones)."""
        k = len(fds)
        words = np.zeros((k, _SQE.itemsize // 8), np.uint64)
        words[:, 0] = [_OP_READ | fd << 32 for fd in fds]  # opcode, flags 0, ioprio 0, fd
        words[:, 1] = offsets
        words[:, 2] = dests
        words[:, 3] = lengths  # the read flags word above it is 0
        words[:, 4] = range(k)
        return self._submit(words)


@functools.cache
def _chains() -> np.ndarray:
    """Open, read and close of slot i (``MAX_FILES`` rows of three requests), all but the path,
    the place and the length filled in."""
    slot = np.arange(MAX_FILES, dtype=np.int32)
    sq = np.zeros((MAX_FILES, 3), _SQE)
    op, rd, cl = sq[:, 0], sq[:, 1], sq[:, 2]
    op["opcode"], op["flags"], op["fd"] = _OP_OPENAT, _HARDLINK, _AT_FDCWD
    op["op_flags"], op["file_index"] = _OPEN_FLAGS, slot + 1
    rd["opcode"], rd["flags"], rd["fd"] = _OP_READ, _FIXED_FILE | _HARDLINK, slot
    cl["opcode"], cl["file_index"] = _OP_CLOSE, slot + 1
    sq.reshape(-1)["user_data"] = np.arange(3 * MAX_FILES)
    words = sq.view(np.uint64).reshape(MAX_FILES, 3, 8)
    words.flags.writeable = False  # made once, shared by every ring: each call copies it
    return words


class _Thread(threading.local):
    ring: Uring | None = None


_mine = _Thread()
_state: dict[str, bool] = {}  # "usable": decided by the first ring


def _prove(ring: Uring) -> bool:
    """Whether the ring reads this module's own file as ``open().read()`` does."""
    path = os.fsencode(os.path.abspath(__file__))
    with open(path, "rb") as f:
        want = f.read()
    region = len(want) + 1
    buf = bytearray(2 * region)
    got = ring.read_whole([path, path + b".missing"], np.frombuffer(buf, np.uint8).ctypes.data, region)
    return got == [len(want), MISSING] and bytes(buf[:len(want)]) == want


def for_thread() -> Uring | None:
    """This thread's ring, made on first use; None where io_uring cannot be used (see the module)."""
    if _syscall is None or _state.get("usable") is False or os.environ.get("ZARRVIEW_NO_URING"):
        return None
    ring = _mine.ring
    if ring is not None and ring.pid == os.getpid():
        return ring
    try:
        ring = Uring()
        if "usable" not in _state:
            _state["usable"] = _prove(ring)
    except (UringError, OSError, ValueError):
        _state["usable"] = False
        return None
    if not _state["usable"]:
        ring.close()
        return None
    _mine.ring = ring
    return ring
