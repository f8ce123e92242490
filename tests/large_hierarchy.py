"""Large Zarr v3 stores (100,000 nodes, arrays of any size), written in seconds instead of minutes.

zarr-python needs about a millisecond and several files' worth of work per node; a hierarchy
of 100,100 nodes then takes minutes to build, too slow for a test fixture or a benchmark that
rebuilds its data. These writers emit the JSON documents directly, shaped exactly as
zarr-python 3 writes them (one ``zarr.json`` per node, indented by two spaces, keys in its
order, and the root's inline consolidated metadata), and store no chunks. The tests check on
small instances that zarr-python reads what they write.

Names are fixed so callers can name nodes: groups ``g000``.., arrays ``a0000``.. in each group,
the children of a wide group ``c000000``... Arrays vary (data type, shape, chunks, codecs) with
their index so a listing that mixed up nodes would show it.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

DTYPES = ("float32", "int16", "uint8", "float64")
HUGE_SHAPE = (100_000, 100_000, 100_000)


def group_name(i: int) -> str:
    return f"g{i:03d}"


def array_name(j: int) -> str:
    return f"a{j:04d}"


def child_name(k: int) -> str:
    return f"c{k:06d}"


def group_doc(consolidated: dict[str, Any] | None = None) -> dict[str, Any]:
    """A group's document; ``consolidated``: inline consolidated metadata, as zarr-python
    writes it in the root (and, empty, for each group inside that metadata)."""
    doc: dict[str, Any] = {"attributes": {}, "zarr_format": 3}
    if consolidated is not None:
        doc["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": consolidated}
    doc["node_type"] = "group"
    return doc


def array_doc(shape: tuple[int, ...], chunks: tuple[int, ...], dtype: str = "float32",
              compressed: bool = True, attributes: dict[str, Any] | None = None) -> dict[str, Any]:
    single_byte = dtype in ("uint8", "int8", "bool")  # zarr-python names no byte order for these
    codecs: list[dict[str, Any]] = [{"name": "bytes"} if single_byte else
                                    {"name": "bytes", "configuration": {"endian": "little"}}]
    if compressed:
        codecs.append({"name": "zstd", "configuration": {"level": 0, "checksum": False}})
    fill: Any = 0.0 if dtype.startswith("float") else 0
    return {
        "shape": list(shape), "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs, "attributes": attributes or {}, "zarr_format": 3,
        "node_type": "array", "storage_transformers": [],
    }


def numbered_array(j: int) -> dict[str, Any]:
    """The ``j``-th array of a group: its data type, shape, chunks and codecs follow ``j``."""
    shape = (100 + j % 7, 200 + j % 11) if j % 3 else (50 + j % 13,)
    chunks = tuple(max(1, s // 4) for s in shape)
    return array_doc(shape, chunks, DTYPES[j % len(DTYPES)], compressed=j % 5 != 0, attributes={"index": j})


def _write(path: Path, doc: dict[str, Any]) -> None:
    os.makedirs(path, exist_ok=True)
    with open(path / "zarr.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=2))


def _write_all(root: Path, files: list[tuple[str, str]]) -> None:
    """Each ``(folder, text)`` as ``root/folder/zarr.json``, on four threads (the system calls,
    not Python, take the time: 2x faster on two cores)."""
    def write(part: list[tuple[str, str]]) -> None:
        for folder, text in part:
            os.mkdir(root / folder)
            with open(root / folder / "zarr.json", "w", encoding="utf-8") as f:
                f.write(text)

    groups = [f for f in files if "/" not in f[0]]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, [groups[k::4] for k in range(4)]))  # parents first
        nested = [f for f in files if "/" in f[0]]
        list(pool.map(write, [nested[k::4] for k in range(4)]))


def _consolidated_root(entries: list[tuple[str, str]]) -> str:
    """The root's ``zarr.json`` holding ``(path, document text)`` entries, as zarr-python's
    ``consolidate_metadata`` writes it (``json.dumps(indent=2)``, assembled from texts rendered
    once per distinct document: the test suite checks it byte for byte)."""
    body = ",\n".join(f'      {json.dumps(k)}: {text.replace(chr(10), chr(10) + "      ")}'
                      for k, text in sorted(entries, key=lambda e: (e[0].count("/"), e[0])))
    head = json.dumps(group_doc({"@": None}), indent=2)
    before, after = head.split('      "@": null')
    return before + body + after if entries else json.dumps(group_doc({}), indent=2)


def write_hierarchy(path: str | os.PathLike[str], groups: int = 100, arrays: int = 1000,
                    consolidated: bool = True) -> Path:
    """``groups`` groups of ``arrays`` arrays each below a root group (groups x (arrays + 1) + 1
    nodes); with ``consolidated`` the root holds every node's document as zarr-python's
    ``consolidate_metadata`` writes it (for 100 x 1000: 90 MB, written in about 10 s)."""
    root = Path(path)
    os.makedirs(root, exist_ok=True)
    texts = {j: json.dumps(numbered_array(j), indent=2) for j in range(arrays)}
    group_text = json.dumps(group_doc(), indent=2)
    files = [(group_name(i), group_text) for i in range(groups)]
    files += [(f"{group_name(i)}/{array_name(j)}", texts[j]) for i in range(groups) for j in range(arrays)]
    _write_all(root, files)
    if consolidated:
        inner = json.dumps(group_doc({}), indent=2)
        entries = [(group_name(i), inner) for i in range(groups)]
        entries += [(f"{group_name(i)}/{array_name(j)}", texts[j]) for i in range(groups) for j in range(arrays)]
        (root / "zarr.json").write_text(_consolidated_root(entries), encoding="utf-8")
    else:
        _write(root, group_doc())
    return root


def write_wide_group(path: str | os.PathLike[str], children: int = 100_000, consolidated: bool = False) -> Path:
    """A root group with ``children`` direct children (one-dimensional arrays ``c000000``..),
    by default without consolidated metadata, so it must be listed."""
    root = Path(path)
    os.makedirs(root, exist_ok=True)
    texts = [json.dumps(array_doc((10 + k % 3,), (5,), DTYPES[k % len(DTYPES)], compressed=False), indent=2)
             for k in range(12)]
    files = [(child_name(k), texts[k % 12]) for k in range(children)]
    _write_all(root, files)
    if consolidated:
        (root / "zarr.json").write_text(_consolidated_root(files), encoding="utf-8")
    else:
        _write(root, group_doc())
    return root


def write_huge_array(path: str | os.PathLike[str], shape: tuple[int, ...] = HUGE_SHAPE,
                     chunks: tuple[int, ...] = (10, 10, 10)) -> Path:
    """A float32 array of ``shape`` (10**15 elements by default) at the store's root, nothing
    stored: with the default chunks its grid holds 10**12 chunk keys, none of them written."""
    root = Path(path)
    _write(root, array_doc(shape, chunks, "float32", attributes={"description": "empty"}))
    return root
