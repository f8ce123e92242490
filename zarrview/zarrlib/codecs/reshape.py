"""The ``reshape`` array->array codec: the same elements in C order, in another shape."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import CodecError, MetadataError, short
from .base import ArrayArrayCodec, ChunkSpec, configuration

Entry = int | tuple[int, ...]


class ReshapeCodec(ArrayArrayCodec):
    name = "reshape"

    def __init__(self, shape: tuple[Entry, ...]) -> None:
        self.shape = shape

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> ReshapeCodec:
        value = configuration(spec, where).get("shape")
        if not isinstance(value, list) or not value:
            raise MetadataError(f"reshape codec in {where}: shape must be a non-empty list, not {short(value)}")
        entries: list[Entry] = []
        for item in value:
            if isinstance(item, int) and not isinstance(item, bool) and (item > 0 or item == -1):
                entries.append(item)
            elif isinstance(item, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in item):
                entries.append(tuple(item))
            else:
                raise MetadataError(f"reshape codec in {where}: {short(item)} in shape is not a positive size, "
                                    "-1 or a list of input dimensions")
        if sum(1 for e in entries if e == -1) > 1:
            raise MetadataError(f"reshape codec in {where}: -1 may occur once in shape {short(value)}")
        dims = [d for e in entries if isinstance(e, tuple) for d in e]
        if any(b <= a for a, b in zip(dims, dims[1:])):
            raise MetadataError(f"reshape codec in {where}: input dimensions {dims} must increase strictly")
        return cls(tuple(entries))

    def describe(self) -> str:
        return f"reshape({[list(e) if isinstance(e, tuple) else e for e in self.shape]})"

    def output_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The encoded shape for an input ``shape``; ValueError where the spec's invariants fail."""
        sizes: list[int | None] = []
        for entry in self.shape:
            if isinstance(entry, tuple):
                if any(d >= len(shape) for d in entry):
                    raise ValueError(f"input dimensions {list(entry)} are beyond the {len(shape)} of the chunk")
                sizes.append(math.prod(shape[d] for d in entry))
            else:
                sizes.append(None if entry == -1 else entry)
        total = math.prod(shape)
        known = math.prod(s for s in sizes if s is not None)
        if None in sizes:
            if known == 0 or total % known:
                raise ValueError(f"no size for -1 makes {self.describe()} hold the {total} elements of {list(shape)}")
            sizes[sizes.index(None)] = total // known
        out = tuple(s for s in sizes if s is not None)
        if math.prod(out) != total:
            raise ValueError(f"shape {list(out)} does not hold the {total} elements of {list(shape)}")
        for i, entry in enumerate(self.shape):
            if isinstance(entry, tuple) and entry and (
                    math.prod(out[:i]) != math.prod(shape[:entry[0]])
                    or math.prod(out[i + 1:]) != math.prod(shape[entry[-1] + 1:])):
                raise ValueError(f"output dimension {i} does not ravel input dimensions {list(entry)} of {list(shape)}")
        return out

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return spec.with_shape(self.output_shape(spec.shape))

    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if arr.size != spec.size:
            raise CodecError(f"reshape: {arr.size} elements cannot be shape {list(spec.shape)}")
        return np.reshape(arr, spec.shape)
