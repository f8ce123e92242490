"""A zarr v2 chunk: filters then compressor through numcodecs, in C or F order.

v2 has no codec kinds, so the whole v2 chain is one array->bytes codec here; that keeps
the reader the same for both formats.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs.abc import Codec as NumcodecsCodec
from numcodecs.compat import ensure_ndarray_like

from ..errors import CodecError
from .base import ArrayBytesCodec, Buffer, ChunkSpec
from .numcodecs_codec import _DECODE_ERRORS, _describe, guarded_decode


class V2ChunkCodec(ArrayBytesCodec):
    name = "v2"

    def __init__(self, filters: list[NumcodecsCodec], compressor: NumcodecsCodec | None, order: str) -> None:
        self.filters = filters
        self.compressor = compressor
        self.order = order

    def describe(self) -> str:
        parts = [_describe(f) for f in self.filters]
        parts.append(_describe(self.compressor) if self.compressor else "no compressor")
        if self.order == "F":
            parts.append("order F")
        return " → ".join(parts)

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        if self.filters or self.compressor or spec.dt.variable_length or spec.dtype.kind == "O":
            return None
        return spec.nbytes

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        buf: Any = data
        stage = "compressor"
        try:
            if self.compressor is not None:
                fixed = spec.dtype.kind != "O" and not spec.dt.variable_length
                limit = spec.nbytes if fixed and not self.filters else None
                buf = guarded_decode(self.compressor, buf, limit)
            for f in reversed(self.filters):
                stage = f.codec_id
                buf = guarded_decode(f, buf)
        except _DECODE_ERRORS as e:
            name = self.compressor.codec_id if stage == "compressor" and self.compressor else stage
            raise CodecError(f"{name}: {e}") from e
        dtype = spec.dtype
        if dtype.kind == "O":
            arr = np.asarray(buf, dtype=object) if not isinstance(buf, np.ndarray) else buf
            if arr.size != spec.size:
                raise CodecError(f"object chunk holds {arr.size} items, expected {spec.size}")
            return arr.reshape(spec.shape, order=self.order)
        arr = ensure_ndarray_like(buf)
        if arr.dtype.kind == "O":
            raise CodecError("a filter produced objects for a non-object dtype")
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        flat = arr.reshape(-1).view(np.uint8)
        expected = spec.nbytes
        if flat.size != expected:
            raise CodecError(f"chunk decodes to {flat.size} bytes, expected {expected} for shape {spec.shape} of {dtype}")
        out = flat.view(dtype).reshape(spec.shape, order=self.order)
        return out
