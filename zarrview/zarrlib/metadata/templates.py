"""Arrays of one hierarchy mostly share data type, chunking and codecs: parse those once.

Parsing a v3 array document (data type, fill value, the codec pipeline) took 18 µs, most of
the cost of listing a thousand arrays or printing a tree of 100,000. The fields that make
the pipeline are the same for most arrays of a store, so a document whose fields other than
``shape``, ``dimension_names`` and ``attributes`` match one parsed before reuses that parse:
only those three are checked and set. A document that fails is always parsed in full, so
its error message is the one ``parse_array`` gives.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import orjson

from .model import ArrayMetadata, parse_attributes, parse_dimension_names, parse_shape
from . import v3

_SHARED = ("zarr_format", "node_type", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs",
           "storage_transformers")
_ABSENT = "\x00absent"
_MAX = 1024

_parsed: dict[bytes | str, ArrayMetadata] = {}
_lock = threading.Lock()


def shared_key(doc: dict[str, Any]) -> bytes | str | None:
    """The shared fields as text (the fields the document lacks marked as absent)."""
    fields = [doc[f] if f in doc else _ABSENT for f in _SHARED]
    try:
        return orjson.dumps(fields)
    except TypeError:  # integers beyond 64 bits
        pass
    try:
        return json.dumps(fields)
    except (TypeError, ValueError):
        return None


def parse_v3_array(doc: dict[str, Any], prefix: str, where: str) -> ArrayMetadata:
    """``v3.parse_array(doc, prefix, where)``, reusing the parse of a document that shares its
    data type, chunk grid and encoding, fill value and codecs."""
    key = shared_key(doc)
    known = _parsed.get(key) if key is not None else None
    if known is None or "shape" not in doc:
        meta = v3.parse_array(doc, prefix, where)
        if key is not None:
            with _lock:
                if len(_parsed) >= _MAX:
                    _parsed.clear()
                _parsed[key] = meta
        return meta
    own = own_fields(doc, known, where)
    if own is None:
        return v3.parse_array(doc, prefix, where)  # raises, naming the mismatch
    shape, names, attrs = own
    return known.for_array(shape, v3.chunk_key(doc["chunk_key_encoding"], prefix, where), names, attrs, doc)


def own_fields(doc: dict[str, Any], like: ArrayMetadata,
               where: str) -> tuple[tuple[int, ...], tuple[str | None, ...] | None, dict[str, Any]] | None:
    """The shape, dimension names and attributes of an array whose shared fields are
    ``like``'s, checked as ``parse_array`` checks them; None where its dimensions differ from
    its chunks', or its shape from a rectilinear grid's. Raises MetadataError for a malformed field."""
    shape = parse_shape(doc["shape"], "shape", where)
    if len(shape) != len(like.stored_shape) or (like.grid is not None and shape != like.shape):
        return None  # a rectilinear grid is cut to its array's shape: another shape parses anew
    return (shape, parse_dimension_names(doc.get("dimension_names"), len(shape), where),
            parse_attributes(doc.get("attributes"), where))


def known_like(doc: dict[str, Any]) -> ArrayMetadata | None:
    """An array parsed before that shares ``doc``'s data type, chunking, fill value and codecs."""
    key = shared_key(doc)
    return _parsed.get(key) if key is not None and "shape" in doc else None
