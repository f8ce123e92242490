"""A reference set as a read-only store: each key is inline bytes or a range of another file.

A read resolves every requested key to its entry, checks each target against the store's
``AccessPolicy``, and hands the ranges of each target folder to that folder's zarrlib store in
one ``get_ranges`` call, which coalesces neighbouring ranges (a kerchunk'd NetCDF file's chunks
lie one after another) and bounds them like any read. A key that cannot be read (a bad entry,
a refused or missing target, a file shorter than the entry says) is answered with an error
naming it, so the reader records that chunk as a failure and reads the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Protocol

from ...cancel import CancelToken
from ...errors import StoreError
from ..access import AccessDeniedError, AccessPolicy
from ..base import ByteRequest, OnEach, Scratch, Store, check_size, fetch_each, slice_range
from .entries import BadReferenceError, Entry, Inline, Pointer
from .targets import Targets, folder_of, resolve_url, shown

__all__ = ["ReferenceStore", "References"]


class References(Protocol):
    """What a reference set offers the store (``JsonReferences``, ``ParquetReferences``)."""

    def keys(self) -> Iterator[str]: ...

    def lookup(self, key: str) -> Entry | None: ...


class ReferenceStore(Store):
    """``reference::URL``: the keys of a JSON or Parquet reference set, read through the
    stores of the files they point into."""

    def __init__(self, refs: References, url: str, name: str, base: str, targets: Targets,
                 owned: Sequence[Store] = ()) -> None:
        super().__init__(url)
        #: the reference file's name (``refs.json``), for messages and the tree's row
        self.name = name
        #: the folder (URL ending in ``/``) relative target paths are resolved against
        self.base = base
        self.refs = refs
        #: a remote set's targets are fetched in one batch per read; a local set's are read by
        #: each decode worker for its own block of chunks, so reading and decoding overlap
        self.prefers_batches = not base.startswith("file://")
        self.targets = targets
        self._owned = list(owned)
        self._listing: dict[str, tuple[list[str], list[str]]] | None = None
        self._lock = threading.Lock()

    @property
    def policy(self) -> AccessPolicy:
        """The prefixes this store may read; the app widens it once the user agrees."""
        return self.targets.policy

    # -- reads ------------------------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        return self.get_range(ByteRequest(key))

    def get_range(self, req: ByteRequest) -> bytes | None:
        return fetch_each(self, [req])[0]

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        by_folder: dict[str, list[tuple[int, ByteRequest, int | None, str]]] = {}
        for i, req in enumerate(reqs):
            answer: bytes | None | StoreError
            try:
                entry = self.refs.lookup(req.key)
                if entry is None:
                    answer = None
                elif isinstance(entry, Inline):
                    if req.start is None:
                        check_size(self.key_url(req.key), req, len(entry.data))
                    answer = slice_range(entry.data, req)
                else:
                    url = resolve_url(entry.url, self.base)
                    self.policy.check(shown(url), f"reference {req.key} of {self.name}")
                    folder, name = folder_of(url)
                    target, expected = _translate(req, entry, name, self.key_url(req.key))
                    if expected != 0:
                        by_folder.setdefault(folder, []).append((i, target, expected, shown(url)))
                        continue
                    answer = b""
            except StoreError as e:
                answer = e
            on_each(i, answer)
        for folder, items in by_folder.items():
            if cancel is not None:
                cancel.raise_if_cancelled()
            self._read_folder(folder, items, reqs, on_each, cancel, scratch)

    def _read_folder(self, folder: str, items: list[tuple[int, ByteRequest, int | None, str]],
                     reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None,
                     scratch: Scratch | None) -> None:
        """The ranges of one folder's files in one call to that folder's store."""
        try:
            store = self.targets.store(folder)
        except StoreError as e:
            for i, _, _, url in items:
                on_each(i, _named(e, reqs[i].key, url))
            return

        def landed(j: int, answer: bytes | memoryview | None | StoreError) -> None:
            i, target, expected, url = items[j]
            key = reqs[i].key
            if answer is None:
                on_each(i, StoreNotFound(f"reference {key} points to {url}, which does not exist"))
            elif isinstance(answer, StoreError):
                on_each(i, _named(answer, key, url))
            elif expected is not None and len(answer) != expected:
                on_each(i, BadReferenceError(
                    f"reference {key}: {url} ends before byte {target.stop} "
                    f"({len(answer)} of {expected} bytes from byte {target.start})"))
            else:
                on_each(i, answer)

        store.get_ranges([t for _, t, _, _ in items], landed, cancel, scratch)

    # -- listing ----------------------------------------------------------------------------
    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        listing = self._listed()
        keys, dirs = listing.get(prefix, ([], []))
        chunk_keys = getattr(self.refs, "chunk_keys", None)  # a Parquet set lists its chunks on demand
        if chunk_keys is not None and ".zarray" in keys:
            keys = sorted({*keys, *(k[len(prefix):] for k in chunk_keys(prefix))})
        return list(keys), list(dirs)

    def _listed(self) -> dict[str, tuple[list[str], list[str]]]:
        """Every folder's (keys, sub-folders), built once from the reference set's keys."""
        with self._lock:
            if self._listing is None:
                keys: dict[str, set[str]] = {}
                dirs: dict[str, set[str]] = {}
                for key in self.refs.keys():
                    parts = key.split("/")
                    for n in range(len(parts) - 1):
                        dirs.setdefault("/".join(parts[:n]) + ("/" if n else ""), set()).add(parts[n])
                    keys.setdefault("/".join(parts[:-1]) + ("/" if len(parts) > 1 else ""), set()).add(parts[-1])
                self._listing = {p: (sorted(keys.get(p, ())), sorted(dirs.get(p, ())))
                                 for p in keys.keys() | dirs.keys()}
            return self._listing

    def size(self, key: str) -> int | None:
        try:
            entry = self.refs.lookup(key)
        except StoreError:
            return None
        if isinstance(entry, Inline):
            return len(entry.data)
        return entry.length if isinstance(entry, Pointer) else None

    def close(self) -> None:
        self.targets.close()
        for s in self._owned:
            s.close()


class StoreNotFound(BadReferenceError):
    """A reference's target file does not exist."""


def _translate(req: ByteRequest, entry: Pointer, name: str, where: str) -> tuple[ByteRequest, int | None]:
    """The request for ``req``'s bytes in the target file, and how many bytes it must bring
    (None where the entry is a whole file, whose size the target store bounds)."""
    if entry.length is None:
        return ByteRequest(name, req.start, req.stop, req.limit), None
    if req.start is None:
        check_size(where, req, entry.length)
    start, stop = req.clip(entry.length)
    return ByteRequest(name, entry.offset + start, entry.offset + stop), stop - start


def _named(e: StoreError, key: str, url: str) -> StoreError:
    """``e`` with the reference's key in its message (an access refusal names it already)."""
    if isinstance(e, AccessDeniedError) or f"reference {key}" in str(e):
        return e
    try:
        named = type(e)(f"reference {key} ({url}): {e}")
    except TypeError:
        named = BadReferenceError(f"reference {key} ({url}): {e}")
    named.__cause__ = e
    return named
