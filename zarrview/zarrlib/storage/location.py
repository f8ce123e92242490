"""Turn what a user types or drops (a path, a URL, a zip) into a store.

Parsing lives here, away from the stores, so every entry point (CLI, app, tests) accepts
exactly the same spellings.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import StoreError, StoreNotFoundError, UnsupportedSchemeError
from .base import Store
from .fsspec_store import FsspecStore
from .http_store import HttpStore
from .local import LocalStore
from .credentials import anonymous_unless_credentials
from .retry import RetryPolicy
from .zip import ZipStore

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_EXTRAS = {"s3": "zarrview[cloud] (s3fs)", "s3a": "zarrview[cloud] (s3fs)",
           "gs": "zarrview[cloud] (gcsfs)", "gcs": "zarrview[cloud] (gcsfs)",
           "http": "aiohttp", "https": "aiohttp"}


def split_node_path(location: str) -> tuple[str, str]:
    """``"store.zarr::/a/b"`` -> ``("store.zarr", "/a/b")``; ``zip::`` chains are left alone."""
    head, sep, tail = location.rpartition("::")
    if sep and tail.startswith("/"):
        return head, tail
    return location, "/"


def store_url(location: str) -> str:
    """The ``url`` the store opened from ``location`` reports, found without opening it: the
    resolved path of a folder or local zip, else the location as typed (so a viewer can tell
    that a store is open already)."""
    loc = location[len("zip::"):] if location.startswith("zip::") else location
    m = _SCHEME.match(loc)
    if m is None or m.group(1).lower() == "file":
        return str(Path(loc[len("file://"):] if m else loc).expanduser().resolve())
    return loc


def open_store(location: str | os.PathLike[str], **storage_options: Any) -> Store:
    """The store ``location`` names; an Icechunk repository opens at the version it names
    (``repo.icechunk@tag.v1``, ``version=``), with virtual chunks read only from ``authorize=``."""
    from ..icechunk.locate import open_location  # the icechunk package builds on this module

    return open_location(os.fspath(location), storage_options, _open_plain)


def _open_plain(location: str, **storage_options: Any) -> Store:
    loc = location
    if loc.startswith("zip::"):
        return _open_zip(loc[len("zip::"):], storage_options)
    m = _SCHEME.match(loc)
    if m is None or m.group(1).lower() == "file":
        path = Path(loc[len("file://"):] if m else loc).expanduser()
        if path.is_dir():
            return LocalStore(path)
        if path.is_file() and path.suffix.lower() == ".zip":
            try:
                return ZipStore(open(path, "rb"), str(path.resolve()))
            except OSError as e:
                raise StoreError(f"cannot open {path}: {e.strerror or e}") from e
        if path.exists():
            raise StoreNotFoundError(f"{path} is neither a folder nor a .zip file")
        raise StoreNotFoundError(f"{path} does not exist")
    if loc.lower().split("?", 1)[0].endswith(".zip"):
        return _open_zip(loc, storage_options)
    scheme = m.group(1).lower()
    options = dict(storage_options)
    retry, io_concurrency = _io_options(options, loc)
    fs, root = _filesystem(scheme, loc, options)
    cls = HttpStore if scheme in ("http", "https") else FsspecStore
    return cls(fs, root, loc, retry=retry, io_concurrency=io_concurrency)


#: options zarrlib itself takes (all others go to the fsspec driver)
IO_OPTIONS = ("io_retries", "io_timeout", "io_concurrency")


def _io_options(options: dict[str, Any], url: str) -> tuple[RetryPolicy, int]:
    """Pop zarrlib's own I/O options: tries per request, seconds per try, requests in flight."""
    try:
        attempts = int(options.pop("io_retries", RetryPolicy.attempts))
        timeout = float(options.pop("io_timeout", RetryPolicy.timeout))
        concurrency = int(options.pop("io_concurrency", 64))
    except (TypeError, ValueError) as e:
        raise StoreError(f"cannot open {url}: bad I/O option ({e})") from None
    if attempts < 1 or timeout <= 0 or concurrency < 1:
        raise StoreError(f"cannot open {url}: io_retries, io_timeout and io_concurrency must be positive")
    return RetryPolicy(attempts=attempts, timeout=timeout), concurrency


def _filesystem(scheme: str, url: str, options: dict[str, Any]) -> tuple[Any, str]:
    import fsspec
    from fsspec.core import url_to_fs

    try:
        fsspec.get_filesystem_class(scheme)
        cls = _filesystem_class(scheme)
    except (ImportError, ValueError) as e:
        extra = _EXTRAS.get(scheme)
        hint = f"; install {extra}" if extra else ""
        raise UnsupportedSchemeError(f"cannot open {url}: no driver for '{scheme}://'{hint}") from e
    options = anonymous_unless_credentials(scheme, options)
    try:
        if cls is None:
            return url_to_fs(url, **options)
        return cls(**{**cls._get_kwargs_from_urls(url), **options}), cls._strip_protocol(url)
    except Exception as e:  # drivers validate options in their own ways
        raise StoreError(f"cannot open {url}: {type(e).__name__}: {e}") from e


def _filesystem_class(scheme: str) -> type[Any] | None:
    """The driver class where fsspec's registered one is wrong for a read-only viewer.

    gcsfs registers an experimental variant for zonal and hierarchical-namespace buckets that
    asks Google's gRPC control API for the bucket's type before every read, and does not
    remember a failed answer: with anonymous access, an emulator or a firewall that blocks
    gRPC, every chunk waits up to a minute. Its base class reads the same objects through
    the JSON API, with no such lookup.
    """
    if scheme in ("gs", "gcs"):
        from gcsfs.core import GCSFileSystem
        return GCSFileSystem
    return None


def _open_zip(url: str, options: dict[str, Any]) -> ZipStore:
    m = _SCHEME.match(url)
    if m is None or m.group(1).lower() == "file":
        path = Path(url[len("file://"):] if m else url).expanduser()
        if not path.is_file():
            raise StoreNotFoundError(f"{path} does not exist")
        return ZipStore(open(path, "rb"), str(path.resolve()))
    options = dict(options)
    _io_options(options, url)
    fs, root = _filesystem(m.group(1).lower(), url, options)
    try:
        f = fs.open(root, "rb")
    except FileNotFoundError as e:
        raise StoreNotFoundError(f"{url} does not exist") from e
    except Exception as e:
        raise StoreError(f"cannot open {url}: {type(e).__name__}: {e}") from e
    return ZipStore(f, url)
