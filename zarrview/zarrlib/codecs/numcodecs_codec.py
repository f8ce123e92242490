"""v3 codecs named ``numcodecs.<id>``, as zarr-python writes them, run through numcodecs."""

from __future__ import annotations

from typing import Any

import numpy as np
from numcodecs.abc import Codec as NumcodecsCodec

from ..errors import CodecError
from .blosc import check_frame
from .blosc import declared_size as blosc_declared_size
from ..limits import limits
from .bounded import head_of, inflate, lz4_declared, unbz2, unxz, unzstd
from .vlen_count import check_vlen_count
from .zstd import frame_content_size
from .base import (COMPRESSORS, ArrayArrayCodec, ArrayBytesCodec, Buffer, BytesBytesCodec, ChunkSpec, Codec,
                   compressed_bound)

DECODE_ERRORS = (RuntimeError, ValueError, TypeError, MemoryError, EOFError, OSError, KeyError, IndexError,
                  OverflowError, AttributeError, RecursionError, UnicodeError, ZeroDivisionError)


def guarded_decode(codec: NumcodecsCodec, data: Buffer, limit: int | None = None) -> Any:
    """Decode with the checks numcodecs lacks: blosc frames are validated before blosc trusts
    their header, and no decompressor may inflate past ``limit`` (the expected decoded size,
    else the process-wide bound on a chunk): a small file must not become gigabytes."""
    cid = codec.codec_id
    bound = limits().chunk_bytes if limit is None else limit
    if cid == "blosc":
        check_frame(data)
        declared = blosc_declared_size(data)
        if declared is not None and declared > bound:
            raise CodecError(f"blosc: frame declares {declared} bytes, more than the expected {bound}")
    elif cid == "zstd":
        streamed = unzstd(data, bound, frame_content_size(data))
        if streamed is not None:
            return streamed
    elif cid in ("gzip", "zlib"):
        return inflate(data, bound, cid)
    elif cid == "bz2":
        return unbz2(data, bound)
    elif cid == "lzma":
        return unxz(data, bound, codec)
    elif cid == "lz4":
        declared = lz4_declared(data)
        if declared is None or declared > bound:
            raise CodecError(f"lz4: frame declares {declared} bytes, more than the expected {bound}")
    elif cid in ("vlen-utf8", "vlen-bytes", "vlen-array"):
        check_vlen_count(data, cid)
    return codec.decode(data)


def describe_codec(codec: NumcodecsCodec) -> str:
    config = {k: v for k, v in codec.get_config().items() if k != "id"}
    inner = ", ".join(f"{k}={v}" for k, v in config.items())
    return f"{codec.codec_id}({inner})" if inner else str(codec.codec_id)


class NumcodecsWrapper(Codec):
    """A numcodecs codec as one of the three kinds: each kind holds, names (``numcodecs.<id>``)
    and describes the codec alike, so that is written once here."""

    def __init__(self, codec: NumcodecsCodec) -> None:
        self.codec = codec
        self.name = f"numcodecs.{codec.codec_id}"

    def describe(self) -> str:
        return describe_codec(self.codec)


class NumcodecsBytesBytes(NumcodecsWrapper, BytesBytesCodec):
    def head(self, data: Buffer, n: int) -> bytes | None:
        return head_of(self.codec.codec_id, data, n)

    def encoded_size(self, decoded_size: int) -> int | None:
        extra = {"adler32": 4, "crc32": 4, "crc32c": 4, "fletcher32": 4, "jenkins_lookup3": 4}.get(self.codec.codec_id)
        return None if extra is None else decoded_size + extra

    def max_encoded_size(self, decoded_size: int) -> int | None:
        return compressed_bound(decoded_size) if self.codec.codec_id in COMPRESSORS else self.encoded_size(decoded_size)

    def decode(self, data: Buffer, limit: int | None = None) -> Buffer:
        try:
            return guarded_decode(self.codec, data, limit)
        except DECODE_ERRORS as e:
            raise CodecError(f"{self.codec.codec_id}: {e}") from e


class NumcodecsArrayArray(NumcodecsWrapper, ArrayArrayCodec):
    def encoded_spec(self, spec: ChunkSpec) -> ChunkSpec:
        c = self.codec.get_config()
        cid = c["id"]
        if cid == "packbits":
            return spec.with_shape((1 + -(-spec.size // 8),)).with_dtype(np.dtype("u1"))
        if cid == "astype":
            return spec.with_dtype(np.dtype(c["encode_dtype"]))
        if c.get("astype"):
            return spec.with_dtype(np.dtype(c["astype"]))
        return spec

    def decode(self, arr: np.ndarray, spec: ChunkSpec) -> np.ndarray:
        try:
            out = np.asarray(self.codec.decode(np.ascontiguousarray(arr)))
        except DECODE_ERRORS as e:
            raise CodecError(f"{self.codec.codec_id}: {e}") from e
        if out.size != spec.size:
            raise CodecError(f"{self.codec.codec_id}: decoded {out.size} items, expected {spec.size}")
        if out.dtype != spec.dtype:
            out = out.astype(spec.dtype) if out.dtype.kind != "V" else out.view(spec.dtype)
        return out.reshape(spec.shape)


class NumcodecsArrayBytes(NumcodecsWrapper, ArrayBytesCodec):
    def decode(self, data: Buffer, spec: ChunkSpec) -> np.ndarray:
        try:
            out = np.asarray(self.codec.decode(data))
        except DECODE_ERRORS as e:
            raise CodecError(f"{self.codec.codec_id}: {e}") from e
        if out.dtype.kind != "O" and out.dtype != spec.dtype:
            flat = np.ascontiguousarray(out).reshape(-1).view(np.uint8)
            if flat.size != spec.size * spec.dtype.itemsize:
                raise CodecError(f"{self.codec.codec_id}: decoded {flat.size} bytes, expected {spec.size * spec.dtype.itemsize}")
            out = flat.view(spec.dtype)
        if out.size != spec.size:
            raise CodecError(f"{self.codec.codec_id}: decoded {out.size} items, expected {spec.size}")
        return out.reshape(spec.shape)
