"""A chain of codecs: array->array codecs, one array->bytes codec, then bytes->bytes codecs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
        size = self.array_bytes.encoded_size(self.specs(spec)[-1])
        for codec in self.bytes_bytes:
            if size is None:
                return None
            size = codec.encoded_size(size)
        return size

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        specs = self.specs(spec)
        if self.bytes_bytes:
            size = self.array_bytes.encoded_size(specs[-1])
            limits: list[int | None] = []
            for codec in self.bytes_bytes:
                limits.append(size)
                size = None if size is None else codec.encoded_size(size)
            for codec, limit in zip(reversed(self.bytes_bytes), reversed(limits)):
                data = codec.decode(data, limit)
        arr = self.array_bytes.decode(data, specs[-1])
        for codec, inner in zip(reversed(self.array_array), reversed(specs[:-1])):
            arr = codec.decode(arr, inner)
        return arr
