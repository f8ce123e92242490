"""Cases delivered as ``.zip`` archives, and edits of the archive's own headers.

zarrview opens ``x.zip`` in place through ``zipfile``, which has failure modes of its own: an
entry that claims an unknown compression method or encryption, sizes that disagree between
the local and the central header, a central directory pointing anywhere. The ``zip`` op packs
the (already mutated) store into an archive; ``zip_set`` and ``zip_flip`` then edit the archive.
"""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path
from typing import Any

#: field -> (offset in the central directory header, offset in the local header, struct format)
FIELDS = {"flags": (8, 6, "<H"), "method": (10, 8, "<H"), "crc": (16, 14, "<I"), "compress_size": (20, 18, "<I"),
          "file_size": (24, 22, "<I"), "name_length": (28, 26, "<H"), "header_offset": (42, None, "<I")}
ZIP_OPS = {"zip", "zip_set", "zip_flip"}


def archive_of(dest: Path) -> Path:
    return dest.with_name(dest.name + ".zip")


def pack(store: Path, op: dict[str, Any]) -> Path:
    """Zip the regular files of ``store`` (links, devices and sparse giants are left out: the
    archive must be buildable), optionally under one top folder as ``zip -r`` makes them."""
    out = archive_of(store)
    method = zipfile.ZIP_DEFLATED if op.get("method") == "deflated" else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", method) as zf:
        for dirpath, dirnames, filenames in os.walk(store, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames):
                p = Path(dirpath, name)
                if p.is_symlink() or not p.is_file() or p.stat().st_size > 64 << 20:
                    continue
                rel = p.relative_to(store).as_posix()
                info = zipfile.ZipInfo(("store/" + rel) if op.get("top") else rel, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = method
                zf.writestr(info, p.read_bytes())
    return out


def _central_headers(data: bytes) -> list[tuple[int, int]]:
    """(central header offset, local header offset) of every entry, found by walking the
    central directory from the end-of-central-directory record."""
    eocd = data.rfind(b"PK\x05\x06")
    if eocd < 0 or eocd + 22 > len(data):
        return []
    count, _size, start = struct.unpack_from("<HII", data, eocd + 10)
    out, pos = [], start
    for _ in range(count):
        if pos + 46 > len(data) or data[pos:pos + 4] != b"PK\x01\x02":
            break
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, pos + 28)
        out.append((pos, struct.unpack_from("<I", data, pos + 42)[0]))
        pos += 46 + name_len + extra_len + comment_len
    return out


def edit(archive: Path, op: dict[str, Any]) -> bool:
    """Apply ``zip_set`` (one header field of one entry, in both headers) or ``zip_flip``."""
    if not archive.is_file():
        return False
    data = bytearray(archive.read_bytes())
    if op["op"] == "zip_flip":
        for bit in op["bits"]:
            bit %= max(len(data) * 8, 1)
            data[bit // 8] ^= 1 << (bit % 8)
    else:
        headers = _central_headers(bytes(data))
        if not headers:
            return False
        central, local = headers[op["entry"] % len(headers)]
        cd_off, lh_off, fmt = FIELDS[op["field"]]
        value = op["value"] % (1 << (8 * struct.calcsize(fmt)))
        struct.pack_into(fmt, data, central + cd_off, value)
        if lh_off is not None and op.get("local", True) and local + 30 <= len(data):
            struct.pack_into(fmt, data, local + lh_off, value)
    archive.write_bytes(bytes(data))
    return True
