"""The ``zstd`` bytes->bytes codec through numcodecs (C, releases the GIL)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs import Zstd

from ..errors import CodecError
from ..limits import limits
from .base import Buffer, BytesBytesCodec, as_memoryview, compressed_bound, configuration
from .bounded import unzstd
from .libzstd import decoder as libzstd_decoder
from .params import parse_bool, parse_int


class ZstdCodec(BytesBytesCodec):
    name = "zstd"

    def max_encoded_size(self, decoded_size: int) -> int | None:
        return compressed_bound(decoded_size)

    def __init__(self, level: int = 0, checksum: bool = False) -> None:
        self.level = level
        self.checksum = checksum
        self._codec = Zstd(level=level)

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> ZstdCodec:
        config = configuration(spec, where)
        return cls(parse_int(config, "level", "zstd", where, default=0, lo=-(1 << 17), hi=22),
                   parse_bool(config, "checksum", "zstd", where))

    def describe(self) -> str:
        return f"zstd({self.level}{', checksum' if self.checksum else ''})"

    def decode_into(self, data: Buffer, out: np.ndarray) -> bool:
        return zstd_decode_into(self._codec, data, out)

    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        streamed = unzstd(data, limits().chunk_bytes if limit is None else limit, frame_content_size(data))
        if streamed is not None:
            return streamed
        try:
            return self._codec.decode(data)
        except (RuntimeError, ValueError, MemoryError) as e:
            raise CodecError(f"zstd: {e}") from e


_MAGIC = 0xFD2FB528


def zstd_decode_into(codec: Zstd, data: Buffer, out: np.ndarray) -> bool:
    """Decode one frame into ``out`` (libzstd with a reused context when present); False: the frame
    declares another size. A frame that declares none is decoded into ``out`` too, which bounds it.

    With libzstd the declared size is read only when decoding fails: a frame declaring another
    size cannot decode to exactly ``out.nbytes``, and parsing its header first cost about 1 µs
    a chunk, held under the GIL."""
    fast = libzstd_decoder()
    if fast is not None and out.flags.c_contiguous:
        try:
            fast(data, out)
        except CodecError:
            declared = frame_content_size(data)
            if declared is not None and declared != out.nbytes:
                return False
            raise
        return True
    declared = frame_content_size(data)
    if declared is not None and declared != out.nbytes:
        return False
    try:
        codec.decode(data, out=out)
    except (RuntimeError, ValueError, MemoryError) as e:
        raise CodecError(f"zstd: {e}") from e
    return True


def frame_content_size(data: Buffer) -> int | None:
    """The decompressed size a zstd frame header declares, or None when absent or unreadable."""
    head = bytes(as_memoryview(data)[:18])
    if len(head) < 6 or int.from_bytes(head[:4], "little") != _MAGIC:
        return None
    fhd = head[4]
    fcs_flag, single, did_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[did_flag]
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0 or len(head) < pos + size:
        return None
    value = int.from_bytes(head[pos:pos + size], "little")
    return value + 256 if size == 2 else value
