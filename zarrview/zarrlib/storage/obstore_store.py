"""HTTP(S), S3, GCS and Azure through obstore (Rust ``object_store``) as a store.

A remote read of many small chunks is bound by the client's work per request, not by the
network: aiohttp and fsspec spend tens of microseconds of Python per request, obstore builds,
sends and parses each one in Rust and wakes Python once per answer. Requests are awaited on
the one I/O loop thread (:mod:`.io_loop`) with ``io_concurrency`` in flight, each answer handed on as it lands,
by the machinery ``FsspecStore`` runs too (:mod:`.async_batch`), so the two are measured
against each other on the same terms. obstore's own retries are off: zarrlib's
``RetryPolicy`` retries, times each try and names the attempts, the same on both backends.

Bounds: a whole object is asked for with a plain GET and refused from its stated size
(``Content-Length``) before its body is read; a chunk, whose bound is small, as the range of its
first bound + 1 bytes, one call instead of two. obstore needs that size: a server whose answer
states none (chunked transfer, as nginx sends when it compresses on the fly) is handed over,
from that answer on, to the store given as ``hand_over`` (the fsspec route, which reads such a
body within the same bound), or is an error naming the key where there is none. obstore also
hands over an answer compressed for the wire (``Content-Encoding``) as sent: requests ask for
``identity``, and a server that compresses anyway is handed over the same way, its answers
seen where obstore shows their heads (whole objects, suffixes, ranges whose answer is not the
length asked). Servers that ignore ``Range`` or refuse suffix ranges are learned from their
answers (``AsyncBatchStore``).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ..cancel import CancelToken
from ..errors import StoreAccessError, StoreError, UnsupportedSchemeError
from ..limits import limits
from .async_batch import RANGE_REFUSED, AsyncBatchStore, RangeIgnored, hold
from .base import ByteRequest, Store, too_large
from .byte_request import Bound
from .io_loop import io_loop
from .retry import TRANSIENT_STATUS, RetryPolicy

_STATUS = re.compile(r"status code: (\d{3})")
#: what reqwest/hyper say when a connection failed, was cut or stalled: worth another try
_CONNECTION = ("error sending request", "connection", "body error", "error decoding response body",
               "timed out", "operation timed out", "reset", "closed", "incomplete", "unexpected eof")

#: the most of an error's text looked at: object_store puts an error answer's whole body in its
#: message (a body that is not UTF-8 as a list of its bytes, thirty characters a byte), so a
#: search of all of it could take minutes; what it says of its cause comes before that
TEXT_MAX = 32 << 10

def text_of(error: BaseException) -> str:
    """The part of ``error``'s message that says what happened (see ``TEXT_MAX``)."""
    return str(error)[:TEXT_MAX]


def status_of(error: BaseException) -> int | None:
    """The HTTP status obstore reports, which it carries only in its message."""
    m = _STATUS.search(text_of(error))
    return int(m.group(1)) if m else None


def _missing(error: BaseException) -> bool:
    """Only a 404 says the object is missing (object_store reports a 405 as "not found" too)."""
    status = status_of(error)
    return status == 404 or status is None and isinstance(error, FileNotFoundError)


def _denied(error: BaseException) -> bool:
    name = type(error).__name__
    return name in ("PermissionDeniedError", "UnauthenticatedError") or status_of(error) in (401, 403)


def is_transient(error: BaseException) -> bool:
    if isinstance(error, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    cause = _cause(error)
    if _missing(error) or _denied(error) or cause is not None and not cause[1]:
        return False
    status = status_of(error)
    if status is not None:
        return status in TRANSIENT_STATUS
    text = text_of(error).split("\n\nDebug source", 1)[0].lower()
    return any(word in text for word in _CONNECTION)


def _unsatisfiable(error: BaseException) -> bool:
    """A range that starts at or past the end of the object (obstore checks, or the server's 416)."""
    text = text_of(error)
    return "StartTooLarge" in text or "InvalidRange" in text or status_of(error) == 416


def _odd_suffix_answer(error: BaseException) -> bool:
    """What obstore says of the answers servers give to the suffix of an empty object: a 200
    (S3: "non-partial response") or a 206 of no bytes ("Requested 0..0, got 0..1")."""
    text = text_of(error)
    return "non-partial response" in text or "Requested 0..0" in text


#: what the causes obstore reports in its debug source (reqwest, hyper, rustls) mean, in the
#: order they are looked for (the first found names what the server did), and whether another
#: try may cure them (the same server answers the same way to a bad certificate or a loop)
_CAUSES = (
    (re.compile(r"InvalidCertificate\(\s*(?:Other\(\s*OtherError\(\s*)?(\w+)"),
     "the server's TLS certificate is not trusted ({})", False),
    (re.compile(r"(?i)(too many redirects|redirect loop|TooManyRedirects)"), "too many redirects (a redirect loop)", False),
    (re.compile(r"(ConnectionRefused)"), "connection refused", True),
    (re.compile(r"(?i)(redirect without LOCATION)"),
     "S3 redirected the request to the bucket's own region: name it with region=...", False),
    (re.compile(r"(?i)(message head is too large|HeaderTooLarge|TooLarge)"), "the answer's headers are too large", False),
    (re.compile(r"(?i)(IncompleteMessage|IncompleteBody|unexpected ?EOF|connection closed before message completed)"),
     "the server closed the connection before the answer ended", True),
    (re.compile(r"(?i)(invalid HTTP status|invalid HTTP version|Parse\(\s*\w+|InvalidStatus)"),
     "the server's answer is not HTTP", False),
    (re.compile(r"(?i)(invalid peer certificate|CorruptMessage|InvalidMessage|tls handshake)"),
     "the TLS handshake failed", False),
)


def _cause(error: BaseException) -> tuple[str, bool] | None:
    text = text_of(error)
    for pattern, meaning, curable in _CAUSES:
        m = pattern.search(text)
        if m:
            return meaning.format(m.group(1)), curable
    return None


def cause_of(error: BaseException) -> str | None:
    """What the server did, as obstore's error chain says it (its first line only says
    "error sending request"), or None where no known cause is found."""
    found = _cause(error)
    return None if found is None else found[0]


def states_no_size(error: BaseException) -> bool:
    """An answer obstore refuses because it does not state its size (no ``Content-Length``)."""
    text = text_of(error)
    return "Content-Length Header missing" in text or "CONTENT_RANGE" in text


class _Encoded(Exception):
    """An answer compressed for the wire (``Content-Encoding``), which obstore hands over as sent."""

    def __init__(self, encoding: str) -> None:
        super().__init__(f"the server compressed its answer (Content-Encoding: {encoding}) though asked "
                         "for identity, and obstore hands such a body over as sent")
        self.encoding = encoding


def _check_encoding(result: Any) -> None:
    """Raise ``_Encoded`` where ``result`` (an obstore GetResult) is compressed for the wire:
    its bytes are not the object's, and reading them as such would be a silent wrong read."""
    encoding = str(result.attributes.get("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("identity", ""):
        raise _Encoded(encoding)


def status_lost(error: BaseException) -> bool:
    """An error answer whose body is not UTF-8: object_store fails reading it as text and
    reports that instead of the status (which it then never shows)."""
    text = text_of(error)
    return "FromUtf8Error" in text or "invalid utf-8" in text.split("\n", 1)[0]


#: a whole object whose bound is under this share of the read's in-flight budget is asked for
#: as a range of its bound (``ObstoreStore._whole_small``): sixty-four of them in flight hold at
#: most the budget
SMALL_SHARE = 64


def _hand_over_for(error: BaseException) -> bool:
    """Whether ``error`` is an answer obstore cannot read that the fsspec route reads: one that
    states no size, one compressed for the wire, an error whose status obstore lost."""
    return states_no_size(error) or isinstance(error, _Encoded) or status_lost(error)


def _range_not_supported(error: BaseException) -> bool:
    return type(error).__name__ == "NotSupportedError" and "range" in text_of(error).lower()


class ObstoreStore(AsyncBatchStore):
    def __init__(self, store: Any, url: str, *, retry: RetryPolicy | None = None, io_concurrency: int = 64,
                 can_list: bool = True, hand_over: Callable[[], AsyncBatchStore] | None = None,
                 query: str = "", pages: Callable[[], Store] | None = None) -> None:
        """``store``: an obstore store rooted at ``url`` (keys are its paths; it percent-encodes
        them); ``hand_over``: the store that reads a server whose answers state no size;
        ``query``: what the store sends with each request (a signature), kept out of messages;
        ``pages``: the store that lists a prefix a page at a time (obstore lists one whole)."""
        super().__init__(url, retry=retry, io_concurrency=io_concurrency)
        self.store = store
        self._query = query
        self._can_list = can_list
        self._hand_over = hand_over
        #: the store reading this server instead, once an answer stated no size
        self.handed: AsyncBatchStore | None = None
        self._pages = pages
        self._pager: Store | None = None

    # -- one request, retried ---------------------------------------------------------------
    def _loop(self) -> asyncio.AbstractEventLoop:
        return io_loop()

    def _missing(self, error: BaseException) -> bool:
        return _missing(error)

    def _transient(self, error: BaseException) -> bool:
        return is_transient(error)

    def _error(self, req: ByteRequest, e: BaseException, attempts: int, ours: bool = False) -> StoreError:
        """Every timeout is named as the per-try timeout, ``ours`` or not: obstore's own timer is
        only a backstop, twice as long."""
        where = self._where(req)
        status = status_of(e)
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if isinstance(e, (asyncio.TimeoutError, TimeoutError)):
            return StoreError(f"{where}: no answer within {self.retry.timeout:g} s{tries}")
        if _denied(e):
            return StoreAccessError(f"{where}: access denied ({status or 403}); check credentials or use anonymous access")
        text = text_of(e).split("\n", 1)[0][:300]
        if self._query:  # obstore names the URL it asked for, signature and all
            text = text.replace(self._query, "…")
        if status is not None:
            detail = f"HTTP {status}"
        elif status_lost(e):
            detail = "the server answered an error whose body is not text, and obstore lost its status"
        elif states_no_size(e):
            detail = (f"the server's answer does not state its size ({text.rsplit(': ', 1)[-1]}), "
                      "which obstore requires; open it with backend='fsspec'")
        else:
            detail = cause_of(e) or f"{type(e).__name__}: {text}"
        return StoreError(f"{where}: {detail}{tries}")

    async def _answer(self, req: ByteRequest) -> bytes | memoryview:
        if self.handed is None:
            try:
                return await super()._answer(req)
            except Exception as e:
                if not _hand_over_for(e):
                    raise
                if self._hand_over is None:
                    if isinstance(e, _Encoded):
                        raise StoreError(f"{self._where(req)}: {e}") from e
                    raise
                # this server's answers are read there from now on (see _hand_over_for), within
                # the same bounds
                self.handed = self._hand_over()
        res = await self.handed.fetch_here(req)
        if res is None:
            raise FileNotFoundError(req.key)
        if isinstance(res, StoreError):
            raise res
        return res

    async def _get(self, path: str, start: int | None = None, stop: int | None = None,
                   limit: int | None = None) -> bytes | memoryview:
        if start is None:
            if isinstance(limit, Bound) and limit < limits().inflight_bytes // SMALL_SHARE:  # a chunk
                return await self._whole_small(path, limit)
            return await self._whole_bounded(path, limit)
        try:
            if start < 0:
                return await self._suffix(path, -start)
            return await self._range(path, start, stop)
        except Exception as e:
            if not _range_not_supported(e):
                raise
        # the server answered a range with the whole object, which obstore does not hand over
        raise RangeIgnored(await self._whole_bounded(path, limit))

    async def _range(self, path: str, start: int, stop: int | None) -> memoryview:
        import obstore

        if stop is None:  # to the end: bounded as a whole object is, from the range the answer states
            result = await obstore.get_async(self.store, path, options={"range": {"offset": start}})
            _check_encoding(result)
            lo, hi = result.range
            if hi - lo > limits().object_bytes:
                del result  # hang up now: the body is never read
                raise too_large(self.key_url(path), ByteRequest(path, start), hi - lo)
            await hold(hi - lo)
            return memoryview(await result.bytes_async())
        try:
            data = memoryview(await obstore.get_range_async(self.store, path, start=start, end=stop))
        except Exception as e:
            if _unsatisfiable(e):
                return memoryview(b"")  # a range past the end of the object holds nothing
            raise
        if len(data) == stop - start:
            return data
        if len(data) > stop - start:
            raise too_large(self.key_url(path), ByteRequest(path, start, stop), len(data))
        return await self._checked_range(path, start, stop)

    async def _checked_range(self, path: str, start: int, stop: int) -> memoryview:
        """A range whose answer was not as long as the range, asked again to see the answer's
        head: legitimately shorter only where the object ends inside the range (a 206 whose
        Content-Range says so). Ranges a reader asks for lie inside their objects, so this costs
        a second request only for a broken or hostile answer; the answer's head is not looked at
        otherwise (obstore hands over the bytes alone, a head costs a fifth of a request)."""
        import obstore

        result = await obstore.get_async(self.store, path, options={"range": (start, stop)})
        _check_encoding(result)
        lo, hi = result.range
        data = memoryview(await result.bytes_async())
        if lo != start or hi > stop or len(data) != hi - lo:
            raise StoreError(f"{self.key_url(path)} (bytes {start}-{stop}): the server answered "
                             f"{len(data)} bytes for bytes {lo}-{hi}")
        return data

    async def _suffix(self, path: str, want: int) -> memoryview:
        import obstore

        result = await obstore.get_async(self.store, path, options={"range": {"suffix": want}})
        _check_encoding(result)
        return memoryview(await result.bytes_async())

    def _suffix_refused(self, error: BaseException) -> bool | None:
        if status_of(error) in RANGE_REFUSED:
            return True
        return False if _odd_suffix_answer(error) else None  # maybe empty, which servers answer oddly

    async def _whole_small(self, path: str, limit: int) -> bytes | memoryview:
        """An object of at most ``limit`` bytes, a small one (a chunk), as its first ``limit + 1``
        bytes: one call into obstore, where a plain GET is two (its head, then its body), and each
        costs a wake-up of the I/O loop from obstore's threads (measured: 256 chunks of 300 KiB
        over loopback, about a third less CPU and a quarter less time). What it may bring is held
        before it is sent, as for a range; one larger than ``limit`` is refused after ``limit + 1``
        bytes. A server that answers the range with the whole object is read as a plain GET."""
        import obstore

        await hold(limit + 1)
        try:
            data = memoryview(await obstore.get_range_async(self.store, path, start=0, end=limit + 1))
        except Exception as e:
            if _unsatisfiable(e):
                return memoryview(b"")  # an empty object has no first byte
            if not _range_not_supported(e):
                raise
            return await self._whole_bounded(path, limit)
        if len(data) > limit:
            raise too_large(self.key_url(path), ByteRequest(path, limit=limit), len(data))
        return data

    async def _whole_bounded(self, key: str, limit: int | None = None) -> bytes | memoryview:
        """The whole object, at most ``limit`` bytes (None: ``limits().object_bytes``), with a
        plain GET: obstore hands over the answer's head before its body, so an object whose
        stated size (``Content-Length``, which obstore requires and HTTP framing holds the body
        to) is over the bound is refused before its body is read."""
        import obstore

        bound = limit if limit is not None else limits().object_bytes
        result = await obstore.get_async(self.store, key)
        _check_encoding(result)
        size = int(result.meta["size"])
        if size > bound:
            del result  # hang up now: the body is never read
            raise too_large(self.key_url(key), ByteRequest(key, limit=limit), size)
        await hold(size)
        data = memoryview(await result.bytes_async())
        if len(data) > bound:
            raise too_large(self.key_url(key), ByteRequest(key, limit=limit), len(data))
        return data

    async def _info(self, path: str) -> dict[str, Any]:
        import obstore

        return dict(await obstore.head_async(self.store, path))

    @property
    def can_list(self) -> bool:
        return self._can_list

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        import obstore

        if not self._can_list:
            raise StoreError(f"{self.url}: an HTTP server cannot list {prefix or 'the root'}; "
                             "use consolidated metadata or open a child path directly")
        stem = prefix.rstrip("/")
        res = self._settle(lambda: obstore.list_with_delimiter_async(self.store, stem or None), ByteRequest(prefix))
        if res is None:
            return [], []
        cut = len(stem) + 1 if stem else 0
        keys = [o["path"][cut:] for o in res["objects"]]
        dirs = [p[cut:].rstrip("/") for p in res["common_prefixes"]]
        return sorted({k for k in keys if k and "/" not in k}), sorted({d for d in dirs if d})

    def iter_dir(self, prefix: str, page: int = 1000) -> Iterator[tuple[list[str], list[str]]]:
        """A page at a time through the store given as ``pages`` (a group of 100,000 children
        shows its first after one request, where obstore lists them all first), built on the
        first call; the whole listing, cut, where there is none or its driver is not installed."""
        if self._pages is not None and self._pager is None:
            try:
                self._pager = self._pages()
            except UnsupportedSchemeError:
                pass
            self._pages = None
        if self._pager is None:
            yield from super().iter_dir(prefix, page)
        else:
            yield from self._pager.iter_dir(prefix, page)

    def close(self) -> None:
        if self._pager is not None:
            self._pager.close()

    def walk_sizes(self, prefix: str, cancel: CancelToken | None = None) -> Iterator[tuple[str, int | None]]:
        """Every key below ``prefix`` with its size, a page of the listing at a time (no request per key)."""
        import obstore

        if not self._can_list:
            yield from super().walk_sizes(prefix, cancel)
            return
        stem = prefix.rstrip("/")
        cut = len(stem) + 1 if stem else 0
        try:
            for page in obstore.list(self.store, stem or None, chunk_size=1000):
                for meta in page:
                    if cancel is not None:
                        cancel.raise_if_cancelled()
                    yield prefix + meta["path"][cut:], int(meta["size"])
        except StoreError:
            raise
        except Exception as e:
            if _missing(e):
                return
            raise self._error(ByteRequest(prefix), e, 1) from e


#: obstore stores (each with its own connection pool) by URL and options, reused by the next
#: open of the same URL as fsspec reuses its filesystem instances: reopening an array, or the
#: viewer opening a node again, then costs no new connections (a round trip each, more with TLS)
_CLIENTS_KEPT = 32
_clients: OrderedDict[str, Any] = OrderedDict()
_clients_lock = threading.Lock()


def open_obstore(url: str, scheme: str, options: dict[str, Any], *, retry: RetryPolicy, io_concurrency: int,
                 query: str = "", hand_over: Callable[[], AsyncBatchStore] | None = None,
                 pages: Callable[[], Store] | None = None) -> ObstoreStore:
    """An ObstoreStore for ``url`` with the user's storage options (see ``obstore_options``);
    ``Unmapped`` where one of them has no obstore spelling. ``query`` (HTTP only): sent with
    every request, as obstore keeps a base URL's query behind each key's path."""
    from .obstore_options import SCHEMES, map_options

    mapped = map_options(scheme, url, options)
    if query:
        mapped.url += "?" + query
    try:
        from obstore.store import from_url
    except ImportError as e:
        raise StoreError(f"cannot open {url} with obstore: install zarrview[cloud] (obstore)") from e
    # one try per request and its own timers as a backstop only: zarrlib's policy retries and times tries
    # and the bytes as stored: obstore does not decode an answer compressed for the wire
    client = {"timeout": f"{max(retry.timeout * 2, 1):g}s", "connect_timeout": f"{retry.timeout:g}s",
              "default_headers": {"Accept-Encoding": "identity"}, **mapped.client}
    key = repr((mapped.url, sorted(mapped.config.items()), sorted(client.items())))
    with _clients_lock:
        store = _clients.get(key)
        if store is not None:
            _clients.move_to_end(key)
    if store is None:
        try:
            make: Any = from_url  # its overloads are per scheme; the options were mapped per scheme
            store = make(mapped.url, config=mapped.config or None, client_options=client,
                         retry_config={"max_retries": 0})
        except Exception as e:  # obstore validates the URL and options its own way
            raise StoreError(f"cannot open {url}: {type(e).__name__}: {str(e).split(chr(10), 1)[0]}") from e
        with _clients_lock:
            _clients[key] = store
            while len(_clients) > _CLIENTS_KEPT:
                _clients.popitem(last=False)
    http = SCHEMES[scheme] == "http"  # no standard listing (obstore would try WebDAV's PROPFIND)
    # obstore percent-encodes each key segment itself (as HttpStore does by hand)
    return ObstoreStore(store, url, retry=retry, io_concurrency=io_concurrency, can_list=not http, hand_over=hand_over,
                        query=query, pages=pages)
