"""The ``conditional`` bytes->bytes codec: per chunk, a bitmask header says which of its nested
bytes->bytes codecs were applied.

Bit ``i`` (least significant first, byte ``i // 8``) set means codec ``i`` encoded the chunk;
decoding undoes the set ones in reverse. A set reserved bit names a codec this document does
not list (a chunk written under newer metadata): an error, not a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CodecError, MetadataError, short
from ..limits import limits
from .base import AnyCodec, Buffer, BytesBytesCodec
from .params import check_fields


class ConditionalCodec(BytesBytesCodec):
    name = "conditional"

    def __init__(self, codecs: tuple[BytesBytesCodec, ...], header_bytes: int) -> None:
        self.codecs = codecs
        self.header_bytes = header_bytes

    @classmethod
    def from_json(cls, config: dict[str, Any], where: str, parse: Callable[[Any], AnyCodec | None]) -> ConditionalCodec:
        check_fields(config, {"codecs", "header_bits"}, "conditional", where)
        items = config.get("codecs")
        if not isinstance(items, list) or not items:
            raise MetadataError(f"conditional codec in {where}: codecs must be a non-empty list, not {short(items)}")
        codecs = []
        for item in items:
            codec = parse(item)
            if not isinstance(codec, BytesBytesCodec):
                raise MetadataError(f"conditional codec in {where}: {short(item)} is not a bytes->bytes codec")
            codecs.append(codec)
        bits = config.get("header_bits", -(-len(codecs) // 8) * 8)
        if not isinstance(bits, int) or isinstance(bits, bool) or bits % 8 or bits < len(codecs) or bits > 1 << 16:
            raise MetadataError(f"conditional codec in {where}: header_bits must be a multiple of 8 of at least "
                                f"{len(codecs)}, not {short(bits)}")
        return cls(tuple(codecs), bits // 8)

    def describe(self) -> str:
        return f"conditional({' → '.join(c.describe() for c in self.codecs)})"

    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        raw = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8).data
        if len(raw) < self.header_bytes:
            raise CodecError(f"conditional: {len(raw)} bytes cannot hold the {self.header_bytes}-byte header")
        mask = np.unpackbits(np.frombuffer(raw[:self.header_bytes], np.uint8), bitorder="little")
        if mask[len(self.codecs):].any():
            bit = len(self.codecs) + int(np.flatnonzero(mask[len(self.codecs):])[0])
            raise CodecError(f"conditional: the header sets bit {bit}, but only {len(self.codecs)} codecs are listed")
        applied = [i for i in range(len(self.codecs)) if mask[i]]
        out: Buffer = raw[self.header_bytes:]
        for n, i in enumerate(reversed(applied)):
            last = n == len(applied) - 1
            out = self.codecs[i].decode(out, limit if last else limits().chunk_bytes)
        return out
