"""One object of a store read as a read-only file: what ``zipfile`` and the zip directory
reader take, over the store's own transport.

A remote zip archive is read from its end (the central directory) and then member by member;
reading it through its folder's store makes each of those reads a range request of the one
transport, with its retries, timeouts and bounds, instead of a second HTTP client's. The
object's size comes from the store once (a HEAD), when the end is first sought.
"""

from __future__ import annotations

from ..errors import StoreError, StoreNotFoundError, TooLargeError
from ..limits import limits
from .base import Store
from .byte_request import ByteRequest


class StoreFile:
    """``key`` of ``store`` as a seekable binary file; ``url`` names it in errors. Each read is
    one range request; a server that answers ranges with the whole object is read whole at most
    once, within ``limits().whole_archive_bytes``, and past it refused in words that say why."""

    def __init__(self, store: Store, key: str, url: str) -> None:
        self.store = store
        self.key = key
        self.url = url
        self._size: int | None = None
        self._pos = 0

    @property
    def size(self) -> int:
        if self._size is None:
            size = self.store.size(self.key)
            if size is None:
                raise StoreNotFoundError(f"{self.url} does not exist")
            self._size = size
        return self._size

    def seek(self, offset: int, whence: int = 0) -> int:
        pos = offset if whence == 0 else self._pos + offset if whence == 1 else self.size + offset
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        stop = self.size if n is None or n < 0 else min(self.size, self._pos + n)
        if stop <= self._pos:
            return b""
        bound = limits().whole_archive_bytes
        try:
            data = self.store.get_range(ByteRequest(self.key, self._pos, stop, limit=bound))
        except TooLargeError as e:  # a range answered with the whole object, which is over the bound
            raise TooLargeError(
                f"cannot read the zip archive {self.url}: its server answers no range requests, so it would "
                f"be read whole, and it has {self.size:,} bytes, over the bound of {bound:,} bytes for that "
                "(ZARRVIEW_LIMITS=whole_archive_bytes=…); served with range requests, only what a view "
                "needs is read") from e
        if data is None:
            raise StoreNotFoundError(f"{self.url} does not exist")
        if len(data) != stop - self._pos:
            raise StoreError(f"{self.url}: bytes {self._pos}-{stop - 1} of {self.size:,} came back as {len(data):,} bytes")
        self._pos = stop
        return bytes(data)

    def close(self) -> None:
        """Nothing: the store is its owner's (the zip store closes its folder's store)."""
