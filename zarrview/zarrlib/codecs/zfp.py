"""The ``zfp`` array->bytes codec: a zfp stream without a header, its field the chunk's shape.

Decoded by ``zfpy`` (the ``codecs`` extra), which reads headerless streams of the
``fixed_accuracy``, ``fixed_rate`` and ``fixed_precision`` modes itself. For ``reversible`` and
``expert`` streams it takes no parameters, so the stream is given the header zfp would have
written (magic and field as zfpy writes them for the chunk, then zfp's encoding of the mode:
the 12-bit code of reversible mode, or the 64-bit one of the four expert parameters) and zfpy
reads that. Types are zfp's own (int32, int64, float32, float64) and those the spec promotes:
narrower floats decode as float32 and are cast, narrower integers as int32 and are demoted by
zfp's own rule (shifted down, offset for unsigned, clamped).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..errors import CodecError, MetadataError, UnsupportedCodecError, short
from .base import ArrayBytesCodec, Buffer, ChunkSpec, configuration
from .params import check_fields, parse_choice

#: zfp's own constants (zfp.h): bits of the magic and field parts of a header, the code of
#: reversible mode, the offset of an encoded minimum exponent, the long-encoding marker
FIELD_BITS = 32 + 52
REVERSIBLE = 2048 + 128
EXP_BIAS = 16495
LONG_MODE = 0xFFF
MODES = ("fixed_accuracy", "fixed_rate", "fixed_precision", "reversible", "expert")
_FIELDS = {"fixed_accuracy": ("tolerance",), "fixed_rate": ("rate",), "fixed_precision": ("precision",),
           "reversible": (), "expert": ("minbits", "maxbits", "maxprec", "minexp")}
TYPES = ("int32", "int64", "float32", "float64")
#: types zfp holds promoted: float ones as float32, integers of N bits as int32
PROMOTED = ("float16", "bfloat16", "int8", "uint8", "int16", "uint16")


def stream_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The zfp type a chunk of ``dtype`` is compressed as."""
    if dtype.name in TYPES:
        return dtype
    return np.dtype("f4") if dtype.kind == "f" or dtype.name == "bfloat16" else np.dtype("i4")


def demote(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """zfp's demotion of int32 values to an integer type of N bits (``zfp_demote_*``)."""
    bits = 8 * dtype.itemsize
    shifted = values.astype(np.int64) >> (31 - bits)
    if dtype.kind == "u":
        shifted += 1 << (bits - 1)
    info = np.iinfo(dtype)
    return np.clip(shifted, info.min, info.max).astype(dtype)


def _number(config: dict[str, Any], key: str, where: str, integer: bool) -> float:
    value: Any = config.get(key)
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if not ok or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        kind = "a non-negative integer" if integer else "a non-negative number"
        raise MetadataError(f"zfp codec in {where}: {key} must be {kind}, not {short(value)}")
    return value


def _expert(config: dict[str, Any], key: str, where: str) -> int:
    value: Any = config.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not -(1 << 20) < value < 1 << 20:
        raise MetadataError(f"zfp codec in {where}: {key} must be an integer, not {short(value)}")
    return value


def _mode_bits(mode: str, params: dict[str, float]) -> np.ndarray | None:
    """The header's mode field as bits, least significant first; None for the modes zfpy
    decodes without a header."""
    if mode == "reversible":
        return np.array([(REVERSIBLE >> i) & 1 for i in range(12)], np.uint8)
    if mode != "expert":
        return None
    code = max(0, min(int(params["minexp"]) + EXP_BIAS, 0x7FFF))
    code = (code << 7) + min(int(params["maxprec"]), 0x80) - 1
    code = (code << 15) + min(int(params["maxbits"]), 0x8000) - 1
    code = (code << 15) + min(int(params["minbits"]), 0x8000) - 1
    code = (code << 12) + LONG_MODE
    return np.array([(code >> i) & 1 for i in range(64)], np.uint8)


@functools.lru_cache(maxsize=64)
def _field_bits(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The magic and field parts of the header zfpy writes for a chunk of ``shape``."""
    import zfpy

    header = zfpy.compress_numpy(np.zeros(shape, dtype), precision=1, write_header=True)
    return np.unpackbits(np.frombuffer(header, np.uint8), bitorder="little")[:FIELD_BITS]


def _with_header(raw: bytes, shape: tuple[int, ...], dtype: str, mode_bits: np.ndarray) -> bytes:
    """``raw`` behind a full zfp header; zfp streams are bit streams (least significant bit
    first in little-endian 64-bit words), so the data moves to the bit after the header."""
    bits = np.concatenate([_field_bits(shape, dtype), mode_bits,
                           np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")])
    bits = np.concatenate([bits, np.zeros(-len(bits) % 64, np.uint8)])
    return np.packbits(bits, bitorder="little").tobytes()


def stream_bound(shape: tuple[int, ...], itemsize: int) -> int:
    """Bytes no zfp stream for ``shape`` exceeds: per 4^d block, every bit plane of every value
    with its group-test bit, plus the block's exponent, rounded up to 64-bit words."""
    blocks = math.prod(-(-n // 4) for n in shape)
    block_bits = 2 * 4 ** len(shape) * 8 * itemsize + 64
    return 8 * (-(-blocks * block_bits // 64) + 1)


class ZfpCodec(ArrayBytesCodec):
    name = "zfp"

    def __init__(self, mode: str, params: dict[str, float]) -> None:
        self.mode = mode
        self.params = params
        self.mode_bits = _mode_bits(mode, params)

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str, chunk: ChunkSpec) -> ZfpCodec:
        config = configuration(spec, where)
        mode = parse_choice(config, "mode", "zfp", where, MODES)
        check_fields(config, {"mode", *_FIELDS[mode]}, "zfp", where)
        params = {key: _expert(config, key, where) if mode == "expert" else _number(config, key, where, key == "precision")
                  for key in _FIELDS[mode]}
        if mode == "expert" and not (1 <= params["minbits"] <= params["maxbits"] and 1 <= params["maxprec"] <= 64):
            raise MetadataError(f"zfp codec in {where}: expert mode needs 1 <= minbits <= maxbits and maxprec "
                                f"from 1 to 64, not {short(config)}")
        if chunk.dt.name not in TYPES + PROMOTED:
            raise UnsupportedCodecError(f"zfp codec in {where}: data type {chunk.dt.name} is not one zfp holds "
                                        f"({', '.join(TYPES + PROMOTED)})")
        if len(chunk.shape) > 4:
            raise MetadataError(f"zfp codec in {where}: a chunk of {len(chunk.shape)} dimensions is more than zfp's 4")
        try:
            import zfpy  # noqa: F401
        except ImportError as e:
            raise UnsupportedCodecError(f"zfp codec in {where} needs the zfpy package (zarrview[codecs])") from e
        return cls(mode, params)

    def describe(self) -> str:
        return f"zfp({self.mode} {', '.join(f'{k} {v}' for k, v in self.params.items())})"

    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        import zfpy

        shape = spec.shape or (1,)
        raw = bytes(data)
        if not raw:
            raise CodecError("zfp: an empty chunk")
        held = stream_dtype(spec.dtype)
        bound = stream_bound(shape, held.itemsize)
        if len(raw) > bound:
            raise CodecError(f"zfp: {len(raw)} bytes are more than a stream for shape {list(spec.shape)} can hold")
        # zfp reads its stream without bounds: zeros to the most any block can take keep a
        # truncated chunk's decoder inside this buffer (it decodes garbage, not memory past it)
        raw += bytes(bound - len(raw))
        try:
            if self.mode_bits is not None:
                out = zfpy.decompress_numpy(_with_header(raw, shape, held.str, self.mode_bits))
            else:
                keywords = {"precision": int(self.params["precision"])} if "precision" in self.params else \
                    {k: float(v) for k, v in self.params.items()}
                out = zfpy._decompress(raw, zfpy.dtype_to_ztype(held), shape, **keywords)
        except Exception as e:  # zfpy raises bare exceptions for streams it cannot read
            raise CodecError(f"zfp: {type(e).__name__}: {e}") from e
        out = np.asarray(out).reshape(spec.shape)
        if held == spec.dtype:
            return out
        return out.astype(spec.dtype) if held.kind == "f" else demote(out, spec.dtype)
