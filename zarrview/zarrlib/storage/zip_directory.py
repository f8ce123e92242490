"""Where a zip archive's central directory lies, and where each member's bytes lie.

zipfile trusts the end record: it reads the whole central directory it names in one call and
makes an object per entry, and it reads a member wherever its entry points (past the end of
the data, into the directory, over another member). These checks run first, on the end
record and on every entry's extent, so a hostile archive costs a clear error naming the
entry rather than memory, time or a read of the wrong bytes.
"""

from __future__ import annotations

import struct
import zipfile
from dataclasses import dataclass
from typing import Protocol

from ..limits import human, limits

#: entries one archive may declare: a sharded OME-Zarr needs a few per array, an unsharded
#: one a chunk each; four million entries already cost zipfile about 2 GiB of objects
MAX_ENTRIES = 1 << 22

_EOCD = struct.Struct("<4s4H2LH")  # signature, disk, directory disk, entries here, entries, size, offset, comment
_LOCATOR = struct.Struct("<4sLQL")  # signature, disk of the ZIP64 record, its offset, disks
_EOCD64 = struct.Struct("<4sQ2H2L4Q")  # signature, size, made by, needed, disk, dir disk, entries x2, size, offset
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a member's local header, before its name and extra field
_MAX_COMMENT = 0xFFFF


class ZipDirectoryError(Exception):
    """What makes the archive unreadable as a whole (the caller names the archive)."""


@dataclass(frozen=True)
class EndRecord:
    """What the end of the archive says about its central directory."""

    #: where the central directory really starts (its stated offset plus any bytes prepended)
    directory_start: int
    directory_size: int
    entries: int
    comment: bytes
    zip64: bool
    file_size: int
    #: the file's last bytes, read to find the record, and where they start
    tail: bytes
    tail_start: int


class ArchiveFile(Protocol):
    """What an archive is read through: a local file, or a ``StoreFile`` of a remote store."""

    def seek(self, offset: int, whence: int = 0, /) -> int: ...

    def read(self, n: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


def read_end_record(f: ArchiveFile) -> EndRecord:
    """The end record, checked against the file's size and the directory bounds; one read of
    the file's last 64 KiB (the longest comment and the records fit in it), and one more for
    a ZIP64 record that lies before that."""
    size = f.seek(0, 2)
    tail_len = min(size, _EOCD.size + _MAX_COMMENT + _LOCATOR.size + _EOCD64.size)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    while at >= 0 and at + _EOCD.size > len(tail):
        at = tail.rfind(b"PK\x05\x06", 0, at)
    if at < 0:
        raise ZipDirectoryError("no end of central directory record (not a zip archive, or cut short)")
    _, disk, dir_disk, _, entries, dir_size, dir_offset, comment_len = _EOCD.unpack_from(tail, at)
    comment = tail[at + _EOCD.size: at + _EOCD.size + comment_len]
    eocd_pos = size - tail_len + at
    zip64 = False
    record_len = 0
    if at >= _LOCATOR.size and tail[at - _LOCATOR.size: at - _LOCATOR.size + 4] == b"PK\x06\x07":
        _, _, rec_offset, disks = _LOCATOR.unpack_from(tail, at - _LOCATOR.size)
        if disks > 1:
            raise ZipDirectoryError(f"it is split into {disks} parts (multi-part archives cannot be read)")
        rec_pos = eocd_pos - _LOCATOR.size - _EOCD64.size
        if rec_pos < 0:
            raise ZipDirectoryError("its ZIP64 end record lies before the start of the file")
        rec = tail[at - _LOCATOR.size - _EOCD64.size: at - _LOCATOR.size] if at >= _LOCATOR.size + _EOCD64.size \
            else _read_at(f, rec_pos, _EOCD64.size)
        sig, _, _, _, disk, dir_disk, _, entries, dir_size, dir_offset = _EOCD64.unpack(rec)
        if sig != b"PK\x06\x06":
            raise ZipDirectoryError(f"its ZIP64 end record is missing (the locator points at byte {rec_offset:,})")
        zip64 = True
        record_len = _LOCATOR.size + _EOCD64.size
    if disk != 0 or dir_disk != 0:
        raise ZipDirectoryError("it is one part of a multi-part archive (those cannot be read)")
    directory_start = eocd_pos - record_len - dir_size
    if directory_start < 0 or dir_offset > directory_start:
        raise ZipDirectoryError(f"its central directory of {human(dir_size)} does not fit before its end record")
    if dir_size > limits().metadata_bytes:
        raise ZipDirectoryError(f"its central directory holds {human(dir_size)}, more than the "
                                f"{human(limits().metadata_bytes)} allowed for metadata")
    if entries > MAX_ENTRIES:
        raise ZipDirectoryError(f"its end record declares {entries:,} entries, more than the {MAX_ENTRIES:,} read")
    return EndRecord(directory_start, dir_size, entries, comment, zip64, size, tail, size - tail_len)


class TailCachedFile:
    """A file whose last bytes, read once already, answer reads that fall within them: zipfile
    looks for the end record and the ZIP64 records with reads of its own, and a small
    archive's central directory lies in those bytes too, so over a network opening an archive
    costs the one read of its tail (and one of its directory, where that lies before)."""

    def __init__(self, f: ArchiveFile, end: EndRecord) -> None:
        self._f = f
        self._tail = end.tail
        self._start = end.tail_start
        self._size = end.file_size
        self._pos = 0

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = offset if whence == 0 else self._pos + offset if whence == 1 else self._size + offset
        if self._pos < 0:
            raise ValueError(f"negative seek position {self._pos}")
        return self._pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            n = max(0, self._size - self._pos)
        if self._pos >= self._start:
            out = self._tail[self._pos - self._start: self._pos - self._start + n]
        else:
            self._f.seek(self._pos)
            out = self._f.read(n)
        self._pos += len(out)
        return out

    def close(self) -> None:
        self._f.close()


def _read_at(f: ArchiveFile, pos: int, n: int) -> bytes:
    f.seek(pos)
    data = f.read(n)
    if len(data) != n:
        raise ZipDirectoryError(f"the file ends at byte {pos + len(data):,}, inside a record at byte {pos:,}")
    return data


def _name_bytes(info: zipfile.ZipInfo) -> int:
    try:
        return len(info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"))
    except UnicodeEncodeError:
        return len(info.orig_filename.encode("utf-8"))


def member_problems(infos: list[zipfile.ZipInfo], data_end: int) -> dict[str, str]:
    """Entry name -> why it cannot be read, for entries whose bytes would lie past the end of
    the members' region (``data_end``: where the central directory starts) or overlap another
    entry's. A member's smallest extent (its local header without an extra field, and for a
    stored member its bytes) is used, so no readable archive is refused: a compressed stream
    ends where its own data says, whatever size its entry claims, and what it inflates to is
    bounded when it is read."""
    problems: dict[str, str] = {}
    spans: list[tuple[int, int, str]] = []
    for info in infos:
        start = info.header_offset
        stored = info.compress_type == zipfile.ZIP_STORED
        end = start + _LOCAL.size + _name_bytes(info) + (info.compress_size if stored else 0)
        if start < 0 or end > data_end:
            what = f"its {info.compress_size:,} bytes" if stored else "its local header"
            problems[info.filename] = (f"{what} at byte {start:,} run past the members' region, "
                                       f"which ends at byte {data_end:,}")
        else:
            spans.append((start, end, info.filename))
    spans.sort()
    for (_, a_end, a), (b_start, _, b) in zip(spans, spans[1:]):
        if a_end > b_start:
            problems.setdefault(a, f"its bytes overlap those of {b!r}")
            problems.setdefault(b, f"its bytes overlap those of {a!r}")
    return problems


def local_data_start(header: bytes, offset: int) -> tuple[int, int]:
    """(where a member's data starts, how many header bytes precede it) from the first bytes
    of its local header at ``offset``."""
    if len(header) < _LOCAL.size or header[:4] != b"PK\x03\x04":
        raise ZipDirectoryError(f"no local header at byte {offset:,}")
    fields = _LOCAL.unpack_from(header)
    head = _LOCAL.size + fields[-2] + fields[-1]
    return offset + head, head


LOCAL_HEADER_SIZE = _LOCAL.size
