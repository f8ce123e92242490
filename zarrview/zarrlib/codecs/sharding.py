"""``sharding_indexed``: many inner chunks in one stored object, located by an index.

The reader uses ``ShardLayout`` to fetch only the inner chunks a view needs (one ranged
read for the index, then ranges for the chunks); ``decode`` here handles whole shards,
which nested sharding and unusual pipelines need.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..dtypes import DataType
from ..errors import CodecError, MetadataError, UnsupportedFeatureError, short
from ..limits import NUMPY_MAXDIMS, human, limits
from .base import ArrayBytesCodec, Buffer, ChunkSpec
from .params import parse_int_list
from .pipeline import CodecPipeline

EMPTY = np.uint64(2**64 - 1)
_INDEX_DT = DataType(np.dtype("u8"), "fixed", "uint64")


def index_spec(chunks_per_shard: tuple[int, ...]) -> ChunkSpec:
    """What a shard's index decodes to: an (offset, nbytes) pair of uint64 per inner chunk."""
    return ChunkSpec((*chunks_per_shard, 2), _INDEX_DT, 0)


@dataclass(frozen=True)
class ShardLayout:
    """Where a shard's index is and how to read it; shared by v3 sharding and the seed transformer."""

    chunks_per_shard: tuple[int, ...]
    index_location: str  # "start" or "end"
    index_nbytes: int
    index_pipeline: CodecPipeline | None  # None: raw little-endian uint64 pairs

    @property
    def n_chunks(self) -> int:
        return math.prod(self.chunks_per_shard)

    def resized(self, chunks_per_shard: tuple[int, ...]) -> ShardLayout:
        """This layout for a shard of another size (a rectilinear grid's shards differ): the
        index holds one entry per inner chunk, so its size follows the shard's."""
        if chunks_per_shard == self.chunks_per_shard:
            return self
        n = 16 * math.prod(chunks_per_shard)
        if self.index_pipeline is not None:
            n = self.index_pipeline.encoded_size(index_spec(chunks_per_shard)) or n
        return replace(self, chunks_per_shard=chunks_per_shard, index_nbytes=n)

    def decode_index(self, data: Buffer) -> np.ndarray:
        """(n_chunks, 2) uint64 of (offset, nbytes), inner chunks in C order."""
        if len(data) != self.index_nbytes:
            raise CodecError(f"shard index: expected {self.index_nbytes} bytes, found {len(data)}")
        if self.index_pipeline is None:
            return np.frombuffer(data, dtype="<u8").reshape(self.n_chunks, 2)
        arr = self.index_pipeline.decode(data, index_spec(self.chunks_per_shard))
        return np.ascontiguousarray(arr, dtype=np.uint64).reshape(self.n_chunks, 2)

    def check_entries(self, index: np.ndarray, shard_nbytes: int | None) -> None:
        """Every present entry lies inside the shard (vectorised: an index holds millions)."""
        if shard_nbytes is None:
            return
        offsets, sizes = index[:, 0], index[:, 1]
        present = ~((offsets == EMPTY) & (sizes == EMPTY))
        limit = np.uint64(shard_nbytes)
        # offset + size > limit, written so that nothing overflows uint64
        bad = present & ((offsets > limit) | (sizes > limit - np.minimum(offsets, limit)))
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise CodecError(f"shard index entry {pos} points past the end of the shard (offset {int(offsets[pos])}, "
                             f"{int(sizes[pos])} bytes; the shard has {shard_nbytes})")


class ShardingCodec(ArrayBytesCodec):
    name = "sharding_indexed"

    def __init__(self, chunk_shape: tuple[int, ...], inner: CodecPipeline, layout: ShardLayout) -> None:
        self.chunk_shape = chunk_shape
        self.inner = inner
        self.layout = layout

    def describe(self) -> str:
        return f"sharding(chunks {list(self.chunk_shape)}, index at {self.layout.index_location}: {self.inner.describe()})"

    @classmethod
    def from_json(cls, config: dict[str, Any], where: str, shard_shape: tuple[int, ...], parse: Any,
                  spec: ChunkSpec) -> ShardingCodec:
        chunk_shape = list(parse_int_list(config.get("chunk_shape"), "sharding_indexed chunk_shape", where, lo=1))
        if len(chunk_shape) != len(shard_shape):
            raise MetadataError(f"sharding_indexed in {where}: chunk_shape {chunk_shape} has the wrong rank for shard {list(shard_shape)}")
        if any(s % c for s, c in zip(shard_shape, chunk_shape)):
            raise MetadataError(f"sharding_indexed in {where}: shard shape {list(shard_shape)} is not a multiple of chunk_shape {chunk_shape}")
        location = config.get("index_location", "end")
        if location not in ("start", "end"):
            raise MetadataError(f"sharding_indexed in {where}: index_location must be 'start' or 'end', not {short(location)}")
        inner_spec = spec.with_shape(tuple(chunk_shape))
        inner = parse(config.get("codecs", [{"name": "bytes"}]), where, inner_spec)
        cps = tuple(s // c for s, c in zip(shard_shape, chunk_shape))
        bound = limits().chunk_bytes
        if 16 * math.prod(cps) > bound:
            raise UnsupportedFeatureError(
                f"sharding_indexed in {where}: {math.prod(cps)} inner chunks per shard need an index of "
                f"{human(16 * math.prod(cps))}, more than the {human(bound)} allowed")
        if len(cps) + 1 > NUMPY_MAXDIMS:
            raise UnsupportedFeatureError(
                f"sharding_indexed in {where}: a shard index of {len(cps)} dimensions has {len(cps) + 1}, more "
                f"than the {NUMPY_MAXDIMS} of numpy {np.__version__}")
        spec_of_index = index_spec(cps)
        index_pipeline = parse(config.get("index_codecs", [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]), where, spec_of_index)
        nbytes = index_pipeline.encoded_size(spec_of_index)
        if nbytes is None:
            raise MetadataError(f"sharding_indexed in {where}: index_codecs must have a fixed size (bytes, crc32c), got {index_pipeline.describe()}")
        return cls(tuple(chunk_shape), inner, ShardLayout(cps, location, nbytes, index_pipeline))

    def split(self, data: Buffer, layout: ShardLayout) -> tuple[np.ndarray, memoryview]:
        view = memoryview(data).cast("B") if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8).data
        n = layout.index_nbytes
        if len(view) < n:
            raise CodecError(f"shard of {len(view)} bytes cannot hold its {n}-byte index")
        raw = view[:n] if layout.index_location == "start" else view[len(view) - n:]
        index = layout.decode_index(raw)
        layout.check_entries(index, len(view))
        return index, view

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        from ..fill import fill_array_value

        if any(s % c for s, c in zip(spec.shape, self.chunk_shape)):
            raise CodecError(f"a shard of shape {list(spec.shape)} does not hold whole inner chunks of {list(self.chunk_shape)}")
        layout = self.layout.resized(tuple(s // c for s, c in zip(spec.shape, self.chunk_shape)))
        index, view = self.split(data, layout)
        out = np.empty(spec.shape, dtype=spec.dtype)
        out[...] = fill_array_value(spec.dt, spec.fill_value)
        inner_spec = spec.with_shape(self.chunk_shape)
        ranges = [range(n) for n in layout.chunks_per_shard]
        for i, coords in enumerate(itertools.product(*ranges)):
            offset, nbytes = index[i]
            if offset == EMPTY and nbytes == EMPTY:
                continue
            chunk = self.inner.decode(view[int(offset):int(offset) + int(nbytes)], inner_spec)
            region = tuple(slice(c * s, (c + 1) * s) for c, s in zip(coords, self.chunk_shape))
            out[region] = chunk
        return out
