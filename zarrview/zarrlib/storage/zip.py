"""Zip archives (``.zip``, single-file OME-Zarr ``.ozx``), local or remote (read as a file of
the store that holds them, ``store_file``), read in place without extracting.

Archives made with ``zip -r x.zip x.zarr`` hold every key under one top folder; that folder
is detected and used as the root so both layouts open the same way.

Stored (uncompressed) members, which single-file OME-Zarr recommends, are read straight from
the archive's file: a range of a shard costs one read of that range, and a small member one
read of its header and bytes together, which matters over a network where zipfile's own
reader makes three reads per member and reads everything before a range to seek to it.
When the comment says the ``zarr.json`` entries lead the archive, their bytes (metadata only)
are read in one request the first time one of them is asked for.
Over a network the stored members of one read are fetched together through the archive's own
store (``zip_batch``), not one after another.
"""

from __future__ import annotations

import lzma
import struct
import threading
import zipfile
import zlib
from collections.abc import Sequence

from ..cancel import CancelToken
from ..errors import StoreError, TooLargeError
from ..limits import human, limits
from .base import ByteRequest, OnEach, Scratch, Store, check_size
from .zip_batch import ArchiveRanges, MemberRead
from .ozx import ArchiveInfo, describe_archive
from .zip_directory import (LOCAL_HEADER_SIZE, ArchiveFile, TailCachedFile, ZipDirectoryError, local_data_start, member_problems,
                            read_end_record)

#: what zipfile raises for damaged, encrypted or unsupported members (zlib.error and lzma's
#: LZMAError from corrupt data, NotImplementedError for unknown methods, RuntimeError when
#: encrypted), all a broken store rather than a bug here
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError,
               zlib.error, lzma.LZMAError, struct.error, KeyError, IndexError, OverflowError)


def _reason(e: BaseException) -> str:
    return str(e) if isinstance(e, (zipfile.BadZipFile, OSError)) else f"{type(e).__name__}: {e}"


_META_NAMES = ("zarr.json", ".zgroup", ".zarray", ".zattrs", ".zmetadata")
#: bytes read past a member's local header guess, so one read usually holds header and data
_HEADER_SLACK = 256
#: a range ending within this many bytes of a member's start is read together with its local
#: header the first time, where it starts within ``_SMALL_GAP`` bytes of it (the bytes between
#: are read for nothing)
_SMALL = 1 << 20
_SMALL_GAP = 16 << 10
#: the most bytes read at once for the leading zarr.json entries of an archive
_METADATA_SPAN = 8 << 20


class ZipStore(Store):
    """``archive``: for a remote archive, the store of its folder and its name there, through
    which the stored members of one read are fetched together (``zip_batch``)."""

    def __init__(self, fileobj: ArchiveFile, url: str, archive: tuple[Store, str] | None = None) -> None:
        super().__init__(url)
        self._file: ArchiveFile = fileobj
        try:
            end = read_end_record(fileobj)
            self._file = TailCachedFile(fileobj, end)  # the methods zipfile uses
            self._zip = zipfile.ZipFile(self._file, "r")
        except (ZipDirectoryError, *_ZIP_ERRORS) as e:
            fileobj.close()  # nothing will read it: the caller opened it for this store
            reason = str(e) if isinstance(e, ZipDirectoryError) else _reason(e)
            raise StoreError(f"{url} is not a readable zip archive: {reason}") from e
        self._lock = threading.Lock()
        entries = [i for i in self._zip.infolist() if not i.is_dir()]
        self._infos = {i.filename: i for i in entries}
        self._data_end = end.directory_start
        self._unreadable = member_problems(entries, self._data_end)
        self._data_start: dict[str, int] = {}
        self._metadata: dict[str, bytes] | None = None
        self._prefix = self._detect_prefix()
        self._archive = describe_archive(url, end.comment, end.zip64, entries, self._prefix, self._unreadable)
        self._leading = self._leading_metadata(entries) if self._archive.json_first else []
        self._leading_names = {i.filename for i in self._leading}
        self._ranges: ArchiveRanges | None = None
        if archive is not None:
            self._ranges = ArchiveRanges(archive[0], archive[1], url, self._data_end,
                                         self._data_start.get, self._data_start.setdefault)
            self.prefers_batches = True  # one read's members go out together

    @property
    def archive(self) -> ArchiveInfo:
        """The archive's comment (single-file OME-Zarr: its version, whether ``zarr.json``
        entries come first) and how its layout departs from the single-file specification."""
        return self._archive

    def _detect_prefix(self) -> str:
        if any(n in self._infos for n in _META_NAMES):
            return ""
        tops = {name.split("/", 1)[0] for name in self._infos if "/" in name}
        if len(tops) == 1:
            top = tops.pop() + "/"
            if any(top + n in self._infos for n in _META_NAMES):
                return top
        return ""

    def _leading_metadata(self, entries: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
        """The stored ``zarr.json`` entries that lead the directory, where their bytes lie
        close enough together to be read at once."""
        leading: list[zipfile.ZipInfo] = []
        for info in entries:
            if info.filename != "zarr.json" and not info.filename.endswith("/zarr.json"):
                break
            readable = info.filename not in self._unreadable and self._infos[info.filename] is info  # the last of a name
            if info.compress_type == zipfile.ZIP_STORED and readable:
                leading.append(info)
        if not leading:
            return []
        lo, hi = self._span(leading)
        return leading if hi - lo <= _METADATA_SPAN else []

    def _span(self, infos: list[zipfile.ZipInfo]) -> tuple[int, int]:
        lo = min(i.header_offset for i in infos)
        hi = max(i.header_offset + self._header_guess(i) + i.compress_size for i in infos)
        return lo, min(hi, self._data_end)

    @staticmethod
    def _header_guess(info: zipfile.ZipInfo) -> int:
        """How many bytes a member's local header probably takes, with room to spare: its name
        and extra field are usually those of its directory entry."""
        return LOCAL_HEADER_SIZE + len(info.orig_filename.encode("utf-8", "replace")) + len(info.extra) + _HEADER_SLACK

    def _read_at(self, pos: int, n: int) -> bytes:
        self._file.seek(pos)
        data = self._file.read(n)
        if len(data) != n:
            raise ZipDirectoryError(f"the file ends at byte {pos + len(data):,}, short of byte {pos + n:,}")
        return data

    def _leading_bytes(self, info: zipfile.ZipInfo) -> bytes | None:
        """A leading ``zarr.json`` member's bytes, from one read of all of them (the first time
        any is asked for); None for any other member."""
        if info.filename not in self._leading_names:
            return None
        with self._lock:
            if self._metadata is None:
                self._metadata = {}
                lo, hi = self._span(self._leading)
                try:
                    blob = self._read_at(lo, hi - lo)
                except (*_ZIP_ERRORS, ZipDirectoryError):
                    return None  # each member is read on its own instead, with its own error
                for i in self._leading:
                    at = i.header_offset - lo
                    try:
                        start, head = local_data_start(blob[at:at + LOCAL_HEADER_SIZE], i.header_offset)
                    except ZipDirectoryError:
                        continue
                    if start + i.compress_size <= min(hi, self._data_end):
                        self._data_start[i.filename] = start
                        self._metadata[i.filename] = blob[at + head: at + head + i.compress_size]
            return self._metadata.get(info.filename)

    def _member(self, key: str) -> zipfile.ZipInfo | None:
        info = self._infos.get(self._prefix + key)
        if info is not None and info.filename in self._unreadable:
            raise StoreError(f"cannot read {key} from {self.url}: the entry {info.filename!r} is damaged: "
                             f"{self._unreadable[info.filename]}")
        return info

    def _stored(self, info: zipfile.ZipInfo, start: int, stop: int) -> bytes:
        """Bytes ``[start, stop)`` of a stored member, read from the archive's file: the first
        read of a member reads its local header (and, for a small member, its bytes with it)."""
        try:
            if info.compress_size != info.file_size:
                raise ZipDirectoryError(f"the stored entry declares {info.file_size:,} bytes but occupies "
                                        f"{info.compress_size:,}")
            with self._lock:
                data_start = self._data_start.get(info.filename)
                if data_start is not None:
                    return self._read_at(data_start + start, stop - start)
                guess = self._header_guess(info)
                together = stop <= _SMALL and start <= _SMALL_GAP
                want = min(guess + stop if together else guess, self._data_end - info.header_offset)
                blob = self._read_at(info.header_offset, want)
                data_start, head = local_data_start(blob, info.header_offset)
                if data_start + info.compress_size > self._data_end:
                    raise ZipDirectoryError(f"its bytes at byte {data_start:,} run past the members' region, "
                                            f"which ends at byte {self._data_end:,}")
                self._data_start[info.filename] = data_start
                if head + stop <= len(blob):
                    return blob[head + start: head + stop]
                return self._read_at(data_start + start, stop - start)
        except ZipDirectoryError as e:
            raise StoreError(f"cannot read {info.filename!r} from {self.url}: {e}") from e
        except _ZIP_ERRORS as e:
            raise StoreError(f"cannot read {info.filename!r} from {self.url}: {_reason(e)}") from e

    def get(self, key: str) -> bytes | None:
        return self._whole(key, ByteRequest(key))

    def _whole(self, key: str, req: ByteRequest) -> bytes | None:
        """The member's declared size is checked first, and bounds each step of inflating it:
        zipfile's own ``read`` of a whole member asks its file for up to 2 GiB at once where the
        directory claims a 4 GiB compressed size, and inflates all it is given before cutting
        the result to the declared size."""
        info = self._member(key)
        if info is None:
            return None
        size = info.file_size
        check_size(self.key_url(key), req, size)
        if info.compress_type == zipfile.ZIP_STORED:
            cached = self._leading_bytes(info)
            data = cached if cached is not None else self._stored(info, 0, size)
            if zlib.crc32(data) != info.CRC:
                raise StoreError(f"cannot read {key} from {self.url}: its bytes do not match the CRC-32 of "
                                 f"the entry {info.filename!r}")
            return data
        try:
            with self._lock, self._zip.open(info) as f:
                data = f.read(size)
        except _ZIP_ERRORS as e:
            raise StoreError(f"cannot read {key} from {self.url}: {_reason(e)}") from e
        if len(data) != size:  # a stream that ends early, under a CRC that matches what it holds
            raise StoreError(f"cannot read {key} from {self.url}: the member holds {len(data)} bytes, "
                             f"not the {size} its directory entry declares")
        return data

    def get_range(self, req: ByteRequest) -> bytes | None:
        info = self._member(req.key)
        if info is None:
            return None
        if req.start is None:
            return self._whole(req.key, req)
        size = info.file_size
        if info.compress_type != zipfile.ZIP_STORED and size > limits().object_bytes:
            raise TooLargeError(f"cannot read {req.describe()} from {self.url}: a range of a compressed member of "
                                f"{human(size)} needs all of it inflated, more than the "
                                f"{human(limits().object_bytes)} allowed")
        start, stop = req.clip(size)
        if info.compress_type == zipfile.ZIP_STORED:
            return self._stored(info, start, stop) if stop > start else b""
        try:
            with self._lock, self._zip.open(info) as f:
                f.seek(start)
                return f.read(stop - start)
        except _ZIP_ERRORS as e:
            raise StoreError(f"cannot read {req.describe()} from {self.url}: {_reason(e)}") from e

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        """A remote archive's stored members in one batch on its store; the rest (compressed
        members, leading metadata, a local archive) one by one."""
        if self._ranges is None:
            super().get_ranges(reqs, on_each, cancel, scratch)
            return
        batch: list[MemberRead] = []
        for i, req in enumerate(reqs):
            try:
                read = self._member_read(i, req)
            except StoreError as e:
                on_each(i, e)
                continue
            if read is None:
                try:
                    on_each(i, self.get_range(req))
                except StoreError as e:
                    on_each(i, e)
            else:
                batch.append(read)
        if batch:
            self._ranges.read(batch, on_each, cancel)

    def _member_read(self, index: int, req: ByteRequest) -> MemberRead | None:
        """The batched read of a stored member's range, or None where it is read one by one."""
        info = self._member(req.key)
        if info is None or info.compress_type != zipfile.ZIP_STORED or info.filename in self._leading_names:
            return None
        size = info.file_size
        if info.compress_size != size:
            return None  # the one-by-one read names the damage
        if req.start is None:
            check_size(self.key_url(req.key), req, size)
            start, stop, crc = 0, size, info.CRC
        else:
            start, stop = req.clip(size)
            crc = None
            if stop <= start:
                return None
        return MemberRead(index, req.key, info.filename, info.header_offset, self._header_guess(info),
                          info.compress_size, start, stop, crc)

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        full = self._prefix + prefix
        keys: set[str] = set()
        dirs: set[str] = set()
        for name in self._infos:
            if name.startswith(full):
                head, sep, _ = name[len(full):].partition("/")
                (dirs if sep else keys).add(head)
        return sorted(keys), sorted(dirs)

    def size(self, key: str) -> int | None:
        info = self._infos.get(self._prefix + key)
        return None if info is None else info.file_size

    def close(self) -> None:
        self._zip.close()
        self._file.close()  # zipfile leaves a file it was given open
        if self._ranges is not None:
            self._ranges.store.close()
