"""The ``blosc`` bytes->bytes codec through numcodecs.

Decoding needs nothing from the configuration: blosc frames describe themselves. Called
from worker threads, numcodecs uses blosc's non-threaded context, so our pool is the only
source of parallelism.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs import blosc

from ..errors import CodecError
from .base import Buffer, BytesBytesCodec, configuration


class BloscCodec(BytesBytesCodec):
    name = "blosc"

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> BloscCodec:
        return cls(configuration(spec, where))

    def describe(self) -> str:
        c = self.config
        parts = [str(c[k]) for k in ("cname", "clevel", "shuffle") if k in c]
        return f"blosc({', '.join(parts)})"

    def decode_into(self, data: Buffer, out: np.ndarray) -> bool:
        try:
            if declared_size(data) != out.nbytes:
                return False
            blosc.decompress(data, out)
        except (RuntimeError, ValueError, TypeError) as e:
            raise CodecError(f"blosc: {e}") from e
        return True

    def decode(self, data: Buffer) -> Buffer:
        try:
            return blosc.decompress(data)
        except (RuntimeError, ValueError, TypeError) as e:
            raise CodecError(f"blosc: {e}") from e


def declared_size(data: Buffer) -> int | None:
    """The uncompressed size in a blosc header (bytes 4-8, little-endian), None if too short."""
    head = bytes(memoryview(data)[:16])
    return int.from_bytes(head[4:8], "little") if len(head) == 16 else None
