"""PNG files from 8-bit pixels with zlib and struct alone.

The command line exports images on servers, where neither Qt nor an imaging library may be
installed; and a plane of tens of thousands of rows is compressed as it is rendered, block by
block, so the file never needs the whole image in memory twice.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from typing import BinaryIO

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: channels per pixel -> PNG colour type (greyscale, RGB, RGBA)
COLOUR_TYPES = {1: 0, 3: 2, 4: 6}
#: PNG stores width and height as 31-bit integers
MAX_SIDE = 2**31 - 1
#: compressed bytes gathered before an IDAT chunk is written
IDAT_BYTES = 1 << 20


class PngShapeError(ValueError):
    """The image cannot be a PNG: empty, too large, or a channel count PNG has no type for."""


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(f: BinaryIO, height: int, width: int, channels: int, blocks: Iterable[np.ndarray], *,
              level: int = 6) -> None:
    """Write a PNG of ``height`` x ``width`` pixels from consecutive blocks of whole rows, each a
    ``(rows, width, channels)`` uint8 array; every row is stored unfiltered."""
    if channels not in COLOUR_TYPES:
        raise PngShapeError(f"PNG has no colour type with {channels} channels")
    if not (0 < height <= MAX_SIDE and 0 < width <= MAX_SIDE):
        raise PngShapeError(f"a PNG is 1 to {MAX_SIDE} pixels on a side, not {height} x {width}")
    f.write(SIGNATURE)
    f.write(_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, COLOUR_TYPES[channels], 0, 0, 0)))
    packer = zlib.compressobj(level)
    pending: list[bytes] = []
    size = rows = 0
    for block in blocks:
        block = np.asarray(block, dtype=np.uint8).reshape(-1, width * channels)
        rows += block.shape[0]
        if rows > height:
            raise PngShapeError(f"more than the {height} rows declared")
        filtered = np.zeros((block.shape[0], block.shape[1] + 1), dtype=np.uint8)  # filter byte 0: none
        filtered[:, 1:] = block
        out = packer.compress(filtered.tobytes())
        pending.append(out)
        size += len(out)
        if size >= IDAT_BYTES:
            f.write(_chunk(b"IDAT", b"".join(pending)))
            pending, size = [], 0
    if rows != height:
        raise PngShapeError(f"{rows} rows written of the {height} declared")
    pending.append(packer.flush())
    f.write(_chunk(b"IDAT", b"".join(pending)))
    f.write(_chunk(b"IEND", b""))
