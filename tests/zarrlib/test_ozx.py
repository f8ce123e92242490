"""Single-file OME-Zarr (``.ozx``): opened by every spelling a ``.zip`` is, values as written
(ome-zarr-py's input arrays) and as zarr-python's ZipStore reads the same file, the archive
comment read, departures from the single-file layout reported as notes rather than refused,
hostile archives refused with errors naming the entry, and remote reads bounded in requests
and bytes at the server."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.zarrlib.errors import StoreError, StoreNotFoundError
from zarrview.zarrlib.storage import ZipStore, open_store, split_node_path, store_url

from http_server import serve
from ome_stores import ome_zarr_image
from ozx_files import add_zip64_end, directory_entries, patch_end, patch_entry, rfc9_comment, set_comment, zip_folder

DATA = np.random.default_rng(9).integers(0, 60000, (2, 96, 80), dtype="u2")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ome_zarr_image(tmp_path_factory.mktemp("ozx") / "img.zarr", "0.5", DATA, "cyx", scale_factors=(2,),
                          chunks=(1, 32, 32))


@pytest.fixture(scope="module")
def ozx(folder: Path) -> Path:
    return zip_folder(folder, folder.parent / "img.ozx")


def _truth(path: Path, level: str) -> np.ndarray:
    store = zarr.storage.ZipStore(path, mode="r")
    try:
        return np.asarray(zarr.open_array(store, path=level, mode="r")[...])
    finally:
        store.close()


def _store(path: Path | str) -> ZipStore:
    store = open_store(path)
    assert isinstance(store, ZipStore)
    return store


def test_an_ozx_reads_as_written_and_as_zarr_python_reads_it(ozx: Path) -> None:
    root = zl.open(ozx)
    assert isinstance(root, zl.Group) and root.attrs["ome"]["version"] == "0.5"
    for level in ("s0", "s1"):
        arr = root[level]
        assert isinstance(arr, zl.Array)
        np.testing.assert_array_equal(arr[...], _truth(ozx, level))
    np.testing.assert_array_equal(root["s0"][...], DATA)


def test_every_spelling_of_a_zip_opens_an_ozx(ozx: Path, tmp_path: Path) -> None:
    spellings = [str(ozx), f"file://{ozx}", f"zip::{ozx}", f"zip::file://{ozx}"]
    for loc in spellings:
        assert split_node_path(loc) == (loc, "/")
        assert split_node_path(loc + "::/s0") == (loc, "/s0")
        node = zl.open(loc + "::/s0")
        assert isinstance(node, zl.Array) and node.path == "/s0"
        np.testing.assert_array_equal(node[1, :5, :5], DATA[1, :5, :5])
        assert store_url(loc) == node.store.url == str(ozx.resolve())
    assert zl.open(ozx).url == str(ozx.resolve())  # a path object too
    upper = tmp_path / "IMG.OZX"
    upper.write_bytes(ozx.read_bytes())
    np.testing.assert_array_equal(zl.open(f"{upper}::/s0")[...], DATA)
    with pytest.raises(StoreNotFoundError, match="missing.ozx does not exist"):
        zl.open(f"zip::{tmp_path / 'missing.ozx'}")
    not_zip = tmp_path / "x.txt"
    not_zip.write_text("hello")
    with pytest.raises(StoreNotFoundError, match=r"neither a folder nor a \.zip or \.ozx file"):
        zl.open(not_zip)


def test_the_archive_comment_is_read(ozx: Path) -> None:
    archive = _store(ozx).archive
    assert archive.comment == json.loads(rfc9_comment())
    assert (archive.ome_version, archive.json_first, archive.zip64, archive.is_ozx) == ("0.5", True, True, True)
    assert archive.entries == len(zipfile.ZipFile(ozx).infolist())
    assert archive.notes == ()
    assert "OME-Zarr 0.5" in archive.summary() and "zarr.json first" in archive.summary()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zarrview", *args], capture_output=True, text=True, timeout=60)


def test_the_command_line_opens_an_ozx(ozx: Path, tmp_path: Path) -> None:
    info = _cli("info", str(ozx))
    assert info.returncode == 0, info.stderr
    rows = dict(line.split(None, 1) for line in info.stdout.splitlines()[:6] if line and not line[0].isspace())
    assert "single-file OME-Zarr (.ozx): OME-Zarr 0.5" in rows["Archive"] and "Archive note" not in info.stdout
    assert "OME-NGFF image (version 0.5)" in info.stdout
    tree = _cli("tree", f"zip::{ozx}")
    assert tree.returncode == 0, tree.stderr
    assert "[OME image 0.5, 2 levels]" in tree.stdout.splitlines()[0]
    assert "s0  array  (2, 96, 80)  uint16" in tree.stdout and "s1  array  (2, 48, 40)  uint16" in tree.stdout
    out = tmp_path / "plane.npy"
    export = _cli("export", f"{ozx}::/s0", "--slice", "1,:,:", "-o", str(out))
    assert export.returncode == 0, export.stderr
    np.testing.assert_array_equal(np.load(out), DATA[1])


def _rfc9_then(first: str):  # type: ignore[no-untyped-def]
    from ozx_files import rfc9_order

    def order(names):  # type: ignore[no-untyped-def]
        rest = rfc9_order(names)
        rest.remove(first)
        return [first, *rest]
    return order


@pytest.mark.parametrize("variant, expected", [
    ({"comment": b""}, ["the archive has no comment"]),
    ({"order": sorted}, ["the root zarr.json is not the directory's first entry ('s0/c/0/0/0' is)",
                         "the comment says jsonFirst, but 's0/zarr.json', 's1/zarr.json', 'zarr.json' follow other "
                         "entries"]),
    ({"compression": zipfile.ZIP_DEFLATED}, ["entries are compressed"]),
    ({"zip64": False}, ["does not use the ZIP64 format"]),
    ({"prefix": "img.zarr/"}, ["root zarr.json is in the folder 'img.zarr/'"]),
    ({"extra": {"inner.ozx": b"PK\x05\x06" + bytes(18)}}, ["holds other zip archives ('inner.ozx')"]),
    ({"order": "s0/zarr.json"}, ["the root zarr.json is not the directory's first entry ('s0/zarr.json' is)",
                                "not in breadth-first order"]),
])
def test_departures_from_the_layout_are_notes_and_the_archive_reads(folder: Path, tmp_path: Path,
                                                                   variant: dict, expected: list[str]) -> None:
    if variant.get("order") == "s0/zarr.json":
        variant = {"order": _rfc9_then("s0/zarr.json")}
    path = zip_folder(folder, tmp_path / "x.ozx", **variant)
    archive = _store(path).archive
    assert len(archive.notes) == len(expected), archive.notes
    for note, text in zip(archive.notes, expected):
        assert text in note
    np.testing.assert_array_equal(zl.open(f"{path}::/s0")[...], DATA)
    np.testing.assert_array_equal(zl.open(f"{path}::/s1")[...], _truth(path, "s1") if not variant.get("prefix")
                                  else zl.open(f"{folder}::/s1")[...])
    info = _cli("info", str(path))
    assert info.returncode == 0 and all(f"Archive note  {n}" in info.stdout for n in archive.notes), info.stdout


def test_a_plain_zip_gets_no_single_file_notes(folder: Path, tmp_path: Path) -> None:
    path = zip_folder(folder, tmp_path / "x.zip", comment=b"", zip64=False, order=sorted)
    archive = _store(path).archive
    assert (archive.is_ozx, archive.notes, archive.comment) == (False, (), None)
    assert archive.summary().startswith("zip archive")
    # a .zip whose comment says it is single-file OME-Zarr is one
    set_comment(path, rfc9_comment())
    assert _store(path).archive.is_ozx and _store(path).archive.ome_version == "0.5"


@pytest.mark.parametrize("comment, note", [
    (b"[" * 60000 + b"]" * 5000, "nested more than"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b'{"ome": 5}', 'no "ome" object'),
    (b'{"ome": {"version": 5}}', "ome.version is missing or not a string"),
    (b'{"ome": {"version": "0.5", "zipFile": {"centralDirectory": {"jsonFirst": "yes"}}}}', "jsonFirst must be"),
    (b'{"ome": {"version": "0.5", "zipFile": {"centralDirectory": ' + b'{"x": 1, ' * 50 + b"}", "is not valid JSON"),
    (b"1" * 65000, "is not usable JSON"),
    (b"[1, 2]", "must hold a JSON object"),
], ids=["deep", "not-utf8", "ome-not-object", "version-not-string", "jsonfirst-not-bool", "broken", "long-int",
        "array"])
def test_a_hostile_comment_is_a_note(ozx: Path, tmp_path: Path, comment: bytes, note: str) -> None:
    path = tmp_path / "c.ozx"
    path.write_bytes(ozx.read_bytes())
    set_comment(path, comment)
    t0 = time.perf_counter()
    archive = _store(path).archive
    assert time.perf_counter() - t0 < 2
    assert any(note in n for n in archive.notes), archive.notes
    assert not archive.json_first
    np.testing.assert_array_equal(zl.open(f"{path}::/s0")[...], DATA)


def _copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


@pytest.fixture
def plain(folder: Path, tmp_path: Path) -> Path:
    """The image as an .ozx without a ZIP64 end record, whose end record the tests edit."""
    return zip_folder(folder, tmp_path / "p.ozx", zip64=False)


def test_a_directory_larger_than_the_file_is_refused_at_once(plain: Path) -> None:
    patch_end(plain, cd_size=0xFFFFFF00)
    with pytest.raises(StoreError, match=r"p\.ozx is not a readable zip archive: its central directory of .* does "
                                         r"not fit before its end record"):
        zl.open(plain)


def test_a_directory_over_the_metadata_bound_is_refused(plain: Path) -> None:
    old = zl.limits.configure(metadata_bytes=1024)
    try:
        with pytest.raises(StoreError, match="its central directory holds .*more than the 1 KiB allowed"):
            zl.open(plain)
    finally:
        zl.limits.restore(old)


def test_a_zip64_record_declaring_billions_of_entries_is_refused(folder: Path, tmp_path: Path) -> None:
    path = zip_folder(folder, tmp_path / "b.ozx")
    data = bytearray(path.read_bytes())
    at = data.rfind(b"PK\x06\x06")
    struct.pack_into("<2Q", data, at + 24, 1 << 40, 1 << 40)
    path.write_bytes(bytes(data))
    t0 = time.perf_counter()
    with pytest.raises(StoreError, match="declares 1,099,511,627,776 entries, more than"):
        zl.open(path)
    assert time.perf_counter() - t0 < 1


def test_a_multi_part_archive_is_refused(plain: Path) -> None:
    patch_end(plain, disk=1)
    with pytest.raises(StoreError, match="multi-part archive"):
        zl.open(plain)


def test_a_cut_archive_is_refused(ozx: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.ozx"
    cut.write_bytes(ozx.read_bytes()[:-(len(rfc9_comment()) + 30)])  # the end record and comment gone
    with pytest.raises(StoreError, match="cut.ozx is not a readable zip archive: no end of central directory"):
        zl.open(cut)
    front = tmp_path / "front.ozx"
    data = ozx.read_bytes()
    front.write_bytes(data[len(data) // 2:])  # the directory's offsets now point past where it lies
    with pytest.raises(StoreError, match="front.ozx is not a readable zip archive"):
        zl.open(front)


def _chunks(path: Path) -> list[str]:
    return [n for _, n in directory_entries(path.read_bytes()) if "/c/" in n]


def test_overlapping_entries_are_unreadable_and_named(ozx: Path, tmp_path: Path) -> None:
    path = _copy(ozx, tmp_path / "o.ozx")
    level0 = [n for n in _chunks(path) if n.startswith("s0/")]
    a, b = level0[0], level0[1]
    infos = {i.filename: i for i in zipfile.ZipFile(path).infolist()}
    patch_entry(path, b, header_offset=infos[a].header_offset)
    archive = _store(path).archive
    assert any(f"'{a}': its bytes overlap those of '{b}'" in n for n in archive.notes), archive.notes
    with pytest.raises(StoreError, match=f"the entry '({a}|{b})' is damaged: its bytes overlap those of '({a}|{b})'"):
        zl.open(f"{path}::/s0")[...]
    np.testing.assert_array_equal(zl.open(f"{path}::/s1")[...], _truth(ozx, "s1"))  # the rest reads


def test_an_entry_pointing_past_the_file_is_named(ozx: Path, tmp_path: Path) -> None:
    path = _copy(ozx, tmp_path / "p.ozx")
    name = [n for n in _chunks(path) if n.startswith("s1/")][0]
    patch_entry(path, name, header_offset=path.stat().st_size + 1000)
    with pytest.raises(StoreError, match=f"the entry '{name}' is damaged: its .* run past the members' region"):
        zl.open(f"{path}::/s1")[...]
    np.testing.assert_array_equal(zl.open(f"{path}::/s0")[...], DATA)
    grown = [n for n in _chunks(path) if n.startswith("s0/")][-1]
    patch_entry(path, grown, size=path.stat().st_size)  # a stored size that runs into the directory
    with pytest.raises(StoreError, match=f"'{grown}' is damaged: its [0-9,]+ bytes at byte"):
        zl.open(f"{path}::/s0")[...]


def test_a_stored_member_with_changed_bytes_fails_its_crc(ozx: Path, tmp_path: Path) -> None:
    path = _copy(ozx, tmp_path / "crc.ozx")
    info = next(i for i in zipfile.ZipFile(path).infolist() if i.filename.startswith("s1/c/"))
    data = bytearray(path.read_bytes())
    at = data.find(info.filename.encode(), info.header_offset) + len(info.filename) + 20 + info.file_size // 2
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=f"do not match the CRC-32 of the entry '{info.filename}'"):
        zl.open(f"{path}::/s1")[...]


def test_a_zip64_archive_and_its_plain_twin_read_alike(plain: Path, tmp_path: Path) -> None:
    twin = _copy(plain, tmp_path / "twin.ozx")
    add_zip64_end(twin)
    assert not _store(plain).archive.zip64 and _store(twin).archive.zip64
    for level in ("s0", "s1"):
        np.testing.assert_array_equal(zl.open(f"{twin}::/{level}")[...], zl.open(f"{plain}::/{level}")[...])


# -- over HTTP: requests and bytes counted at the server -------------------------------------

SHARD = np.arange(512 * 512, dtype="u2").reshape(512, 512) * 3


@pytest.fixture(scope="module")
def sharded_ozx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A group with one uncompressed sharded array: a shard of 512 KiB holding 256 chunks."""
    base = tmp_path_factory.mktemp("shard")
    g = zarr.open_group(base / "s.zarr", mode="w", zarr_format=3)
    g.attrs["note"] = "sharded"
    a = g.create_array("a", shape=SHARD.shape, chunks=(32, 32), shards=(512, 512), dtype="u2", compressors=None)
    a[...] = SHARD
    return zip_folder(base / "s.zarr", base / "s.ozx")


def test_an_ozx_over_http_costs_a_bounded_number_of_requests(ozx: Path) -> None:
    with serve(ozx.parent) as (url, state):
        for loc in (f"{url}/img.ozx", f"zip::{url}/img.ozx"):
            state.clear()
            root = zl.open(loc)
            opened = len(state.requests())
            assert opened <= 3, state.requests()  # the size, the tail (directory included)
            levels = [root["s0"], root["s1"]]
            np.testing.assert_array_equal(levels[0][...], DATA)
            np.testing.assert_array_equal(levels[1][...], _truth(ozx, "s1"))
            chunks = len(_chunks(ozx))
            # one read of all zarr.json entries, then one read a chunk (its header with it)
            assert len(state.requests()) <= opened + 1 + chunks, state.requests()


def test_a_chunk_of_a_remote_shard_is_read_in_ranges(sharded_ozx: Path) -> None:
    shard_bytes = SHARD.nbytes
    with serve(sharded_ozx.parent) as (url, state):
        arr = zl.open(f"{url}/s.ozx::/a")
        assert isinstance(arr, zl.Array)
        state.clear()
        before = state.sent_to("s.ozx")
        np.testing.assert_array_equal(arr[256:288, 224:256], SHARD[256:288, 224:256])
        # the shard's local header, its index, one chunk (in the middle of the shard, not in the
        # archive's last 64 KiB, read when it was opened): not the bytes before the chunk
        assert len(state.requests()) <= 3, state.requests()
        assert state.sent_to("s.ozx") - before < 8 << 10
        before = state.sent_to("s.ozx")
        np.testing.assert_array_equal(arr[...], SHARD)
        assert state.sent_to("s.ozx") - before <= shard_bytes + (8 << 10)


def test_the_chunks_of_a_remote_read_are_in_flight_together(tmp_path: Path) -> None:
    """A plane of 16 chunk members over a link that answers each request after 0.25 s: their
    local headers in one round, their bytes in another (not 16 rounds one after another)."""
    from http_server import Faults

    # 16 members of 32 KiB, incompressible: beyond the archive's tail, read when it was opened
    data = np.random.default_rng(5).integers(0, 65535, (512, 512), dtype="<u2")
    a = zarr.create_array(tmp_path / "p.zarr", shape=data.shape, chunks=(128, 128), dtype="u2")
    a[...] = data
    zip_folder(tmp_path / "p.zarr", tmp_path / "p.ozx")
    delay = 0.25
    with serve(tmp_path, Faults(delay=delay, delay_match="p.ozx")) as (url, state):
        arr = zl.open(f"{url}/p.ozx")
        assert isinstance(arr, zl.Array)
        state.clear()
        t0 = time.perf_counter()
        np.testing.assert_array_equal(arr[...], data)
        first = time.perf_counter() - t0
        assert first < 4 * delay, f"{first:.2f} s for 16 chunks: read one after another"
        t0 = time.perf_counter()
        np.testing.assert_array_equal(arr[...], data)  # headers known: one round
        assert time.perf_counter() - t0 < 2.5 * delay
        # neighbouring members go out as one range: fewer requests than chunks
        assert len(state.requests("GET")) < 2 * 16, state.requests()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_an_ozx_in_s3_opens(ozx: Path) -> None:
    pytest.importorskip("s3fs", reason="zarrview[cloud] is part of the test extras")
    pytest.importorskip("moto.server", reason="moto[server] is part of the test extras")
    import boto3

    from cloud_servers import moto_s3

    with moto_s3() as endpoint:
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket="ozx")
        client.put_object(Bucket="ozx", Key="img.ozx", Body=ozx.read_bytes())
        root = zl.open("s3://ozx/img.ozx", endpoint_url=endpoint)
        assert isinstance(root.store, ZipStore) and root.store.archive.ome_version == "0.5"
        np.testing.assert_array_equal(root["s0"][...], DATA)


def test_a_name_listed_twice_is_a_note_and_the_last_entry_is_read(folder: Path, tmp_path: Path) -> None:
    name = "s1/c/0/0/0"
    with pytest.warns(UserWarning, match="Duplicate name"):
        path = zip_folder(folder, tmp_path / "d.ozx", extra={name: b"not a chunk"})
    pass_through = zipfile.ZipFile(path).read(name)  # zipfile reads the last entry of a name
    assert pass_through == b"not a chunk"
    store = _store(path)
    assert any(f"1 name is listed more than once in the directory (such as '{name}')" in n
               for n in store.archive.notes), store.archive.notes
    assert store.get(name) == pass_through
    np.testing.assert_array_equal(zl.open(f"{path}::/s0")[...], DATA)


def test_a_root_zarr_json_listed_again_later_is_the_one_read(folder: Path, tmp_path: Path) -> None:
    doc = json.loads((folder / "zarr.json").read_text())
    doc["attributes"]["added"] = "later"
    with pytest.warns(UserWarning, match="Duplicate name"):
        path = zip_folder(folder, tmp_path / "r.ozx", extra={"zarr.json": json.dumps(doc).encode()})
    assert json.loads(zipfile.ZipFile(path).read("zarr.json"))["attributes"]["added"] == "later"
    root = zl.open(path)
    assert root.store.archive.json_first and root.attrs["added"] == "later"
