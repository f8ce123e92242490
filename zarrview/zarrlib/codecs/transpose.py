"""The ``transpose`` array->array codec (and the legacy "C"/"F" orders)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MetadataError
from .base import ArrayArrayCodec, ChunkSpec, configuration
from .params import short


class TransposeCodec(ArrayArrayCodec):
    name = "transpose"

    def __init__(self, order: tuple[int, ...] | str) -> None:
        self.order = order

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> TransposeCodec:
        order = configuration(spec, where).get("order")
        if order in ("C", "F"):
            return cls(order)
        if not isinstance(order, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in order):
            raise MetadataError(f"transpose codec in {where}: order must be a permutation list, not {short(order)}")
        if sorted(order) != list(range(len(order))):
            raise MetadataError(f"transpose codec in {where}: {short(order)} is not a permutation")
        return cls(tuple(order))

    def perm(self, ndim: int) -> tuple[int, ...]:
        if self.order == "C":
            return tuple(range(ndim))
        if self.order == "F":
            return tuple(reversed(range(ndim)))
        assert isinstance(self.order, tuple)
        if len(self.order) != ndim:
            raise MetadataError(f"order {list(self.order)} does not match the {ndim} dimensions of the chunk")
        return self.order

    def describe(self) -> str:
        return f"transpose({list(self.order) if isinstance(self.order, tuple) else self.order})"

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        perm = self.perm(len(spec.shape))
        return spec.with_shape(tuple(spec.shape[i] for i in perm))

    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        perm = self.perm(len(spec.shape))
        return arr.transpose(np.argsort(perm))
