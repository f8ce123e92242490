"""Decoding metadata documents with errors that name the document.

Python's json accepts the bare ``NaN``/``Infinity`` tokens that zarr v2 writers emit, so
only the error reporting needs care.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import MetadataError


def load_json_object(data: bytes, where: str) -> dict[str, Any]:
    """Parse ``data`` as a JSON object; ``where`` names the document in error messages."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MetadataError(f"{where} is not UTF-8 text: {e}") from e
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise MetadataError(f"{where} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    if not isinstance(doc, dict):
        raise MetadataError(f"{where} must hold a JSON object, found {type(doc).__name__}")
    return doc
