"""The ``blosc`` bytes->bytes codec through numcodecs.

Decoding needs nothing from the configuration: blosc frames describe themselves, and every
claim a frame makes is checked (``blosc_frame.check_frame``) before c-blosc reads it. Called
from worker threads, numcodecs uses blosc's non-threaded context, so our pool is the only
source of parallelism.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs import blosc

from ..errors import CodecError
from .base import Buffer, BytesBytesCodec, as_memoryview, compressed_bound, configuration
from .blosc_frame import check_frame
from .params import parse_choice, parse_int

_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle", -1, 0, 1, 2)
__all__ = ["BloscCodec", "check_frame", "declared_size"]


class BloscCodec(BytesBytesCodec):
    name = "blosc"

    def max_encoded_size(self, decoded_size: int) -> int | None:
        return compressed_bound(decoded_size)

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> BloscCodec:
        config = configuration(spec, where)
        # decoding needs none of these (frames describe themselves), but a store that
        # spells them wrong is broken and should say so where it is opened
        if "cname" in config:
            parse_choice(config, "cname", "blosc", where, _CNAMES)
        if "clevel" in config:
            parse_int(config, "clevel", "blosc", where, lo=0, hi=9)
        if "shuffle" in config:
            parse_choice(config, "shuffle", "blosc", where, _SHUFFLES)
        for key in ("typesize", "blocksize"):
            if key in config and config[key] is not None:
                parse_int(config, key, "blosc", where, lo=0, hi=2**31 - 1)
        return cls(config)

    def describe(self) -> str:
        c = self.config
        parts = [str(c[k]) for k in ("cname", "clevel", "shuffle") if k in c]
        return f"blosc({', '.join(parts)})"

    def decode_into(self, data: Buffer, out: np.ndarray) -> bool:
        if declared_size(data) != out.nbytes:
            return False
        check_frame(data)
        try:
            blosc.decompress(data, out)
        except (RuntimeError, ValueError, TypeError) as e:
            raise CodecError(f"blosc: {e}") from e
        return True

    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        check_frame(data)
        declared = declared_size(data)
        if limit is not None and declared is not None and declared > limit:
            raise CodecError(f"blosc: frame declares {declared} bytes, more than the expected {limit}")
        try:
            return blosc.decompress(data)
        except (RuntimeError, ValueError, TypeError) as e:
            raise CodecError(f"blosc: {e}") from e


def declared_size(data: Buffer) -> int | None:
    """The uncompressed size in a blosc header (bytes 4-8, little-endian), None if too short."""
    head = bytes(as_memoryview(data)[:16])
    return int.from_bytes(head[4:8], "little") if len(head) == 16 else None
