"""``vlen-utf8`` and ``vlen-bytes``: numcodecs' length-prefixed layout for variable-length data."""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs import VLenBytes, VLenUTF8

from ..errors import CodecError
from ..limits import human, limits
from .base import ArrayBytesCodec, Buffer, ChunkSpec, as_memoryview
from .vlen_count import HEAD, check_vlen_count, check_vlen_head, vlen_bound


class VlenCodec(ArrayBytesCodec):
    def __init__(self, name: str) -> None:
        self.name = name
        self._codec = VLenUTF8() if name == "vlen-utf8" else VLenBytes()

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> VlenCodec:
        return cls(spec["name"])

    head_bytes = HEAD

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        return vlen_bound(spec.size)

    def check_head(self, head: bytes | None, spec: ChunkSpec) -> None:
        check_vlen_head(head, spec.size, self.name)

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        check_vlen_count(data, self.name)
        if len(as_memoryview(data).cast("B")) > limits().chunk_bytes:
            raise CodecError(f"{self.name}: a chunk of {len(as_memoryview(data))} bytes is more than the "
                             f"{human(limits().chunk_bytes)} allowed")
        try:
            items = self._codec.decode(data)
        except (ValueError, RuntimeError, UnicodeDecodeError, TypeError, MemoryError, OverflowError) as e:
            raise CodecError(f"{self.name}: {e}") from e
        if items.size != spec.size:
            raise CodecError(f"{self.name}: found {items.size} items, expected {spec.size}")
        return items.reshape(spec.shape)
