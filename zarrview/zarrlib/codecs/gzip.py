"""The ``gzip`` bytes->bytes codec, decoded with zlib (which releases the GIL)."""

from __future__ import annotations

import zlib
from typing import Any

from ..errors import CodecError
from .base import Buffer, BytesBytesCodec, configuration


class GzipCodec(BytesBytesCodec):
    name = "gzip"

    def __init__(self, level: int | None = None) -> None:
        self.level = level

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> GzipCodec:
        return cls(configuration(spec, where).get("level"))

    def describe(self) -> str:
        return f"gzip({self.level})" if self.level is not None else "gzip"

    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        cap = 0 if limit is None else limit + 1
        d = zlib.decompressobj(wbits=47)  # gzip or zlib header, detected
        try:
            out = d.decompress(data, cap)
            while d.eof and d.unused_data and (limit is None or len(out) <= limit):  # concatenated members
                rest = d.unused_data
                d = zlib.decompressobj(wbits=47)
                out += d.decompress(rest, 0 if limit is None else limit + 1 - len(out))
        except zlib.error as e:
            raise CodecError(f"gzip: {e}") from e
        if limit is not None and len(out) > limit:
            raise CodecError(f"gzip: decompresses to more than the expected {limit} bytes")
        if not d.eof:
            raise CodecError("gzip: stream truncated")
        return out
