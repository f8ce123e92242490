"""Stored members of a remote zip archive read together: one batch of range requests on the
archive's own store instead of one request after another through a file object.

A plane of a remote single-file OME-Zarr is many members; read one by one, each costs a round
trip (16 chunks at 50 ms: 800 ms). Here the members' local headers not yet known are read in
one batch, then every member's bytes in a second one (one batch once the headers are known),
all through the archive store's ``get_ranges``, which keeps them in flight together.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..cancel import CancelToken
from ..errors import StoreError
from .base import ByteRequest, OnEach, Store
from .zip_directory import ZipDirectoryError, local_data_start


class MemberRead(NamedTuple):
    """Request ``slot`` as bytes ``[start, stop)`` of the stored member ``name`` (its entry
    starting at ``header_offset``, ``stored`` bytes long); ``crc`` where the whole member is
    read and its CRC-32 must match."""

    slot: int
    key: str
    name: str
    header_offset: int
    header_guess: int
    stored: int
    start: int
    stop: int
    crc: int | None


class ArchiveRanges:
    """Reads members' byte ranges of the archive ``name`` in ``store`` (the archive's folder),
    remembering where each member's data starts; ``data_end`` bounds every member."""

    def __init__(self, store: Store, name: str, url: str, data_end: int,
                 known: Callable[[str], int | None], learn: Callable[[str, int], object]) -> None:
        self.store = store
        self.name = name
        self.url = url
        self.data_end = data_end
        self._known = known
        self._learn = learn

    def read(self, reads: Sequence[MemberRead], on_each: OnEach, cancel: CancelToken | None) -> None:
        """Every read answered once through ``on_each(read.slot, ...)``."""
        starts: dict[str, int | StoreError] = {}
        unknown: dict[str, MemberRead] = {}
        for r in reads:
            known = self._known(r.name)
            if known is None:
                unknown.setdefault(r.name, r)
            else:
                starts[r.name] = known
        if unknown:
            self._locate(list(unknown.values()), starts, cancel)
        ready: list[MemberRead] = []
        at: dict[str, int] = {}
        for r in reads:
            found = starts[r.name]
            if isinstance(found, StoreError):
                on_each(r.slot, found)
            else:
                ready.append(r)
                at[r.name] = found
        if not ready:
            return

        def landed(i: int, data: bytes | memoryview | None | StoreError) -> None:
            r = ready[i]
            if data is None:
                data = StoreError(f"cannot read {r.key} from {self.url}: the archive ended before its bytes")
            elif not isinstance(data, StoreError):
                if len(data) != r.stop - r.start:
                    data = StoreError(f"cannot read {r.key} from {self.url}: the archive holds {len(data):,} of its "
                                      f"{r.stop - r.start:,} bytes")
                elif r.crc is not None and zlib.crc32(data) != r.crc:
                    data = StoreError(f"cannot read {r.key} from {self.url}: its bytes do not match the CRC-32 "
                                      f"of the entry {r.name!r}")
            on_each(r.slot, data)

        reqs = [ByteRequest(self.name, at[r.name] + r.start, at[r.name] + r.stop) for r in ready]
        self.store.get_ranges(reqs, landed, cancel)

    def _locate(self, members: list[MemberRead], starts: dict[str, int | StoreError],
                cancel: CancelToken | None) -> None:
        """Where each member's data starts, from one batch of its local headers."""
        reqs = [ByteRequest(self.name, m.header_offset, min(m.header_offset + m.header_guess, self.data_end))
                for m in members]

        def landed(i: int, data: bytes | memoryview | None | StoreError) -> None:
            m = members[i]
            if isinstance(data, StoreError):
                starts[m.name] = data
                return
            try:
                start, _ = local_data_start(bytes(data or b""), m.header_offset)
                if start + m.stored > self.data_end:
                    raise ZipDirectoryError(f"its bytes at byte {start:,} run past the members' region, "
                                            f"which ends at byte {self.data_end:,}")
            except ZipDirectoryError as e:
                starts[m.name] = StoreError(f"cannot read {m.name!r} from {self.url}: {e}")
                return
            starts[m.name] = start
            self._learn(m.name, start)

        self.store.get_ranges(reqs, landed, cancel)

