"""Helpers for test_bad_stores.py, test_hypothesis.py and test_seed_layouts.py: building,
breaking and walking stores.

Everything here works on plain files so a test's truth never depends on zarrlib itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np

# --------------------------------------------------------------------------------------------
# Regexes for ``pytest.raises(match=...)``


def names(*parts: str) -> str:
    """A regex that matches a message containing every one of ``parts`` (any order, literal)."""
    return "(?s)" + "".join(f"(?=.*{re.escape(p)})" for p in parts)


def names_any(*alternatives: str) -> str:
    """A regex that matches a message containing at least one of ``alternatives``."""
    return "(?s)(" + "|".join(re.escape(a) for a in alternatives) + ")"


# --------------------------------------------------------------------------------------------
# JSON metadata editing


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text())


def write_json(path: Path, doc: Any, **kw: Any) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=2, **kw))


def edit_json(path: Path, fn) -> Any:
    """Load ``path``, let ``fn`` mutate (or return a replacement for) the document, save it."""
    doc = read_json(path)
    out = fn(doc)
    if out is not None:
        doc = out
    write_json(path, doc)
    return doc


# --------------------------------------------------------------------------------------------
# Hand-built Zarr v3 documents


def v3_array_meta(shape, chunks, data_type, *, fill_value=0, codecs=None,
                  chunk_key_encoding=None, **extra) -> dict:
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": chunk_key_encoding
        if chunk_key_encoding is not None
        else {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value,
        "codecs": codecs if codecs is not None
        else [{"name": "bytes", "configuration": {"endian": "little"}}],
    }
    doc.update(extra)
    return doc


def v3_group_meta(**extra) -> dict:
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {}}
    doc.update(extra)
    return doc


def chunk_grid_iter(shape, chunks):
    """Every chunk grid index of a regular grid (size-0 dims give none)."""
    counts = [-(-s // c) for s, c in zip(shape, chunks)]
    return list(np.ndindex(*counts)) if counts else [()]


def padded_chunk(data: np.ndarray, idx, chunks, fill) -> np.ndarray:
    """The full-size chunk ``idx`` of ``data`` (edge chunks padded with ``fill``)."""
    out = np.full(tuple(chunks), fill, dtype=data.dtype)
    sel = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, data.shape))
    part = data[sel]
    out[tuple(slice(0, n) for n in part.shape)] = part
    return out


# --------------------------------------------------------------------------------------------
# Shards (sharding_indexed, index at the end, bytes+crc32c index codecs)


def crc32c_bytes(data: bytes) -> bytes:
    import google_crc32c

    return struct.pack("<I", google_crc32c.value(bytes(data)))


def read_shard_index(blob: bytes, n_chunks: int, with_crc: bool = True) -> np.ndarray:
    size = n_chunks * 16 + (4 if with_crc else 0)
    raw = blob[-size:]
    return np.frombuffer(raw[: n_chunks * 16], dtype="<u8").reshape(n_chunks, 2).copy()


def write_shard_index(blob: bytes, index: np.ndarray, with_crc: bool = True) -> bytes:
    n_chunks = index.shape[0]
    size = n_chunks * 16 + (4 if with_crc else 0)
    body = blob[:-size]
    raw = np.ascontiguousarray(index, dtype="<u8").tobytes()
    return body + raw + (crc32c_bytes(raw) if with_crc else b"")


# --------------------------------------------------------------------------------------------
# Walking and snapshots


def walk(node):
    """Yield ``node`` and every descendant (depth first, members in the library's order)."""
    yield node
    if node.kind == "group":
        for child in node.members():
            yield from walk(child)


def read_everything(root) -> dict[str, np.ndarray]:
    """Open every node below ``root`` and read every array completely."""
    out = {}
    for node in walk(root):
        _ = node.attrs, node.metadata
        if node.kind == "array":
            out[node.path] = node[...]
    return out


def touch(location, child: str | None = None, **opts):
    """Open ``location``, optionally look up ``child``, read attrs and (for arrays) all data."""
    import zarrview.zarrlib as zl

    node = zl.open(location, **opts)
    if child:
        node = node[child]
    _ = node.attrs
    if node.kind == "array":
        return node[...]
    return node.members()


def snapshot(root: Path) -> dict[str, tuple]:
    """Path -> (kind, mtime_ns, size, sha256) for every file and directory below ``root``."""
    root = Path(root)
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        st = d.stat()
        out[str(d.relative_to(root)) + "/"] = ("dir", st.st_mtime_ns, tuple(sorted(dirnames)),
                                              tuple(sorted(filenames)))
        for f in filenames:
            p = d / f
            st = p.stat()
            out[str(p.relative_to(root))] = ("file", st.st_mtime_ns, st.st_size,
                                             hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def assert_same_values(got, expected) -> None:
    """Values equal (NaN == NaN), same shape, same dtype up to byte order."""
    assert isinstance(got, np.ndarray), f"read returned {type(got).__name__}"
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype.str[1:] == expected.dtype.str[1:], (got.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        np.testing.assert_array_equal(got, expected)  # treats NaN as equal
    else:
        assert np.array_equal(got, expected), (got, expected)


def peak_bytes(fn) -> tuple[object, int]:
    """``fn()``'s result (or exception) and the most memory Python allocated meanwhile."""
    import tracemalloc

    tracemalloc.start()
    try:
        try:
            result: object = fn()
        except Exception as e:  # noqa: BLE001 - returned for the caller to check
            result = e
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak
