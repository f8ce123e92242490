"""Codecs, one per module; ``registry`` maps v3 names to them."""

from .base import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec, ChunkSpec, Codec
from .pipeline import CodecPipeline
from .registry import parse_codecs
from .sharding import ShardingCodec, ShardLayout
from .v2_chunk import V2ChunkCodec

__all__ = ["ArrayArrayCodec", "ArrayBytesCodec", "BytesBytesCodec", "ChunkSpec", "Codec", "CodecPipeline",
           "parse_codecs", "ShardingCodec", "ShardLayout", "V2ChunkCodec"]
