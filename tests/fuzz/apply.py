"""Applying a case: copy its seed and carry out its operations, byte for byte, deterministically.

A case is plain JSON (``{"seed": name, "ops": [...]}``) so that a reproducer is a file anyone
can replay without hypothesis. This module is the only place that knows what each operation
does to the files, and which reads a crc32c checksum must therefore catch (``protection``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

from .payloads import crc32c, payload
from .seeds import Seed
from .ziparchive import ZIP_OPS, archive_of, edit, pack

PLACEHOLDER = "\x00FUZZ\x00"
BYTE_OPS = {"truncate", "flip", "insert", "append", "zero", "replace", "bomb", "encode"}
INDEX_OPS = {"index_set", "index_byteswap", "index_all"}
EMPTY = 2**64 - 1


# -- metadata documents ----------------------------------------------------------------------------

def _navigate(doc: Any, path: list[Any]) -> tuple[Any, Any] | None:
    """(container, key) of the value at ``path``, or None where the path no longer exists."""
    node = doc
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    if not path or not isinstance(node, (dict, list)):
        return None
    last = path[-1]
    if isinstance(node, list) and not (isinstance(last, int) and -len(node) <= last < len(node)):
        return None
    if isinstance(node, dict) and last not in node:
        return None
    return node, last


def edit_json(data: bytes, op: dict[str, Any]) -> bytes | None:
    """The document after a structural edit, or None if the edit no longer applies. Raw JSON
    text is spliced in through a placeholder so that tokens ``json`` would never write (NaN,
    5000-digit integers, nesting 1000 deep, lone surrogates) reach the parser under test."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    kind, path = op["op"], op["path"]
    if kind == "json_set" and not path:
        return op["text"].encode("utf-8", "surrogatepass")
    spot = _navigate(doc, path) if path else None
    if kind == "json_add":
        target = doc
        for part in path:
            try:
                target = target[part]
            except (KeyError, IndexError, TypeError):
                return None
        if isinstance(target, dict):
            target[op["name"]] = PLACEHOLDER
        elif isinstance(target, list):
            target.insert(op.get("at", 0) % (len(target) + 1), PLACEHOLDER)
        else:
            return None
    elif spot is None:
        return None
    elif kind == "json_set":
        spot[0][spot[1]] = PLACEHOLDER
    elif kind == "json_del":
        del spot[0][spot[1]]
    elif kind == "json_swap":
        value = spot[0][spot[1]]
        if isinstance(value, list):
            spot[0][spot[1]] = {str(i): v for i, v in enumerate(value)}
        elif isinstance(value, dict):
            spot[0][spot[1]] = list(value.values())
        else:
            spot[0][spot[1]] = [value]
    text = json.dumps(doc, indent=2, ensure_ascii=op.get("ascii", False))
    return text.replace(json.dumps(PLACEHOLDER, ensure_ascii=op.get("ascii", False)), op.get("text", "null")).encode(
        "utf-8", "surrogatepass")


# -- shards ----------------------------------------------------------------------------------------

def _index_span(seed: Seed, key: str, size: int) -> tuple[int, int]:
    info = seed.arrays[seed.owner[key]]
    n = info.index_nbytes
    return (0, min(n, size)) if info.index_location == "start" else (max(0, size - n), size)


def _edit_index(seed: Seed, key: str, data: bytes, op: dict[str, Any]) -> bytes:
    info = seed.arrays[seed.owner[key]]
    lo, hi = _index_span(seed, key, len(data))
    crc = 4 if info.crc_index else 0
    entries = bytearray(data[lo:hi - crc])
    count = len(entries) // 8
    if count == 0:
        return data
    if op["op"] == "index_set":
        i = (op["entry"] * 2 + op["field"]) % count
        entries[i * 8:i * 8 + 8] = struct.pack("<Q", op["value"] % 2**64)
    elif op["op"] == "index_all":
        entries[:count * 8] = struct.pack("<Q", op["value"] % 2**64) * count
    else:  # byteswap every u64
        entries[:count * 8] = b"".join(entries[i:i + 8][::-1] for i in range(0, count * 8, 8))
    tail = crc32c(entries) if crc and op.get("fix_crc") else data[hi - crc:hi]
    return data[:lo] + bytes(entries) + tail + data[hi:]


def _replace_inner(seed: Seed, key: str, data: bytes, op: dict[str, Any]) -> bytes:
    """The shard rebuilt with one inner chunk's bytes replaced and a valid index (and index crc):
    the bytes under test reach the inner decoders instead of stopping at a checksum."""
    info = seed.arrays[seed.owner[key]]
    crc = 4 if info.crc_index else 0
    lo, hi = _index_span(seed, key, len(data))
    raw = data[lo:hi - crc]
    entries = [list(struct.unpack_from("<QQ", raw, i)) for i in range(0, len(raw) - 15, 16)]
    if not entries:
        return data
    chunks = [None if o == EMPTY else data[o:o + n] for o, n in entries]
    new = payload(op["payload"])
    if op.get("fix_crc") and info.crc_chunks:
        new += crc32c(new)
    chunks[op["entry"] % len(chunks)] = new
    start = info.index_nbytes if info.index_location == "start" else 0
    body, index, pos = bytearray(), bytearray(), start
    for c in chunks:
        index += struct.pack("<QQ", EMPTY, EMPTY) if c is None else struct.pack("<QQ", pos, len(c))
        if c is not None:
            body += c
            pos += len(c)
    index += crc32c(index) if crc else b""
    return bytes(index + body) if info.index_location == "start" else bytes(body + index)


# -- operations ------------------------------------------------------------------------------------

def _fix_chunk_crc(seed: Seed, key: str, data: bytes) -> bytes:
    """Recompute a (non-sharded) chunk's trailing crc32c, so the payload gets past it."""
    owner = seed.owner.get(key)
    if owner is None or not seed.arrays[owner].crc_chunks or seed.roles.get(key) != "chunk" or len(data) < 4:
        return data
    return data[:-4] + crc32c(data[:-4])


def _filesystem(target: Path, kind: str) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind in ("dev_zero", "dev_urandom", "outside", "dangling"):
        os.symlink({"dev_zero": "/dev/zero", "dev_urandom": "/dev/urandom", "outside": "/etc/passwd",
                    "dangling": str(target) + ".nowhere"}[kind], target)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dir":
        target.mkdir()
    elif kind == "loop":
        os.symlink(target.name, target)
    elif kind == "sparse":  # larger than any object bound, costs no disk
        with open(target, "wb") as f:
            f.truncate(3 << 30)
    elif kind == "dir_loop":  # a folder that contains itself: listings never end
        os.symlink(".", target)
    else:
        raise ValueError(kind)


def apply_op(seed: Seed, store: Path, op: dict[str, Any]) -> bool:
    """Carry out one operation; False when it no longer applies (the key was already replaced)."""
    kind, key = op["op"], op["key"]
    target = store / key
    if kind == "fs":
        _filesystem(target.parent / "zz_loop" if op["kind"] == "dir_loop" else target, op["kind"])
        return True
    if kind == "delete":
        if not target.is_file():
            return False
        target.unlink()
        return True
    if not target.is_file() or target.is_symlink() or target.stat().st_size > 64 << 20:
        return False  # replaced by a link, a device or a sparse giant by an earlier op
    data = target.read_bytes()
    if kind in ("swap", "copy"):
        other = store / op["other"]
        if not other.is_file() or other.is_symlink() or other.stat().st_size > 64 << 20:
            return False
        theirs = other.read_bytes()
        if kind == "swap":
            other.write_bytes(data)
        target.write_bytes(theirs)
        return True
    if kind.startswith("json_"):
        try:
            new = edit_json(data, op)
        except RecursionError:  # an earlier op nested this document beyond what json.dumps can write
            new = None
        if new is None:
            return False
    elif kind in INDEX_OPS:
        new = _edit_index(seed, key, data, op)
    elif kind == "inner_replace":
        new = _replace_inner(seed, key, data, op)
    elif kind == "truncate":
        new = data[:op["n"] % (len(data) + 1)]
    elif kind == "flip":
        buf = bytearray(data)
        for bit in op["bits"]:
            if buf:
                bit %= len(buf) * 8
                buf[bit // 8] ^= 1 << (bit % 8)
        new = bytes(buf)
    elif kind == "insert":
        pos = op["pos"] % (len(data) + 1)
        new = data[:pos] + bytes.fromhex(op["hex"]) + data[pos:]
    elif kind == "append":
        new = data + bytes.fromhex(op["hex"]) + bytes(op.get("zeros", 0))
    elif kind == "zero":
        new = bytes(len(data))
    elif kind == "encode":
        text = data.decode("utf-8", "replace")  # an earlier op may have broken the encoding already
        new = {"utf16": lambda: text.encode("utf-16"), "bom": lambda: b"\xef\xbb\xbf" + data,
               "latin1": lambda: text.encode("latin-1", "replace")}[op["how"]]()
    else:  # replace
        new = payload(op["payload"])
        if op.get("fix_crc") and seed.roles.get(key) == "chunk" and seed.arrays[seed.owner[key]].crc_chunks:
            new += crc32c(new)
        kind = "replaced"
    if op.get("fix_crc") and kind in BYTE_OPS:
        new = _fix_chunk_crc(seed, key, new)
    target.write_bytes(new)
    return True


def build(seed: Seed, case: dict[str, Any], dest: Path) -> list[int]:
    """Copy the seed to ``dest`` and apply the case; returns the indexes of ops that applied.
    Archive ops come last: ``zip`` packs the mutated folder into ``location(case, dest)``."""
    if dest.exists() or dest.is_symlink():
        shutil.rmtree(dest)
    archive_of(dest).unlink(missing_ok=True)
    shutil.copytree(seed.store, dest, symlinks=True)
    applied = []
    for i, op in enumerate(case["ops"]):
        if op["op"] == "zip":
            done = pack(dest, op) is not None
        elif op["op"] in ZIP_OPS:
            done = edit(archive_of(dest), op)
        else:
            done = apply_op(seed, dest, op)
        if done:
            applied.append(i)
    return applied


def location(case: dict[str, Any], dest: Path) -> Path:
    """What the worker opens: the folder, or the archive made of it."""
    return archive_of(dest) if any(op["op"] == "zip" for op in case["ops"]) else dest


def tree_digest(root: Path) -> str:
    """A digest of everything under ``root`` without following links or opening special files:
    the store must be identical after a case (zarrlib never writes)."""
    h = hashlib.blake2b(digest_size=16)
    if root.is_file():
        h.update(root.read_bytes())
        return h.hexdigest()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            h.update(f"{os.path.relpath(p, root)}\0{st.st_mode:o}\0{st.st_size}\0".encode())
            if os.path.islink(p):
                h.update(os.readlink(p).encode())
            elif os.path.isfile(p) and st.st_size <= 64 << 20:
                with open(p, "rb") as f:
                    h.update(f.read())
            elif os.path.isfile(p):
                h.update(f"{st.st_mtime_ns}".encode())
        h.update(f"dir {os.path.relpath(dirpath, root)}".encode())
    return h.hexdigest()


def protection(seed: Seed, case: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(arrays whose damaged bytes crc32c covers, arrays the case never touched).

    A successful read of either kind must equal what zarr-python wrote. Edits that leave every
    checksum valid (swapped, deleted or copied objects, recomputed crcs, metadata changes, file
    system tricks) protect nothing: a different value is then a legitimate reading."""
    damaged: set[str] = set()
    spoiled: set[str] = set()
    for op in case["ops"]:
        if op["op"] in ZIP_OPS:
            if op["op"] == "zip":
                continue  # a faithful archive protects what the folder did
            return set(), set()
        kind, key = op["op"], op["key"]
        owner = seed.owner.get(key)
        if owner is None or kind in ("fs",) or kind.startswith("json_"):
            return set(), set()
        info = seed.arrays[owner]
        spoiled.add(owner)
        if kind in ("swap", "copy"):
            spoiled.add(seed.owner.get(op["other"], owner))
        if kind in ("swap", "copy", "delete") or op.get("fix_crc"):
            continue
        if not info.sharded:
            covered = info.crc_chunks and kind in BYTE_OPS
        elif kind in INDEX_OPS:
            covered = info.crc_index
        elif kind == "inner_replace":
            covered = info.crc_chunks
        else:
            covered = _shard_bytes_covered(seed, key, op)
        if covered:
            damaged.add(owner)
    clean = set(seed.arrays) - spoiled
    # an array damaged twice, once where no checksum looks, is not protected
    unprotected = {seed.owner[op["key"]] for op in case["ops"]
                   if op["op"] in ("swap", "copy", "delete") or op.get("fix_crc") and op["key"] in seed.owner}
    return damaged - unprotected, clean


def _shard_bytes_covered(seed: Seed, key: str, op: dict[str, Any]) -> bool:
    """Whether crc32c covers every byte a raw edit of a shard changes: the index's own crc for
    its span (and for a trailing index, any change of length), the inner crcs for the rest."""
    info = seed.arrays[seed.owner[key]]
    size = seed.sizes[key]
    lo, hi = _index_span(seed, key, size)
    kind = op["op"]
    if kind == "flip":
        spots = {(b % (size * 8)) // 8 for b in op["bits"]} if size else set()
        in_index = any(lo <= s < hi for s in spots)
        in_data = any(not lo <= s < hi for s in spots)
    elif kind == "insert":
        # bytes shifted under an index can line up exactly with another intact inner chunk, whose
        # crc is valid: a checksum protects a chunk's bytes, not its place (found by the fuzzer)
        return False
    elif kind in ("truncate", "append"):
        in_index, in_data = info.index_location == "end", info.index_location == "start"
    else:  # zero, replace, bomb: the index is garbage
        in_index, in_data = True, False
    return (not in_index or info.crc_index) and (not in_data or info.crc_chunks)
