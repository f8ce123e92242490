"""Hostile sizes, shard indexes and zip members at read time.

Every one costs a ``ZarrError`` that names the key or node, in bounded time and memory,
never another exception. Stores start as good ones written by zarr-python and are
broken on disk; each test failed before its fix.
"""

from __future__ import annotations

import struct
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import zarr
from zarr.codecs import ShardingCodec

import zarrview.zarrlib as zl
from zarrview.zarrlib.storage.zip import ZipStore
from _bad_helpers import assert_same_values, edit_json, names, peak_bytes, read_shard_index, write_shard_index
from _good_stores import DATA, DATA8, _templates, store, v2, v3  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(60)


# ----------------------------------------------------------------------------------------------
# 5, 6 and 13. Dimensions and sizes beyond what numpy or int64 can hold


def test_65_dimensions_are_refused_at_open(v3):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.update(
        shape=[1] * 65, chunk_grid={"name": "regular", "configuration": {"chunk_shape": [1] * 65}}))
    with pytest.raises(zl.UnsupportedFeatureError, match=names("arr/zarr.json", "65 dimensions")):
        zl.open(v3)["arr"]


def test_chunk_sizes_beyond_int64_fail_that_chunk_every_time(v3):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d["chunk_grid"]["configuration"].__setitem__(
        "chunk_shape", [2**32, 2**31]))
    a = zl.open(v3)["arr"]
    for _ in range(3):  # the first failure must not leave the array broken differently
        with pytest.raises(zl.CodecError, match=names("arr/c/0/0", "more than")):
            a[0:2, 0:2]
    failures: list = []
    out = a.read((slice(0, 2), slice(0, 2)), failures=failures)
    assert [f.key for f in failures] == ["arr/c/0/0"] and out.shape == (2, 2)


def test_out_of_memory_fails_the_chunk_and_leaves_the_reader_whole(v3, monkeypatch):
    """A worker's buffers that could not be allocated once are allocated again next time
    (the old code kept half of them, and every later read died on a missing attribute)."""
    import zarrview.zarrlib.reader as reader_module

    real, calls = reader_module.Scratch, []

    def flaky() -> object:
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError
        return real()

    monkeypatch.setattr(reader_module, "Scratch", flaky)
    a = zl.open(v3)["arr"]
    failures: list = []
    out = a.read((slice(0, 5), slice(0, 5)), failures=failures, executor=None)
    assert [f.key for f in failures] == ["arr/c/0/0"] and "not enough memory" in failures[0].message
    assert_same_values(out, np.zeros((5, 5), "<i4"))
    assert_same_values(a[0:5, 0:5], DATA[0:5, 0:5])  # the same thread allocates anew, and reads


@pytest.mark.parametrize("node", ["raw", "arr"])
def test_huge_chunks_with_an_empty_chunk_file(v3, node):
    edit_json(v3 / node / "zarr.json", lambda d: d["chunk_grid"]["configuration"].__setitem__(
        "chunk_shape", [2**62, 2**62]))
    (v3 / node / "c" / "0" / "0").write_bytes(b"")
    with pytest.raises(zl.CodecError, match=names(f"{node}/c/0/0")):
        zl.open(v3)[node][0:1, 0:1]


def test_a_result_that_cannot_exist_fails_fast(v3):
    edit_json(v3 / "arr" / "zarr.json", lambda d: d.update(shape=[2**62, 2**62]))
    a = zl.open(v3)["arr"]
    t0 = time.perf_counter()
    with pytest.raises(zl.IndexingError, match=names("/arr", "elements")):
        a[...]
    with pytest.raises(zl.IndexingError, match=names("/arr", "chunks")):
        a[0:2**40:2**14, 0]  # 2**26 elements, one chunk each: too many to plan
    assert a[0:0, :2**40].shape == (0, 2**40)  # empty, without enumerating 2**38 chunks
    with pytest.raises(zl.IndexingError, match=names("/arr", "numpy")):
        a[0:0, :]
    assert time.perf_counter() - t0 < 2
    assert_same_values(a[0:3, 0:3], DATA[0:3, 0:3])


# ----------------------------------------------------------------------------------------------
# 8 and 15. Shard indexes are claims, not facts


def _shard_with_entry(v3: Path, offset: int, nbytes: int) -> None:
    key = v3 / "sh" / "c" / "0" / "0"
    blob = key.read_bytes()
    index = read_shard_index(blob, 4)
    index[1] = (index[1][0] if offset is None else offset, nbytes)
    key.write_bytes(write_shard_index(blob, index))


@pytest.mark.parametrize("offset,nbytes", [(0, 8 << 30), (0, 2**40), (2**60, 8), (2**64 - 1, 8), (None, 1 << 20)],
                         ids=["8GiB", "1TiB", "past_2_53", "half_empty", "1MiB_past_the_end"])
def test_shard_index_entries_are_checked_and_recorded(v3, offset, nbytes):
    _shard_with_entry(v3, offset, nbytes)
    a = zl.open(v3)["sh"]
    result, peak = peak_bytes(lambda: a[0:4, 0:4])
    assert isinstance(result, zl.ZarrError) and "sh/c/0/0" in str(result), result
    assert peak < 16 << 20, f"{peak >> 20} MiB allocated for one corrupt index entry"
    failures: list = []
    out = a.read((slice(0, 8), slice(0, 8)), failures=failures)
    assert [f.coords for f in failures] == [(0, 1)]  # inner chunk 1 of shard (0, 0) alone
    expected = DATA8.copy()
    expected[0:2, 2:4] = 0
    assert_same_values(out, expected)


def test_byte_swapped_shard_index_is_recorded_per_chunk(v3):
    key = v3 / "sh" / "c" / "1" / "1"
    blob = key.read_bytes()
    index = read_shard_index(blob, 4)
    key.write_bytes(write_shard_index(blob, index.byteswap()))
    failures: list = []
    out = zl.open(v3)["sh"].read(..., failures=failures)
    assert sorted(f.coords for f in failures) == [(2, 2), (2, 3), (3, 2), (3, 3)]
    assert all("sh/c/1/1" in f.message for f in failures)
    expected = DATA8.copy()
    expected[4:, 4:] = 0
    assert_same_values(out, expected)


def test_huge_shard_index_at_the_start_is_refused_at_open(tmp_path):
    root = tmp_path / "s.zarr"
    a = zarr.create_array(root, shape=(8,), chunks=(2,), shards=(8,), dtype="u1", zarr_format=3,
                          compressors=None, serializer=ShardingCodec(chunk_shape=(2,), index_location="start"))
    a[:] = np.arange(8, dtype="u1")
    edit_json(root / "zarr.json", lambda d: d.update(shape=[2**44]) or d["chunk_grid"]["configuration"].update(
        chunk_shape=[2**42]))
    result, peak = peak_bytes(lambda: zl.open(root)[0:4])
    assert isinstance(result, zl.UnsupportedFeatureError) and "zarr.json" in str(result), result
    assert "index" in str(result) and peak < 4 << 20


# ----------------------------------------------------------------------------------------------
# ----------------------------------------------------------------------------------------------
# Zip archives whose members zipfile cannot read (found by the fuzzer)


def _zip_with_patched_member(v3: Path, tmp_path: Path, member: str, *, method: int | None = None,
                             flags: int | None = None, flip_data: bool = False,
                             sizes: tuple[int | None, int | None] = (None, None)) -> Path:
    """``v3`` zipped (deflated), one member's central directory entry then edited: ``sizes`` is
    (compressed, uncompressed)."""
    target = tmp_path / "store.zip"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for p in sorted(v3.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(v3).as_posix())
    blob = bytearray(target.read_bytes())
    name = member.encode()
    central = blob.index(b"PK\x01\x02")  # the first central directory header
    while True:  # walk the central directory to the member's entry
        n, m, k = struct.unpack_from("<HHH", blob, central + 28)
        if bytes(blob[central + 46:central + 46 + n]) == name:
            break
        central += 46 + n + m + k
    if method is not None:
        struct.pack_into("<H", blob, central + 10, method)
    if flags is not None:
        struct.pack_into("<H", blob, central + 8, flags)
    for offset, size in zip((20, 24), sizes):
        if size is not None:
            struct.pack_into("<I", blob, central + offset, size)
    if flip_data:
        local = struct.unpack_from("<I", blob, central + 42)[0]
        n, m = struct.unpack_from("<HH", blob, local + 26)
        start = local + 30 + n + m
        for i in range(start, start + 8):
            blob[i] ^= 0x5A
    target.write_bytes(bytes(blob))
    return target


@pytest.mark.parametrize("damage", ["method_99", "encrypted", "corrupt_deflate"])
def test_unreadable_zip_members_are_store_errors(v3, tmp_path, damage):
    kw = {"method_99": {"method": 99}, "encrypted": {"flags": 1}, "corrupt_deflate": {"flip_data": True}}[damage]
    archive = _zip_with_patched_member(v3, tmp_path, "gz/c/1/1", **kw)
    a = zl.open(archive)["gz"]
    with pytest.raises(zl.StoreError, match=names("gz/c/1/1")):
        a[...]
    failures: list = []
    out = a.read(..., failures=failures)
    assert [f.key for f in failures] == ["gz/c/1/1"]
    expected = DATA.copy()
    expected[5:, 5:] = 0
    assert_same_values(out, expected)


@pytest.mark.parametrize("member", ["gz/c/1/1", "gz/zarr.json"])
def test_a_member_claiming_4_gib_of_compressed_bytes_is_read_in_small_pieces(v3, tmp_path, member):
    """A directory entry whose compressed size says 4 GiB (no zip64 record): zipfile's whole-member
    read asked the file for 2 GiB at once (the fuzzer's worker ran out of address space on it).
    The deflate stream itself is sound, so the member reads, as zarr-python wrote it."""
    archive = _zip_with_patched_member(v3, tmp_path, member, sizes=(0xFFFFFFFF, None))
    out, peak = peak_bytes(lambda: zl.open(archive)["gz"][...])
    assert not isinstance(out, BaseException), out
    assert_same_values(out, zarr.open_array(v3 / "gz", mode="r")[...])
    assert peak < 16 << 20, peak


def test_a_member_that_inflates_past_its_declared_size_is_refused_unread(tmp_path):
    """A raw 16 MiB chunk, deflated by the archive to a few KiB, whose directory entry declares
    1,000 bytes: it used to be inflated whole before zipfile cut it to that size (and found its
    CRC wrong); now a few KiB are, and the error names the member."""
    folder = tmp_path / "s.zarr"
    a = zarr.create_array(folder, shape=(2048, 2048), chunks=(2048, 2048), dtype="u4", compressors=None)
    a[...] = 7
    archive = _zip_with_patched_member(folder, tmp_path, "c/0/0", sizes=(None, 1000))
    with pytest.raises(zl.StoreError, match=names("c/0/0", "CRC")):
        zl.open(archive)[...]
    with archive.open("rb") as f:
        err, peak = peak_bytes(lambda: ZipStore(f, str(archive)).get("c/0/0"))
    assert isinstance(err, zl.StoreError), err
    assert peak < 1 << 20, peak


def test_a_member_shorter_than_its_declared_size_is_named(v3, tmp_path):
    """A directory entry declaring 10 bytes more than the member's sound stream holds (its CRC
    matches what is there): refused, naming the member, never parsed short."""
    real = (v3 / "gz" / "zarr.json").stat().st_size
    archive = _zip_with_patched_member(v3, tmp_path, "gz/zarr.json", sizes=(None, real + 10))
    with pytest.raises(zl.StoreError, match=names("gz/zarr.json", f"holds {real} bytes, not the {real + 10}")):
        zl.open(archive)["gz"]
