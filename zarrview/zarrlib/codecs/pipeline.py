"""A chain of codecs: array->array codecs, one array->bytes codec, then bytes->bytes codecs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..limits import limits
from .base import ArrayArrayCodec, ArrayBytesCodec, Buffer, BytesBytesCodec, ChunkSpec


@dataclass(frozen=True)
class CodecPipeline:
    array_array: tuple[ArrayArrayCodec, ...]
    array_bytes: ArrayBytesCodec
    bytes_bytes: tuple[BytesBytesCodec, ...]

    def describe(self) -> str:
        return " → ".join(c.describe() for c in (*self.array_array, self.array_bytes, *self.bytes_bytes))

    def specs(self, spec: ChunkSpec) -> list[ChunkSpec]:
        """Spec at the input of each array->array codec, then at the array->bytes codec."""
        out = [spec]
        for codec in self.array_array:
            out.append(codec.encoded_spec(out[-1]))
        return out

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        return self._through_bytes(self.array_bytes.encoded_size(self.specs(spec)[-1]), lambda c, n: c.encoded_size(n))

    def max_stored_size(self, spec: ChunkSpec) -> int | None:
        """The most bytes a chunk of ``spec`` can be stored as (None: the chain does not bound
        it): a read of its stored object asks for no more, so a server cannot send more."""
        return self._through_bytes(self.array_bytes.max_stored_size(self.specs(spec)[-1]),
                                   lambda c, n: c.max_encoded_size(n))

    def _through_bytes(self, size: int | None, step: Callable[[BytesBytesCodec, int], int | None]) -> int | None:
        """``size`` at the array->bytes codec's output, through each bytes->bytes codec's ``step``."""
        for codec in self.bytes_bytes:
            if size is None:
                return None
            size = step(codec, size)
        return size

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        """Every bytes->bytes decoder gets a bound: the size the next codec expects where the
        chain tells it, else the process-wide bound on a decoded chunk (variable-length data)."""
        specs = self.specs(spec)
        if self.bytes_bytes:
            cap = limits().chunk_bytes
            size = self.array_bytes.max_encoded_size(specs[-1])
            if len(self.bytes_bytes) == 1 and self.array_bytes.head_bytes:
                self.array_bytes.check_head(self.bytes_bytes[0].head(data, self.array_bytes.head_bytes), specs[-1])
            bounds: list[int] = []
            for bb in self.bytes_bytes:
                bounds.append(cap if size is None else size)
                size = None if size is None else bb.encoded_size(size)
            for bb, bound in zip(reversed(self.bytes_bytes), reversed(bounds)):
                data = bb.decode(data, bound)
        arr = self.array_bytes.decode(data, specs[-1])
        for aa, inner in zip(reversed(self.array_array), reversed(specs[:-1])):
            arr = aa.decode(arr, inner)
        return arr
