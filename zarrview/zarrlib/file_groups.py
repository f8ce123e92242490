"""Chunk files read a group at a time: one system call for a worker's next files, not three each.

A local read whose chunks are one file each opened, read and closed every file through ``os``,
and each of those calls let go of the GIL (issue 15). Where the store can read many objects at
once (``Store.read_files``: a local directory through io_uring) a worker reads its next group of
consecutive one-file units with one call, each file into a region of a buffer as large as its
chunk may be stored (``region``), then decodes them. What the group read could not settle (an
error, a file larger than its region, a read that must wait for the disk) goes to the per-chunk
path, which reads it again and names what is wrong; a file that does not exist is a chunk
never written (the fill value) unless the array may spell its keys another way, which that
path then tries.
"""

from __future__ import annotations

from collections.abc import Sequence

from .plan import ReadItem
from .storage.base import Scratch
from .storage.uring import MAX_FILES, MISSING

#: bytes of a worker's buffer a group may fill (the group is at most ``MAX_FILES`` files)
GROUP_BYTES = 4 << 20


def region(nbytes: int, max_bytes: int) -> int:
    """The most bytes a chunk of ``nbytes`` decoded may take stored, plus one: any compressor's
    worst case (zstd: n/256 more and a header; blosc: 16 bytes; lz4: n/255), with room to spare.
    A file that fills it is larger than a chunk should be, and is read on its own."""
    return min(nbytes + (nbytes >> 6) + 1024, max_bytes) + 1


def group_end(block: Sequence[list[ReadItem]], i: int, most: int) -> int:
    """Where the group of one-file units from ``block[i]`` ends: at the first unit that is a
    run of a shard's chunks, or after ``most``."""
    end = min(len(block), i + min(most, MAX_FILES))
    j = i
    while j < end and len(block[j]) == 1 and readable(block[j][0]):
        j += 1
    return j


def readable(item: ReadItem) -> bool:
    """Whether a group read can take ``item``: a whole object still to be read."""
    req = item.req
    return item.error is None and not item.alt and req is not None and item.data is None and req.start is None


def read_group(reader: object, items: list[ReadItem], into: bytearray, size: int) -> list[int] | None:
    """Read ``items`` (all ``readable``) into consecutive ``size``-byte regions of ``into``; each
    one's length, 0 where it is left to the per-chunk path; None where the store cannot (then
    nothing was read). Items found missing are made chunks never written (``req`` None)."""
    fetcher = reader._fetcher  # type: ignore[attr-defined]
    if fetcher.alt_keys:  # the array spells its keys the other way: the per-chunk path knows how
        return None
    got = fetcher.store.read_files([it.req.key for it in items], into, size)
    if got is None:
        return None
    may_be_alt = fetcher.meta.alt_stored_key is not None
    lengths = []
    for item, n in zip(items, got):
        if n > 0:
            if may_be_alt:
                fetcher.alt_keys = False  # found under the declared spelling, as ``fetch_one`` decides
            lengths.append(n)
            continue
        if n == MISSING and not (may_be_alt and fetcher.alt_keys is None):
            item.req = None  # not stored: the fill value
        lengths.append(0)
    return lengths


def read_in_place(reader: object, items: list[ReadItem], raw: Scratch, size: int) -> None:
    """``items`` read into ``size``-byte regions of a worker's buffer ``raw``, for the per-chunk
    path to decode: each file read whole gets its bytes (``data``), the others are left for that
    path to read, and are put last, since their reads reuse the buffer. Where the group cannot
    be read (``read_group`` None) nothing is, and the per-chunk path reads every item."""
    buf = raw.grown(len(items) * size)
    got = read_group(reader, items, buf, size)
    if got is None:
        return
    view = memoryview(buf)
    later = []
    first = 0
    for k, (item, n) in enumerate(zip(items, got)):
        if n:
            item.data = view[k * size:k * size + n]
            items[first] = item
            first += 1
        else:
            later.append(item)
    items[first:] = later
