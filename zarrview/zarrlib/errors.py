"""Every failure a store can cause is one of these, so callers catch one base class.

Messages always name the node path or store key and what is wrong with it, because a
viewer shows them to a person who must find the broken file.
"""

from __future__ import annotations

from typing import Any


def short(value: Any) -> str:
    """A value as a message shows it: hostile documents hold strings and lists of megabytes."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class ZarrError(Exception):
    """Base of every error raised by zarrlib."""


class StoreError(ZarrError):
    """The store could not be opened or answered a request with an error."""


class MissingExtraError(StoreError):
    """Reading this needs an optional dependency that is not installed; the message names the
    ``zarrview[...]`` extra that brings it."""


class StoreNotFoundError(StoreError):
    """The location does not exist or holds no Zarr metadata."""


class StoreAccessError(StoreError):
    """The server refused access (401/403): credentials are missing or not enough."""


class TooLargeError(StoreError):
    """An object is larger than the bound for its kind (see ``zarrlib.limits``)."""


class UnsupportedSchemeError(StoreError):
    """No fsspec driver is installed for a URL scheme."""


class NodeNotFoundError(ZarrError, KeyError):
    """A requested member of a group does not exist."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain sentence
        return str(self.args[0]) if self.args else ""


class MetadataError(ZarrError):
    """A metadata document is missing, malformed or invalid."""


class UnsupportedFeatureError(MetadataError):
    """Valid metadata that uses an extension, codec or data type zarrlib cannot read."""


class UnsupportedCodecError(UnsupportedFeatureError):
    """A codec zarrlib does not have (or refuses): the array's metadata is still shown, and only
    reading its data fails, so one such array does not keep a store or its siblings from opening."""


class UnsupportedDataTypeError(UnsupportedFeatureError):
    """A data type name zarrlib does not know: handled like ``UnsupportedCodecError``."""


class CodecError(ZarrError):
    """A chunk could not be decoded (corrupt, truncated, failed checksum)."""


class StoredChunkTooLargeError(TooLargeError, CodecError):
    """A chunk's stored object is larger than its codecs can store a chunk as: a corrupt chunk,
    or a server sending more than the object holds. Both a store's refusal and a bad chunk."""


class ChecksumError(CodecError):
    """A stored checksum does not match the data."""


class DecodedTooLargeError(CodecError):
    """A compressed stream decodes to more than its bound (a corrupt chunk, or a bomb)."""


class IndexingError(ZarrError, IndexError):
    """A selection is out of bounds or of an unsupported kind."""


class ReadCancelled(ZarrError):
    """A read was abandoned through its cancellation token."""
