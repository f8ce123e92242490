"""Finding inner chunks in shards: each shard's index fetched once, cached, and never trusted.

An index entry is a claim by the store: an offset and a length that a reader would use to
size a buffer and a request. Entries are checked before use: lengths above the bound on one
stored object, ends past 2**53 (no object is larger; a byte-swapped or corrupt index gives
such values), and half-empty markers make that inner chunk a failure of its own, named by
shard and position, while every other chunk of the read goes on.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .cancel import CancelToken
from .codecs.sharding import EMPTY
from .errors import CodecError, StoreError, ZarrError
from .limits import human, limits
from .metadata.model import ArrayMetadata
from .plan import ReadItem
from .storage.base import ByteRequest, Store

_MAX_OBJECT = 2**53  # no stored object is larger; bigger index entries are corrupt
_EMPTY = int(EMPTY)

Index = list[list[int]]


class ShardIndexes:
    """The shard indexes of one array, as Python ints, in an LRU of ``ENTRIES`` shards."""

    ENTRIES = 4096

    def __init__(self, store: Store, meta: ArrayMetadata, path: str) -> None:
        assert meta.shard_layout is not None
        self.store = store
        self.meta = meta
        self.layout = meta.shard_layout
        self.path = path
        self._cache: OrderedDict[tuple[int, ...], Index | None] = OrderedDict()
        self._lock = threading.Lock()

    def locate(self, items: list[ReadItem], cancel: CancelToken | None = None) -> None:
        """Give every item the byte range of its inner chunk (``req``), None where the shard or
        the chunk is empty, or the error that keeps it from being read (``error``)."""
        cps = self.layout.chunks_per_shard
        by_shard: dict[tuple[int, ...], list[ReadItem]] = {}
        for item in items:
            by_shard.setdefault(tuple(c // n for c, n in zip(item.coords, cps)), []).append(item)
        indexes = self._indexes(list(by_shard), cancel)
        strides = [1] * len(cps)
        for d in range(len(cps) - 2, -1, -1):
            strides[d] = strides[d + 1] * cps[d + 1]
        for shard, members in by_shard.items():
            index = indexes[shard]
            key = self.meta.stored_key(shard)
            for item in members:
                if isinstance(index, ZarrError):
                    item.req, item.error = ByteRequest(key), index
                elif index is None:
                    item.req = None
                else:
                    pos = sum((c % n) * s for c, n, s in zip(item.coords, cps, strides))
                    self._entry(item, key, pos, *index[pos])

    def _entry(self, item: ReadItem, key: str, pos: int, offset: int, nbytes: int) -> None:
        if offset == _EMPTY and nbytes == _EMPTY:
            item.req = None
            return
        item.req = ByteRequest(key)
        where = f"shard {key} of {self.path}: index entry {pos} (inner chunk {list(item.coords)})"
        if offset == _EMPTY or nbytes == _EMPTY:
            item.error = CodecError(f"{where} is half empty (offset {offset}, {nbytes} bytes): the index is corrupt")
        elif offset + nbytes > _MAX_OBJECT:
            item.error = CodecError(f"{where} points past the end of the shard (offset {offset}, {nbytes} bytes); "
                                    "the index is corrupt or in the wrong byte order")
        elif nbytes > limits().object_bytes:
            item.error = CodecError(f"{where} claims {human(nbytes)}, more than the {human(limits().object_bytes)} "
                                    "allowed for one stored object")
        else:
            item.req = ByteRequest(key, offset, offset + nbytes)

    def _indexes(self, shards: list[tuple[int, ...]], cancel: CancelToken | None
                 ) -> dict[tuple[int, ...], Index | None | ZarrError]:
        """Per shard, its index, None if the shard is absent, or the error that kept it from
        being read (such shards are not cached, so a later read tries again)."""
        found: dict[tuple[int, ...], Index | None | ZarrError] = {}
        missing: list[tuple[int, ...]] = []
        with self._lock:
            for s in shards:
                if s in self._cache:
                    self._cache.move_to_end(s)
                    found[s] = self._cache[s]
                else:
                    missing.append(s)
        if not missing:
            return found
        n = self.layout.index_nbytes
        reqs = [ByteRequest(self.meta.stored_key(s), 0, n) if self.layout.index_location == "start"
                else ByteRequest(self.meta.stored_key(s), -n) for s in missing]
        results = self.store.get_many_settled(reqs, cancel)
        for s, req, data in zip(missing, reqs, results):
            found[s] = self._parse(req, data)
        with self._lock:
            for s in missing:
                if not isinstance(found[s], ZarrError):
                    self._cache[s] = found[s]  # type: ignore[assignment]
            while len(self._cache) > self.ENTRIES:
                self._cache.popitem(last=False)
        return found

    def _parse(self, req: ByteRequest, data: bytes | None | StoreError) -> Index | None | ZarrError:
        n = self.layout.index_nbytes
        if data is None or isinstance(data, StoreError):
            return data
        if len(data) < n:
            return CodecError(f"shard {req.key} of {self.path}: {len(data)} bytes cannot hold its {n}-byte index")
        try:
            return self.layout.decode_index(data).tolist()  # type: ignore[no-any-return]
        except CodecError as e:
            return type(e)(f"index of shard {req.key} of {self.path}: {e}")
        except (ZarrError, ValueError, TypeError) as e:
            return CodecError(f"index of shard {req.key} of {self.path}: {e}")
