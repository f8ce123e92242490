"""A PNG reader for the export tests, independent of the writer: it checks the signature and
every chunk's CRC, and undoes all five row filters, so a file another encoder would write
(Qt's, for screenshots) decodes too. No imaging library is installed in the test environment."""

from __future__ import annotations

import struct
import zlib

import numpy as np

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def decode_png(data: bytes) -> np.ndarray:
    """8-bit PNG bytes -> (height, width, channels) uint8."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, f"bad CRC in {kind!r}"
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    assert header is not None and pos == len(data), "no IHDR, or bytes after IEND"
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and interlace == 0 and colour in CHANNELS, header
    ch = CHANNELS[colour]
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * ch)
    out = np.zeros((height, width * ch), dtype=np.int32)
    for r in range(height):
        kind, line = raw[r, 0], raw[r, 1:].astype(np.int32)
        prev = out[r - 1] if r else np.zeros(width * ch, dtype=np.int32)
        if kind in (0, 2):
            out[r] = (line + (prev if kind == 2 else 0)) & 0xFF
            continue
        for i in range(width * ch):
            a = out[r, i - ch] if i >= ch else 0
            b, c = prev[i], (prev[i - ch] if i >= ch else 0)
            if kind == 1:
                pred = a
            elif kind == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out[r, i] = (line[i] + pred) & 0xFF
    return out.astype(np.uint8).reshape(height, width, ch)
