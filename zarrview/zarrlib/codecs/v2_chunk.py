"""A zarr v2 chunk: filters then compressor through numcodecs, in C or F order.

v2 has no codec kinds, so the whole v2 chain is one array->bytes codec here; that keeps
the reader the same for both formats.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numcodecs.abc import Codec as NumcodecsCodec
from numcodecs.compat import ensure_ndarray_like

from ..errors import CodecError
from .base import COMPRESSORS, ArrayBytesCodec, Buffer, ChunkSpec, compressed_bound
from .bounded import head_of
from .numcodecs_codec import DECODE_ERRORS, describe_codec, guarded_decode
from .vlen_count import HEAD, check_vlen_head, vlen_bound


#: filters whose encoders output as many bytes as they take in
_SAME_SIZE = {"shuffle", "bitround"}
#: filters whose encoders output one element of ``astype`` (else ``dtype``) per element
_RETYPE = {"delta", "fixedscaleoffset", "quantize", "categorize"}
#: filters whose encoded form is the length-prefixed layout of ``vlen_count``
VLEN = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array"})


def filtered_nbytes(filters: list[NumcodecsCodec], spec: ChunkSpec) -> int | None:
    """The bytes the compressor must inflate to, through the filters' encoders, where the
    filters tell (None: variable-length data or a filter of unknown output, then the
    process-wide bound applies). A bomb behind a Delta filter is then stopped at the
    chunk's own size, not at a gigabyte."""
    if spec.dtype.kind == "O" or spec.dt.variable_length:
        return None
    n, nbytes = spec.size, spec.nbytes
    try:
        for f in filters:
            config = f.get_config()
            cid = config.get("id")
            if cid in _SAME_SIZE:
                continue
            if cid in _RETYPE:
                nbytes = n * np.dtype(config.get("astype") or config.get("dtype") or "u1").itemsize
            elif cid == "astype":
                nbytes = n * np.dtype(config["encode_dtype"]).itemsize
            elif cid == "packbits":
                n = nbytes = 1 + -(-n // 8)
            else:
                return None
    except (TypeError, ValueError, KeyError):
        return None
    return nbytes


class V2ChunkCodec(ArrayBytesCodec):
    name = "v2"

    def __init__(self, filters: list[NumcodecsCodec], compressor: NumcodecsCodec | None,
                 order: Literal["C", "F"]) -> None:
        self.filters = filters
        self.compressor = compressor
        self.order = order

    def describe(self) -> str:
        parts = [describe_codec(f) for f in self.filters]
        parts.append(describe_codec(self.compressor) if self.compressor else "no compressor")
        if self.order == "F":
            parts.append("order F")
        return " → ".join(parts)

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        if self.filters or self.compressor or spec.dt.variable_length or spec.dtype.kind == "O":
            return None
        return spec.nbytes

    def max_stored_size(self, spec: ChunkSpec) -> int | None:
        if self.filters and self.filters[-1].codec_id in VLEN:
            filtered: int | None = vlen_bound(spec.size)
        else:
            filtered = filtered_nbytes(self.filters, spec)
        if filtered is None or self.compressor is None:
            return filtered
        return compressed_bound(filtered) if self.compressor.codec_id in COMPRESSORS else None

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        buf: Any = data
        stage = "compressor"
        try:
            if self.compressor is not None:
                bound = filtered_nbytes(self.filters, spec)
                last = self.filters[-1].codec_id if self.filters else None
                if last in VLEN:  # the compressor's output is the length-prefixed layout
                    bound = vlen_bound(spec.size)
                    check_vlen_head(head_of(self.compressor.codec_id, buf, HEAD), spec.size, str(last))
                buf = guarded_decode(self.compressor, buf, bound)
            for f in reversed(self.filters):
                stage = f.codec_id
                buf = guarded_decode(f, buf)
        except DECODE_ERRORS as e:
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
