"""Reading an HTTP answer without letting the server decide how much memory it costs.

A server states a body's size (or does not) and then sends what it likes: a metadata
document that never ends, a range answered with far more than asked, a Content-Length of
terabytes. ``HttpStore`` reads a body whose stated size is within the request's bound in
one ``read()`` (the fast path, unchanged); everything else comes here: a stated size over
the bound is refused before a byte of the body is read, and a body of unstated (or
content-encoded, so unknown decoded) size is read piece by piece and abandoned as soon as
it passes the bound. Abandoning closes the connection instead of returning it to the pool,
since the rest of the body would otherwise be read as the next answer's start.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import TooLargeError
from ..limits import human
from .base import ByteRequest, too_large, too_large_class
from .byte_request import describe_range


def _where(url: str, start: int | None, stop: int | None) -> str:
    return describe_range(url, start, stop)


async def read_capped(response: Any, cap: int, url: str, start: int | None, stop: int | None,
                      limit: int | None, ranged: bool, hold: Callable[[int], Awaitable[None]] | None = None) -> bytes:
    """The body of ``response`` if it holds at most ``cap`` bytes, else ``TooLargeError``.

    ``ranged``: the answer is a 206 to a range of ``cap`` bytes (a longer one is a broken or
    hostile server, not a whole object); otherwise ``cap`` is the whole-object bound, or the
    caller's ``limit`` (metadata documents), which the messages name. ``hold``: called with each
    piece's size before the next is read (the read's in-flight budget, which may make it wait).
    """
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    n = response.content_length
    if n is not None and n > cap and encoding == "identity":
        response.close()
        raise refuse_stated(n, cap, url, start, stop, limit, ranged)
    parts: list[bytes] = []
    total = 0
    content = response.content
    while True:
        piece = await content.readany()
        if not piece:
            return b"".join(parts)
        total += len(piece)
        if total > cap:
            response.close()  # the rest is never read; the connection cannot be reused
            raise ran_past(url, start, stop, cap, limit, ranged, encoding)
        parts.append(piece)
        if hold is not None:
            await hold(len(piece))


def refuse_stated(n: int, cap: int, url: str, start: int | None, stop: int | None, limit: int | None,
                  ranged: bool) -> TooLargeError:
    """The error for a body whose stated size ``n`` passes its bound ``cap``, before any of it is read."""
    if ranged:
        return TooLargeError(f"{_where(url, start, stop)}: the server answered {human(n)} to a range of {human(cap)}")
    return too_large(_where(url, start, stop), ByteRequest("", limit=limit), n)


def ran_past(url: str, start: int | None, stop: int | None, cap: int, limit: int | None, ranged: bool,
             encoding: str) -> TooLargeError:
    """The error for a body of unstated (or encoded) size that was abandoned past its bound ``cap``."""
    where = _where(url, start, stop)
    if ranged:
        return TooLargeError(f"{where}: the server sent more than the {human(cap)} asked for")
    body = "the body" if encoding == "identity" else f"the {encoding}-encoded body, decoded,"
    stated = "" if encoding != "identity" else " (no Content-Length)"
    return too_large_class(limit)(f"{where}: {body}{stated} ran past the {human(cap)} allowed for "
                         f"{ByteRequest('', limit=limit).bound_name()}")
