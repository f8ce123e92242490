"""Which client reads a remote store: obstore, or fsspec where only fsspec reaches.

The choice is made here only, from the URL and the options. obstore (Rust ``object_store``:
proxies from ``HTTPS_PROXY``/``NO_PROXY``, redirects and TLS its own; retries and the time
of each try are zarrlib's, ``retry.py``) reads ``AUTO_SCHEMES`` whenever every storage option
has an obstore spelling (``obstore_options``); an HTTP URL's query (a SAS token, a signature)
goes with every request it makes. fsspec reads everything else: other protocols, options only
its drivers take (an aiohttp client's arguments, a botocore profile), and, decided by a
server's first such answer, an HTTP server whose bodies state no size (``plain.py`` hands the
obstore store its fsspec fallback). ``backend="obstore"`` or ``"fsspec"`` asks for one by
name; obstore then opens or says why not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import StoreError
from .async_batch import AsyncBatchStore
from .base import Store
from .retry import RetryPolicy

BACKENDS = ("obstore", "fsspec", "auto")
#: the backend of an open that names none (tests set it to run a module on each backend)
PREFERRED = "auto"
#: where the automatic choice takes obstore: HTTP(S) and GCS. S3 and Azure read through obstore
#: when named: obstore lists a prefix only whole (``list_with_delimiter``), where s3fs's listing of
#: a group of thousands of children arrives a page (a request) at a time (gcsfs too lists a
#: prefix whole); Azure has no server in the tests to hold its route to.
AUTO_SCHEMES = frozenset({"http", "https", "gs", "gcs"})


def pop_backend(options: dict[str, Any], url: str) -> str:
    """Pop the ``backend`` option: the backend named there, which must open the store, else
    ``PREFERRED`` (``"auto"``: obstore where it can)."""
    named = options.pop("backend", None)
    if named is None:
        return PREFERRED
    if named not in BACKENDS:
        raise StoreError(f"cannot open {url}: backend must be one of {', '.join(BACKENDS)}, not {named!r}")
    return str(named)


def obstore_reads(backend: str, scheme: str, url: str) -> bool:
    """Whether obstore is to try ``url`` (before its options are looked at)."""
    if backend == "fsspec":
        return False
    if backend == "obstore":
        return True
    return scheme in AUTO_SCHEMES


def open_with_obstore(backend: str, scheme: str, url: str, options: dict[str, Any], *, retry: RetryPolicy,
                      io_concurrency: int, query: str = "",
                      hand_over: Callable[[], AsyncBatchStore] | None = None) -> Store | None:
    """The store through obstore, or None where the fsspec driver is to read it; ``hand_over``
    makes the store that reads a server whose answers obstore refuses for stating no size;
    ``query``: an HTTP URL's query, sent with every request and named in no message."""
    if not obstore_reads(backend, scheme, url):
        return None
    from .credentials import anonymous_unless_credentials
    from .obstore_options import SCHEMES, Unmapped
    from .obstore_store import open_obstore

    if backend == "auto" and scheme not in SCHEMES:
        return None
    options = anonymous_unless_credentials(scheme, options)
    try:
        return open_obstore(url, scheme, options, retry=retry, io_concurrency=io_concurrency, query=query,
                            hand_over=hand_over)
    except Unmapped:
        if backend == "auto":
            return None
        raise
