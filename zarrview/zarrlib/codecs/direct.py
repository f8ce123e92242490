"""The common case decoded without intermediate copies.

Most chunks are raw elements behind one compressor (zstd or blosc). For those the reader
decodes straight into a reusable buffer and views it as the chunk, skipping the allocation
(and page faults) of a fresh decode buffer per chunk, a measurable share of a plane's read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numcodecs import Blosc, Zstd

from .base import Buffer, ChunkSpec
from .blosc import BloscCodec
from .bytes_codec import BytesCodec
from .pipeline import CodecPipeline
from .v2_chunk import V2ChunkCodec
from .zstd import ZstdCodec, zstd_decode_into

DecodeInto = Callable[[Buffer, np.ndarray], bool]


@dataclass(frozen=True)
class DirectDecoder:
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    order: str
    nbytes: int
    decode_into: DecodeInto | None  # None: the stored bytes are the elements
    #: the stored bytes are one blosc frame: a part of the chunk may be decoded alone
    blosc_frame: bool = False
    #: the stored bytes are a zstd frame: the first bytes of the chunk may be decoded alone
    zstd_frame: bool = False

    def view(self, flat: np.ndarray) -> np.ndarray:
        """``flat`` (``nbytes`` bytes) seen as one chunk."""
        return flat.view(self.dtype).reshape(self.shape, order=self.order)  # type: ignore[call-overload]

    def decode_to(self, data: Buffer, flat: np.ndarray, chunk: np.ndarray | None) -> np.ndarray | None:
        """Decode into ``flat`` (exactly ``nbytes``) and return ``chunk``, its view made once per
        thread (None: made here); None: use the general pipeline."""
        if self.decode_into is None:
            if len(data) != self.nbytes:
                return None
            return self.view(np.frombuffer(data, dtype=np.uint8))
        if not self.decode_into(data, flat):
            return None
        return self.view(flat) if chunk is None else chunk


def _numcodecs_into(codec: Any) -> DecodeInto | None:
    if isinstance(codec, Zstd):
        return lambda data, out: zstd_decode_into(codec, data, out)
    if isinstance(codec, Blosc):
        return BloscCodec({}).decode_into
    return None


def direct_decoder(pipeline: CodecPipeline, spec: ChunkSpec) -> DirectDecoder | None:
    if spec.dt.variable_length or spec.dtype.kind == "O" or pipeline.array_array or spec.dt.storage is not None:
        return None
    nbytes = spec.size * spec.dtype.itemsize
    ab = pipeline.array_bytes
    if isinstance(ab, BytesCodec):
        if ab.stored_dtype(spec.dtype) != spec.dtype or len(pipeline.bytes_bytes) > 1:
            return None
        if not pipeline.bytes_bytes:
            return DirectDecoder(spec.shape, spec.dtype, "C", nbytes, None)
        bb = pipeline.bytes_bytes[0]
        if isinstance(bb, (ZstdCodec, BloscCodec)):
            return DirectDecoder(spec.shape, spec.dtype, "C", nbytes, bb.decode_into, isinstance(bb, BloscCodec),
                                 isinstance(bb, ZstdCodec))
        return None
    if isinstance(ab, V2ChunkCodec) and not ab.filters and not pipeline.bytes_bytes:
        if ab.compressor is None:
            return DirectDecoder(spec.shape, spec.dtype, ab.order, nbytes, None)
        into = _numcodecs_into(ab.compressor)
        blosc_frame = isinstance(ab.compressor, Blosc)
        zstd_frame = isinstance(ab.compressor, Zstd)
        return DirectDecoder(spec.shape, spec.dtype, ab.order, nbytes, into, blosc_frame, zstd_frame) if into else None
    return None
