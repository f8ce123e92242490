"""What one reference says: bytes held inline, or a byte range of another file.

kerchunk's reference spec stores a key's value as a string (the bytes themselves, or
``base64:`` and their encoding) or a list ``[url]`` / ``[url, offset, length]``. Every field
comes from someone else's file, so each is checked here, when the key is read, and a bad one
is an error naming the key: one broken chunk never stops the rest of the store.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import StoreError
from ...limits import human, limits

__all__ = ["BadReferenceError", "Inline", "Pointer", "Entry", "decode_entry", "expand_templates", "MAX_URL"]

#: characters of a target URL after its templates are filled in: a template bomb (a template
#: used many times in one URL, or nesting) costs an error, not memory
MAX_URL = 8192

_TEMPLATE = re.compile(r"{{\s*([A-Za-z_][A-Za-z0-9_]*)\s*}}")


class BadReferenceError(StoreError):
    """A reference set, or one of its entries, cannot be used; the message names the key."""


@dataclass(frozen=True, slots=True)
class Inline:
    """A key whose bytes the reference set holds itself (metadata, small chunks)."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Pointer:
    """A key whose bytes are ``length`` bytes at ``offset`` of ``url`` (the whole file where
    ``length`` is None)."""

    url: str
    offset: int = 0
    length: int | None = None


Entry = Inline | Pointer


def expand_templates(text: str, templates: Mapping[str, str], key: str) -> str:
    """``{{name}}`` replaced by its template (kerchunk v1 ``templates``), bounded by ``MAX_URL``."""
    if "{{" not in text:
        return text
    out: list[str] = []
    size = 0
    pos = 0
    for m in _TEMPLATE.finditer(text):
        name = m.group(1)
        if name not in templates:
            raise BadReferenceError(f"reference {key}: unknown template {{{{{name}}}}} in {text[:200]!r}")
        piece = text[pos:m.start()] + templates[name]
        size += len(piece)
        if size > MAX_URL:
            raise BadReferenceError(f"reference {key}: URL longer than {MAX_URL} characters once its templates are filled in")
        out.append(piece)
        pos = m.end()
    out.append(text[pos:])
    url = "".join(out)
    if len(url) > MAX_URL:
        raise BadReferenceError(f"reference {key}: URL longer than {MAX_URL} characters once its templates are filled in")
    return url


def decode_entry(key: str, value: Any, templates: Mapping[str, str]) -> Entry:
    """The entry of ``key`` from its JSON value (kerchunk spec versions 0 and 1)."""
    if isinstance(value, str):
        if value.startswith("base64:"):
            try:
                return Inline(base64.b64decode(value[len("base64:"):], validate=True))
            except (binascii.Error, ValueError) as e:
                raise BadReferenceError(f"reference {key}: its base64 bytes do not decode ({e})") from None
        return Inline(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes):
        return Inline(value)
    if isinstance(value, dict):  # some writers keep metadata documents as JSON objects
        return Inline(json.dumps(value).encode())
    if isinstance(value, list | tuple) and len(value) in (1, 3):
        url = value[0]
        if not isinstance(url, str) or not url:
            raise BadReferenceError(f"reference {key}: the target URL is {url!r}, not a string")
        url = expand_templates(url, templates, key)
        if len(value) == 1:
            return Pointer(url)
        offset, length = value[1], value[2]
        if not _is_int(offset) or not _is_int(length) or offset < 0 or length < 0:
            raise BadReferenceError(f"reference {key}: offset {offset!r} and length {length!r} of {url} "
                                    "must be integers, 0 or more")
        bound = limits().object_bytes
        if length > bound:
            raise BadReferenceError(f"reference {key}: {human(length)} of {url}, more than the "
                                    f"{human(bound)} allowed for one stored object")
        if offset > 1 << 62:
            raise BadReferenceError(f"reference {key}: offset {offset} of {url} is past any file")
        return Pointer(url, offset, length)
    raise BadReferenceError(f"reference {key}: expected a string or [url, offset, length], found {_short(value)}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
