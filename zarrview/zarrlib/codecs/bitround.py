"""The ``bitround`` array->array codec: lossy on encode, nothing to undo on decode."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MetadataError
from .base import ArrayArrayCodec, ChunkSpec, configuration


class BitroundCodec(ArrayArrayCodec):
    name = "bitround"

    def __init__(self, keepbits: int) -> None:
        self.keepbits = keepbits

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str) -> BitroundCodec:
        keepbits = configuration(spec, where).get("keepbits")
        if not isinstance(keepbits, int) or keepbits < 1:
            raise MetadataError(f"bitround codec in {where}: keepbits must be an integer >= 1, not {keepbits!r}")
        return cls(keepbits)

    def describe(self) -> str:
        return f"bitround({self.keepbits})"

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        return spec

    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        return arr
