"""Decoding metadata documents with errors that name the document.

Python's json accepts the bare ``NaN``/``Infinity`` tokens that zarr v2 writers emit, so
only the error reporting needs care, and two things json itself lets through: nesting deep
enough to exhaust the interpreter's stack (in json or in any code that later walks the
document) and integers too long to convert. Both are refused here, once, for every reader
of every document.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .errors import MetadataError
from .limits import limits


def load_json_object(data: bytes | bytearray | memoryview, where: str) -> dict[str, Any]:
    """Parse ``data`` as a JSON object; ``where`` names the document in error messages."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise MetadataError(f"{where} is not UTF-8 text: {e}") from e
    depth = limits().json_depth
    if _nesting(text) > depth:
        raise MetadataError(f"{where} is nested more than {depth} levels deep")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise MetadataError(f"{where} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from e
    except (ValueError, RecursionError) as e:  # an integer of thousands of digits; a stack too deep
        raise MetadataError(f"{where} is not usable JSON: {e}") from e
    if not isinstance(doc, dict):
        raise MetadataError(f"{where} must hold a JSON object, found {type(doc).__name__}")
    return doc


def _nesting(text: str) -> int:
    """The deepest bracket nesting outside strings (an upper bound of the document's depth).

    Vectorised, since consolidated metadata runs to tens of megabytes. Escapes are removed
    first (left to right, ``\\\\`` pairs before ``\\"``, as a JSON parser pairs them), so every
    quote left opens or closes a string; brackets count where the number of quotes before
    them is even.
    """
    if text.count("[") + text.count("{") <= limits().json_depth:
        return 0  # cannot be deeper than its number of openers
    plain = text.replace("\\\\", "").replace('\\"', "").encode("utf-8")
    codes = np.frombuffer(plain, dtype=np.uint8)
    inside = np.bitwise_xor.accumulate((codes == ord('"')).view(np.uint8))
    opens = (codes == ord("[")) | (codes == ord("{"))
    brackets = np.flatnonzero((opens | (codes == ord("]")) | (codes == ord("}"))) & (inside == 0))
    steps = np.where(opens[brackets], 1, -1)
    return int(np.cumsum(steps).max(initial=0))
