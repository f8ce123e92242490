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

from ..errors import CodecError
from .base import Buffer
from .libzstd import stream_decoder

_STEP = 1 << 22


def _too_much(name: str, limit: int) -> CodecError:
    return CodecError(f"{name}: decompresses to more than {limit} bytes")


def inflate(data: Buffer, limit: int, name: str = "gzip") -> bytes:
    """zlib or gzip streams (the header is detected), concatenated gzip members included."""
    pieces: list[bytes] = []
    total = 0
    rest: Any = data
    try:
        while True:
            d = zlib.decompressobj(wbits=47)
            pieces.append(d.decompress(rest, limit + 1 - total))
            total += len(pieces[-1])
            while total <= limit and d.unconsumed_tail:  # the output bound stopped it, not the data
                pieces.append(d.decompress(d.unconsumed_tail, limit + 1 - total))
                total += len(pieces[-1])
            if total > limit:
                raise _too_much(name, limit)
            if not d.eof:
                raise CodecError(f"{name}: stream truncated")
            if not d.unused_data:
                return b"".join(pieces)
            rest = d.unused_data  # another gzip member follows
    except zlib.error as e:
        raise CodecError(f"{name}: {e}") from e


def _incremental(decomp: Any, data: Buffer, limit: int, name: str) -> bytes:
    """``bz2``/``lzma`` decompressor objects, which take an output bound per call."""
    pieces: list[bytes] = []
    total = 0
    chunk = decomp.decompress(bytes(data), max_length=min(_STEP, limit + 1))
    while True:
        pieces.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_much(name, limit)
        if decomp.eof:
            return b"".join(pieces)
        if not decomp.needs_input:
            chunk = decomp.decompress(b"", max_length=min(_STEP, limit + 1 - total))
            continue
        raise CodecError(f"{name}: stream truncated")


def unbz2(data: Buffer, limit: int) -> bytes:
    try:
        return _incremental(bz2.BZ2Decompressor(), data, limit, "bz2")
    except (OSError, ValueError, EOFError) as e:
        raise CodecError(f"bz2: {e}") from e


def unxz(data: Buffer, limit: int, codec: Any) -> bytes:
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
    head = bytes(memoryview(data)[:4])
    return int.from_bytes(head, "little") if len(head) == 4 else None
