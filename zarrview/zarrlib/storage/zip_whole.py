"""A remote zip archive on a server that answers no range requests: read whole when it is small.

A zip is read from its end (the central directory) and then member by member, so a server that
answers every ``Range`` with the whole object leaves two choices: hold the archive in memory,
or refuse. Under ``limits.whole_archive_bytes`` it is read once, as one bounded stream; over it,
the error says why and how to raise the bound, instead of fsspec's remark about streaming.
"""

from __future__ import annotations

from typing import Any

from ..errors import StoreError, TooLargeError
from ..limits import limits

#: what fsspec's HTTP file says when a ranged GET is answered with the whole object
_REFUSAL = "support range requests"


def ranges_refused(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is a server's refusal of range requests."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, ValueError) and _REFUSAL in str(e):
            return True
        e = e.__cause__ or e.__context__
    return False


def read_whole_archive(fs: Any, path: str, url: str) -> bytes:
    """The archive's bytes, read in one request and never more than the bound; a TooLargeError
    naming the size and the bound where it is larger."""
    bound = limits().whole_archive_bytes
    try:
        size = fs.size(path)
    except Exception as e:
        raise StoreError(f"cannot read {url}: its server answers no range requests, and its size is unknown "
                         f"({type(e).__name__}: {e})") from e
    if size is None or size > bound:
        stated = "an unstated size" if size is None else f"{size:,} bytes"
        raise TooLargeError(
            f"cannot read the zip archive {url}: its server answers no range requests, so it would be read "
            f"whole, and it has {stated}, over the bound of {bound:,} bytes for that "
            f"(ZARRVIEW_LIMITS=whole_archive_bytes=…); served with range requests, only what a view needs "
            "is read")
    try:
        with fs.open(path, "rb", block_size=0) as stream:  # one streamed GET, read up to the bound
            data = bytearray()
            while len(data) <= bound:
                piece = stream.read(min(8 << 20, bound + 1 - len(data)))
                if not piece:
                    break
                data += piece
    except Exception as e:
        raise StoreError(f"cannot read the zip archive {url} whole: {type(e).__name__}: {e}") from e
    if len(data) > bound:
        raise TooLargeError(f"the zip archive {url} sent more than the {bound:,} bytes it may be read whole in "
                            f"(its size was stated as {size:,} bytes)")
    return bytes(data)
