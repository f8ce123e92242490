"""The ``n5_default`` array->bytes codec: N5 blocks in "default" mode read as Zarr chunks.

A block starts with a header (mode, dimensions, each extent; big-endian) that states the
block's own shape, which may be smaller (a truncated edge block, as Java's N5 writes) or
larger than the chunk; the rest is decoded by the configured chain (a full transpose, big-
endian ``bytes``, at most one compressor) at that shape, then cut or padded with the fill
value to the chunk.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CodecError, MetadataError, short
from ..limits import human, limits
from .base import ArrayBytesCodec, Buffer, ChunkSpec
from .bytes_codec import BytesCodec
from .pipeline import CodecPipeline
from .transpose import TransposeCodec


def _check_chain(chain: CodecPipeline, spec: ChunkSpec, where: str) -> None:
    ndim = len(spec.shape)
    aa = chain.array_array
    if len(aa) != 1 or not isinstance(aa[0], TransposeCodec) or aa[0].perm(ndim) != tuple(reversed(range(ndim))):
        raise MetadataError(f"n5_default codec in {where}: its codecs must start with a transpose reversing "
                            f"all {ndim} dimensions, not {chain.describe()}")
    ab = chain.array_bytes
    single = spec.dtype.itemsize == 1
    if not isinstance(ab, BytesCodec) or not (ab.endian == "big" or ab.endian is None and single):
        raise MetadataError(f"n5_default codec in {where}: its array->bytes codec must be big-endian bytes, "
                            f"not {ab.describe()}")
    if len(chain.bytes_bytes) > 1:
        raise MetadataError(f"n5_default codec in {where}: at most one bytes->bytes codec, not {chain.describe()}")


class N5DefaultCodec(ArrayBytesCodec):
    name = "n5_default"

    def __init__(self, chain: CodecPipeline) -> None:
        self.chain = chain

    @classmethod
    def from_json(cls, config: dict[str, Any], where: str, parse: Callable[..., CodecPipeline],
                  spec: ChunkSpec) -> N5DefaultCodec:
        if set(config) != {"codecs"}:
            raise MetadataError(f"n5_default codec in {where}: configuration must hold 'codecs' alone, "
                                f"not {short(sorted(config))}")
        chain = parse(config["codecs"], where, spec)
        _check_chain(chain, spec, where)
        return cls(chain)

    def describe(self) -> str:
        return f"n5_default({self.chain.describe()})"

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        raw = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8).data
        ndim = len(spec.shape)
        if len(raw) < 4:
            raise CodecError(f"n5 block: {len(raw)} bytes cannot hold its header")
        mode, dims = struct.unpack(">HH", raw[:4])
        if mode != 0:
            raise CodecError(f"n5 block: mode {mode} is not the default mode 0 (varlength and object blocks "
                             "are not Zarr chunks)")
        if dims != ndim:
            raise CodecError(f"n5 block: the header says {dims} dimensions, the array has {ndim}")
        header = 4 + 4 * ndim
        if len(raw) < header:
            raise CodecError(f"n5 block: {len(raw)} bytes cannot hold a header of {header}")
        shape = struct.unpack(f">{ndim}I", raw[4:header])
        nbytes = math.prod(shape) * spec.dtype.itemsize
        if nbytes > limits().chunk_bytes:
            raise CodecError(f"n5 block: the header's shape {list(shape)} decodes to {human(nbytes)}, more than "
                             f"the {human(limits().chunk_bytes)} allowed for one chunk")
        block = self.chain.decode(raw[header:], ChunkSpec(tuple(shape), spec.dt, spec.fill_value))
        if block.shape == spec.shape:
            return block
        from ..fill import fill_array_value

        out = np.empty(spec.shape, spec.dtype)
        out[...] = fill_array_value(spec.dt, spec.fill_value)
        common = tuple(slice(0, min(a, b)) for a, b in zip(shape, spec.shape))
        out[common] = block[common]
        return out
