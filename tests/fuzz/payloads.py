"""Payloads that replace chunk bytes: compressed bombs and crafted declared-size headers.

Decoders trust what a header declares (an uncompressed size, an item count), so a hostile
store needs only a few bytes to ask for gigabytes. These payloads are built, not compressed
from real zeros, so a 4 GiB bomb costs the fuzzer a second and a few MiB.
"""

from __future__ import annotations

import functools
import struct
import zlib
from typing import Any

import google_crc32c


def crc32c(data: bytes) -> bytes:
    """The crc32c codec's trailer (little-endian), to make a damaged object pass its checksum."""
    return struct.pack("<I", google_crc32c.value(bytes(data)))


@functools.lru_cache(maxsize=16)
def _raw_deflate_zeros(size: int) -> bytes:
    """Raw deflate of ``size`` zero bytes, built from one 16 MiB segment repeated: after a full
    flush a deflate segment references nothing before it, so copies concatenate validly and a
    4 GiB bomb costs a second instead of a minute of compression."""
    seg = 16 << 20
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(seg)) + c.flush(zlib.Z_FULL_FLUSH)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    return block * (size // seg) + tail.compress(bytes(size % seg)) + tail.flush()


@functools.lru_cache(maxsize=16)
def _crc32_zeros(size: int) -> int:
    crc, buf = 0, bytes(16 << 20)
    for _ in range(size // len(buf)):
        crc = zlib.crc32(buf, crc)
    return zlib.crc32(bytes(size % len(buf)), crc)


def _zstd_rle(size: int, declare: bool) -> bytes:
    """A zstd frame of RLE blocks (4 bytes per 128 KiB of zeros), with or without a declared
    content size: the second kind forces a streaming decoder to find the size itself."""
    out = bytearray(struct.pack("<IBB", 0xFD2FB528, 0xC0 if declare else 0x00, 7 << 3))
    if declare:
        out += struct.pack("<Q", size)
    left = size
    while left > 0:
        n = min(128 << 10, left)
        left -= n
        out += struct.pack("<I", (n << 3) | 2 | (left == 0))[:3] + b"\0"
    return bytes(out)


def bomb(codec: str, size: int) -> bytes:
    """``size`` zero bytes compressed for ``codec``: a small object that decodes to a lot."""
    if codec in ("gzip", "zlib"):
        raw = _raw_deflate_zeros(size)
        if codec == "zlib":
            return b"\x78\xda" + raw + struct.pack(">I", ((size % 65521) << 16) | 1)
        return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03" + raw
                + struct.pack("<II", _crc32_zeros(size), size & 0xFFFFFFFF))
    if codec in ("zstd", "zstd_nosize"):
        return _zstd_rle(size, codec == "zstd")
    return _compressed_zeros(codec, size)


@functools.lru_cache(maxsize=8)
def _compressed_zeros(codec: str, size: int) -> bytes:
    """Formats with no cheap construction are compressed for real, so ``mutate`` keeps their
    sizes small (bz2 and lzma) or at most just over the 1 GiB chunk bound (blosc, lz4)."""
    import bz2
    import lzma

    import numcodecs

    zeros = bytes(size)
    if codec == "bz2":
        return bz2.compress(zeros, 1)
    if codec == "lzma":
        return lzma.compress(zeros)
    if codec == "lz4":
        return bytes(numcodecs.LZ4().encode(zeros))
    if codec == "blosc":
        return bytes(numcodecs.Blosc(cname="zstd", clevel=1).encode(zeros))
    raise ValueError(f"no bomb for codec {codec!r}")


def header(fmt: str, value: int, tail: bytes) -> bytes:
    """A crafted header declaring ``value`` (a size or an item count), followed by ``tail``."""
    v32 = value & 0xFFFFFFFF
    if fmt == "blosc":  # version, versionlz, flags, typesize, nbytes, blocksize, cbytes
        return struct.pack("<BBBBIII", 2, 1, 0x01, 4, v32, 1 << 16, 16 + len(tail)) + tail
    if fmt == "blosc_memcpy":
        return struct.pack("<BBBBIII", 2, 1, 0x02, 1, v32, v32, (16 + v32) & 0xFFFFFFFF) + tail
    if fmt == "lz4":
        return struct.pack("<i", value & 0x7FFFFFFF if value >= 0 else -1) + tail
    if fmt == "vlen":  # numcodecs VLenUTF8/VLenBytes/VLenArray: item count, then (length, bytes)*
        return struct.pack("<I", v32) + tail
    if fmt == "vlen_item":
        return struct.pack("<II", 1, v32) + tail
    raise ValueError(fmt)


def payload(spec: dict[str, Any]) -> bytes:
    kind = spec["kind"]
    if kind == "bomb":
        return bomb(spec["codec"], spec["size"])
    if kind == "header":
        return header(spec["fmt"], spec["value"], bytes.fromhex(spec["hex"]))
    return bytes.fromhex(spec["hex"])


