"""Turn what a user types or drops (a path, a URL, a zip) into a store.

Parsing lives here, away from the stores, so every entry point (CLI, app, tests) accepts
exactly the same spellings. A location is first offered to the openers registered here (a
reference set's, ``references.opening``; an Icechunk repository's, ``icechunk.locate``), each
of which recognises what it opens; whatever none of them takes opens as it is, through ``plain``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from .base import Store
from .local import local_path
from .plain import IO_OPTIONS, open_plain
from .references import (AUTHORIZE, is_fsspec_reference, is_json_name, is_parquet_references, memory_url,
                         open_reference_location, reference_url)


#: a location's opener: ``(location, storage options, open_plain)`` -> the store, where it
#: recognises the location as its kind; None where it does not (the options are its own copy)
Opener = Callable[[str, dict[str, Any], Callable[..., Store]], Store | None]
#: the openers a location is offered to, in the order they registered, before ``open_plain``
OPENERS: list[Opener] = []


def register_opener(opener: Opener) -> None:
    """Offer every location to ``opener`` from now on (once, however often it registers)."""
    if opener not in OPENERS:
        OPENERS.append(opener)


#: prefixes that wrap the URL after them (``zip::URL``, ``reference::URL``); the ``::`` after
#: a prefix is never the start of a node path, so ``zip::/abs/x.zip`` names a file
CHAINS = ("zip::", "reference::")


def _chain(location: str) -> tuple[str, str]:
    """(``"zip::"``, ``"reference::"`` or ``""``, the rest)."""
    for prefix in CHAINS:
        if location.startswith(prefix):
            return prefix, location[len(prefix):]
    return "", location


def split_node_path(location: str) -> tuple[str, str]:
    """``"store.zarr::/a/b"`` -> ``("store.zarr", "/a/b")``; ``zip::/abs/x.zip`` and
    ``reference::/abs/refs.json`` name files, with a node path only after a further ``::``."""
    prefix, rest = _chain(location)
    head, sep, tail = rest.rpartition("::")
    if sep and tail.startswith("/") and head:
        return prefix + head, tail
    return location, "/"


def store_url(location: str, **options: Any) -> str:
    """The ``url`` the store opened from ``location`` (and ``options``) reports, found without
    opening it: the resolved path of a folder or local zip, ``reference::`` and the reference
    file (``fo`` of ``reference://``), else the location as typed (so a viewer can tell that a
    store is open already)."""
    prefix, loc = _chain(location)
    if prefix == "reference::" or is_fsspec_reference(loc):
        fo = options.get("fo") if prefix == "" else loc
        if isinstance(fo, Mapping):
            return memory_url(fo)
        if not isinstance(fo, str | os.PathLike) or not os.fspath(fo):
            return loc if fo is None else f"reference::{fo!r}"  # opening it says what is missing
        return reference_url(os.fspath(fo))
    path = local_path(loc)
    if path is not None:
        path = path.resolve()
        if prefix == "" and (is_json_name(path.name) or path.is_dir() and is_parquet_references(path)):
            return reference_url(str(path))
        return str(path)
    return loc


def store_identity(location: str, options: dict[str, Any]) -> str:
    """What tells two open stores apart: the URL and the options that change what is read (two
    ``reference://`` stores differ by ``fo``, two S3 stores by ``endpoint_url``); the access
    policy and I/O tuning are left out."""
    url = store_url(location, **options)
    rest = {k: repr(v) for k, v in options.items() if k not in ("fo", AUTHORIZE, *IO_OPTIONS)}
    return url if not rest else f"{url} {sorted(rest.items())}"


def open_store(location: str | os.PathLike[str], **storage_options: Any) -> Store:
    """The store ``location`` names: the first registered opener's that recognises it (a
    reference set, read only from its folder and ``authorize=``; an Icechunk repository at the
    version it names, ``repo.icechunk@tag.v1`` or ``version=``), else the location as it is."""
    loc = os.fspath(location)
    for opener in OPENERS:
        store = opener(loc, dict(storage_options), open_plain)
        if store is not None:
            return store
    return open_plain(loc, **storage_options)


register_opener(open_reference_location)
