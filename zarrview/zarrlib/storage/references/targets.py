"""The files references point into, each checked against the access policy and read through
one zarrlib store per folder, so the ranges of one file go to that store together and it
coalesces them by its own policy (and bounds them by zarrlib's limits)."""

from __future__ import annotations

import os
import posixpath
import threading
from urllib.parse import unquote
from collections.abc import Callable

from ..access import AccessPolicy, normal_url
from ..base import Store
from ..local import SCHEME

__all__ = ["Targets", "resolve_url", "folder_of", "beside", "shown"]


def resolve_url(url: str, base: str) -> str:
    """A reference's target as an absolute, normalised URL: a relative path is relative to the
    folder of the reference set (``base``, a URL ending in ``/``); ``..`` is folded away and a
    local path's links resolved, so neither can hide where the URL leads."""
    if SCHEME.match(url) is None:
        if url.startswith("/"):
            url = "file://" + url
        else:
            url = base + url
    scheme, _, rest = url.partition("://")
    if scheme.lower() == "file":  # symbolic links followed: a link beside the set cannot lead out of it
        return normal_url("file://" + os.path.realpath(normal_url(url)[len("file://"):]))
    rest, mark, query = rest.partition("?")  # a signed URL's query is kept as it is, never folded
    host, _, path = rest.partition("/")
    folded = f"{scheme.lower()}://{host}/" + posixpath.normpath("/" + path).lstrip("/") if path else f"{scheme.lower()}://{host}/"
    return folded + mark + query


def folder_of(url: str) -> tuple[str, str]:
    """(folder URL ending in ``/``, file name as a store key) of a target URL. A query (a
    presigned URL's signature) stays with the folder, whose store sends it with each request:
    targets signed alike share one store. An HTTP name is percent-decoded, as a store key is."""
    url, mark, query = url.partition("?")
    folder, _, name = url.rpartition("/")
    if url.lower().startswith(("http://", "https://")):
        name = unquote(name)
    return folder + "/" + mark + query, name


def shown(url: str) -> str:
    """A target URL as messages name it: without its query, which may be a secret."""
    return url.partition("?")[0]


def beside(base: str) -> str:
    """The prefix a reference set may read without asking: its own folder's subtree for a local
    one, its host or bucket for a remote one."""
    scheme, _, rest = base.partition("://")
    if scheme == "file":
        return base
    return f"{scheme}://{rest.split('/', 1)[0]}/"


class Targets:
    """Target stores by folder URL, opened on first use (thread-safe: reads run on workers)."""

    def __init__(self, opener: Callable[[str], Store], policy: AccessPolicy) -> None:
        self.policy = policy
        self._opener = opener
        self._stores: dict[str, Store] = {}
        self._lock = threading.Lock()

    def store(self, folder: str) -> Store:
        with self._lock:
            store = self._stores.get(folder)
        if store is not None:
            return store
        opened = self._opener(folder)
        with self._lock:
            store = self._stores.setdefault(folder, opened)
        if store is not opened:
            opened.close()
        return store

    def close(self) -> None:
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for s in stores:
            s.close()
