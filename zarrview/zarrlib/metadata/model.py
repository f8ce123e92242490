"""The format-independent description of an array that the reader works from.

Each format module (v2, v3, the pre-final v3 draft) parses its documents into this one
shape, so indexing, sharding and caching are written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..codecs import ChunkSpec, CodecPipeline, ShardLayout
from ..grid import RectilinearGrid
from ..dtypes import DataType
from ..errors import MetadataError, UnsupportedFeatureError, short
from ..limits import NUMPY_MAXDIMS, limits
from ..fill import fill_array_value

KeyFn = Callable[[tuple[int, ...]], str]


@dataclass(frozen=True)
class ArrayMetadata:
    zarr_format: int
    shape: tuple[int, ...]
    dt: DataType
    fill_value: Any
    #: the grid of stored objects: chunks, or shards when sharded
    stored_shape: tuple[int, ...]
    #: key of a stored object from its grid coordinates, relative to the store root
    stored_key: KeyFn
    #: pipeline decoding one read chunk (the inner chunk when sharded)
    read_pipeline: CodecPipeline
    read_shape: tuple[int, ...]
    #: how to find read chunks inside a stored object; None when one object is one chunk
    shard_layout: ShardLayout | None
    codecs_description: str
    dimension_names: tuple[str | None, ...] | None
    attributes: dict[str, Any]
    document: dict[str, Any]
    #: alternative key function to try when a key is missing (v2 nested keys not declared)
    alt_stored_key: KeyFn | None = None
    #: (inner chunk, shard) shapes to report when sharding is read whole (codecs around it)
    reported_sharding: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    #: the grid of stored objects when it is rectilinear (``stored_shape`` is then its largest
    #: extents); None for the regular grid
    grid: RectilinearGrid | None = None

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.dt.dtype

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        """The inner chunk shape when sharded, else the chunk shape."""
        return self.reported_sharding[0] if self.reported_sharding is not None else self.read_shape

    @property
    def shard_shape(self) -> tuple[int, ...] | None:
        """The shard shape when sharded, else None."""
        if self.reported_sharding is not None:
            return self.reported_sharding[1]
        return self.stored_shape if self.shard_layout is not None else None

    @property
    def read_grid(self) -> RectilinearGrid | None:
        """The rectilinear grid of the chunks a read decodes one by one; None where those are
        regular (a rectilinear grid of shards holds regular inner chunks)."""
        return self.grid if self.shard_layout is None else None

    @property
    def typical_chunks(self) -> tuple[int, ...]:
        """The chunk extents a view plans by: ``chunk_shape``, or on a rectilinear grid of chunks
        each dimension's mean extent, so a budget of chunks counts about as many as a read
        touches (the largest would count a grid of many small chunks and one large as a few)."""
        grid = self.read_grid
        if grid is None:
            return self.chunk_shape
        return tuple(max(1, a.extent // a.n) if a.n else a.largest for a in grid.axes)

    def chunk_box(self, coords: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        """[start, stop) per dimension of the read chunk at ``coords``, cut at the array's end."""
        grid = self.read_grid
        if grid is not None:
            return grid.box(coords)
        return tuple((c * n, min((c + 1) * n, s)) for c, n, s in zip(coords, self.read_shape, self.shape))

    @property
    def fill(self) -> Any:
        return fill_array_value(self.dt, self.fill_value)

    def for_array(self, shape: tuple[int, ...], stored_key: KeyFn, dimension_names: tuple[str | None, ...] | None,
                  attributes: dict[str, Any], document: dict[str, Any]) -> ArrayMetadata:
        """This description for another array that shares everything else (``templates``):
        a copy of the fields, not ``dataclasses.replace``, which costs 20 µs."""
        other = object.__new__(ArrayMetadata)
        other.__dict__.update(self.__dict__, shape=shape, stored_key=stored_key, dimension_names=dimension_names,
                              attributes=attributes, document=document)
        return other

    def read_spec(self) -> ChunkSpec:
        return ChunkSpec(self.read_shape, self.dt, self.fill_value)


MAX_DIM = 2**62


def parse_shape(value: Any, what: str, where: str, positive: bool = False) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise MetadataError(f"{what} in {where} must be a list of integers, not {short(value)}")
    if len(value) > limits().ndim:
        why = f"numpy {np.__version__}'s limit" if limits().ndim >= NUMPY_MAXDIMS else "limits.ndim"
        raise UnsupportedFeatureError(f"{what} in {where} has {len(value)} dimensions; at most {limits().ndim} "
                                      f"are supported ({why})")
    low = 1 if positive else 0
    for v in value:
        if v < low or v > MAX_DIM:
            raise MetadataError(f"{what} {short(value)} in {where} has an invalid extent {short(v)}")
    return tuple(value)


def parse_transformers(value: Any, where: str) -> list[Any]:
    """``storage_transformers``: absent, null or a list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise MetadataError(f"storage_transformers in {where} must be a list, not {short(value)}")
    return value


def parse_dimension_names(value: Any, ndim: int, where: str) -> tuple[str | None, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != ndim or not all(v is None or isinstance(v, str) for v in value):
        raise MetadataError(f"dimension_names {short(value)} in {where} must list {ndim} names or nulls")
    return tuple(value)


def parse_attributes(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MetadataError(f"attributes in {where} must be an object")
    return value
