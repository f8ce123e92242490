"""Virtual references (kerchunk JSON v0/v1 and Parquet reference sets) as a read-only store."""

from .entries import BadReferenceError, Inline, Pointer
from .json_refs import JSON_SUFFIXES, JsonReferences, is_json_name, looks_like_references
from .opening import (AUTHORIZE, REQUIRE_REFERENCES, is_fsspec_reference, is_parquet_references, memory_url,
                      open_reference_location, open_references, reference_url, zmetadata_names_references)
from .parquet_refs import EXTRA, MissingExtraError, ParquetReferences
from .store import ReferenceStore

__all__ = ["AUTHORIZE", "JSON_SUFFIXES", "REQUIRE_REFERENCES", "is_json_name", "memory_url", "BadReferenceError", "EXTRA", "Inline", "JsonReferences", "MissingExtraError",
           "ParquetReferences", "Pointer", "ReferenceStore", "is_parquet_references",
           "looks_like_references", "open_references", "reference_url", "zmetadata_names_references",
           "is_fsspec_reference", "open_reference_location"]
