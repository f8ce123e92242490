"""The ``scale_offset`` array->array codec: stored ``(x - offset) * scale``, read ``y / scale + offset``.

Arithmetic is the array type's own. Integers are computed wide and must come back exact and
in range (a remainder, or a value the type cannot hold, is an error as the spec requires);
floats, ``bfloat16`` and the other ``ml_dtypes`` floats compute in their own type.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ..dtypes import DataType
from ..errors import CodecError, MetadataError, short
from .params import checked_configuration
from .base import ArrayArrayCodec, ChunkSpec


def is_integral(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in "iu" or dtype.name in ("int2", "int4", "uint2", "uint4")


def is_real(dtype: np.dtype[Any]) -> bool:
    """The types the arithmetic codecs are defined for: integers and floats, ML ones included."""
    if is_integral(dtype) or dtype.kind == "f":
        return True
    try:
        ml_dtypes.finfo(dtype)
    except (ValueError, TypeError, KeyError):
        return False
    return True


def is_real_type(dt: DataType) -> bool:
    """A data type of real numbers, one component each (not complex)."""
    return is_real(dt.dtype) and (dt.storage is None or dt.storage.components == 1)


def int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = ml_dtypes.iinfo(dtype) if dtype.kind not in "iu" else np.iinfo(dtype)
    return int(info.min), int(info.max)


def _wide(arr: np.ndarray) -> np.ndarray:
    """Integers as int64, or as Python ints where uint64 does not fit int64."""
    return arr.astype(object) if arr.dtype == np.uint64 else arr.astype(np.int64)


def _narrow(values: np.ndarray, dtype: np.dtype[Any], what: str) -> np.ndarray:
    lo, hi = int_range(dtype)
    if values.size and (int(values.min()) < lo or int(values.max()) > hi):
        raise ValueError(f"{what} gives values outside {dtype.name}'s range [{lo}, {hi}]")
    return values.astype(dtype)


class ScaleOffsetCodec(ArrayArrayCodec):
    name = "scale_offset"

    def __init__(self, offset: Any, scale: Any, text: str) -> None:
        self.offset = offset
        self.scale = scale
        self.text = text

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str, chunk: ChunkSpec) -> ScaleOffsetCodec:
        from ..fill import parse_v3_fill

        config = checked_configuration(spec, {"offset", "scale"}, "scale_offset", where)
        if not is_real_type(chunk.dt):
            raise MetadataError(f"scale_offset codec in {where} is not defined for {chunk.dt.name}")
        offset = parse_v3_fill(chunk.dt, config.get("offset", 0), where)
        scale = parse_v3_fill(chunk.dt, config.get("scale", 1), where)
        if float(scale) == 0:
            raise MetadataError(f"scale_offset codec in {where}: scale must not be zero, not {short(config.get('scale'))}")
        return cls(offset, scale, f"offset {config.get('offset', 0)}, scale {config.get('scale', 1)}")

    def describe(self) -> str:
        return f"scale_offset({self.text})"

    def encode_values(self, arr: np.ndarray) -> np.ndarray:
        if is_integral(arr.dtype):
            return _narrow((_wide(arr) - int(self.offset)) * int(self.scale), arr.dtype, "scale_offset")
        return np.asarray((arr - self.offset) * self.scale, dtype=arr.dtype)

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        fill = self.encode_values(np.array([spec.fill_value], spec.dtype))[0]
        return ChunkSpec(spec.shape, spec.dt, fill)

    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if arr.dtype != spec.dtype:
            raise CodecError(f"scale_offset: got {arr.dtype} elements, expected {spec.dt.name}")
        if not is_integral(arr.dtype):
            return np.asarray(arr / self.scale + self.offset, dtype=arr.dtype)
        wide = _wide(arr)
        scale = int(self.scale)
        if np.any(wide % scale):
            raise CodecError(f"scale_offset: a stored value is not a multiple of the scale {scale}, "
                             f"so it has no exact {spec.dt.name} value")
        try:
            return _narrow(wide // scale + int(self.offset), arr.dtype, "scale_offset decoding")
        except ValueError as e:
            raise CodecError(str(e)) from e
