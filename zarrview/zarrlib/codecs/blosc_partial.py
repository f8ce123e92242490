"""Part of a blosc chunk decoded: only the blocks that hold the bytes a read needs.

A blosc frame is a series of independently compressed blocks (typically 16-256 KiB), so the
elements a read takes from a chunk can be decoded without the rest: an XZ section takes one row
of each 512x512 chunk, and ``blosc_getitem`` decodes the one 32 KiB block holding it in about
30 µs where the whole 512 KiB chunk takes about 550 µs. numcodecs offers no partial decode,
but its extension module exports c-blosc's ``blosc_getitem``, which this calls through ctypes;
where that symbol cannot be found the whole chunk is decoded.

Safety: c-blosc trusts the frame's header for where its blocks lie, so a frame is first checked
as for whole chunks (``blosc_frame.check_frame``: exactly as long as its header says, every
block inside it, no BloscLZ stream that can wrap a match length), the range must lie inside
the declared size, and ``blosc_getitem`` (c-blosc 1.21: a context of its own per call, so it is
thread-safe) checks each block's offset against that size. Anything it refuses (a negative
answer) goes to the whole-chunk path, which names the failure.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from numcodecs import blosc

from .base import Buffer, as_memoryview
from .blosc import check_frame


def _load() -> Any:
    try:
        fn = ctypes.CDLL(blosc.__file__).blosc_getitem  # CDLL: the GIL is let go during the call
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


_getitem = _load()
_MAX_INT = 2**31 - 1


def available() -> bool:
    return _getitem is not None


def decode_range(data: Buffer, nbytes: int, start: int, stop: int, out: np.ndarray) -> bool:
    """Decoded bytes ``[start, stop)`` of a frame of ``nbytes`` decoded bytes into
    ``out[:stop - start]``; False where this cannot be done (the caller decodes the whole
    chunk, and that path names what is wrong)."""
    if _getitem is None or not 0 <= start < stop <= nbytes or out.nbytes < stop - start or nbytes > _MAX_INT:
        return False
    view = as_memoryview(data).cast("B")
    if len(view) < 16:
        return False
    header = check_frame(view)
    typesize = header.typesize
    if header.nbytes != nbytes or not typesize or start % typesize or stop % typesize:
        return False
    src = np.frombuffer(view, np.uint8)
    got = _getitem(src.ctypes.data, start // typesize, (stop - start) // typesize, out.ctypes.data)
    return got == stop - start
