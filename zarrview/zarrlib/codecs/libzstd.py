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
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CodecError, DecodedTooLargeError
from .base import Buffer, as_memoryview

DecodeInto = Callable[[Buffer, np.ndarray], None]


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
    names = [n for n in (ctypes.util.find_library("zstd"),) if n] + ["libzstd.so.1"]
    for name in names:
        try:
            # Any: the loaded library's functions are attributes ctypes makes on first use
            lib: Any = ctypes.CDLL(name)
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
            lib.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(_OutBuffer), ctypes.POINTER(_InBuffer)]
            lib.ZSTD_decompressStream.restype = ctypes.c_size_t
            lib.ZSTD_DCtx_reset.argtypes = [ctypes.c_void_p, ctypes.c_int]
            lib.ZSTD_DCtx_reset.restype = ctypes.c_size_t
            # quick calls keep the GIL: releasing and taking it again costs more than they do,
            # and a decode worker waiting to take it back holds up the I/O thread
            quick = ctypes.PyDLL(name)
            lib.ZSTD_isError = quick.ZSTD_isError
            lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
            lib.ZSTD_isError.restype = ctypes.c_uint
            lib.ZSTD_getErrorName = quick.ZSTD_getErrorName
            lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
            lib.ZSTD_getErrorName.restype = ctypes.c_char_p
            for fn, res in (("ZSTD_getFrameContentSize", ctypes.c_ulonglong),
                            ("ZSTD_findFrameCompressedSize", ctypes.c_size_t)):
                setattr(lib, fn, getattr(quick, fn))
                getattr(lib, fn).argtypes = [ctypes.c_void_p, ctypes.c_size_t]
                getattr(lib, fn).restype = res
            return lib
        except (OSError, AttributeError):
            continue
    return None


class _InBuffer(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


class _OutBuffer(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


_STEP = 1 << 20


def make_stream_decoder(lib: Any) -> Callable[[Buffer, int], bytes]:
    """Frames that do not declare their size, decoded a piece at a time up to ``limit`` bytes:
    a frame inflating past it fails after at most ``limit`` bytes were produced.

    Each piece is decoded into one scratch buffer and kept as bytes of its decoded length, so
    a frame that runs into the bound has cost about ``limit`` bytes and the scratch buffer.
    (A buffer per piece handed to ``ctypes.cast`` would live on in a reference cycle until the
    garbage collector ran, doubling that.)"""
    local = threading.local()

    def decode(data: Buffer, limit: int) -> bytes:
        ctx = getattr(local, "stream", None)
        if ctx is None:
            ctx = local.stream = _Context(lib)
        lib.ZSTD_DCtx_reset(ctx.ptr, 1)  # session only: a failed frame leaves nothing behind
        src = np.frombuffer(data, dtype=np.uint8)
        inbuf = _InBuffer(src.ctypes.data, src.nbytes, 0)
        scratch = np.empty(min(_STEP, limit + 1), dtype=np.uint8)
        address = scratch.ctypes.data
        pieces: list[bytes] = []
        total, ret = 0, 1
        while inbuf.pos < inbuf.size or ret != 0:
            outbuf = _OutBuffer(address, min(scratch.nbytes, limit + 1 - total), 0)
            ret = lib.ZSTD_decompressStream(ctx.ptr, ctypes.byref(outbuf), ctypes.byref(inbuf))
            if lib.ZSTD_isError(ret):
                raise CodecError(f"zstd: {lib.ZSTD_getErrorName(ret).decode('ascii', 'replace')}")
            total += outbuf.pos
            if total > limit:
                raise DecodedTooLargeError(f"zstd: decompresses to more than {limit} bytes")
            pieces.append(scratch[:outbuf.pos].tobytes())
            if outbuf.pos == 0 and inbuf.pos >= inbuf.size and ret != 0:
                raise CodecError("zstd: frame truncated")
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    return decode


_char = ctypes.c_char


def _address(data: Any) -> Any:
    """What ctypes passes as ``data``'s address. ``c_char.from_buffer`` takes it in a fraction of
    a microsecond; numpy's ``.ctypes.data`` costs about 1.5 µs, held under the GIL once per chunk.
    Read-only buffers (which ``from_buffer`` refuses) and empty ones go through numpy."""
    if isinstance(data, bytes):
        return data
    try:
        return ctypes.addressof(_char.from_buffer(data))
    except (TypeError, ValueError):
        return np.frombuffer(data, dtype=np.uint8).ctypes.data


_local = threading.local()  # each thread's decompression context, shared by both decoders below


def make_decoder(lib: Any) -> DecodeInto:
    decompress = lib.ZSTD_decompressDCtx
    is_error = lib.ZSTD_isError

    def decode_into(data: Buffer, out: np.ndarray) -> None:
        try:
            ctx = _local.ctx
        except AttributeError:
            ctx = _local.ctx = _Context(lib)
        n = len(data) if isinstance(data, bytes) else as_memoryview(data).nbytes
        if not n:
            raise CodecError("zstd: the stored chunk is empty (0 bytes), not a zstd frame")
        want = out.nbytes
        written = decompress(ctx.ptr, _address(out), want, _address(data), n)
        if is_error(written):
            raise CodecError(f"zstd: {lib.ZSTD_getErrorName(written).decode('ascii', 'replace')}")
        if written != want:
            raise CodecError(f"zstd: frame decoded to {written} bytes, expected {want}")

    return decode_into


def make_prefix_decoder(lib: Any) -> DecodeInto:
    """The first ``out.nbytes`` bytes a frame decodes to, and no more of it.

    zstd decodes a frame block by block (128 KiB of output each), so where a read needs only
    the first rows of a chunk (the rows above a viewport's lower edge, the rows down to a
    section's), the blocks after them are never decoded: a 512 KiB chunk of which the first
    37 % is wanted decodes in 0.24 ms instead of 0.60. What is not decoded is not checked
    either: a frame's checksum covers all of it, so it goes unverified here."""
    stream = lib.ZSTD_decompressStream
    is_error = lib.ZSTD_isError

    def decode_prefix(data: Buffer, out: np.ndarray) -> None:
        ctx = getattr(_local, "stream", None)
        if ctx is None:
            ctx = _local.stream = _Context(lib)
        lib.ZSTD_DCtx_reset(ctx.ptr, 1)  # session only: a failed frame leaves nothing behind
        n = len(data) if isinstance(data, bytes) else as_memoryview(data).nbytes
        if not n:
            raise CodecError("zstd: the stored chunk is empty (0 bytes), not a zstd frame")
        src = np.frombuffer(data, dtype=np.uint8).ctypes.data if isinstance(data, bytes) else _address(data)
        inbuf = _InBuffer(src, n, 0)
        outbuf = _OutBuffer(_address(out), out.nbytes, 0)
        while outbuf.pos < outbuf.size:
            before = (inbuf.pos, outbuf.pos)
            ret = stream(ctx.ptr, ctypes.byref(outbuf), ctypes.byref(inbuf))
            if is_error(ret):
                raise CodecError(f"zstd: {lib.ZSTD_getErrorName(ret).decode('ascii', 'replace')}")
            if (inbuf.pos, outbuf.pos) == before:  # the data ended before the bytes asked for
                raise CodecError(f"zstd: frame decoded to fewer than the {out.nbytes} bytes wanted")

    return decode_prefix


_lib = _load()
_decoder: DecodeInto | None = make_decoder(_lib) if _lib is not None else None
_stream: Callable[[Buffer, int], bytes] | None = make_stream_decoder(_lib) if _lib is not None else None
_prefix: DecodeInto | None = make_prefix_decoder(_lib) if _lib is not None else None


def decoder() -> DecodeInto | None:
    """The shared libzstd decode-into function, or None where libzstd is unavailable."""
    return _decoder


def prefix_decoder() -> DecodeInto | None:
    """The shared decoder of a frame's first bytes, or None where libzstd is unavailable."""
    return _prefix


def stream_decoder() -> Callable[[Buffer, int], bytes] | None:
    """The shared bounded streaming decoder, or None where libzstd is unavailable."""
    return _stream


def version() -> str | None:
    if _lib is None:
        return None
    v = int(_lib.ZSTD_versionNumber())
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def decompress_with_dictionary(data: bytes, dictionary: bytes, limit: int) -> bytes:
    """One frame compressed against ``dictionary`` (Icechunk's virtual chunk locations), at
    most ``limit`` bytes; CodecError where it does not decode within that or libzstd is absent."""
    if _lib is None:
        raise CodecError("zstd: decoding with a dictionary needs the system libzstd")
    fn = _lib.ZSTD_decompress_usingDict
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                   ctypes.c_char_p, ctypes.c_size_t]
    fn.restype = ctypes.c_size_t
    try:
        ctx = _local.ctx
    except AttributeError:
        ctx = _local.ctx = _Context(_lib)
    out = ctypes.create_string_buffer(max(1, limit))
    written = fn(ctx.ptr, out, limit, bytes(data), len(data), bytes(dictionary), len(dictionary))
    if _lib.ZSTD_isError(written):
        raise CodecError(f"zstd: {_lib.ZSTD_getErrorName(written).decode('ascii', 'replace')}")
    return out.raw[:written]
