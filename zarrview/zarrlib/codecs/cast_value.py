"""The ``cast_value`` array->array codec: elements stored as another numeric type, by value.

Decoding casts the stored type back to the array's, by the spec's ordered rules: a
``scalar_map`` entry first, then an exact value, then rounding and the ``out_of_range``
rule; a value none of these place is an error, never a silent wrap. The fill value goes
forward through the same rules (with the ``encode`` map), so a missing inner chunk of a
shard behind this codec reads as the fill value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import DataType, parse_v3_dtype
from ..errors import CodecError, MetadataError, short
from .base import ArrayArrayCodec, ChunkSpec
from .casting import Cast
from .params import checked_configuration, parse_choice
from .scale_offset import is_integral, is_real_type

ROUNDING = ("nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away")
Pairs = tuple[tuple[Any, Any], ...]


def _pairs(config: dict[str, Any], direction: str, src: DataType, dst: DataType, where: str) -> Pairs:
    from ..fill import parse_v3_fill

    smap = config.get("scalar_map") or {}
    if not isinstance(smap, dict) or set(smap) - {"encode", "decode"}:
        raise MetadataError(f"cast_value codec in {where}: scalar_map must be an object of 'encode' and 'decode', "
                            f"not {short(smap)}")
    entries = smap.get(direction) or []
    if not isinstance(entries, list) or not all(isinstance(e, list) and len(e) == 2 for e in entries):
        raise MetadataError(f"cast_value codec in {where}: scalar_map {direction} must be a list of pairs, "
                            f"not {short(entries)}")
    return tuple((parse_v3_fill(src, k, where), parse_v3_fill(dst, v, where)) for k, v in entries)


class CastValueCodec(ArrayArrayCodec):
    name = "cast_value"

    def __init__(self, target: DataType, encode: Cast, decode: Cast) -> None:
        self.target = target
        self.encoder = encode
        self.decoder = decode

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str, chunk: ChunkSpec) -> CastValueCodec:
        config = checked_configuration(spec, {"data_type", "rounding", "out_of_range", "scalar_map"}, "cast_value", where)
        if "data_type" not in config:
            raise MetadataError(f"cast_value codec in {where} lacks its data_type")
        target = parse_v3_dtype(config["data_type"], where)
        for role, dt in (("array", chunk.dt), ("data_type", target)):
            if not is_real_type(dt):
                raise MetadataError(f"cast_value codec in {where}: {role} type {dt.name} is not an integer or float type")
        rounding = parse_choice(config, "rounding", "cast_value", where, ROUNDING, default="nearest-even")
        oor = parse_choice(config, "out_of_range", "cast_value", where, (None, "clamp", "wrap"), default=None)
        if oor == "wrap" and not is_integral(target.dtype):
            raise MetadataError(f"cast_value codec in {where}: out_of_range 'wrap' needs an integer data_type, "
                                f"not {target.name}")
        encode = Cast(target.dtype, rounding, oor, _pairs(config, "encode", chunk.dt, target, where))
        decode = Cast(chunk.dtype, rounding, oor, _pairs(config, "decode", target, chunk.dt, where))
        return cls(target, encode, decode)

    def describe(self) -> str:
        return f"cast_value({self.target.name})"

    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        fill = self.encoder(np.array([spec.fill_value], spec.dtype))[0]
        return ChunkSpec(spec.shape, self.target, fill)

    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        if arr.dtype != self.target.dtype:
            raise CodecError(f"cast_value: got {arr.dtype} elements, expected {self.target.name}")
        try:
            return self.decoder(arr)
        except ValueError as e:
            raise CodecError(f"cast_value to {spec.dt.name}: {e}") from e
