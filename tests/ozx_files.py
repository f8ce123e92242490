"""Single-file OME-Zarr (``.ozx``) archives for tests: an OME-Zarr folder zipped the way the
single-file specification asks (root ``zarr.json`` first, the other ``zarr.json`` files next in
breadth-first order, stored entries, a ZIP64 end record, a JSON comment naming the version),
and byte-level edits that make an archive depart from that or lie about itself.

The archives are written with Python's zipfile; the ZIP64 end record, which zipfile writes
only for archives past 4 GiB or 65,535 entries, is inserted afterwards, so readers (zipfile,
zarr-python's ZipStore) take the ZIP64 path on a small file.
"""

from __future__ import annotations

import json
import struct
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EOCD = struct.Struct("<4s4H2LH")
EOCD64 = struct.Struct("<4sQ2H2L4Q")
LOCATOR = struct.Struct("<4sLQL")
#: a central directory header, before its name, extra field and comment
CDH = struct.Struct("<4s6H3L5H2L")


def rfc9_comment(version: str = "0.5", json_first: bool = True) -> bytes:
    doc: dict[str, Any] = {"ome": {"version": version}}
    if json_first:
        doc["ome"]["zipFile"] = {"centralDirectory": {"jsonFirst": True}}
    return json.dumps(doc).encode()


def rfc9_order(names: Sequence[str]) -> list[str]:
    """Root zarr.json, then the other zarr.json files by depth, then everything else."""
    jsons = sorted((n for n in names if n == "zarr.json" or n.endswith("/zarr.json")),
                   key=lambda n: (n.count("/") if n != "zarr.json" else -1, n))
    return jsons + sorted(n for n in names if n not in set(jsons))


def zip_folder(folder: Path, out: Path, *, order: Callable[[Sequence[str]], list[str]] = rfc9_order,
               compression: int = zipfile.ZIP_STORED, comment: bytes | None = None, zip64: bool = True,
               prefix: str = "", extra: dict[str, bytes] | None = None) -> Path:
    """``folder``'s files zipped into ``out`` (each under ``prefix``), in ``order``, with
    ``comment`` (default: the specification's, with jsonFirst) and, with ``zip64``, a ZIP64
    end record; ``extra``: more members (name -> bytes) appended."""
    files = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    with zipfile.ZipFile(out, "w", compression) as zf:
        for name in order(files):
            zf.write(folder / name, prefix + name)
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
        zf.comment = rfc9_comment() if comment is None else comment
    if zip64:
        add_zip64_end(out)
    return out


def _eocd(data: bytes) -> int:
    at = data.rfind(b"PK\x05\x06")
    assert at >= 0
    return at


def add_zip64_end(path: Path) -> None:
    """Put a ZIP64 end record and locator before the end record, whose fields then defer to it."""
    data = path.read_bytes()
    at = _eocd(data)
    _, disk, cd_disk, here, total, cd_size, cd_offset, clen = EOCD.unpack_from(data, at)
    comment = data[at + EOCD.size: at + EOCD.size + clen]
    rec = EOCD64.pack(b"PK\x06\x06", EOCD64.size - 12, 45, 45, 0, 0, here, total, cd_size, cd_offset)
    loc = LOCATOR.pack(b"PK\x06\x07", 0, at, 1)
    end = EOCD.pack(b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, clen)
    path.write_bytes(data[:at] + rec + loc + end + comment)


def set_comment(path: Path, comment: bytes) -> None:
    data = path.read_bytes()
    at = _eocd(data)
    fields = list(EOCD.unpack_from(data, at))
    fields[-1] = len(comment)
    path.write_bytes(data[:at] + EOCD.pack(*fields) + comment)


def directory_entries(data: bytes) -> list[tuple[int, str]]:
    """(byte position of the header, member name) of every central directory entry."""
    out = []
    at = data.find(b"PK\x01\x02")
    while at >= 0 and data[at:at + 4] == b"PK\x01\x02":
        f = CDH.unpack_from(data, at)
        nlen, elen, clen = f[10], f[11], f[12]
        out.append((at, data[at + CDH.size: at + CDH.size + nlen].decode()))
        at += CDH.size + nlen + elen + clen
    return out


def patch_entry(path: Path, name: str, *, header_offset: int | None = None, size: int | None = None) -> None:
    """Rewrite one directory entry's local header offset, or its compressed and stored sizes."""
    data = bytearray(path.read_bytes())
    pos = next(p for p, n in directory_entries(bytes(data)) if n == name)
    if header_offset is not None:
        struct.pack_into("<L", data, pos + 42, header_offset)
    if size is not None:
        struct.pack_into("<2L", data, pos + 20, size, size)
    path.write_bytes(bytes(data))


def patch_end(path: Path, *, entries: int | None = None, cd_size: int | None = None, disk: int | None = None) -> None:
    """Rewrite the (non-ZIP64) end record's entry count, directory size or disk number."""
    data = bytearray(path.read_bytes())
    at = _eocd(bytes(data))
    fields = list(EOCD.unpack_from(data, at))
    if entries is not None:
        fields[3] = fields[4] = entries
    if cd_size is not None:
        fields[5] = cd_size
    if disk is not None:
        fields[1] = disk
    EOCD.pack_into(data, at, *fields)
    path.write_bytes(bytes(data))
