"""Zip archives, local or opened through fsspec, read in place without extracting.

Archives made with ``zip -r x.zip x.zarr`` hold every key under one top folder; that folder
is detected and used as the root so both layouts open the same way.
"""

from __future__ import annotations

import lzma
import struct
import threading
import zipfile
import zlib
from typing import IO

from ..errors import StoreError, TooLargeError
from ..limits import human, limits
from .base import ByteRequest, Store, check_size

#: what zipfile raises for damaged, encrypted or unsupported members (zlib.error and lzma's
#: LZMAError from corrupt data, NotImplementedError for unknown methods, RuntimeError when
#: encrypted), all a broken store rather than a bug here
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError,
               zlib.error, lzma.LZMAError, struct.error, KeyError, IndexError, OverflowError)


def _reason(e: BaseException) -> str:
    return str(e) if isinstance(e, (zipfile.BadZipFile, OSError)) else f"{type(e).__name__}: {e}"


_META_NAMES = ("zarr.json", ".zgroup", ".zarray", ".zattrs", ".zmetadata")


class ZipStore(Store):
    def __init__(self, fileobj: IO[bytes], url: str) -> None:
        super().__init__(url)
        try:
            self._zip = zipfile.ZipFile(fileobj, "r")
        except _ZIP_ERRORS as e:
            raise StoreError(f"{url} is not a readable zip archive: {_reason(e)}") from e
        self._lock = threading.Lock()
        self._infos = {i.filename: i for i in self._zip.infolist() if not i.is_dir()}
        self._prefix = self._detect_prefix()

    def _detect_prefix(self) -> str:
        if any(n in self._infos for n in _META_NAMES):
            return ""
        tops = {name.split("/", 1)[0] for name in self._infos if "/" in name}
        if len(tops) == 1:
            top = tops.pop() + "/"
            if any(top + n in self._infos for n in _META_NAMES):
                return top
        return ""

    def get(self, key: str) -> bytes | None:
        return self._whole(key, ByteRequest(key))

    def _whole(self, key: str, req: ByteRequest) -> bytes | None:
        """The member's declared size is checked first, and bounds each step of inflating it:
        zipfile's own ``read`` of a whole member asks its file for up to 2 GiB at once where the
        directory claims a 4 GiB compressed size, and inflates all it is given before cutting
        the result to the declared size."""
        info = self._infos.get(self._prefix + key)
        if info is None:
            return None
        size = info.file_size
        check_size(self.key_url(key), req, size)
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
        info = self._infos.get(self._prefix + req.key)
        if info is None:
            return None
        if req.start is None:
            return self._whole(req.key, req)
        size = info.file_size
        if info.compress_type != zipfile.ZIP_STORED and size > limits().object_bytes:
            raise TooLargeError(f"cannot read {req.describe()} from {self.url}: a range of a compressed member of "
                                f"{human(size)} needs all of it inflated, more than the "
                                f"{human(limits().object_bytes)} allowed")
        start = max(0, size + req.start) if req.start < 0 else req.start
        stop = size if req.stop is None or req.start < 0 else min(req.stop, size)
        try:
            with self._lock, self._zip.open(info) as f:
                f.seek(start)
                return f.read(max(0, stop - start))
        except _ZIP_ERRORS as e:
            raise StoreError(f"cannot read {req.describe()} from {self.url}: {_reason(e)}") from e

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
