"""The ``bytes`` array->bytes codec: raw elements in a stated byte order.

Also reads the seed strings proposal (ZEP 7), where a ``string``/``binary`` array under
plain ``bytes`` stores Arrow-style int32 offsets, padding to 64 bytes, then the data.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .. import mltypes
from ..errors import CodecError, MetadataError, short
from .base import ArrayBytesCodec, Buffer, ChunkSpec, configuration


class BytesCodec(ArrayBytesCodec):
    name = "bytes"

    def __init__(self, endian: str | None) -> None:
        self.endian = endian

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> BytesCodec:
        endian = configuration(spec, where).get("endian")
        if endian not in (None, "little", "big"):
            raise MetadataError(f"bytes codec in {where}: endian must be 'little' or 'big', not {short(endian)}")
        return cls(endian)

    def describe(self) -> str:
        return f"bytes({self.endian})" if self.endian else "bytes"

    def stored_dtype(self, dtype: np.dtype[Any]) -> np.dtype[Any]:
        order: Literal["<", ">"] = "<" if self.endian in (None, "little") else ">"
        return dtype.newbyteorder(order) if dtype.itemsize > 1 or dtype.fields else dtype

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        return None if spec.dt.variable_length else spec.size * spec.dtype.itemsize

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        if spec.dt.variable_length:
            return decode_offsets_layout(data, spec)
        if spec.dt.storage is not None:
            return self.decode_components(data, spec)
        stored = self.stored_dtype(spec.dtype)
        expected = spec.size * stored.itemsize
        buf = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
        if len(buf) != expected:
            raise CodecError(f"bytes: expected {expected} bytes for shape {spec.shape} of {spec.dtype}, found {len(buf)}")
        arr = np.frombuffer(buf, dtype=stored).reshape(spec.shape)
        if stored != spec.dtype:
            arr = arr.astype(spec.dtype)
        return arr

    def decode_components(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        """ML and sub-byte types: each component in its own byte(s), read as unsigned integers
        in the stated byte order, the bits above the type's width ignored."""
        storage = spec.dt.storage
        assert storage is not None
        holder = self.stored_dtype(mltypes.unsigned(storage.itemsize))
        expected = spec.size * storage.components * holder.itemsize
        buf = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
        if len(buf) != expected:
            raise CodecError(f"bytes: expected {expected} bytes for shape {spec.shape} of {spec.dt.name}, found {len(buf)}")
        raw = np.frombuffer(buf, dtype=holder)
        return mltypes.combine(mltypes.from_bits(raw, storage), storage, spec.dtype, spec.shape)


def decode_offsets_layout(data: Buffer, spec: ChunkSpec) -> np.ndarray:
    """ZEP 7: (n+1) little-endian int32 offsets, zero padding to 64 bytes, then the data."""
    raw = bytes(data)
    n = spec.size
    header = (n + 1) * 4
    start = -(-header // 64) * 64
    if len(raw) < header:
        raise CodecError(f"string chunk: {len(raw)} bytes cannot hold {n + 1} offsets")
    offsets = np.frombuffer(raw, dtype="<i4", count=n + 1)
    body = raw[start:]
    if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > len(body):
        raise CodecError("string chunk: offsets are not increasing within the data buffer")
    out = np.empty(n, dtype=object)
    text = spec.dt.kind == "str"
    try:
        for i in range(n):
            piece = body[offsets[i]:offsets[i + 1]]
            out[i] = piece.decode("utf-8") if text else piece
    except UnicodeDecodeError as e:
        raise CodecError(f"string chunk: element {i} is not UTF-8: {e}") from e
    return out.reshape(spec.shape)

