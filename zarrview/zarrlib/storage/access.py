"""Which locations outside the opened store a read may reach.

Virtual chunks (Icechunk manifests) and references (kerchunk, VirtualiZarr) name byte ranges
of other files: another bucket, another host, ``file:///etc/passwd``. Following them blindly
would let a downloaded store make the viewer read whatever it names, so a store that follows
such pointers asks an ``AccessPolicy`` first. Reads outside the store's own location are
refused until the user authorises the URL prefix, as Icechunk's own
``authorize_virtual_chunk_access`` and a browser's download prompt do. The refusal is an error,
never a blocking question on a worker thread: the window asks, widens the policy, and reads again.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Iterable
from typing import Any

from ..errors import StoreAccessError, StoreError

__all__ = ["AUTHORIZE", "AccessDeniedError", "AccessPolicy", "normal_url", "policy_of", "url_prefix"]

#: the storage option that names what a store may read outside itself: URL prefixes, or an
#: ``AccessPolicy`` shared with the caller (who widens it when the user allows a prefix)
AUTHORIZE = "authorize"


class AccessDeniedError(StoreAccessError):
    """A store pointed at a location the user has not authorised (``url``, ``prefix``)."""

    def __init__(self, message: str, url: str, prefix: str) -> None:
        super().__init__(message)
        self.url = url
        self.prefix = prefix


def normal_url(url: str) -> str:
    """``url`` with a local path made absolute and free of ``..``, so ``file:///data/../etc``
    cannot pass as a path under ``file:///data/``; a bare path becomes a ``file://`` URL."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "file", url
    if scheme.lower() == "file":
        return "file://" + posixpath.normpath("/" + rest.lstrip("/"))
    return f"{scheme.lower()}://{rest}"


def url_prefix(url: str) -> str:
    """The prefix a person authorises for ``url``: scheme, host (or bucket) and first folder.

    ``s3://bucket/data/x.nc`` -> ``s3://bucket/``; ``https://host/a/b.nc`` -> ``https://host/``;
    ``file:///data/run/x.nc`` -> ``file:///data/run/``: a whole server or bucket is one answer,
    while a local answer does not open the whole disk.
    """
    scheme, _, rest = normal_url(url).partition("://")
    if scheme == "file":
        folder = rest.rsplit("/", 1)[0] if "/" in rest.strip("/") else rest
        return f"file://{folder.rstrip('/')}/"
    host = rest.split("/", 1)[0]
    return f"{scheme.lower()}://{host}/"


class AccessPolicy:
    """Authorised URL prefixes; thread-safe, because reads check it on worker threads."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._allowed: set[str] = {p for p in allowed if p}

    def allow(self, prefix: str) -> None:
        with self._lock:
            self._allowed.add(prefix)

    def allowed(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._allowed))

    def permits(self, url: str) -> bool:
        with self._lock:
            allowed = tuple(self._allowed)
        url = normal_url(url)
        return any(url.startswith(normal_url(p).rstrip("/") + "/") or url == normal_url(p) for p in allowed)

    def check(self, url: str, what: str) -> None:
        """Raise ``AccessDeniedError`` unless ``url`` is under an authorised prefix; ``what``
        names the pointer (``"virtual chunk temp/c/0/0 of repo.icechunk"``) for the message."""
        if not self.permits(url):
            prefix = url_prefix(url)
            raise AccessDeniedError(
                f"{what} points to {url}, outside the store; reading from {prefix} is not authorised",
                url, prefix)


def policy_of(value: Any, where: str) -> AccessPolicy:
    """The policy an ``authorize=`` option gives: the caller's own ``AccessPolicy``, one URL
    prefix, several, or none (a new empty policy)."""
    if value is None:
        return AccessPolicy()
    if isinstance(value, AccessPolicy):
        return value
    if isinstance(value, str):
        return AccessPolicy([value])
    if isinstance(value, Iterable):
        prefixes = list(value)
        if all(isinstance(p, str) for p in prefixes):
            return AccessPolicy(prefixes)
    raise StoreError(f"cannot open {where}: {AUTHORIZE} must be an AccessPolicy or URL prefixes, not {value!r}"[:300])
