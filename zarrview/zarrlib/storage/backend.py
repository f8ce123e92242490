"""Which client reads a remote store: obstore, or fsspec where only fsspec reaches.

The choice is made here only, from the URL and the options. obstore (Rust ``object_store``:
proxies from ``HTTPS_PROXY``/``NO_PROXY``, redirects and TLS its own; retries and the time
of each try are zarrlib's, ``retry.py``) reads ``AUTO_SCHEMES`` (HTTP(S), GCS, Azure)
whenever every storage option has an obstore spelling (``obstore_options``); an HTTP URL's
query (a SAS token, a signature) goes with every request it makes. It reads ``s3://`` where
the options say where the bucket is (a region or an endpoint) and the credentials are ones
it reads (in the options or ``AWS_ACCESS_KEY_ID``, or none: anonymous), s3fs listing its
pages: object_store neither follows S3's redirect to a bucket's own region nor reads a
profile or the SDK's files, which s3fs does, so a bucket named only by its name stays with
s3fs. fsspec reads everything else: other protocols, options only its drivers take (an
aiohttp client's arguments, a botocore profile), and, decided by a server's first such
answer, an HTTP server whose bodies state no size (``plain.py`` hands the obstore store its
fsspec fallback). ``backend="obstore"`` or ``"fsspec"`` asks for one by name; obstore then
opens or says why not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import StoreError
from .async_batch import AsyncBatchStore
from .base import Store
from .credentials import anonymous_unless_credentials, aws_credentials_found
from .retry import RetryPolicy

BACKENDS = ("obstore", "fsspec", "auto")
#: the backend of an open that names none (tests set it to run a module on each backend)
PREFERRED = "auto"
#: where the automatic choice takes obstore whenever the options have its spelling: HTTP(S),
#: GCS and Azure; S3 where its options say where the bucket is (``s3_addressed``)
AUTO_SCHEMES = frozenset({"http", "https", "gs", "gcs", "az", "abfs", "abfss", "azure"})
S3_SCHEMES = frozenset({"s3", "s3a"})


def pop_backend(options: dict[str, Any], url: str) -> str:
    """Pop the ``backend`` option: the backend named there, which must open the store, else
    ``PREFERRED`` (``"auto"``: obstore where it can)."""
    named = options.pop("backend", None)
    if named is None:
        return PREFERRED
    if named not in BACKENDS:
        raise StoreError(f"cannot open {url}: backend must be one of {', '.join(BACKENDS)}, not {named!r}")
    return str(named)


def obstore_reads(backend: str, scheme: str, options: dict[str, Any]) -> bool:
    """Whether obstore is to try a URL of ``scheme`` opened with ``options``."""
    if backend == "fsspec":
        return False
    if backend == "obstore":
        return True
    return scheme in AUTO_SCHEMES or scheme in S3_SCHEMES and s3_addressed(options)


def s3_addressed(options: dict[str, Any]) -> bool:
    """Whether obstore finds an S3 bucket as s3fs would with ``options``: they name its region
    or an endpoint (object_store asks the default region and stops at S3's redirect to the
    bucket's own), and its credentials are in them or in ``AWS_ACCESS_KEY_ID``, or there are
    none (anonymous), not in a profile or the SDK's files, which obstore does not read."""
    client = options.get("client_kwargs") or {}
    where = ("region", "region_name", "endpoint_url", "endpoint")
    if not any(options.get(k) for k in where) and not (isinstance(client, dict) and any(client.get(k) for k in where)):
        return False
    if any(k in options for k in ("anon", "key", "secret", "token")) or os.environ.get("AWS_ACCESS_KEY_ID"):
        return True
    return not aws_credentials_found()


def open_with_obstore(backend: str, scheme: str, url: str, options: dict[str, Any], *, retry: RetryPolicy,
                      io_concurrency: int, query: str = "",
                      hand_over: Callable[[], AsyncBatchStore] | None = None,
                      pages: Callable[[], Store] | None = None) -> Store | None:
    """The store through obstore, or None where the fsspec driver is to read it; ``hand_over``
    makes the store that reads a server whose answers obstore refuses for stating no size;
    ``pages`` the store that lists a prefix a page at a time (s3fs); ``query``: an HTTP URL's
    query, sent with every request and named in no message."""
    if not obstore_reads(backend, scheme, options):
        return None
    from .obstore_options import SCHEMES, Unmapped
    from .obstore_store import open_obstore

    if backend == "auto" and scheme not in SCHEMES:
        return None
    options = anonymous_unless_credentials(scheme, options)
    try:
        return open_obstore(url, scheme, options, retry=retry, io_concurrency=io_concurrency, query=query,
                            hand_over=hand_over, pages=pages if scheme in S3_SCHEMES else None)
    except Unmapped:
        if backend == "auto":
            return None
        raise
