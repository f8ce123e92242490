"""Decompressors that stop at a bound, for every compression format a chunk may use.

A kilobyte of gzip or bz2 can inflate to gigabytes, and numcodecs' decoders (like
``zlib.decompress``) produce all of it before anyone can look at the size. Each function
here produces at most ``limit + 1`` bytes and then fails, so a decompression bomb costs a
``CodecError`` and about ``limit`` bytes of memory. ``limit`` is the chunk's expected
size where the codec chain knows it, else ``limits().chunk_bytes``.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Any

import numpy as np

from ..errors import CodecError, DecodedTooLargeError
from .base import Buffer, as_memoryview
from .libzstd import stream_decoder

_STEP = 1 << 22
#: output taken in the first call: real chunks fit, and a bomb costs one copy of this much
_FIRST = 64 << 20


def _too_much(name: str, limit: int) -> DecodedTooLargeError:
    return DecodedTooLargeError(f"{name}: decompresses to more than {limit} bytes")


def inflate(data: Buffer, limit: int, name: str = "gzip") -> bytes | bytearray:
    """zlib or gzip streams (the header is detected), concatenated gzip members included.

    Output grows in one bytearray (amortised, never joined from pieces), so a stream that
    runs into the bound has cost about ``limit`` bytes, not twice that."""
    rest: Any = data
    try:
        d = zlib.decompressobj(wbits=47)
        out = d.decompress(rest, min(limit + 1, _FIRST))
        if d.eof and not d.unused_data:
            return out  # the common case: one stream, decoded in one call without copies
        grown = bytearray(out)
        while True:
            # the output bound stopped it, not the data (past the stream's end, zlib leaves the
            # rest in unconsumed_tail as well as in unused_data: that is the next member's)
            while len(grown) <= limit and d.unconsumed_tail and not d.eof:
                grown += d.decompress(d.unconsumed_tail, min(_STEP, limit + 1 - len(grown)))
            if len(grown) > limit:
                raise _too_much(name, limit)
            if not d.eof:
                raise CodecError(f"{name}: stream truncated")
            if not d.unused_data:
                return grown
            rest, d = d.unused_data, zlib.decompressobj(wbits=47)  # another gzip member follows
            grown += d.decompress(rest, min(_STEP, limit + 1 - len(grown)))
    except zlib.error as e:
        raise CodecError(f"{name}: {e}") from e


def _incremental(decomp: Any, data: Buffer, limit: int, name: str) -> bytes | bytearray:
    """``bz2``/``lzma`` decompressor objects, which take an output bound per call."""
    out = bytearray(decomp.decompress(bytes(data), max_length=min(_STEP, limit + 1)))
    while True:
        if len(out) > limit:
            raise _too_much(name, limit)
        if decomp.eof:
            return bytes(out) if len(out) <= _STEP else out
        if decomp.needs_input:
            raise CodecError(f"{name}: stream truncated")
        out += decomp.decompress(b"", max_length=min(_STEP, limit + 1 - len(out)))


def unbz2(data: Buffer, limit: int) -> bytes | bytearray:
    try:
        return _incremental(bz2.BZ2Decompressor(), data, limit, "bz2")
    except (OSError, ValueError, EOFError) as e:
        raise CodecError(f"bz2: {e}") from e


def unxz(data: Buffer, limit: int, codec: Any) -> bytes | bytearray:
    """numcodecs' LZMA, with its configured format and filters."""
    fmt = codec.format
    filters = codec.filters if fmt == lzma.FORMAT_RAW else None
    try:
        return _incremental(lzma.LZMADecompressor(format=fmt, filters=filters), data, limit, "lzma")
    except (lzma.LZMAError, ValueError, EOFError, TypeError) as e:
        raise CodecError(f"lzma: {e}") from e


def unzstd(data: Buffer, limit: int, declared: int | None) -> Any:
    """A frame that declares its size is decoded at once after the check; one that does not
    is streamed up to the bound (numcodecs would grow its output without one)."""
    if declared is not None:
        if declared > limit:
            raise CodecError(f"zstd: frame declares {declared} bytes, more than the expected {limit}")
        return None  # the caller decodes it: the size is known and allowed
    stream = stream_decoder()
    if stream is not None:
        return stream(data, limit)
    # without libzstd, numcodecs decodes into a buffer of exactly ``limit`` bytes: right for
    # fixed-size chunks (the bound is their size), an error for anything else
    from numcodecs import Zstd

    out = np.empty(limit, dtype=np.uint8)
    try:
        Zstd().decode(data, out=out)
    except (RuntimeError, ValueError) as e:
        raise CodecError(f"zstd: {e} (a frame that does not declare its size is decoded within a "
                         "bound only through the system libzstd)") from e
    return out


def lz4_declared(data: Buffer) -> int | None:
    """numcodecs' LZ4 frames start with the decompressed size (little-endian uint32)."""
    head = bytes(as_memoryview(data)[:4])
    return int.from_bytes(head, "little") if len(head) == 4 else None


def head_of(name: str, data: Buffer, n: int) -> bytes | None:
    """The first ``n`` decoded bytes of a gzip/zlib, bz2 or xz stream, decoded alone (cheap:
    about one block of input), so a layout's header is checked before the rest is inflated;
    None for other codecs or where the stream fails (the full decode says why)."""
    try:
        if name in ("gzip", "zlib"):
            return zlib.decompressobj(wbits=47).decompress(as_memoryview(data), n)[:n]
        if name == "bz2":
            return bz2.BZ2Decompressor().decompress(bytes(data), max_length=n)[:n]
        if name == "lzma":
            return lzma.LZMADecompressor().decompress(bytes(data), max_length=n)[:n]
    except (zlib.error, OSError, ValueError, EOFError, lzma.LZMAError):
        return None
    return None
