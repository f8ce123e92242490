"""zstd decoding with one reused decompression context per thread, when libzstd is present.

numcodecs' ``Zstd.decode`` builds a fresh ``ZSTD_DCtx`` on every call. For the small inner
chunks of sharded arrays (tens of KiB each, hundreds per plane) that set-up is a
measurable share of the decode: calling the system libzstd's ``ZSTD_decompressDCtx``
with a context kept per worker thread decoded 128 KiB chunks ~10 % faster
(bench/bench_read.py, v3_sharded). ctypes releases the GIL during the call.

The library is optional: where no libzstd can be loaded (most macOS/Windows machines),
:func:`decoder` returns None and callers keep numcodecs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CodecError
from .base import Buffer

DecodeInto = Callable[[Buffer, np.ndarray], None]

_DISABLE_ENV = "ZARRVIEW_NO_LIBZSTD"


class _Context:
    """A thread's ZSTD_DCtx, freed when the thread (and with it its local storage) ends."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self.ptr = lib.ZSTD_createDCtx()
        if not self.ptr:
            raise MemoryError("ZSTD_createDCtx failed")

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, None
        if ptr:
            self._lib.ZSTD_freeDCtx(ptr)


def _load() -> Any | None:
    if os.environ.get(_DISABLE_ENV):
        return None
    names = [n for n in (ctypes.util.find_library("zstd"),) if n] + ["libzstd.so.1"]
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            lib.ZSTD_versionNumber.restype = ctypes.c_uint
            if lib.ZSTD_versionNumber() < 10400:  # ZSTD_decompressDCtx semantics we rely on
                continue
            lib.ZSTD_createDCtx.restype = ctypes.c_void_p
            lib.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
            lib.ZSTD_freeDCtx.restype = ctypes.c_size_t
            lib.ZSTD_decompressDCtx.argtypes = [
                ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
            ]
            lib.ZSTD_decompressDCtx.restype = ctypes.c_size_t
            # quick calls keep the GIL: releasing and taking it again costs more than they do,
            # and a decode worker waiting to take it back holds up the I/O thread
            quick = ctypes.PyDLL(name)
            lib.ZSTD_isError = quick.ZSTD_isError
            lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
            lib.ZSTD_isError.restype = ctypes.c_uint
            lib.ZSTD_getErrorName = quick.ZSTD_getErrorName
            lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
            lib.ZSTD_getErrorName.restype = ctypes.c_char_p
            return lib
        except (OSError, AttributeError):
            continue
    return None


def _address(data: Buffer) -> Any:
    if isinstance(data, bytes):
        return data
    return np.frombuffer(data, dtype=np.uint8).ctypes.data


def make_decoder(lib: Any) -> DecodeInto:
    local = threading.local()
    decompress = lib.ZSTD_decompressDCtx
    is_error = lib.ZSTD_isError

    def decode_into(data: Buffer, out: np.ndarray) -> None:
        ctx = getattr(local, "ctx", None)
        if ctx is None:
            ctx = local.ctx = _Context(lib)
        n = len(data) if isinstance(data, bytes) else memoryview(data).nbytes
        written = decompress(ctx.ptr, out.ctypes.data, out.nbytes, _address(data), n)
        if is_error(written):
            raise CodecError(f"zstd: {lib.ZSTD_getErrorName(written).decode('ascii', 'replace')}")
        if written != out.nbytes:
            raise CodecError(f"zstd: frame decoded to {written} bytes, expected {out.nbytes}")

    return decode_into


_lib = _load()
_decoder: DecodeInto | None = make_decoder(_lib) if _lib is not None else None


def decoder() -> DecodeInto | None:
    """The shared libzstd decode-into function, or None where libzstd is unavailable."""
    return _decoder


def version() -> str | None:
    if _lib is None:
        return None
    v = int(_lib.ZSTD_versionNumber())
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
