"""The ``gzip`` bytes->bytes codec, decoded with zlib (which releases the GIL)."""

from __future__ import annotations

from typing import Any

from ..limits import limits
from .base import Buffer, BytesBytesCodec, compressed_bound, configuration
from .bounded import head_of, inflate
from .params import parse_int


class GzipCodec(BytesBytesCodec):
    name = "gzip"

    def max_encoded_size(self, decoded_size: int) -> int | None:
        return compressed_bound(decoded_size)

    def __init__(self, level: int | None = None) -> None:
        self.level = level

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> GzipCodec:
        config = configuration(spec, where)
        return cls(parse_int(config, "level", "gzip", where, lo=0, hi=9) if "level" in config else None)

    def describe(self) -> str:
        return f"gzip({self.level})" if self.level is not None else "gzip"

    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        return inflate(data, limits().chunk_bytes if limit is None else limit)

    def head(self, data: Buffer, n: int) -> bytes | None:
        return head_of("gzip", data, n)
