"""The ``zfp`` array->bytes codec: a zfp stream without a header, its field the chunk's shape.

Decoded by ``zfpy`` (the ``codecs`` extra), which reads headerless streams of the
``fixed_accuracy``, ``fixed_rate`` and ``fixed_precision`` modes; ``reversible`` and
``expert`` streams need parameters zfpy does not take for them, so those arrays are shown with
their metadata and refused when read. Types are zfp's own: int32, int64, float32, float64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import CodecError, MetadataError, UnsupportedCodecError, short
from .base import ArrayBytesCodec, Buffer, ChunkSpec, configuration
from .params import check_fields, parse_choice

MODES = ("fixed_accuracy", "fixed_rate", "fixed_precision", "reversible", "expert")
_FIELDS = {"fixed_accuracy": ("tolerance",), "fixed_rate": ("rate",), "fixed_precision": ("precision",),
           "reversible": (), "expert": ("minbits", "maxbits", "maxprec", "minexp")}
TYPES = ("int32", "int64", "float32", "float64")


def _number(config: dict[str, Any], key: str, where: str, integer: bool) -> float:
    value: Any = config.get(key)
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if not ok or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        kind = "a non-negative integer" if integer else "a non-negative number"
        raise MetadataError(f"zfp codec in {where}: {key} must be {kind}, not {short(value)}")
    return value


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

    @classmethod
    def from_json(cls, spec: dict[str, Any], where: str, chunk: ChunkSpec) -> ZfpCodec:
        config = configuration(spec, where)
        mode = parse_choice(config, "mode", "zfp", where, MODES)
        check_fields(config, {"mode", *_FIELDS[mode]}, "zfp", where)
        params = {key: _number(config, key, where, key == "precision") for key in _FIELDS[mode]
                  if mode not in ("reversible", "expert")}
        if chunk.dt.name not in TYPES or chunk.dt.storage is not None:
            raise UnsupportedCodecError(f"zfp codec in {where}: data type {chunk.dt.name} is not one zfp holds "
                                        f"({', '.join(TYPES)})")
        if len(chunk.shape) > 4:
            raise MetadataError(f"zfp codec in {where}: a chunk of {len(chunk.shape)} dimensions is more than zfp's 4")
        if mode in ("reversible", "expert"):
            raise UnsupportedCodecError(f"zfp codec in {where}: {mode} mode streams cannot be decoded here "
                                        "(fixed_accuracy, fixed_rate and fixed_precision can)")
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
        keywords = {"tolerance": float(self.params["tolerance"])} if self.mode == "fixed_accuracy" else \
            {"rate": float(self.params["rate"])} if self.mode == "fixed_rate" else \
            {"precision": int(self.params["precision"])}
        raw = bytes(data)
        if not raw:
            raise CodecError("zfp: an empty chunk")
        bound = stream_bound(shape, spec.dtype.itemsize)
        if len(raw) > bound:
            raise CodecError(f"zfp: {len(raw)} bytes are more than a stream for shape {list(spec.shape)} can hold")
        # zfp reads its stream without bounds: zeros to the most any block can take keep a
        # truncated chunk's decoder inside this buffer (it decodes garbage, not memory past it)
        raw += bytes(bound - len(raw))
        try:
            out = zfpy._decompress(raw, zfpy.dtype_to_ztype(spec.dtype), shape, **keywords)
        except Exception as e:  # zfpy raises bare exceptions for streams it cannot read
            raise CodecError(f"zfp: {type(e).__name__}: {e}") from e
        return np.asarray(out).reshape(spec.shape)
