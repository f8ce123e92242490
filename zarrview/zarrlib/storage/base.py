"""The read-only key/value interface every store implements.

zarrlib only ever reads: no method here writes, so no code path can modify a user's data.
Byte ranges are the currency of sharding, so they are first-class: a request names a key and
an optional ``(start, stop)`` where a negative ``start`` with ``stop=None`` asks for a suffix.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..cancel import CancelToken
from ..errors import StoreError, TooLargeError
from ..limits import human, limits


OnEach = Callable[[int, "bytes | None | StoreError"], None]


@dataclass(frozen=True, slots=True)
class ByteRequest:
    """A whole object (``start is None``), a range ``[start, stop)``, or a suffix (``start < 0``)."""

    key: str
    start: int | None = None
    stop: int | None = None
    #: the most bytes a whole-object read may return (None: ``limits().object_bytes``); a
    #: larger object is refused before it is read, with ``TooLargeError``
    limit: int | None = None

    def max_bytes(self) -> int:
        """The most bytes this request may bring: its range, or the whole-object bound."""
        if self.start is not None and self.start >= 0 and self.stop is not None:
            return max(0, self.stop - self.start)
        return self.limit if self.limit is not None else limits().object_bytes

    def describe(self) -> str:
        if self.start is None:
            return self.key
        if self.start < 0:
            return f"{self.key} (last {-self.start} bytes)"
        return f"{self.key} (bytes {self.start}-{'' if self.stop is None else self.stop})"

    def bound_name(self) -> str:
        """What ``max_bytes`` bounds, for messages."""
        return "a metadata document" if self.limit is not None else "one stored object"


class Scratch:
    """A per-thread reusable read buffer; grows by replacement so earlier views stay valid."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def view(self, n: int) -> memoryview:
        if len(self._buf) < n:  # with an eighth to spare: objects of about the size seen fit in ``room``
            self._buf = bytearray(max(n + (n >> 3) + 64, 2 * len(self._buf)))
        return memoryview(self._buf)[:n]

    def grown(self, n: int) -> bytearray:
        """The buffer, made at least ``n`` bytes long."""
        self.view(n)
        return self._buf

    def room(self) -> int:
        """Bytes the next view can have without a new buffer (a store may read that many
        before it knows an object's size)."""
        return len(self._buf)

    def holds(self, arr: np.ndarray) -> bool:
        """Whether ``arr`` may be a view of this buffer, which the next read overwrites (codecs
        such as ``bytes`` and ``crc32c`` return views of their input, not copies)."""
        return len(self._buf) > 0 and np.may_share_memory(arr, np.frombuffer(self._buf, dtype=np.uint8))


def too_large(url: str, req: ByteRequest, size: int | str) -> TooLargeError:
    """The error for an object larger than the request allows (``size``: bytes or a description)."""
    found = human(size) if isinstance(size, int) else size
    return TooLargeError(f"{url}: {found}, more than the {human(req.max_bytes())} allowed for {req.bound_name()}")


def check_size(url: str, req: ByteRequest, size: int) -> None:
    if size > req.max_bytes():
        raise too_large(url, req, size)


def slice_range(data: bytes, req: ByteRequest) -> bytes:
    """Cut a requested range out of a whole object (for stores that cannot read ranges)."""
    if req.start is None:
        return data
    if req.start < 0:
        return data[req.start:] if -req.start <= len(data) else data
    return data[req.start:req.stop]


class Store(ABC):
    """A read-only mapping of keys (``"a/b/zarr.json"``) to bytes."""

    #: True where fetching many keys in one batch is much cheaper than one by one (network).
    prefers_batches: bool = False

    def __init__(self, url: str) -> None:
        self.url = url

    @abstractmethod
    def get(self, key: str) -> bytes | None:
        """The whole object, or None when the key does not exist."""

    def get_range(self, req: ByteRequest) -> bytes | None:
        data = self.get(req.key)
        if data is not None and req.start is None:
            check_size(self.key_url(req.key), req, len(data))
        return None if data is None else slice_range(data, req)

    def get_bounded(self, key: str, limit: int) -> bytes | None:
        """The whole object if it holds at most ``limit`` bytes (metadata documents); a larger
        one raises ``TooLargeError`` without being read where the store can tell its size."""
        return self.get_range(ByteRequest(key, limit=limit))

    def read_into(self, req: ByteRequest, scratch: Scratch) -> memoryview | bytes | None:
        """Like ``get_range``, but may place the bytes in ``scratch`` (grown as needed) to avoid allocation.

        The result is only valid until ``scratch`` is reused.
        """
        return self.get_range(req)

    def reads_files(self) -> bool:
        """Whether ``read_files`` can read many objects at once here, on this thread."""
        return False

    def read_files(self, keys: list[str], into: bytearray, region: int) -> list[int] | None:
        """Whole objects read at once into consecutive ``region``-byte places of ``into``
        (``LocalStore``: one system call for them all); None where a store reads one at a time."""
        return None

    def read_ranges(self, reqs: list[ByteRequest], into: bytearray) -> list[bool] | None:
        """Ranges (``start`` and ``stop`` set) read at once into ``into``, back to back in request
        order (``LocalStore``: one system call for them all); whether each was read whole (one
        that was not is the caller's to read alone, which names what is wrong); None where a
        store reads one at a time."""
        return None

    def get_many(self, reqs: Sequence[ByteRequest], cancel: CancelToken | None = None) -> list[bytes | None]:
        """Answers in request order; missing keys give None."""
        out: list[bytes | None] = []
        for r in reqs:
            if cancel is not None:
                cancel.raise_if_cancelled()
            out.append(self.get_range(r))
        return out

    def get_many_settled(self, reqs: Sequence[ByteRequest], cancel: CancelToken | None = None,
                         on_each: OnEach | None = None) -> list[bytes | None | StoreError]:
        """Like ``get_many``, but a request that fails gives its StoreError in its place;
        ``on_each(i, answer)`` is called as each answer arrives (from any thread)."""
        out: list[bytes | None | StoreError] = []
        for i, r in enumerate(reqs):
            if cancel is not None:
                cancel.raise_if_cancelled()
            try:
                res: bytes | None | StoreError = self.get_range(r)
            except StoreError as e:
                res = e
            out.append(res)
            if on_each is not None:
                on_each(i, res)
        return out

    @property
    def can_list(self) -> bool:
        return True

    @abstractmethod
    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """Immediate children of ``prefix`` (``""`` or ending in ``/``): (keys, sub-prefixes) names."""

    def list_prefix(self, prefix: str) -> list[str]:
        """Every key below ``prefix``, recursively (relative to the store root)."""
        keys, dirs = self.list_dir(prefix)
        out = [prefix + k for k in keys]
        for d in dirs:
            out.extend(self.list_prefix(prefix + d + "/"))
        return out

    def iter_dir(self, prefix: str, page: int = 1000) -> Iterator[tuple[list[str], list[str]]]:
        """``list_dir`` in pages of at most ``page`` names, (keys, sub-prefixes) each, as the store
        gives them: stores that list page by page (a folder, S3) yield the first page before the
        rest is listed; the others list once and cut the answer."""
        keys, dirs = self.list_dir(prefix)
        step = max(1, page)
        for i in range(0, len(dirs), step):
            yield [], dirs[i:i + step]
        for i in range(0, len(keys), step):
            yield keys[i:i + step], []

    def walk_sizes(self, prefix: str, cancel: CancelToken | None = None) -> Iterator[tuple[str, int | None]]:
        """Every key below ``prefix`` with its size in bytes (None where unknown), as listed;
        ``cancel`` is checked between keys."""
        for key in self.list_prefix(prefix):
            if cancel is not None:
                cancel.raise_if_cancelled()
            yield key, self.size(key)

    def size(self, key: str) -> int | None:
        data = self.get(key)
        return None if data is None else len(data)

    def key_url(self, key: str) -> str:
        """A human-readable address of a key, for error messages."""
        return f"{self.url.rstrip('/')}/{key}"

    def close(self) -> None:
        """Release files or sessions; reads after close are not supported."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"
