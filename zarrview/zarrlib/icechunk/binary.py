"""Icechunk's metadata files: the binary header, the bounded decompression, and flatbuffer tables.

Every metadata file (repo info, snapshot, manifest, transaction log) is a 39-byte header
(magic, writer name, spec version, file type, compression) and a flatbuffer, usually zstd
compressed. A repository is data written by someone else, so nothing here trusts it: the
decompressed size is bounded by ``limits().metadata_bytes``, and every offset and vector
length a table reads is checked against the buffer before it is followed, so a corrupt or
hostile file costs an ``IcechunkFormatError`` naming the file, never a crash or a long loop.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from flatbuffers.table import Table

from ..codecs.zstd import ZstdCodec
from ..errors import CodecError, MetadataError
from ..limits import human, limits
from ..storage.base import Store

MAGIC = "ICE🧊CHUNK".encode()
HEADER_BYTES = len(MAGIC) + 24 + 3


class IcechunkFormatError(MetadataError):
    """An Icechunk metadata file is malformed, of the wrong kind, or too large."""


class FileType(IntEnum):
    SNAPSHOT = 1
    MANIFEST = 2
    TRANSACTION_LOG = 4
    REPO_INFO = 6


_BAD = (struct.error, TypeError, IndexError, ValueError, OverflowError)


def decode_file(data: bytes, expected: FileType, where: str) -> tuple[int, bytes]:
    """(spec version, flatbuffer bytes) of one metadata file; ``where`` names it in errors."""
    if len(data) < HEADER_BYTES:
        raise IcechunkFormatError(f"{where}: {len(data)} bytes, too short for an Icechunk file header")
    if data[:len(MAGIC)] != MAGIC:
        raise IcechunkFormatError(f"{where}: not an Icechunk file (no ICE🧊CHUNK magic)")
    spec, kind, compression = data[HEADER_BYTES - 3:HEADER_BYTES]
    if spec not in (1, 2):
        raise IcechunkFormatError(f"{where}: spec version {spec}; zarrview reads Icechunk spec versions 1 and 2")
    if kind != expected:
        known = {t.value: t.name.lower() for t in FileType}
        found = known.get(kind, f"type {kind}")
        raise IcechunkFormatError(f"{where}: a {found} file where a {expected.name.lower()} was expected")
    body = data[HEADER_BYTES:]
    bound = limits().metadata_bytes
    if compression == 0:
        return spec, bytes(body)
    if compression != 1:
        raise IcechunkFormatError(f"{where}: unknown compression {compression}")
    try:
        out = ZstdCodec().decode(body, bound)
    except CodecError as e:
        raise IcechunkFormatError(f"{where}: cannot decompress ({e}; the bound is {human(bound)}, "
                                  "see ZARRVIEW_LIMITS metadata_bytes)") from None
    return spec, bytes(out)


def read_file(store: Store, key: str, expected: FileType) -> tuple[int, bytes] | None:
    """(spec version, flatbuffer bytes) of the metadata file at ``key``, read and decompressed
    within ``limits().metadata_bytes``; None where the store has none, which means something
    different to each caller (no repository, a missing snapshot, a broken one)."""
    data = store.get_bounded(key, limits().metadata_bytes)
    return None if data is None else decode_file(data, expected, store.key_url(key))


class FbTable:
    """A flatbuffer table whose every read is checked against the buffer's bounds.

    It wraps ``flatbuffers.table.Table`` for the vtable lookups and adds what the Python
    runtime leaves out (it has no verifier): positions inside the buffer, vector lengths that
    fit in it, and errors that name the file instead of ``struct.error``."""

    __slots__ = ("_t", "_buf", "where")

    def __init__(self, buf: bytes, pos: int, where: str) -> None:
        self._buf = buf
        self.where = where
        self._check(pos, 4)
        self._t = Table(buf, pos)

    @classmethod
    def root(cls, buf: bytes, where: str) -> FbTable:
        if len(buf) < 8:
            raise IcechunkFormatError(f"{where}: flatbuffer of {len(buf)} bytes is too short")
        return cls(buf, struct.unpack_from("<I", buf, 0)[0], where)

    def _fail(self, what: str) -> IcechunkFormatError:
        return IcechunkFormatError(f"{self.where}: corrupt flatbuffer ({what})")

    def _check(self, pos: int, size: int) -> None:
        if pos < 0 or size < 0 or pos + size > len(self._buf):
            raise self._fail(f"offset {pos} (+{size}) outside {len(self._buf)} bytes")

    def _field(self, slot: int) -> int:
        """The absolute position of field ``slot``, or 0 where it is absent."""
        try:
            off = self._t.Offset(4 + 2 * slot)
        except _BAD:
            raise self._fail("bad vtable") from None
        return self._t.Pos + off if off else 0

    def _target(self, pos: int) -> int:
        self._check(pos, 4)
        return pos + struct.unpack_from("<I", self._buf, pos)[0]

    def has(self, slot: int) -> bool:
        return self._field(slot) != 0

    def scalar(self, slot: int, fmt: str, default: int = 0) -> int:
        pos = self._field(slot)
        if not pos:
            return default
        self._check(pos, struct.calcsize(fmt))
        return int(struct.unpack_from("<" + fmt, self._buf, pos)[0])

    def inline(self, slot: int, size: int) -> bytes | None:
        """A struct stored in the table (object ids, ranges) as its raw bytes."""
        pos = self._field(slot)
        if not pos:
            return None
        self._check(pos, size)
        return self._buf[pos:pos + size]

    def _vector(self, slot: int, elem: int) -> tuple[int, int] | None:
        """(start of the elements, count) of a vector field, checked to fit the buffer."""
        pos = self._field(slot)
        if not pos:
            return None
        vec = self._target(pos)
        self._check(vec, 4)
        n = struct.unpack_from("<I", self._buf, vec)[0]
        self._check(vec + 4, n * elem)
        return vec + 4, n

    def raw(self, slot: int) -> bytes | None:
        """A ``[ubyte]`` vector (or a string's bytes)."""
        vec = self._vector(slot, 1)
        return None if vec is None else self._buf[vec[0]:vec[0] + vec[1]]

    def string(self, slot: int) -> str | None:
        data = self.raw(slot)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail("a string that is not UTF-8") from None

    def structs(self, slot: int, size: int) -> list[bytes]:
        """A vector of structs, each as its raw bytes."""
        vec = self._vector(slot, size)
        if vec is None:
            return []
        start, n = vec
        return [self._buf[start + i * size:start + (i + 1) * size] for i in range(n)]

    def table(self, slot: int) -> FbTable | None:
        pos = self._field(slot)
        return None if not pos else FbTable(self._buf, self._target(pos), self.where)

    def tables(self, slot: int) -> TableVector:
        vec = self._vector(slot, 4)
        return TableVector(self, 0, 0) if vec is None else TableVector(self, vec[0], vec[1])

    def element(self, start: int, i: int) -> FbTable:
        return FbTable(self._buf, self._target(start + 4 * i), self.where)

    def require(self, value: object, name: str) -> None:
        if value is None:
            raise self._fail(f"required field {name} is missing")


class TableVector:
    """A vector of tables, read element by element (manifests are searched, not decoded whole)."""

    __slots__ = ("_owner", "_start", "_n")

    def __init__(self, owner: FbTable, start: int, n: int) -> None:
        self._owner, self._start, self._n = owner, start, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> FbTable:
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._owner.element(self._start, i)

    def u32s(self, i: int, slot: int) -> tuple[int, ...]:
        """Element ``i``'s ``[uint32]`` field ``slot``, read in one pass over the buffer: a
        binary search over a manifest's chunk indexes does this some twenty times a chunk."""
        buf = self._owner._buf
        try:
            p = self._start + 4 * i
            pos = p + _U32(buf, p)[0]
            vtable = pos - _I32(buf, pos)[0]
            if vtable < 0 or not 0 <= i < self._n:
                raise struct.error
            if 4 + 2 * slot >= _U16(buf, vtable)[0]:
                return ()
            off = _U16(buf, vtable + 4 + 2 * slot)[0]
            if not off:
                return ()
            vec = pos + off + _U32(buf, pos + off)[0]
            n = _U32(buf, vec)[0]
            if vec + 4 + 4 * n > len(buf):
                raise struct.error
            return struct.unpack_from(f"<{n}I", buf, vec + 4)
        except struct.error:
            raise self._owner._fail(f"element {i} of a vector lies outside the buffer") from None


_U32 = struct.Struct("<I").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U16 = struct.Struct("<H").unpack_from

