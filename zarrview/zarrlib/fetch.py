"""Fetching a read's stored bytes: one chunk, one run of a shard's inner chunks, or a batch.

Local stores are read inside the decode workers (``fetch_run``, ``fetch_one``), so reading
and decoding overlap on every core. Stores that prefer batches (network) get every range in
one ``get_many_settled`` with byte-adjacent ranges merged (``fetch_batch``); each group is
handed on as its answer lands, so decoding starts before the last response arrives.

v2 arrays may store their chunks under nested keys although the metadata says nothing; the
first chunk found decides which spelling the array uses (``alt_keys``), so a missing chunk
costs one extra request at most once per array.
"""

from __future__ import annotations

from collections.abc import Callable

from .cancel import CancelToken
from .errors import CodecError, StoreError
from .metadata.model import ArrayMetadata
from .plan import ReadItem, merge_ranges
from .storage.base import ByteRequest, Scratch, Store

Unit = list[ReadItem]


def chunk_name(meta: ArrayMetadata, path: str, key: str, coords: tuple[int, ...]) -> str:
    """How error messages name a chunk: by key, or by position in its shard."""
    if meta.shard_layout is None:
        return f"chunk {key} of {path}"
    return f"inner chunk {list(coords)} in shard {key} of {path}"


def past_end(name: str, req: ByteRequest, got: int | None = None) -> CodecError:
    """A shard index entry that points past the end of its shard: that chunk alone is bad."""
    found = "" if got is None else f", got {got}"
    return CodecError(f"{name}: the shard index points past the end of the shard "
                      f"(bytes {req.start}-{req.stop}{found})")


class Fetcher:
    """Fetches one array's chunks from its store; remembers which v2 key spelling it uses."""

    def __init__(self, store: Store, meta: ArrayMetadata, path: str) -> None:
        self.store = store
        self.meta = meta
        self.path = path
        self.alt_keys: bool | None = None  # v2 undeclared nested keys: decided on first hit

    def name(self, key: str, coords: tuple[int, ...]) -> str:
        return chunk_name(self.meta, self.path, key, coords)

    def fetch_run(self, unit: Unit, raw: Scratch) -> None:
        """One read for a run of byte-adjacent inner chunks; each item gets its slice (``data``),
        None for a shard that vanished, or its own error when the run is short."""
        reqs = [it.req for it in unit]
        key = reqs[0].key  # type: ignore[union-attr]
        start = min(r.start for r in reqs)  # type: ignore[union-attr,type-var]
        stop = max(r.stop for r in reqs)  # type: ignore[union-attr,type-var]
        data = self.store.read_into(ByteRequest(key, start, stop), raw)
        for it in unit:
            req = it.req
            assert req is not None and req.start is not None and req.stop is not None
            if data is None:
                it.req = None
                continue
            lo, hi = req.start - start, req.stop - start
            if hi > len(data):  # this entry alone is bad: its neighbours in the run still read
                it.error = past_end(self.name(key, it.coords), req)
            else:
                it.data = memoryview(data)[lo:hi]

    def fetch_one(self, item: ReadItem, scratch: Scratch | None = None) -> object:
        """One chunk's bytes (into ``scratch`` when given), None when it is not stored."""
        req = item.req
        assert req is not None
        data = self.store.get_range(req) if scratch is None else self.store.read_into(req, scratch)
        if data is None and self.meta.alt_stored_key is not None:
            self.fetch_alt(item)
            data = item.data
        elif data is not None and self.meta.alt_stored_key is not None:
            self.alt_keys = False
        if data is not None and req.start is not None and req.stop is not None and len(data) != req.stop - req.start:
            raise past_end(self.name(req.key, item.coords), req, len(data))
        return data

    def fetch_batch(self, items: list[ReadItem], cancel: CancelToken | None, ready: Callable[[Unit], None]) -> None:
        """Fetch every item's range in one batch (byte-adjacent ranges of a key merged); each
        group of items is handed to ``ready`` as soon as its answer lands."""
        wanted = [it for it in items if it.req is not None and it.error is None]
        known = [it for it in items if not (it.req is not None and it.error is None)]
        if known:
            ready(known)  # errors and chunks known to be empty need no request
        if self.alt_keys:
            for it in wanted:
                assert it.req is not None and self.meta.alt_stored_key is not None
                it.req = ByteRequest(self.meta.alt_stored_key(it.coords), it.req.start, it.req.stop)
        groups = merge_ranges([it.req for it in wanted])  # type: ignore[misc]
        if cancel is not None:
            cancel.raise_if_cancelled()

        def landed(i: int, data: bytes | None | StoreError) -> None:
            group, members = groups[i]
            unit = [wanted[idx] for idx in members]
            for it in unit:
                self._assign(it, group, data)
            ready(unit)

        self.store.get_many_settled([g for g, _ in groups], cancel, on_each=landed)

    def _assign(self, it: ReadItem, group: ByteRequest, data: bytes | None | StoreError) -> None:
        req = it.req
        assert req is not None
        if isinstance(data, StoreError):
            it.error = data
        elif data is None:
            alt = self.meta.alt_stored_key
            if alt is not None and self.alt_keys is not False and req.key != alt(it.coords):
                it.alt = True  # v2 keys may be nested although the metadata says nothing: try that
            else:
                it.req = None
        elif req.start is None or group.start is None:
            it.data = data
            if self.meta.alt_stored_key is not None and self.alt_keys is None:
                self.alt_keys = False  # found under the declared key: no need to try the other
        else:
            lo, hi = req.start - group.start, req.stop - group.start  # type: ignore[operator]
            if hi > len(data):
                it.error = past_end(self.name(req.key, it.coords), req)
            else:
                it.data = memoryview(data)[lo:hi]

    def fetch_alt(self, it: ReadItem) -> None:
        """A chunk missing under its declared key, tried under the other v2 separator unless the
        array already proved to use the declared one (then it is simply missing)."""
        assert self.meta.alt_stored_key is not None and it.req is not None
        it.alt = False
        if self.alt_keys is False:
            it.req = None
            return
        alt = ByteRequest(self.meta.alt_stored_key(it.coords), it.req.start, it.req.stop)
        data = self.store.get_range(alt)
        if data is None:
            it.req = None
        else:
            self.alt_keys = True
            it.req, it.data = alt, data
