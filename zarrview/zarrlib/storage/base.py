"""The read-only key/value interface every store implements.

zarrlib only ever reads: no method here writes, so no code path can modify a user's data.
A store answers single requests (``get``, ``get_range``: metadata, shard indexes) and, for a
read's chunk data, one call for many requests (``get_ranges``): the store coalesces
neighbouring ranges by its own policy (``coalesce``), reads the groups as it reads best
(one after another from a disk, all at once over a network) and hands each request's bytes
over as they arrive, so decoding overlaps the rest of the fetch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import overload

import numpy as np

from ..cancel import CancelToken
from ..errors import StoreError, StoredChunkTooLargeError, TooLargeError
from ..limits import human
from .byte_request import Bound, ByteRequest
from .coalesce import ADJACENT, Coalescing, coalesce, member
from .revision import Revision

__all__ = ["ByteRequest", "Scratch", "Store", "OnEach", "fetch_all", "too_large", "check_size",
           "slice_range", "fetch_each"]

#: ``on_each(i, answer)``: request i's bytes (a view valid until ``on_each`` returns when the
#: store was given a scratch buffer), None where the key does not exist, or its StoreError
OnEach = Callable[[int, "bytes | memoryview | None | StoreError"], None]


class Scratch:
    """A per-thread reusable read buffer; grows by replacement so earlier views stay valid."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def view(self, n: int) -> memoryview:
        if len(self._buf) < n:
            # an eighth to spare, so objects of about the size seen fit next time, and at least a
            # quarter more than before, so a run of growing objects reallocates a few times only;
            # not double: chunk files a little larger than the first would keep twice their size
            # in every thread (two 5 MiB zstd chunks of a stack: 10 MiB per decode worker)
            self._buf = bytearray(max(n + (n >> 3) + 64, len(self._buf) + (len(self._buf) >> 2)))
        return memoryview(self._buf)[:n]

    def holds(self, arr: np.ndarray) -> bool:
        """Whether ``arr`` may be a view of this buffer, which the next read overwrites (codecs
        such as ``bytes`` and ``crc32c`` return views of their input, not copies)."""
        return len(self._buf) > 0 and np.may_share_memory(arr, np.frombuffer(self._buf, dtype=np.uint8))


def too_large_class(limit: int | None) -> type[TooLargeError]:
    """The error for an object past ``limit``: a chunk's bound (a ``Bound``) makes it a bad chunk too."""
    return StoredChunkTooLargeError if isinstance(limit, Bound) else TooLargeError


def too_large(url: str, req: ByteRequest, size: int | str) -> TooLargeError:
    """The error for an object larger than the request allows (``size``: bytes or a description)."""
    found = human(size) if isinstance(size, int) else size
    return too_large_class(req.limit)(f"{url}: {found}, more than the {human(req.max_bytes())} allowed for {req.bound_name()}")


def check_size(url: str, req: ByteRequest, size: int) -> None:
    if size > req.max_bytes():
        raise too_large(url, req, size)


@overload
def slice_range(data: bytes, req: ByteRequest) -> bytes: ...
@overload
def slice_range(data: bytes | memoryview, req: ByteRequest) -> bytes | memoryview: ...
def slice_range(data: bytes | memoryview, req: ByteRequest) -> bytes | memoryview:
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
    #: which ranges of one object ``get_ranges`` reads together
    coalescing: Coalescing = ADJACENT

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

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        """Every request answered once through ``on_each(i, answer)`` (see ``OnEach``), from
        the calling thread or, for stores that read many requests at once, from theirs.

        Neighbouring ranges are read together by the store's ``coalescing``; ``cancel`` is
        checked between reads. Given ``scratch``, a store may read into it, and the bytes
        handed to ``on_each`` are then valid only until it returns."""
        for group in coalesce(reqs, self.coalescing):
            if cancel is not None:
                cancel.raise_if_cancelled()
            try:
                data = self.read_group(group.req, scratch)
            except StoreError as e:
                for i in group.members:
                    on_each(i, e)
                continue
            for i in group.members:
                on_each(i, None if data is None else member(data, group.req, reqs[i]))

    def read_group(self, req: ByteRequest, scratch: Scratch | None) -> bytes | memoryview | None:
        """One coalesced read of ``get_ranges`` (into ``scratch`` where the store can)."""
        return self.get_range(req)

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

    def revision(self, key: str) -> Revision | None:
        """The object's ETag or modification time (one request where remote); None where the
        object does not exist or the store cannot tell."""
        return None

    def key_url(self, key: str) -> str:
        """A human-readable address of a key, for error messages."""
        return f"{self.url.rstrip('/')}/{key}"

    def close(self) -> None:  # noqa: B027  # optional: a store that holds nothing open keeps this no-op
        """Release files or sessions; reads after close are not supported."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


def fetch_all(store: Store, reqs: Sequence[ByteRequest], cancel: CancelToken | None = None
              ) -> list[bytes | None | StoreError]:
    """Every request's answer, in request order, as bytes the caller may keep (metadata
    documents and shard indexes: a handful of small objects, read in one ``get_ranges``)."""
    out: list[bytes | None | StoreError] = [None] * len(reqs)

    def landed(i: int, data: bytes | memoryview | None | StoreError) -> None:
        out[i] = bytes(data) if isinstance(data, memoryview) else data

    store.get_ranges(reqs, landed, cancel)
    return out


def fetch_each(store: Store, reqs: Sequence[ByteRequest], cancel: CancelToken | None = None) -> list[bytes | None]:
    """``fetch_all``, raising the first request's error instead of returning it."""
    out = fetch_all(store, reqs, cancel)
    for res in out:
        if isinstance(res, StoreError):
            raise res
    return out  # type: ignore[return-value]
