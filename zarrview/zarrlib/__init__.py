"""zarrlib: zarrview's embedded, read-only Zarr v2 and v3 library.

It depends on numpy, numcodecs and fsspec only, never on Qt, so the command line tools,
the scheduling layer and outside checks can all use it headless.
"""

from . import icechunk as icechunk  # registers the opener of repositories (storage.location)
from . import limits
from .api import open
from .cache import ChunkCache
from .cancel import CancelToken
from .errors import (
    ChecksumError,
    CodecError,
    DecodedTooLargeError,
    IndexingError,
    MetadataError,
    NodeNotFoundError,
    ReadCancelled,
    StoreError,
    StoreAccessError,
    StoreNotFoundError,
    TooLargeError,
    UnsupportedCodecError,
    UnsupportedDataTypeError,
    UnsupportedFeatureError,
    UnsupportedSchemeError,
    ZarrError,
)
from .nodes import Array, ErrorNode, Group, Node, UnsupportedArray
from .reader import ChunkFailure
from .tuning import tune_process

__all__ = [
    "open", "limits", "tune_process", "Array", "Group", "Node", "ErrorNode", "UnsupportedArray", "ChunkCache", "CancelToken", "ChunkFailure",
    "ZarrError", "StoreError", "StoreAccessError", "StoreNotFoundError", "TooLargeError", "UnsupportedSchemeError", "NodeNotFoundError",
    "MetadataError", "UnsupportedFeatureError", "UnsupportedCodecError", "UnsupportedDataTypeError", "CodecError", "ChecksumError", "DecodedTooLargeError",
    "IndexingError", "ReadCancelled",
]
