"""v3 codec names to codec objects, and the validation of a codec list.

Unknown names fail with the name and document; an unknown codec marked
``"must_understand": false`` is skipped, as the v3.1 core spec allows.
"""

from __future__ import annotations

from typing import Any

from ..errors import MetadataError, UnsupportedCodecError, short
from .base import AnyCodec, ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec, configuration
from .bitround import BitroundCodec
from .blosc import BloscCodec
from .bytes_codec import BytesCodec
from .cast_value import CastValueCodec
from .conditional import ConditionalCodec
from .crc32c import Crc32cCodec
from .gzip import GzipCodec
from .numcodecs_codec import NumcodecsArrayArray, NumcodecsArrayBytes, NumcodecsBytesBytes
from .numcodecs_registry import ARRAY_ARRAY, ARRAY_BYTES, make_numcodecs
from .n5_default import N5DefaultCodec
from .packbits import PackbitsCodec
from .pipeline import CodecPipeline
from .reshape import ReshapeCodec
from .scale_offset import ScaleOffsetCodec
from .sharding import ShardingCodec
from .transpose import TransposeCodec
from .vlen import VlenCodec
from .zfp import ZfpCodec
from .zstd import ZstdCodec

_SIMPLE: dict[str, Any] = {
    "bytes": BytesCodec, "endian": BytesCodec, "transpose": TransposeCodec, "gzip": GzipCodec,
    "blosc": BloscCodec, "zstd": ZstdCodec, "crc32c": Crc32cCodec,
    "vlen-utf8": VlenCodec, "vlen-bytes": VlenCodec, "bitround": BitroundCodec, "reshape": ReshapeCodec,
}
#: codecs whose configuration is read in terms of the chunk they encode (values in its type)
_TYPED: dict[str, Any] = {"scale_offset": ScaleOffsetCodec, "cast_value": CastValueCodec, "packbits": PackbitsCodec,
                          "zfp": ZfpCodec}


def _numcodecs(cid: str, config: dict[str, Any], where: str) -> AnyCodec:
    codec = make_numcodecs(cid, config, where)
    if cid in ARRAY_ARRAY:
        return NumcodecsArrayArray(codec)
    if cid in ARRAY_BYTES:
        return NumcodecsArrayBytes(codec)
    return NumcodecsBytesBytes(codec)


def parse_codec(item: Any, where: str, spec: ChunkSpec) -> AnyCodec | None:
    """One codec; None when an unknown codec may be ignored."""
    if isinstance(item, str):
        item = {"name": item}
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise MetadataError(f"codec {short(item)} in {where} must be a name or an object with a name")
    name = item["name"]
    extra = set(item) - {"name", "configuration", "must_understand"}
    if extra:
        raise MetadataError(f"codec {short(name)} in {where} has unknown fields {sorted(extra)}")
    if name in _SIMPLE:
        return _SIMPLE[name].from_json(item, where)
    if name in _TYPED:
        return _TYPED[name].from_json(item, where, spec)
    if name == "sharding_indexed":
        return ShardingCodec.from_json(configuration(item, where), where, spec.shape, parse_codecs, spec)
    if name == "conditional":
        return ConditionalCodec.from_json(configuration(item, where), where, lambda inner: parse_codec(inner, where, spec))
    if name == "n5_default":
        return N5DefaultCodec.from_json(configuration(item, where), where, parse_codecs, spec)
    if name.startswith("numcodecs."):
        return _numcodecs(name[len("numcodecs."):], configuration(item, where), where)
    if item.get("must_understand") is False:
        return None
    raise UnsupportedCodecError(f"codec {short(name)} in {where} is not supported (supported: {supported_names()})")


def supported_names() -> str:
    """The v3 codec names that can be read, for the message that refuses another one."""
    return ", ".join(sorted([*_SIMPLE, *_TYPED, "n5_default", "conditional"]) + ["sharding_indexed", "numcodecs.*"])


def parse_codecs(items: Any, where: str, spec: ChunkSpec) -> CodecPipeline:
    if not isinstance(items, list) or not items:
        raise MetadataError(f"codecs in {where} must be a non-empty list")
    aa: list[ArrayArrayCodec] = []
    ab: ArrayBytesCodec | None = None
    bb: list[BytesBytesCodec] = []
    current = spec
    for item in items:
        codec = parse_codec(item, where, current)
        if codec is None:
            continue
        if isinstance(codec, ArrayArrayCodec):
            if ab is not None:
                raise MetadataError(f"codec {short(codec.name)} in {where}: array->array codecs must come before the array->bytes codec")
            aa.append(codec)
            try:  # checked here, against the chunk it will decode, so the error names the document
                current = codec.encoded_spec(current)
            except (MetadataError, ValueError, TypeError, KeyError, OverflowError) as e:
                raise MetadataError(f"codec {codec.describe()} in {where}: {e}") from e
        elif isinstance(codec, ArrayBytesCodec):
            if ab is not None:
                raise MetadataError(f"codecs in {where} have two array->bytes codecs ({ab.name}, {codec.name})")
            ab = codec
        else:
            if ab is None:
                raise MetadataError(f"codec {short(codec.name)} in {where}: bytes->bytes codecs must follow the array->bytes codec")
            bb.append(codec)
    if ab is None:
        raise MetadataError(f"codecs in {where} have no array->bytes codec (such as 'bytes')")
    _check_dtype(ab, current, where)
    return CodecPipeline(tuple(aa), ab, tuple(bb))


def _check_dtype(ab: ArrayBytesCodec, spec: ChunkSpec, where: str) -> None:
    if isinstance(ab, VlenCodec) and not spec.dt.variable_length:
        raise MetadataError(f"codec {short(ab.name)} in {where} needs a variable-length data type, not {spec.dt.name}")
    storage = spec.dt.storage
    multibyte = storage.itemsize > 1 if storage is not None else \
        spec.dtype.itemsize > 1 and not spec.dtype.fields and spec.dtype.kind not in "SV"
    if isinstance(ab, BytesCodec) and ab.endian is None and multibyte and not spec.dt.variable_length:
        raise MetadataError(f"bytes codec in {where} needs an 'endian' for {spec.dt.name}")
