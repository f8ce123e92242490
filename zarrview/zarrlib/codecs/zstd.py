"""The ``zstd`` bytes->bytes codec through numcodecs (C, releases the GIL)."""

from __future__ import annotations

from typing import Any

from numcodecs import Zstd

from ..errors import CodecError
from .base import Buffer, BytesBytesCodec, configuration


class ZstdCodec(BytesBytesCodec):
    name = "zstd"

    def __init__(self, level: int = 0, checksum: bool = False) -> None:
        self.level = level
        self.checksum = checksum
        self._codec = Zstd(level=level)

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> ZstdCodec:
        config = configuration(spec, where)
        return cls(int(config.get("level", 0)), bool(config.get("checksum", False)))

    def describe(self) -> str:
        return f"zstd({self.level}{', checksum' if self.checksum else ''})"

    def decode(self, data: Buffer) -> Buffer:
        try:
            return self._codec.decode(data)
        except (RuntimeError, ValueError, MemoryError) as e:
            raise CodecError(f"zstd: {e}") from e
