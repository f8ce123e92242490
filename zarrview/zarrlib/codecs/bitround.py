"""The ``bitround`` array->array codec: lossy on encode, nothing to undo on decode."""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import ArrayArrayCodec, ChunkSpec, configuration
from .params import parse_int


class BitroundCodec(ArrayArrayCodec):
    name = "bitround"

    def __init__(self, keepbits: int) -> None:
        self.keepbits = keepbits

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> BitroundCodec:
        return cls(parse_int(configuration(spec, where), "keepbits", "bitround", where, lo=0, hi=64))

    def describe(self) -> str:
        return f"bitround({self.keepbits})"

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return spec

    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return arr
