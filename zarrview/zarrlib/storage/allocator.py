"""Keep freed response buffers in the process instead of returning them to the OS each time.

Every remote response passes through freshly allocated buffers (asyncio's 256 KiB socket
reads, aiohttp's parser copies, the joined body), freed again a moment later. glibc's
default policy maps blocks of that size afresh and trims the top of each thread's heap as
soon as it is free, so the next response faults the same memory in again, page by page:
measured on a 16-chunk plane of 300 KB objects, 80 page faults per response and about half
of the I/O thread's time (a 16-object batch: 7.5 ms, 3.9 ms with the thresholds below).

The thresholds pinned here are the upper bounds glibc's own adaptive policy would reach
(mmap above 32 MiB, trim above twice that), so the memory a process may keep is what glibc
would allow anyway after one large free; only the warm-up and the flip-flopping are gone.
Other C libraries (musl, macOS, Windows) manage memory their own way and are left alone.
The policy is the whole process's, so only the program that owns the process applies it,
through ``zarrview.zarrlib.tune_process()`` (the app and the CLI do at start), never a store.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20

_lock = threading.Lock()
_done: bool | None = None


def keep_freed_memory() -> bool:
    """Pin glibc's trim and mmap thresholds (once per process); True when they are in effect."""
    global _done
    with _lock:
        if _done is None:
            _done = _apply()
        return _done


def _apply() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # only glibc has both
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
