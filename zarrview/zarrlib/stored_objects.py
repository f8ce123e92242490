"""How many objects an array has stored, and how many bytes: counted from a listing of what is
below the array, never from the keys of its grid."""

from __future__ import annotations

from .cancel import CancelToken
from .hierarchy import Hierarchy, NodeDoc

#: names below an array that are documents, not chunks or shards
NOT_CHUNKS = frozenset({"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"})


def count_stored(h: Hierarchy, doc: NodeDoc, cancel: CancelToken | None, limit: int | None) -> StoredObjects | None:
    """What the array of ``doc`` has stored, or None where the store cannot list; counting stops
    after ``limit`` objects (``complete`` is then False)."""
    if not h.store.can_list:
        return None
    count = total = 0
    for key, size in h.store.walk_sizes(h.stored_keys_prefix(doc), cancel):
        if key.rsplit("/", 1)[-1] in NOT_CHUNKS:
            continue
        if limit is not None and count >= limit:
            return StoredObjects(count, total, complete=False)
        count += 1
        total += size or 0
    return StoredObjects(count, total)


class StoredObjects(tuple[int, int]):
    """(count, total bytes) of an array's stored objects, as the tuple it always was;
    ``complete`` is False where counting stopped at a limit (there are more)."""

    complete: bool

    def __new__(cls, count: int, nbytes: int, complete: bool = True) -> StoredObjects:
        self = super().__new__(cls, (count, nbytes))
        self.complete = complete
        return self

    @property
    def count(self) -> int:  # type: ignore[override]  # the name callers read (app's metadata panel); hides tuple.count
        return self[0]

    @property
    def nbytes(self) -> int:
        return self[1]
