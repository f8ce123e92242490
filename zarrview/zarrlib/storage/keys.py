"""What a store key may be: the one check every request to every store passes.

Keys come from data: consolidated metadata, OME ``datasets``/``labels``/``wells`` paths,
bioformats2raw series, zip member names, reference sets, Icechunk manifests. A key is a path
inside the store, so one that could lead outside it (``..``, an absolute path, a backslash
that a Windows server or a zip tool takes for a separator, NUL that ends a C string early, an
empty segment that joins to another host in a URL) or that no store can hold (control
characters) is refused wherever it came from, before any store sees it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..errors import StoreError

__all__ = ["BadKeyError", "key_problem", "check_key"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


class BadKeyError(StoreError):
    """A key that could name something outside its store, or that no store can hold."""


@lru_cache(maxsize=1 << 16)  # a view asks for the same keys again and again
def key_problem(key: str) -> str | None:
    """Why ``key`` is not a store key (None: it is). The empty key names the store's own object
    and a key may end in ``/`` (a prefix); every segment between is a plain name."""
    if not key:
        return None
    m = _CONTROL.search(key)
    if m is not None:
        return "a backslash" if m.group() == "\\" else f"the control character {m.group()!r}"
    body = key[:-1] if key.endswith("/") else key
    for segment in body.split("/"):
        if segment in ("", ".", ".."):
            return "an absolute path" if not segment and body.startswith("/") else \
                "an empty segment" if not segment else f"a {segment!r} segment"
    return None


def check_key(key: str, where: str = "") -> str:
    """``key``, or BadKeyError naming it and what is wrong."""
    problem = key_problem(key)
    if problem is not None:
        raise BadKeyError(f"refusing key {key!r}{' of ' + where if where else ''}: it has {problem}")
    return key
