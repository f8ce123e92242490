"""The 2022 draft of Zarr v3 that zarr-python 2.x wrote with its experimental v3 API.

Layout: a root ``zarr.json`` naming the protocol URI, metadata under
``meta/root/<path>.array.json`` / ``.group.json``, chunks under ``data/root/<path>/c0/0``,
compressors named by URI, and sharding as a storage transformer (seed 001): inner chunks
encoded by the array's compressor, a raw little-endian index at the end of each shard.
"""

from __future__ import annotations

import math
from typing import Any

from ..codecs import CodecPipeline, ShardLayout, V2ChunkCodec
from ..codecs.numcodecs_registry import make_numcodecs
from ..dtypes import parse_v2_dtype
from ..errors import MetadataError, UnsupportedFeatureError, short
from ..limits import human, limits
from ..fill import parse_v2_fill
from .keys import prefinal_key
from .model import ArrayMetadata, parse_attributes, parse_dimension_names, parse_shape, parse_transformers

SHARDING_URI = "https://purl.org/zarr/spec/storage_transformers/sharding/1.0"
_DTYPE_NAMES = {"bool": "|b1", "u1": "|u1", "i1": "|i1"}


def is_prefinal_root(doc: dict[str, Any]) -> bool:
    fmt = doc.get("zarr_format")
    return isinstance(fmt, str) and fmt.startswith("https://purl.org/zarr/spec/protocol/core/3")


def _compressor(spec: Any, where: str) -> Any:
    if spec is None:
        return None
    if not isinstance(spec, dict) or not isinstance(spec.get("codec"), str):
        raise MetadataError(f"compressor {short(spec)} in {where} must name a codec URI")
    uri = spec["codec"].rstrip("/")
    parts = uri.split("/")
    cid = parts[-2] if len(parts) >= 2 and parts[-1][:1].isdigit() else parts[-1]
    config = spec.get("configuration")
    if config is not None and not isinstance(config, dict):
        raise MetadataError(f"compressor configuration in {where} must be an object, not {short(config)}")
    return make_numcodecs(cid, dict(config or {}), where)


def parse_array(doc: dict[str, Any], path: str, where: str) -> ArrayMetadata:
    for required in ("shape", "data_type", "chunk_grid", "fill_value"):
        if required not in doc:
            raise MetadataError(f"{where} lacks the required field {short(required)}")
    shape = parse_shape(doc["shape"], "shape", where)
    raw_dtype = doc["data_type"]
    if isinstance(raw_dtype, dict) and "type" in raw_dtype:  # extension data types (complex, datetime)
        raw_dtype = raw_dtype["type"]
    dt = parse_v2_dtype(_DTYPE_NAMES.get(raw_dtype, raw_dtype) if isinstance(raw_dtype, str) else raw_dtype, where)
    grid = doc["chunk_grid"]
    if not isinstance(grid, dict) or grid.get("type", "regular") != "regular":
        raise UnsupportedFeatureError(f"unknown chunk grid {short(grid)} in {where}")
    chunks = parse_shape(grid.get("chunk_shape"), "chunk_shape", where, positive=True)
    if len(chunks) != len(shape):
        raise MetadataError(f"chunk_shape {list(chunks)} in {where} does not match shape {list(shape)}")
    sep = grid.get("separator", "/")
    if sep not in ("/", ".") or not isinstance(sep, str):
        raise MetadataError(f"chunk_grid separator {short(sep)} in {where} must be '/' or '.'")
    order = doc.get("chunk_memory_layout", "C")
    if order not in ("C", "F"):
        raise MetadataError(f"chunk_memory_layout {short(order)} in {where} must be 'C' or 'F'")
    attributes = parse_attributes(doc.get("attributes"), where)
    # zarr 2.18 kept v2-style filters in the attributes of draft arrays
    attr_filters = attributes.get("filters")
    filters = [make_numcodecs(f["id"], {k: v for k, v in f.items() if k != "id"}, where)
               for f in attr_filters if isinstance(f, dict) and isinstance(f.get("id"), str)] \
        if isinstance(attr_filters, list) else []
    codec = V2ChunkCodec(filters, _compressor(doc.get("compressor"), where), order)
    fill = parse_v2_fill(dt, doc["fill_value"], where)
    pipeline = CodecPipeline((), codec, ())
    key = prefinal_key(f"data/root{path if path != '/' else ''}/", sep)
    stored, layout = chunks, None
    for t in parse_transformers(doc.get("storage_transformers"), where):
        if not isinstance(t, dict) or t.get("extension") != SHARDING_URI or t.get("type", "indexed") != "indexed":
            raise UnsupportedFeatureError(f"unknown storage transformer {short(t)} in {where}")
        config = t.get("configuration") or {}
        if not isinstance(config, dict):
            raise MetadataError(f"sharding configuration in {where} must be an object, not {short(config)}")
        cps = parse_shape(config.get("chunks_per_shard"), "chunks_per_shard", where, positive=True)
        if len(cps) != len(shape):
            raise MetadataError(f"chunks_per_shard {list(cps)} in {where} does not match shape {list(shape)}")
        n = math.prod(cps)
        if 16 * n > limits().chunk_bytes:
            raise UnsupportedFeatureError(f"chunks_per_shard {list(cps)} in {where} needs a shard index of "
                                          f"{human(16 * n)}, more than the {human(limits().chunk_bytes)} allowed")
        stored = tuple(c * k for c, k in zip(chunks, cps))
        layout = ShardLayout(cps, "end", 16 * n, None)
    description = codec.describe() + (f" in shards of {list(layout.chunks_per_shard)} chunks" if layout else "")
    return ArrayMetadata(
        zarr_format=3, shape=shape, dt=dt, fill_value=fill, stored_shape=stored, stored_key=key,
        read_pipeline=pipeline, read_shape=chunks, shard_layout=layout, codecs_description=description,
        dimension_names=parse_dimension_names(doc.get("dimension_names"), len(shape), where),
        attributes=attributes, document=doc,
    )
