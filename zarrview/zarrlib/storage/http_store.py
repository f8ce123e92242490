"""A plain HTTP(S) server as a store: keys become percent-encoded URLs, nothing can be listed.

Zarr keys are node names chosen by people (``"run #3"``, ``"50%"``, ``"Zürich"``) but a URL
gives ``#``, ``%``, ``?`` and spaces their own meanings, so every key segment is
percent-encoded on its own (RFC 3986 unreserved characters stay). The user's base URL is
used as typed. An HTTP server has no standard listing, so hierarchies are known only from
consolidated metadata or by asking for a child path directly.

A query string in the store's URL (an Azure SAS token, a signed URL's signature) belongs to
every request and to no key: it is sent with each request and left out of every URL a message
names, so a secret never reaches an error dialog or a log.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from ..codecs.bounded import inflate
from ..errors import CodecError, DecodedTooLargeError, StoreError
from ..limits import limits
from .bounded_body import ran_past, read_capped, refuse_stated
from .fsspec_store import FsspecStore
from .http_client import HttpClient, ProtocolError, StatusError, Unsupported, client_for, parse_origin
from .keys import check_key


def range_header(start: int | None, stop: int | None) -> str:
    """``[start, stop)`` as HTTP spells it (inclusive end); a negative start is a suffix."""
    if start is not None and start < 0:
        return f"bytes={start}"
    return f"bytes={start or 0}-{'' if stop is None else stop - 1}"


@lru_cache(maxsize=1 << 16)  # a view asks for the same keys again and again
def encode_key(key: str) -> str:
    return "/".join(quote(segment, safe="") for segment in key.split("/"))


@lru_cache(maxsize=1)
def no_timers() -> Any:
    """aiohttp's timeout with every timer off (imported late: local reading needs no aiohttp)."""
    import aiohttp
    return aiohttp.ClientTimeout()


#: the most one socket read may take in one go (asyncio's default is 256 KiB)
RECV_MAX = 4 << 20


def widen_reads(response: Any) -> None:
    """Let the connection read a body of this size in one ``recv``.

    asyncio reads at most 256 KiB per ready socket per loop iteration, so the bodies of a
    batch of larger chunks advance in lockstep and all complete at about the same time, at
    the end of the fetch: decoding cannot start until then. With one read per body, answers
    complete one after the other and decoding overlaps the rest of the fetch (measured, a
    plane of 16 whole chunks of ~300 KiB: zarrlib/tensorstore 1.29 -> 1.17). Sized from the
    body (to the next power of two, at most RECV_MAX; never shrunk), so small ranged reads
    keep small buffers; transports without this knob (uvloop's) are left alone.
    """
    n = response.content_length
    if not n or n <= 256 << 10:
        return
    want = min(1 << (n - 1).bit_length(), RECV_MAX)
    transport = getattr(getattr(response, "connection", None), "transport", None)
    size = getattr(transport, "max_size", None)
    if isinstance(size, int) and size < want:
        transport.max_size = want  # type: ignore[union-attr]


def decoded(body: bytearray, encoding: str, cap: int, too_large: Callable[[], Exception]) -> bytes | bytearray:
    """A gzip- or deflate-encoded body decoded, at most ``cap`` bytes of it (a bomb stops there)."""
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise Unsupported(f"a {encoding}-encoded body")
    try:
        return inflate(body, cap, encoding)
    except DecodedTooLargeError:
        raise too_large() from None
    except CodecError as e:
        raise ProtocolError(f"a body that does not decode: {e}") from None


def plain(fs: Any) -> bool:
    """Whether ``fs`` sends bare GETs: fsspec's HTTP filesystem with no options of the user's
    (headers, authentication, a client of their own), which only aiohttp would honour."""
    from fsspec.implementations.http import HTTPFileSystem, get_client

    return (type(fs) is HTTPFileSystem and not fs.kwargs and not fs.client_kwargs
            and fs.get_client is get_client)


class HttpStore(FsspecStore):
    """Requests go out on a small client of our own (:mod:`.http_client`) where the user gave
    no options, else on the fsspec filesystem's own aiohttp session, with its options.

    fsspec's ``_cat_file`` parses and re-quotes the URL, copies its options and awaits a
    helper for the Range header on every call; on a plane of small inner chunks that is a
    tenth of the I/O thread's time. Here each key's URL is parsed once and the request is
    the same GET fsspec would send (a 404 is a missing object, other errors raise). A server
    whose answers the small client does not read (redirects, encodings other than chunked,
    gzip and deflate) is read through aiohttp from its first such answer on.
    """

    _URLS_KEPT = 1 << 16

    def __init__(self, *args: Any, query: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._urls: dict[str, Any] = {}  # parsed request URLs, by path
        self._query = "?" + query if query else ""
        self._client: HttpClient | None = None
        self._fast = plain(self.fs)

    def _request_path(self, path: str) -> str:
        return path + self._query

    def _encode(self, path: str) -> Any:
        """The request URL: the path encoded as fsspec encodes it, the query sent exactly as
        written (a signature is checked over the bytes it was made for)."""
        url = self.fs.encode_url(path)
        if not self._query:
            return url
        import yarl  # aiohttp's URL type

        return yarl.URL(str(url) + self._query, encoded=True)

    def _path(self, key: str) -> str:
        return f"{self.root}/{encode_key(check_key(key, self.url))}" if key else self.root

    async def _cat(self, path: str, start: int | None = None, stop: int | None = None,
                   limit: int | None = None) -> bytes:
        """The object or range at ``path``, read at most to its bound (see ``bounded_body``): a
        206 to the range asked, else the whole object's ``limit`` (None: ``limits().object_bytes``;
        a 200 to a range is the whole object, Range ignored). A body whose stated size fits is
        read in one go, as before; only the others pay for counting."""
        fs = self.fs
        url = self._urls.get(path)
        if url is None:
            if len(self._urls) >= self._URLS_KEPT:
                self._urls.clear()
            url = self._urls[path] = self._encode(path)
        if self._fast:
            try:
                return await self._cat_own(url, path, start, stop, limit)
            except Unsupported:
                self._fast = False  # this server's answers are read through aiohttp from now on
        session = await fs.set_session()
        kw = dict(fs.kwargs)
        if start is not None or stop is not None:
            kw["headers"] = {**(kw.get("headers") or {}), "Range": range_header(start, stop)}
        if "timeout" not in kw and self._timers_redundant(session):
            kw["timeout"] = no_timers()
        async with session.get(url, **kw) as r:
            if r.status == 404:
                raise FileNotFoundError(path)
            r.raise_for_status()
            ranged = r.status == 206 and start is not None and (start < 0 or stop is not None)
            if ranged:
                cap = -start if start < 0 else max(0, stop - start)  # type: ignore[operator]
            else:
                cap = limit if limit is not None else limits().object_bytes
            n = r.content_length
            if n is not None and n <= cap and "Content-Encoding" not in r.headers:
                widen_reads(r)
                return await r.read()
            return await read_capped(r, cap, path, start, stop, limit, ranged)

    async def _cat_own(self, url: Any, path: str, start: int | None, stop: int | None, limit: int | None) -> bytes:
        """``_cat`` through the small client: the same answers, bounds and errors."""
        client = self._client
        if client is None:
            origin = parse_origin(url)
            if origin is None:
                raise Unsupported(f"{url.scheme}: not a plain http(s) origin")
            client = self._client = client_for(*origin)
        ranged = start is not None and (start < 0 or stop is not None)
        asked = (-start if start < 0 else max(0, stop - start)) if ranged else 0  # type: ignore[operator]
        whole = limit if limit is not None else limits().object_bytes

        def cap(status: int) -> int:
            return asked if ranged and status == 206 else whole

        def too_large(n: int | None, bound: int, status: int) -> Exception:
            if n is None:
                return ran_past(path, start, stop, bound, limit, ranged and status == 206, "identity")
            return refuse_stated(n, bound, path, start, stop, limit, ranged and status == 206)

        rng = range_header(start, stop) if start is not None or stop is not None else None
        answer = await client.get(client.request(url.raw_path_qs, rng), cap, too_large)
        if answer.status == 404:
            raise FileNotFoundError(path)
        if answer.status not in (200, 206):
            raise StatusError(answer.status, path)
        encoding = answer.headers.get("content-encoding", "identity").lower()
        if encoding != "identity":  # sent encoded though only identity was accepted
            return decoded(answer.body, encoding, cap(answer.status),
                           lambda: ran_past(path, start, stop, cap(answer.status), limit,
                                            ranged and answer.status == 206, encoding))  # type: ignore[return-value]
        return answer.body  # type: ignore[return-value]  # a bytearray: a buffer as bytes are

    @property
    def client(self) -> str:
        """Which HTTP client sends this store's requests: ``"zarrlib"`` (its own) or ``"aiohttp"``."""
        return "zarrlib" if self._fast else "aiohttp"

    def _timers_redundant(self, session: Any) -> bool:
        """True when aiohttp's timers are all looser than the per-try timeout every request runs
        under anyway; then they only cost (a timer set and cancelled per request, about a tenth
        of the I/O thread's time on a plane of small inner chunks). A tighter one set by the
        user in ``client_kwargs`` is kept."""
        t = session.timeout
        return all(v is None or v >= self.retry.timeout for v in (t.total, t.connect, t.sock_read, t.sock_connect))

    def key_url(self, key: str) -> str:
        return self._path(key)

    def _url(self, path: str) -> str:
        return path

    @property
    def can_list(self) -> bool:
        return False

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        raise StoreError(f"{self.url}: an HTTP server cannot list {prefix or 'the root'}; "
                         "use consolidated metadata or open a child path directly")
