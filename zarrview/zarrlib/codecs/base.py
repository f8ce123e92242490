"""The three kinds of codec (array->array, array->bytes, bytes->bytes), as in zarrita.

Codecs only decode: zarrlib never writes. A codec raises ``CodecError`` with a message
about the bytes; the reader prefixes the chunk key and node path, which it alone knows.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..dtypes import DataType

Buffer = bytes | bytearray | memoryview | np.ndarray


def as_memoryview(data: Buffer) -> memoryview:
    """``memoryview(data)``. numpy declares ndarray's buffer protocol to type checkers from
    Python 3.12 on only; ``ndarray.data`` is the same memoryview, typed as one."""
    return data.data if isinstance(data, np.ndarray) else memoryview(data)


@dataclass(frozen=True)
class ChunkSpec:
    """What a codec produces when decoding: a chunk's shape and data type."""

    shape: tuple[int, ...]
    dt: DataType
    fill_value: Any

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.dt.dtype

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # Python ints: a hostile chunk shape overflows int64

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def with_shape(self, shape: tuple[int, ...]) -> ChunkSpec:
        return replace(self, shape=shape)

    def with_dtype(self, dtype: np.dtype[Any]) -> ChunkSpec:
        return replace(self, dt=DataType(dtype, "fixed", str(dtype)))


class Codec:
    """What the three kinds share; each kind is an abstract base of its own."""

    name: str = ""

    def describe(self) -> str:
        return self.name


class ArrayArrayCodec(Codec, ABC):
    @abstractmethod
    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        """The spec of what this codec's encoder would output for an input of ``spec``."""

    @abstractmethod
    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        """``spec`` describes the decoded output."""


#: the compressors whose worst case is known: what a chunk of n bytes can store as, at most
COMPRESSORS = frozenset({"gzip", "zlib", "zstd", "blosc", "lz4", "lz4hc", "bz2", "lzma"})


def compressed_bound(n: int) -> int:
    """The most bytes any of ``COMPRESSORS`` stores ``n`` bytes as, with room to spare: an
    incompressible input grows by under 1 % (bz2's worst), a frame's headers by under a
    kilobyte (zstd's ZSTD_compressBound is n + n/256 + 64, deflate's n + 5 per 16 KiB + 18,
    blosc's n + 16, lz4's n + n/255 + 16). A stored chunk larger than this is not one of this array's."""
    return n + n // 64 + (64 << 10)


class ArrayBytesCodec(Codec, ABC):
    @abstractmethod
    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        ...

    def encoded_size(self, spec: ChunkSpec) -> int | None:
        """Exact encoded size when it does not depend on the data (for shard indexes)."""
        return None

    #: leading encoded bytes ``check_head`` looks at (0: it has no such check)
    head_bytes = 0

    def max_encoded_size(self, spec: ChunkSpec) -> int | None:
        """The most bytes a chunk can encode to, where the layout bounds it: what a compressor
        before this codec may inflate to."""
        return self.encoded_size(spec)

    def max_stored_size(self, spec: ChunkSpec) -> int | None:
        """The most bytes this codec's output can be (a v2 chunk's compressor included, which
        this codec holds), where the layout bounds it (None: it does not)."""
        return self.max_encoded_size(spec)

    def check_head(self, head: bytes | None, spec: ChunkSpec) -> None:
        """Refuse a chunk by its first ``head_bytes`` encoded bytes, decoded alone before the rest."""


class BytesBytesCodec(Codec, ABC):
    @abstractmethod
    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        """``limit``: the decoded size the next codec expects, when known. Codecs that can
        tell (a header, a bounded decompressor) fail early instead of inflating past it."""

    def decode_into(self, data: Buffer, out: np.ndarray) -> bool:
        """Decode into ``out`` (uint8, exactly the decoded size) when the codec can and the
        stored frame declares exactly that size; False means: call ``decode`` instead."""
        return False

    def encoded_size(self, decoded_size: int) -> int | None:
        return None

    def max_encoded_size(self, decoded_size: int) -> int | None:
        """The most bytes an input of ``decoded_size`` can encode to (None: not known)."""
        return self.encoded_size(decoded_size)

    def head(self, data: Buffer, n: int) -> bytes | None:
        """The first ``n`` decoded bytes where a stream decodes them cheaply alone, else None."""
        return None


AnyCodec = ArrayArrayCodec | ArrayBytesCodec | BytesBytesCodec


def configuration(spec: dict[str, Any], where: str) -> dict[str, Any]:
    from ..errors import MetadataError, short

    config = spec.get("configuration", {})
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise MetadataError(f"configuration of codec {short(spec.get('name'))} in {where} must be an object")
    return config
