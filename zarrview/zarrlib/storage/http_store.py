"""A plain HTTP(S) server as a store: keys become percent-encoded URLs, nothing can be listed.

Zarr keys are node names chosen by people (``"run #3"``, ``"50%"``, ``"Zürich"``) but a URL
gives ``#``, ``%``, ``?`` and spaces their own meanings, so every key segment is
percent-encoded on its own (RFC 3986 unreserved characters stay). The user's base URL is
used as typed. An HTTP server has no standard listing, so hierarchies are known only from
consolidated metadata or by asking for a child path directly.

A query string in the store's URL (an Azure SAS token, a signed URL's signature) belongs to
every request and to no key: it is sent with each request and left out of every URL a message
names, so a secret never reaches an error dialog or a log.

This is the fsspec route to an HTTP server (aiohttp underneath), taken where obstore cannot go
(``backend.py``): options only aiohttp takes (a client session, its arguments), and a server
whose answers state no size (obstore refuses a body without
``Content-Length``, as nginx sends when it compresses on the fly).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from ..errors import StoreError
from ..limits import limits
from .async_batch import RangeIgnored, hold
from .bounded_body import read_capped
from .byte_request import describe_range
from .fsspec_store import FsspecStore
from .keys import check_key


def range_header(start: int | None, stop: int | None) -> str:
    """``[start, stop)`` as HTTP spells it (inclusive end); a negative start is a suffix."""
    if start is not None and start < 0:
        return f"bytes={start}"
    return f"bytes={start or 0}-{'' if stop is None else stop - 1}"


_CONTENT_RANGE = re.compile(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$")


def range_answered(header: str | None, start: int | None, stop: int | None) -> str | None:
    """What is wrong with a 206 answering ``[start, stop)`` (a negative start: a suffix) whose
    ``Content-Range`` is ``header``, or None when it is the range asked, or its part that the
    object holds (the range ends at the object's end). A 206 of other bytes than asked, however
    well framed, would otherwise be read as the bytes asked for."""
    if start is None:
        return "a part (206) answered a request for the whole object"
    m = _CONTENT_RANGE.match(header or "")
    if m is None:
        return f"a part (206) without a Content-Range saying which bytes ({header!r})" if header else \
            "a part (206) without a Content-Range saying which bytes"
    first, last, total = int(m.group(1)), int(m.group(2)), m.group(3)
    size = None if total == "*" else int(total)
    if size == 0:
        return None  # an empty object: servers answer its suffix oddly ("bytes 0-0/0"); it holds nothing
    said = f"bytes {first}-{last}/{total}"
    if last < first or (size is not None and last >= size):
        return f"a part whose Content-Range is not a range of the object ({said})"
    at_end = size is not None and last == size - 1
    if start < 0:
        if last - first + 1 > -start or not at_end:
            return f"other bytes than asked (Content-Range: {said}, for the last {-start} bytes)"
        return None
    want_last = (stop - 1) if stop is not None else None
    if first != start or (want_last is not None and last > want_last) or \
            (last != want_last and not at_end):
        return f"other bytes than asked (Content-Range: {said}, for bytes {start}-{'' if want_last is None else want_last})"
    return None


def not_http(error: BaseException) -> str | None:
    """What the server did, where ``error`` is aiohttp failing to parse its answer (a garbage
    status line, headers past aiohttp's limits, broken framing), which aiohttp reports as a
    status 400 the server never sent; None for any other error. Another try does not cure it."""
    from aiohttp import ClientResponseError
    from aiohttp.http_exceptions import HttpProcessingError, LineTooLong

    cause = error.__cause__
    if not isinstance(error, ClientResponseError) or not isinstance(cause, HttpProcessingError):
        return None
    if isinstance(cause, LineTooLong) or "too long" in str(cause.message).lower():
        return "the answer's headers are too large"
    what = str(cause.message or type(cause).__name__).splitlines()[0].strip()
    return f"the server's answer is not HTTP ({what[:120]})"


@lru_cache(maxsize=1 << 16)  # a view asks for the same keys again and again
def encode_key(key: str) -> str:
    return "/".join(quote(segment, safe="") for segment in key.split("/"))


@lru_cache(maxsize=1)
def no_timers() -> Any:
    """aiohttp's timeout with every timer off (imported late: local reading needs no aiohttp)."""
    import aiohttp
    return aiohttp.ClientTimeout()


class HttpStore(FsspecStore):
    """Requests go out on the fsspec filesystem's own aiohttp session, with its options.

    fsspec's ``_cat_file`` parses and re-quotes the URL, copies its options and awaits a
    helper for the Range header on every call; here each key's URL is parsed once and the
    request is the same GET fsspec would send (a 404 is a missing object, other errors raise),
    read at most to its bound.
    """

    _URLS_KEPT = 1 << 16

    def __init__(self, *args: Any, query: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._urls: dict[str, Any] = {}  # parsed request URLs, by path
        self._query = "?" + query if query else ""

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

    async def _get(self, path: str, start: int | None = None, stop: int | None = None,
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
        session = await fs.set_session()
        kw = dict(fs.kwargs)
        if start is not None or stop is not None:
            kw["headers"] = {**(kw.get("headers") or {}), "Range": range_header(start, stop)}
        if "timeout" not in kw and self._timers_redundant(session):
            kw["timeout"] = no_timers()
        try:
            async with session.get(url, **kw) as r:
                if r.status == 404:
                    raise FileNotFoundError(path)
                r.raise_for_status()
                ranged = r.status == 206
                if ranged:
                    wrong = range_answered(r.headers.get("Content-Range"), start, stop)
                    if wrong is not None or start is None:
                        r.close()
                        raise StoreError(f"{describe_range(path, start, stop)}: the server answered {wrong}")
                    if r.headers.get("Content-Range", "").rstrip().endswith("/0"):
                        r.close()
                        return b""
                    cap = -start if start < 0 else limits().object_bytes if stop is None else max(0, stop - start)
                else:
                    cap = limit if limit is not None else limits().object_bytes
                n = r.content_length
                # what the request did not say it brings is held as the answer states it, or as it comes
                unknown = start is None or start >= 0 and stop is None or not ranged
                if n is not None and n <= cap and "Content-Encoding" not in r.headers:
                    if unknown:
                        await hold(n)
                    data = await r.read()
                else:
                    data = await read_capped(r, cap, path, start, stop, limit, ranged, hold if unknown else None)
                if start is not None and not ranged:
                    raise RangeIgnored(data)  # a 200: the whole object, Range ignored
                return data
        except Exception as e:
            bad = not_http(e)
            if bad is None:
                raise
            raise StoreError(f"{describe_range(path, start, stop)}: {bad}") from e

    async def _size(self, path: str) -> int:
        """The object's size from a HEAD of its URL, whose failures say what they are (fsspec's
        ``_info`` turns every failure into "no such file", so a server's broken answer would
        make the object read as missing)."""
        session = await self.fs.set_session()
        url = self._encode(path)
        try:
            async with session.head(url, allow_redirects=True, **self.fs.kwargs) as r:
                if r.status == 404:
                    raise FileNotFoundError(path)
                r.raise_for_status()
                size = r.content_length
                encoded = r.headers.get("Content-Encoding", "identity").strip().lower() != "identity"
        except Exception as e:
            bad = not_http(e)
            if bad is None:
                raise
            raise StoreError(f"{path}: {bad}") from e
        if size is None or encoded:
            raise StoreError(f"{path}: the server reports no size, needed to read its end")
        return size

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
