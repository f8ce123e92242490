"""The ``packbits`` array->bytes codec: each element's bits back to back, least significant first.

Element ``i`` holds bits ``[i*k, (i+1)*k)`` of the stream, bit ``m`` of the stream being bit
``m % 8`` of byte ``m // 8``; ``k`` is the kept bits (``first_bit`` to ``last_bit``) times the
components (2 for complex). Decoded bits go back to ``first_bit`` and are sign-extended for
signed integers, zero-extended otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import mltypes
from ..errors import CodecError, MetadataError, short
from .base import ArrayBytesCodec, Buffer, ChunkSpec
from .params import checked_configuration, parse_choice

PADDING = ("none", "first_byte", "last_byte")


class PackbitsCodec(ArrayBytesCodec):
    name = "packbits"

    def __init__(self, storage: mltypes.Storage, padding: str, first_bit: int, last_bit: int) -> None:
        self.storage = storage
        self.padding = padding
        self.first_bit = first_bit
        self.last_bit = last_bit

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str, chunk: ChunkSpec) -> PackbitsCodec:
        config = checked_configuration(spec, {"padding_encoding", "first_bit", "last_bit"}, "packbits", where)
        padding = parse_choice(config, "padding_encoding", "packbits", where, PADDING, default="none")
        try:
            storage = mltypes.component_storage(chunk.dtype, chunk.dt.storage)
        except ValueError as e:
            raise MetadataError(f"packbits codec in {where} is not defined for {chunk.dt.name}: {e}") from e
        bits = storage.bits
        first, last = config.get("first_bit"), config.get("last_bit")
        first = 0 if first is None else first
        last = bits - 1 if last is None else last
        for key, value in (("first_bit", first), ("last_bit", last)):
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < bits:
                raise MetadataError(f"packbits codec in {where}: {key} must be a bit of the {bits}-bit "
                                    f"{storage.name}, not {short(value)}")
        if last < first:
            raise MetadataError(f"packbits codec in {where}: last_bit {last} is less than first_bit {first}")
        return cls(storage, padding, first, last)

    def describe(self) -> str:
        bits = "" if (self.first_bit, self.last_bit) == (0, self.storage.bits - 1) else \
            f", bits {self.first_bit}-{self.last_bit}"
        return f"packbits({self.padding}{bits})"

    def _layout(self, spec: ChunkSpec) -> tuple[int, int, int]:
        """(kept bits per component, bits of the chunk, stored bytes)."""
        kept = self.last_bit - self.first_bit + 1
        total = spec.size * self.storage.components * kept
        return kept, total, -(-total // 8) + (self.padding != "none")

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        return self._layout(spec)[2]

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        kept, total, expected = self._layout(spec)
        raw = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
        if len(raw) != expected:
            raise CodecError(f"packbits: expected {expected} bytes for shape {spec.shape} of {spec.dt.name}, "
                             f"found {len(raw)}")
        pad = (8 - total % 8) % 8
        if self.padding != "none":
            stated = int(raw[0] if self.padding == "first_byte" else raw[-1])
            if stated != pad:
                raise CodecError(f"packbits: the {self.padding.replace('_', ' ')} says {stated} padding bits, "
                                 f"the chunk has {pad}")
            raw = raw[1:] if self.padding == "first_byte" else raw[:-1]
        bits = np.unpackbits(raw, bitorder="little")[:total].reshape(-1, kept)
        holder = mltypes.unsigned(self.storage.itemsize)
        values = np.zeros(len(bits), holder)
        for j in range(kept):
            values |= bits[:, j].astype(holder) << holder.type(j + self.first_bit)
        top = self.first_bit + kept - 1
        width = 8 * self.storage.itemsize
        if self.storage.signed and top < width - 1:
            above = holder.type(((1 << width) - 1) ^ ((1 << (top + 1)) - 1))
            values = np.where(bits[:, -1].astype(bool), values | above, values).astype(holder)
        components = mltypes.from_bits(values, self.storage)
        return mltypes.combine(components, self.storage, spec.dtype, spec.shape)
