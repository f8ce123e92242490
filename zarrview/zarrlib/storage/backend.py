"""Which client reads a remote store: obstore (Rust) or the fsspec driver.

``open(url, backend="obstore" | "fsspec")`` chooses; without it the environment variable
``ZARRLIB_REMOTE_BACKEND`` does, else ``DEFAULT``. The automatic choice takes obstore only
where it can: the scheme is one of ``AUTO_SCHEMES`` (http, https, s3), obstore is
installed and every storage option has an obstore spelling (``obstore_options``); otherwise
the fsspec driver reads, as it does for everything only fsspec reaches (zip members over
HTTP, ``reference://``, other protocols). Asked for by name, obstore either opens or says why not.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import StoreError
from .base import Store
from .retry import RetryPolicy

#: the backend when nothing says otherwise: "auto" (obstore where it can) or "fsspec". fsspec:
#: obstore measured no faster (zarrlib obstore/fsspec over 9 cases, median 1.10 on loopback, 1.00
#: with 50 ms per round trip; bench_http, docs/performance.md)
DEFAULT = "fsspec"
BACKENDS = ("obstore", "fsspec", "auto")
#: where the automatic choice may take obstore: the schemes measured and tested against a
#: server here (plain HTTP on loopback, S3 on moto). gs:// and az:// read through obstore only
#: when named: obstore's GCSStore speaks GCS's XML API, which the JSON-API emulator the tests
#: use does not serve, so that path is not tested here.
AUTO_SCHEMES = frozenset({"http", "https", "s3", "s3a"})


def pop_backend(options: dict[str, Any], url: str) -> str:
    """Pop the ``backend`` option: the backend named there, which must open the store, else
    the preference of the environment or ``DEFAULT``, which gives way where it cannot
    (``"auto"`` prefers obstore)."""
    named = options.pop("backend", None)
    if named is None:
        preferred = os.environ.get("ZARRLIB_REMOTE_BACKEND") or DEFAULT
        if preferred not in BACKENDS:
            raise StoreError(f"ZARRLIB_REMOTE_BACKEND must be one of {', '.join(BACKENDS)}, not {preferred!r}")
        return "fsspec" if preferred == "fsspec" else "auto"
    if named not in BACKENDS:
        raise StoreError(f"cannot open {url}: backend must be one of {', '.join(BACKENDS)}, not {named!r}")
    return str(named)


def open_with_obstore(backend: str, scheme: str, url: str, options: dict[str, Any], *, retry: RetryPolicy,
                      io_concurrency: int) -> Store | None:
    """The store through obstore, or None where the fsspec driver is to read it."""
    if backend == "fsspec":
        return None
    from .credentials import anonymous_unless_credentials
    from .obstore_options import SCHEMES, Unmapped
    from .obstore_store import open_obstore

    if backend == "auto":
        if scheme not in AUTO_SCHEMES or scheme not in SCHEMES:
            return None
        try:
            import obstore  # noqa: F401
        except ImportError:
            return None
    options = anonymous_unless_credentials(scheme, options)
    if backend == "auto" and not _credentials_obstore_reads(scheme, options):
        return None
    try:
        return open_obstore(url, scheme, options, retry=retry, io_concurrency=io_concurrency)
    except Unmapped:
        if backend == "auto":
            return None
        raise


def _credentials_obstore_reads(scheme: str, options: dict[str, Any]) -> bool:
    """Whether obstore finds the credentials the fsspec driver would use: anonymous access, keys
    given as options, or keys in the environment. A profile or credentials file is read by
    botocore alone; obstore, not finding keys, would ask the cloud's metadata endpoint instead."""
    if scheme not in ("s3", "s3a"):
        return True
    return bool(options.get("anon") or options.get("key") or os.environ.get("AWS_ACCESS_KEY_ID"))
