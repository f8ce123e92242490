"""Zarr v2 ``.zarray`` documents (attributes come from ``.zattrs``, read separately)."""

from __future__ import annotations

from typing import Any

from ..codecs import CodecPipeline, V2ChunkCodec
from ..codecs.numcodecs_registry import make_numcodecs
from ..dtypes import parse_v2_dtype
from ..errors import MetadataError, short
from ..fill import parse_v2_fill
from .keys import v2_key
from .model import ArrayMetadata, parse_attributes, parse_dimension_names, parse_shape


def codec(spec: Any, where: str) -> Any:
    """The numcodecs codec a v2 compressor or filter entry names."""
    if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
        raise MetadataError(f"codec {short(spec)} in {where} must be an object with an 'id'")
    return make_numcodecs(spec["id"], {k: v for k, v in spec.items() if k != "id"}, where)


def parse_array(doc: dict[str, Any], attrs: dict[str, Any], prefix: str, where: str) -> ArrayMetadata:
    if doc.get("zarr_format") != 2:
        raise MetadataError(f"{where}: zarr_format must be 2, found {short(doc.get('zarr_format'))}")
    for required in ("shape", "chunks", "dtype", "compressor", "fill_value", "order"):
        if required not in doc:
            raise MetadataError(f"{where} lacks the required field {short(required)}")
    shape = parse_shape(doc["shape"], "shape", where)
    chunks = parse_shape(doc["chunks"], "chunks", where, positive=True)
    if len(chunks) != len(shape):
        raise MetadataError(f"chunks {list(chunks)} in {where} do not match the {len(shape)} dimensions of shape {list(shape)}")
    dt = parse_v2_dtype(doc["dtype"], where)
    order = doc["order"]
    if order not in ("C", "F"):
        raise MetadataError(f"order {short(order)} in {where} must be 'C' or 'F'")
    filters = doc.get("filters") or []
    if not isinstance(filters, list):
        raise MetadataError(f"filters in {where} must be a list or null")
    compressor = codec(doc["compressor"], where) if doc["compressor"] is not None else None
    filter_codecs = [codec(f, where) for f in filters]
    if dt.dtype.kind == "O":
        dt = _object_kind(dt, filter_codecs, where)
    fill = parse_v2_fill(dt, doc["fill_value"], where)
    sep = doc.get("dimension_separator")
    if sep not in (None, ".", "/"):
        raise MetadataError(f"dimension_separator {short(sep)} in {where} must be '.' or '/'")
    key = v2_key(prefix, sep or ".")
    alt = v2_key(prefix, "/") if sep is None and len(shape) > 1 else None
    chunk_codec = V2ChunkCodec(filter_codecs, compressor, order)
    pipeline = CodecPipeline((), chunk_codec, ())
    names = attrs.get("_ARRAY_DIMENSIONS")
    dims = None
    if isinstance(names, list) and len(names) == len(shape) and all(isinstance(n, str) for n in names):
        dims = parse_dimension_names(names, len(shape), where)
    return ArrayMetadata(
        zarr_format=2, shape=shape, dt=dt, fill_value=fill, stored_shape=chunks, stored_key=key,
        read_pipeline=pipeline, read_shape=chunks, shard_layout=None, codecs_description=chunk_codec.describe(),
        dimension_names=dims,
        attributes=parse_attributes(attrs, where), document=doc, alt_stored_key=alt,
    )


def _object_kind(dt: Any, filters: list[Any], where: str) -> Any:
    from ..dtypes import DataType, Kind

    if not filters:
        raise MetadataError(f"object array in {where} has no object codec among its filters")
    cid = filters[0].codec_id
    kind: Kind = "bytes" if cid == "vlen-bytes" else "str"
    if cid not in ("vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2", "categorize"):
        raise MetadataError(f"object array in {where} must start its filters with an object codec, found {short(cid)}")
    return DataType(dt.dtype, kind if cid in ("vlen-utf8", "vlen-bytes") else "str", cid)
