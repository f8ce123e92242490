"""The storage audit against what the store holds: the files on disk, shard indexes decoded by
hand, zarr-python's ``nchunks_initialized``, and requests counted at the test server."""

from __future__ import annotations

import json
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from http_server import serve
from zarrview.cli import main as cli_main
from zarrview.zarrlib.audit import MAP_CELLS, key_pattern

DOCUMENTS = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}


def _files(folder: Path) -> dict[str, int]:
    """Every stored object below ``folder`` that is no metadata document, with its size."""
    return {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*")
            if p.is_file() and p.name not in DOCUMENTS}


def _chunk_coords(names: list[str], key: str) -> set[tuple[int, ...]]:
    """Grid coordinates from file names, the way the key encoding ``key`` spells them."""
    out = set()
    for name in names:
        body = name[len("c/"):] if key == "default" else name
        out.add(tuple(int(x) for x in body.replace("/", ".").split(".")))
    return out


@pytest.mark.parametrize(("fmt", "separator"), [(3, "/"), (3, "."), (2, "."), (2, "/")])
def test_stored_chunks_are_the_files(tmp_path: Path, fmt: int, separator: str) -> None:
    path = tmp_path / "a.zarr"
    if fmt == 3:
        encoding = {"name": "default", "separator": separator}
        a = zarr.create_array(path, shape=(100, 120), chunks=(10, 10), dtype="i2", fill_value=0,
                              chunk_key_encoding=encoding)
    else:
        a = zarr.create_array(path, shape=(100, 120), chunks=(10, 10), dtype="i2", fill_value=0, zarr_format=2,
                              chunk_key_encoding={"name": "v2", "separator": separator})
    a[:35, :47] = np.arange(35 * 47).reshape(35, 47) + 1
    a[90:, 110:] = 7
    files = _files(path)
    audit = zl.open(path).audit()
    assert audit.chunks_expected == 120 and audit.grid_shape == (10, 12)
    assert audit.chunks_stored == len(files) == a.nchunks_initialized
    assert audit.stored_bytes == audit.chunk_bytes == sum(files.values())
    assert audit.logical_bytes == a.nbytes and audit.stray_objects == 0
    assert {k: n for k, n in enumerate(audit.size_classes) if n} == Counter(s.bit_length() for s in files.values())
    truth = np.zeros(audit.grid_shape, dtype=np.int64)
    for coords in _chunk_coords(list(files), "default" if fmt == 3 else "v2"):
        truth[coords] += 1
    assert audit.map_cell == (1, 1)
    np.testing.assert_array_equal(audit.stored_map, truth)
    assert audit.ratio == pytest.approx(len(files) * 200 / sum(files.values()))


def _index_by_hand(shard: bytes, chunks: int) -> np.ndarray:
    """The shard's index as the sharding codec writes it by default: at the end, ``chunks``
    little-endian (offset, nbytes) uint64 pairs, then a 4-byte CRC32C."""
    return np.frombuffer(shard[-(16 * chunks + 4):-4], dtype="<u8").reshape(chunks, 2)


def test_sharded_chunks_come_from_the_indexes(tmp_path: Path) -> None:
    path = tmp_path / "s.zarr"
    s = zarr.create_array(path, shape=(64, 64, 64), chunks=(4, 8, 8), shards=(16, 32, 32), dtype="f4",
                          fill_value=0)
    s[:20, :40, 5:9] = 1.5
    s[60:, 60:, 60:] = 2.5
    files = _files(path)
    per_shard = 4 * 4 * 4
    entries = {name: _index_by_hand((path / name).read_bytes(), per_shard) for name in files}
    stored = {name: ~np.all(index == 2**64 - 1, axis=1) for name, index in entries.items()}
    audit = zl.open(path).audit()
    assert audit.shards_expected == 16 and audit.shards_stored == len(files)
    assert audit.chunks_per_shard == per_shard and audit.chunks_expected == 16 * 8 * 8
    assert audit.inner_chunks_stored == audit.chunks_stored == sum(int(m.sum()) for m in stored.values())
    assert audit.chunk_bytes == sum(int(entries[n][stored[n], 1].sum()) for n in files)
    assert audit.stored_bytes == sum(files.values())
    assert sum(audit.size_classes) == audit.chunks_stored
    # zarr-python counts the inner chunks of every stored shard
    assert audit.shards_stored * per_shard == s.nchunks_initialized
    truth = np.zeros(audit.grid_shape, dtype=np.int64)
    for name, mask in stored.items():
        shard = tuple(int(x) for x in name[len("c/"):].split("/"))
        for local in np.argwhere(mask.reshape(4, 4, 4)):
            truth[tuple(np.array(shard) * 4 + local)] += 1
    assert audit.map_cell == (1, 1, 1)
    np.testing.assert_array_equal(audit.stored_map, truth)


def test_a_corrupt_shard_index_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.zarr"
    s = zarr.create_array(path, shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="u1", fill_value=0)
    s[...] = 1
    shard = path / "c" / "1" / "0"
    data = bytearray(shard.read_bytes())
    data[-10] ^= 0xFF  # the index's checksum no longer holds
    shard.write_bytes(bytes(data))
    audit = zl.open(path).audit()
    assert audit.shards_stored == 4 and audit.inner_chunks_stored == 3 * 4
    assert len(audit.errors) == 1 and "c/1/0" in audit.errors[0]


def test_strays_are_counted_and_named(tmp_path: Path) -> None:
    path = tmp_path / "a.zarr"
    a = zarr.create_array(path, shape=(20, 20), chunks=(10, 10), dtype="u1", fill_value=0)
    a[...] = 1
    (path / "c" / "notakey").write_bytes(b"x")
    (path / "c" / "2").mkdir()
    (path / "c" / "2" / "0").write_bytes(b"outside the grid")
    (path / "c" / "0" / "01").write_bytes(b"a key no writer spells")
    audit = zl.open(path).audit()
    assert audit.chunks_stored == 4 and audit.stray_objects == 3
    assert sorted(audit.stray_keys) == ["c/0/01", "c/2/0", "c/notakey"]


def test_key_patterns_parse_every_encoding() -> None:
    from zarrview.zarrlib.metadata.keys import default_key, prefinal_key, v2_key

    for make, key in ((default_key, "a/c/3/14/1"), (v2_key, "a/3.14.1"), (prefinal_key, "a/c3/14/1")):
        sep = "." if make is v2_key else "/"
        pattern = key_pattern(make("a/", sep), 3)
        m = pattern.match(key)
        assert m is not None and m.groups() == ("3", "14", "1"), (make, key)
    assert key_pattern(default_key("", "/"), 0).match("c") is not None


def test_a_billion_chunks_with_a_thousand_stored_in_bounded_memory(tmp_path: Path) -> None:
    """Counted from the thousand listed names, never the 10**9 keys of the grid."""
    path = tmp_path / "huge.zarr"
    a = zarr.create_array(path, shape=(1000, 1000, 1000), chunks=(1, 1, 1), dtype="u1", fill_value=0)
    a[0, :10, :100] = 1
    tracemalloc.start()
    try:
        audit = zl.open(path).audit()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert audit.chunks_expected == 10**9 and audit.chunks_stored == 1000
    assert audit.stored_map is not None and audit.stored_map.size <= MAP_CELLS
    assert int(audit.stored_map.sum()) == 1000 and audit.map_cell == (16, 16, 16)
    assert peak < 32 << 20, peak


def test_an_unlistable_store_says_so(tmp_path: Path) -> None:
    a = zarr.create_array(tmp_path / "a.zarr", shape=(10,), chunks=(5,), dtype="u1", fill_value=0)
    a[...] = 1
    with serve(tmp_path) as (url, _):
        audit = zl.open(f"{url}/a.zarr").audit()
    assert not audit.listed and audit.chunks_stored is None and audit.chunks_expected == 2


def test_over_http_a_shard_costs_one_index_request(tmp_path: Path) -> None:
    """The bucket server lists (GCS's XML API through obstore): one listing, then one ranged
    request per stored shard, none per chunk."""
    bucket = tmp_path / "b"
    s = zarr.create_array(bucket / "s.zarr", shape=(64, 64), chunks=(4, 4), shards=(16, 16), dtype="u2", fill_value=0)
    s[:40, :20] = 5
    files = _files(bucket / "s.zarr")
    local = zl.open(bucket / "s.zarr").audit()
    with serve(tmp_path, buckets=True) as (url, state):
        arr = zl.open("gs://b/s.zarr", endpoint_url=url, token="anon")
        state.clear()
        audit = arr.audit()
        gets = state.requests("GET")
    ranged = [path for _, path, rng in gets if rng is not None]
    assert len(ranged) == len(files) == audit.shards_stored
    assert len(gets) - len(ranged) == 1  # the listing
    assert audit.as_json() == local.as_json()


def test_cli_audit_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = zarr.open_group(tmp_path / "g.zarr", mode="w")
    a = g.create_array("dense", shape=(30, 30), chunks=(10, 10), dtype="u1", fill_value=0)
    a[:10] = 1
    s = g.create_array("sub/sharded", shape=(32,), chunks=(4,), shards=(16,), dtype="u1", fill_value=0)
    s[:6] = 2
    assert cli_main(["audit", str(tmp_path / "g.zarr"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["path"] for r in report] == ["/dense", "/sub/sharded"]
    dense, sharded = report
    assert (dense["chunks_expected"], dense["chunks_stored"]) == (9, 3)
    assert dense["stored_bytes"] == sum(_files(tmp_path / "g.zarr" / "dense").values())
    assert dense["logical_bytes"] == 900
    assert (sharded["shards_expected"], sharded["shards_stored"], sharded["inner_chunks_stored"]) == (2, 1, 2)
    assert sharded["chunks_expected"] == 8 and sharded["chunks_stored"] == 2
    assert cli_main(["audit", f"{tmp_path / 'g.zarr'}::/dense"]) == 0
    text = capsys.readouterr().out
    assert "3 of 9 stored (33.3 %), 6 missing" in text
    rows = [line.strip() for line in text.splitlines() if line.strip().startswith("│")]
    assert rows == ["│███│", "│   │", "│   │"]  # the first row of chunks is stored


def test_cli_audit_names_a_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["audit", str(tmp_path / "nothing.zarr")]) == 1
    assert "nothing.zarr" in capsys.readouterr().err


def _rewrite_index(shard: Path, entries: int, change: Any) -> None:
    """Change the index at the end of ``shard`` and write it back with a valid CRC32C."""
    import google_crc32c

    data = bytearray(shard.read_bytes())
    n = entries * 16
    index = np.frombuffer(bytes(data[-(n + 4):-4]), dtype="<u8").reshape(entries, 2).copy()
    change(index)
    raw = index.astype("<u8").tobytes()
    data[-(n + 4):] = raw + google_crc32c.value(raw).to_bytes(4, "little")
    shard.write_bytes(bytes(data))


def test_index_entries_are_claims(tmp_path: Path) -> None:
    """An entry for a chunk past the array's edge is not a chunk; one claiming more than an inner
    chunk can be stored as is named, not counted."""
    path = tmp_path / "s.zarr"
    s = zarr.create_array(path, shape=(10,), chunks=(4,), shards=(8,), dtype="u1", fill_value=0)
    s[...] = np.arange(1, 11)
    first = zl.open(path).audit()
    assert (first.chunks_stored, first.chunks_expected) == (3, 3)

    def past_the_edge(index: np.ndarray) -> None:
        index[1] = index[0]  # chunk 3, past the array's 10 elements, now claims chunk 2's bytes

    _rewrite_index(path / "c" / "1", 2, past_the_edge)
    assert zl.open(path).audit().chunks_stored == 3

    def too_large(index: np.ndarray) -> None:
        index[1] = (0, 2**40)

    _rewrite_index(path / "c" / "0", 2, too_large)
    audit = zl.open(path).audit()
    assert audit.chunks_stored == 2 and len(audit.errors) == 1 and "c/0" in audit.errors[0]
