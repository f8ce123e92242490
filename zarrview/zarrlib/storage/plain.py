"""Open the store of a location as it is: a local folder, a zip or ``.ozx`` archive, or a URL
read through obstore or fsspec.

This is everything ``open_store`` does once no registered opener took the location (it holds
no Icechunk repository and names no reference set). It sits below the ``icechunk`` and
``references`` packages, which open the folders of virtual chunks and reference targets
through it: those are files read as bytes, never repositories.
"""

from __future__ import annotations

from urllib.parse import unquote
from typing import Any

from ..errors import StoreError, StoreNotFoundError, UnsupportedSchemeError
from .backend import open_with_obstore, pop_backend
from .base import Store
from .fsspec_store import FsspecStore
from .io_loop import io_loop
from .http_store import HttpStore
from .local import LocalStore, local_path
from .credentials import anonymous_unless_credentials
from .access import AUTHORIZE
from .retry import RetryPolicy
from .store_file import StoreFile
from .ozx import ZIP_SUFFIXES
from .zip import ZipStore

_EXTRAS = {"s3": "zarrview[cloud] (s3fs)", "s3a": "zarrview[cloud] (s3fs)",
           "gs": "zarrview[cloud] (gcsfs)", "gcs": "zarrview[cloud] (gcsfs)",
           "az": "adlfs", "abfs": "adlfs", "abfss": "adlfs", "azure": "adlfs",
           "http": "aiohttp", "https": "aiohttp"}


def open_plain(location: str, **storage_options: Any) -> Store:
    """The store of a location read as it is: a folder, a zip archive or a URL, never a
    repository or a reference set (``open_store`` offers the location to their openers first).
    The files a reference set points into are opened here: they are read as bytes, whatever
    folder holds them."""
    loc = location
    storage_options.pop(AUTHORIZE, None)  # authorize= concerns stores that read outside themselves
    if loc.startswith("zip::"):
        return _open_zip(loc[len("zip::"):], storage_options)
    path = local_path(loc)
    if path is not None:
        if path.is_dir():
            return LocalStore(path)
        if path.is_file() and path.suffix.lower() in ZIP_SUFFIXES:
            try:
                return ZipStore(open(path, "rb"), str(path.resolve()))
            except OSError as e:
                raise StoreError(f"cannot open {path}: {e.strerror or e}") from e
        if path.exists():
            raise StoreNotFoundError(f"{path} is neither a folder nor a .zip or .ozx file")
        raise StoreNotFoundError(f"{path} does not exist")
    if loc.lower().split("?", 1)[0].endswith(ZIP_SUFFIXES):
        return _open_zip(loc, storage_options)
    return _open_url(loc, _scheme(loc), dict(storage_options))


def _open_url(loc: str, scheme: str, options: dict[str, Any]) -> Store:
    """The store of a URL, through obstore or fsspec (``backend.py``)."""
    retry, io_concurrency = _io_options(options, loc)
    backend = pop_backend(options, loc)  # obstore or fsspec: see backend.py
    if scheme in ("http", "https"):
        base, _, query = loc.partition("?")  # sent with every request (a SAS token, a signature)

        def fsspec_route() -> HttpStore:
            fs, root = _filesystem(scheme, base, options)
            return HttpStore(fs, root, base, retry=retry, io_concurrency=io_concurrency, query=query)

        store = open_with_obstore(backend, scheme, base, options, retry=retry, io_concurrency=io_concurrency,
                                  query=query, hand_over=fsspec_route if backend == "auto" else None)
        return store if store is not None else fsspec_route()

    def driver() -> FsspecStore:
        fs, root = _filesystem(scheme, loc, options)
        return FsspecStore(fs, root, loc, retry=retry, io_concurrency=io_concurrency)

    store = open_with_obstore(backend, scheme, loc, options, retry=retry, io_concurrency=io_concurrency,
                              pages=driver)
    return store if store is not None else driver()


def _scheme(url: str) -> str:
    """The scheme of a URL that ``local_path`` leaves to a remote store, in lower case."""
    return url.partition("://")[0].lower()


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
    driver = cls or fsspec.get_filesystem_class(scheme)
    if getattr(driver, "async_impl", False) and "loop" not in options and not options.get("asynchronous"):
        options = {**options, "loop": io_loop()}  # awaited on the one I/O loop, not on fsspec's own
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
    path = local_path(url)
    if path is not None:
        if not path.is_file():
            raise StoreNotFoundError(f"{path} does not exist")
        return ZipStore(open(path, "rb"), str(path.resolve()))
    store, name = _archive_store(url, _scheme(url), options)
    try:  # its directory and members are read through the store, a read's members together
        return ZipStore(StoreFile(store, name, url), url, (store, name))
    except BaseException:
        store.close()
        raise


def _archive_store(url: str, scheme: str, options: dict[str, Any]) -> tuple[Store, str]:
    """The store a remote archive is read through and the archive's key in it: its folder's
    store, or for an HTTP URL with a query (a signed URL names one object, not a folder, and
    its query goes with every request) the object's own, whose key is ``""``."""
    if scheme in ("http", "https"):
        url = url.split("#", 1)[0]  # a fragment is never sent
        if "?" in url:
            return _open_url(url, scheme, dict(options)), ""
    folder, _, name = url.rpartition("/")
    if not name or "://" not in folder:
        raise StoreNotFoundError(f"cannot open {url}: it names no archive inside a bucket or folder")
    return open_plain(folder, **options), unquote(name) if scheme in ("http", "https") else name
