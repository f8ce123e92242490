"""Zarr v3 ``zarr.json`` documents (core spec 3.1 with registered extensions)."""

from __future__ import annotations

from typing import Any, Literal

from ..codecs import ChunkSpec, ShardingCodec, parse_codecs
from ..codecs.transpose import TransposeCodec
from ..dtypes import parse_v3_dtype
from ..errors import MetadataError, UnsupportedFeatureError, short
from ..fill import parse_v3_fill
from ..grid import RectilinearGrid, check_shard_edges, parse_rectilinear
from .keys import default_key, v2_key
from .model import ArrayMetadata, KeyFn, parse_attributes, parse_dimension_names, parse_shape, parse_transformers

_ARRAY_FIELDS = {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
                 "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names"}
_GROUP_FIELDS = {"zarr_format", "node_type", "attributes", "consolidated_metadata"}


def node_type(doc: dict[str, Any], where: str) -> Literal["array", "group"]:
    if doc.get("zarr_format") != 3:
        raise MetadataError(f"{where}: zarr_format must be 3, found {short(doc.get('zarr_format'))}")
    kind = doc.get("node_type")
    if kind not in ("array", "group"):
        raise MetadataError(f"{where}: node_type must be 'array' or 'group', found {short(kind)}")
    _check_unknown(doc, _ARRAY_FIELDS if kind == "array" else _GROUP_FIELDS, where)
    return kind


def _check_unknown(doc: dict[str, Any], known: set[str], where: str) -> None:
    for key, value in doc.items():
        if key in known:
            continue
        if isinstance(value, dict) and value.get("must_understand") is False:
            continue
        raise UnsupportedFeatureError(f"unknown field {short(key)} in {where} (not marked must_understand: false)")


def name_config(value: Any, what: str, where: str) -> tuple[str, dict[str, Any]]:
    if isinstance(value, str):
        return value, {}
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        config = value.get("configuration") or {}
        if not isinstance(config, dict):
            raise MetadataError(f"{what} configuration in {where} must be an object")
        return value["name"], config
    raise MetadataError(f"{what} in {where} must be a name or an object with a name, not {short(value)}")


def chunk_key(encoding: Any, prefix: str, where: str) -> KeyFn:
    """The key of a chunk from its grid coordinates, by ``chunk_key_encoding``."""
    enc_name, enc_conf = name_config(encoding, "chunk_key_encoding", where)
    if enc_name not in ("default", "v2"):
        raise UnsupportedFeatureError(f"unknown chunk key encoding {short(enc_name)} in {where}")
    sep = enc_conf.get("separator", "/" if enc_name == "default" else ".")
    if sep not in ("/", "."):
        raise MetadataError(f"chunk key separator {short(sep)} in {where} must be '/' or '.'")
    return default_key(prefix, sep) if enc_name == "default" else v2_key(prefix, sep)


def parse_array(doc: dict[str, Any], prefix: str, where: str) -> ArrayMetadata:
    """``prefix`` is the array's key prefix in the store (``""`` or ``"a/b/"``)."""
    for required in ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"):
        if required not in doc:
            raise MetadataError(f"{where} lacks the required field {short(required)}")
    shape = parse_shape(doc["shape"], "shape", where)
    dt = parse_v3_dtype(doc["data_type"], where)
    grid_name, grid_conf = name_config(doc["chunk_grid"], "chunk_grid", where)
    grid: RectilinearGrid | None = None
    if grid_name == "rectilinear":
        grid = parse_rectilinear(grid_conf, shape, where)
        chunk_shape = grid.largest
    elif grid_name == "regular":
        chunk_shape = parse_shape(grid_conf.get("chunk_shape"), "chunk_shape", where, positive=True)
    else:
        raise UnsupportedFeatureError(f"unknown chunk grid {short(grid_name)} in {where}")
    if len(chunk_shape) != len(shape):
        raise MetadataError(f"chunk_shape {list(chunk_shape)} in {where} does not match the {len(shape)} dimensions of shape {list(shape)}")
    key = chunk_key(doc["chunk_key_encoding"], prefix, where)
    for t in parse_transformers(doc.get("storage_transformers"), where):
        if not (isinstance(t, dict) and t.get("must_understand") is False):
            name = t.get("name") if isinstance(t, dict) else t
            raise UnsupportedFeatureError(f"unknown storage transformer {short(name)} in {where}")
    fill = parse_v3_fill(dt, doc["fill_value"], where)
    if grid is not None:  # before the codecs, which see the largest shard only
        check_shard_edges(grid, doc["codecs"], where)
    spec = ChunkSpec(chunk_shape, dt, fill)
    pipeline = parse_codecs(doc["codecs"], where, spec)
    read_shape, read_pipeline, layout, reported = chunk_shape, pipeline, None, None
    ab = pipeline.array_bytes
    if isinstance(ab, ShardingCodec):
        if not pipeline.array_array and not pipeline.bytes_bytes:
            read_shape, read_pipeline, layout = ab.chunk_shape, ab.inner, ab.layout
        else:  # codecs around the shard: it can only be decoded whole
            inner = ab.chunk_shape
            for codec in reversed(pipeline.array_array):  # back to array order
                if isinstance(codec, TransposeCodec):
                    perm = codec.perm(len(inner))
                    restored = [0] * len(inner)
                    for pos, axis in enumerate(perm):
                        restored[axis] = inner[pos]
                    inner = tuple(restored)
            reported = (inner, chunk_shape)
    return ArrayMetadata(
        zarr_format=3, shape=shape, dt=dt, fill_value=fill, stored_shape=chunk_shape, stored_key=key,
        read_pipeline=read_pipeline, read_shape=read_shape, shard_layout=layout, codecs_description=pipeline.describe(),
        dimension_names=parse_dimension_names(doc.get("dimension_names"), len(shape), where),
        attributes=parse_attributes(doc.get("attributes"), where), document=doc, reported_sharding=reported,
        grid=grid,
    )
