"""Runs of shard chunks read a group at a time: one system call for a worker's next runs.

A sharded read's units are runs of byte-adjacent inner chunks; as zarr-python writes a shard's
chunks in Morton order, the chunks of one plane are seldom adjacent, so most runs are one chunk,
and each was one ``os.preadv``, one release of the GIL (issue 15). Where the store can read many
ranges at once (``Store.read_ranges``: a local directory through io_uring) a worker reads its
next runs with one call, back to back into its buffer, so that their zstd frames also decode
many per call. A run the group read could not read whole is read again alone, as before, which
names what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .plan import ReadItem
from .storage.base import ByteRequest, Scratch
from .storage.uring import MAX_RANGES


def _ranged(item: ReadItem) -> bool:
    req = item.req
    return (item.error is None and not item.alt and item.data is None and req is not None
            and req.start is not None and req.start >= 0 and req.stop is not None and req.stop > req.start)


def span(unit: list[ReadItem]) -> ByteRequest:
    """The bytes of a run: from its first chunk's start to its last one's stop."""
    reqs = [it.req for it in unit]
    return ByteRequest(reqs[0].key, min(r.start for r in reqs), max(r.stop for r in reqs))  # type: ignore[union-attr,type-var,misc]


def ranges_end(block: Sequence[list[ReadItem]], i: int, room: int) -> int:
    """Where the group of runs from ``block[i]`` ends: at the first unit that is not a run of
    ranges still to be read, after ``MAX_RANGES`` runs, or before the bytes pass ``room``."""
    end = min(len(block), i + MAX_RANGES)
    j, used = i, 0
    while j < end:
        unit = block[j]
        if not all(_ranged(it) for it in unit):
            break
        s = span(unit)
        used += s.stop - s.start  # type: ignore[operator]
        if used > room:
            break
        j += 1
    return j


def read_runs(reader: Any, units: Sequence[list[ReadItem]], scratch: Scratch
              ) -> tuple[list[tuple[ReadItem, int, int]], list[list[ReadItem]], int]:
    """``units`` (from ``ranges_end``) read back to back from the start of ``scratch`` with one
    call: (item, offset, length) of each chunk read, with its ``data`` set; the runs left to be
    read alone; and the bytes the group took. Where the buffer cannot be had, every run is left;
    where the store reads one range at a time, too, and the reader stops asking (``_ranges``)."""
    spans = [span(u) for u in units]
    total = sum(s.stop - s.start for s in spans)  # type: ignore[operator]
    try:
        into = scratch.grown(total)
    except MemoryError:  # read alone, each named if it cannot be
        return [], list(units), 0
    whole = reader.store.read_ranges(spans, into)
    if whole is None:
        reader._ranges = False
        return [], list(units), 0
    view = memoryview(into)
    placed: list[tuple[ReadItem, int, int]] = []
    left: list[list[ReadItem]] = []
    at = 0
    for unit, s, ok in zip(units, spans, whole):
        if not ok:
            left.append(unit)
        else:
            for item in unit:
                lo = at + item.req.start - s.start  # type: ignore[union-attr,operator]
                n = item.req.stop - item.req.start  # type: ignore[union-attr,operator]
                item.data = view[lo:lo + n]
                placed.append((item, lo, n))
        at += s.stop - s.start  # type: ignore[operator]
    return placed, left, total
