"""Icechunk repositories read natively, checked against icechunk 2.3 itself.

A writer script runs once per session in a Python 3.12 venv (``py312_env``): it writes the same
history as a spec 2 and a spec 1 repository (native, inline, sharded and virtual chunks, edge
and missing chunks, a branch and tags) and saves what icechunk and zarr-python read back for
every branch, tag and snapshot. Every array of every version must read the same through
``zarrlib.open`` and the command line; refs and ancestry must be icechunk's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import shutil
import tracemalloc
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from icechunk_repos import repositories
import zarrview.zarrlib as zl
from zarrview.cli import main as cli_main
from zarrview.zarrlib.icechunk import IcechunkStore, history, refs
from zarrview.zarrlib.icechunk.binary import FbTable
from zarrview.zarrlib.storage.access import AccessDeniedError, AccessPolicy
from zarrview.zarrlib.storage.local import LocalStore

#: the first test also builds the 3.12 venv (an install from PyPI) and runs the writer
pytestmark = pytest.mark.timeout(600)

REPOS = ("repo2.icechunk", "repo1.icechunk")


@pytest.fixture(scope="session")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return repositories(tmp_path_factory)


def _arrays(group: zl.Group) -> dict[str, zl.Array]:
    found: dict[str, zl.Array] = {}
    for name in group.member_names():
        node = group[name]
        if isinstance(node, zl.Group):
            found.update(_arrays(node))
        else:
            found[node.path] = node
    return found


@pytest.mark.parametrize("repo", REPOS)
def test_every_version_reads_as_icechunk_reads_it(fixture: dict[str, Any], repo: str) -> None:
    spec = fixture["repos"][repo]
    location = fixture["root"] / repo
    assert len(spec["versions"]) >= 6
    for label, version in spec["versions"].items():
        root = zl.open(f"{location}@{label}", authorize=[fixture["prefix"]])
        assert isinstance(root, zl.Group)
        assert isinstance(root.store, IcechunkStore) and root.store.snapshot_id == version["snapshot"]
        arrays = _arrays(root)
        assert sorted(arrays) == sorted(version["arrays"]), label
        for path, file in version["arrays"].items():
            want = np.load(file)
            got = arrays[path][...]
            assert got.dtype == want.dtype and got.shape == want.shape, (label, path)
            np.testing.assert_array_equal(got, want, err_msg=f"{repo}@{label}{path}")


@pytest.mark.parametrize("repo", REPOS)
def test_node_paths_and_default_version(fixture: dict[str, Any], repo: str) -> None:
    spec = fixture["repos"][repo]
    location = fixture["root"] / repo
    main = spec["versions"]["branch.main"]["arrays"]
    a = zl.open(f"{location}::/grp/missing")
    assert isinstance(a.store, IcechunkStore) and str(a.store.version) == "branch.main"
    np.testing.assert_array_equal(a[...], np.load(main["/grp/missing"]))
    tagged = zl.open(f"{location}@tag.v1::/a")
    np.testing.assert_array_equal(tagged[...], np.load(spec["versions"]["tag.v1"]["arrays"]["/a"]))
    by_option = zl.open(str(location), path="/a", version="branch.dev")
    np.testing.assert_array_equal(by_option[2:8, 1:5], np.load(spec["versions"]["branch.dev"]["arrays"]["/a"])[2:8, 1:5])
    assert zl.open(str(location)).attrs["title"] == "icechunk fixture"


@pytest.mark.parametrize("repo", REPOS)
def test_refs_and_history_are_icechunks(fixture: dict[str, Any], repo: str) -> None:
    spec = fixture["repos"][repo]
    store = IcechunkStore(LocalStore(fixture["root"] / repo))
    branches, tags = refs(store)
    assert branches == spec["branches"] and tags == spec["tags"]
    for label, want in spec["ancestry"].items():
        got = history(store, label)
        assert [(h.id, h.parent_id, h.message) for h in got] == [(w[0], w[1], w[3]) for w in want], label
        assert [h.time for h in got] == [datetime.fromisoformat(w[2]) for w in want], label
    assert len(history(store, "branch.main", limit=2)) == 2


@pytest.mark.parametrize("repo", REPOS)
def test_commit_metadata_is_icechunks(fixture: dict[str, Any], repo: str) -> None:
    """Spec 2 FlexBuffers and spec 1 MessagePack values, in the history and in each snapshot."""
    import json

    from zarrview.describe import repository_rows

    spec = fixture["repos"][repo]
    store = IcechunkStore(LocalStore(fixture["root"] / repo))
    want = spec["metadata"]
    assert any(want.values()), want  # the writer gave some commits metadata
    for label in spec["ancestry"]:
        for h in history(store, label):
            assert h.metadata == want[h.id], (label, h.id)
    for sid, meta in want.items():
        opened = zl.open(fixture["root"] / repo, version=sid)
        assert opened.store.snapshot.metadata == meta
        rows = dict(repository_rows(opened))
        assert {k[len("Commit "):]: json.loads(v) for k, v in rows.items() if k.startswith("Commit ")} == meta


def test_unknown_versions_are_named(fixture: dict[str, Any]) -> None:
    location = fixture["root"] / "repo2.icechunk"
    with pytest.raises(zl.StoreNotFoundError, match="no tag named 'nope'.*tag.latest, tag.v1"):
        zl.open(f"{location}@tag.nope")
    with pytest.raises(zl.StoreNotFoundError, match="snapshot 0000000000000000000G does not exist"):
        zl.open(f"{location}@0000000000000000000G")
    with pytest.raises(zl.StoreNotFoundError, match="not an Icechunk repository"):
        zl.open(str(fixture["root"]), version="branch.main")


def test_virtual_chunks_need_authorisation(fixture: dict[str, Any]) -> None:
    location = fixture["root"] / "repo2.icechunk"
    want = np.load(fixture["repos"]["repo2.icechunk"]["versions"]["branch.main"]["arrays"]["/vc"])
    vc = zl.open(f"{location}::/vc")
    with pytest.raises(AccessDeniedError) as refused:
        vc[...]
    assert "vc/c/0/0" in str(refused.value) and refused.value.prefix == fixture["prefix"]
    assert refused.value.url == fixture["prefix"] + "src.h5"
    failures: list[zl.ChunkFailure] = []
    out = vc.read((slice(None), slice(None)), failures=failures)
    assert len(failures) == 4 and all("not authorised" in f.message for f in failures)
    assert sorted(f.key for f in failures) == ["vc/c/0/0", "vc/c/0/1", "vc/c/1/0", "vc/c/1/1"]
    assert not out.any()  # nothing was read: the fill value everywhere
    policy = AccessPolicy()
    v = zl.open(f"{location}::/vc", authorize=policy)
    with pytest.raises(AccessDeniedError):
        v[...]
    policy.allow(fixture["prefix"])  # the window widens the policy and reads again
    np.testing.assert_array_equal(v[...], want)


def test_dictionary_compressed_virtual_locations(fixture: dict[str, Any]) -> None:
    location = fixture["root"] / "repo2.icechunk"
    v = zl.open(f"{location}::/vlong", authorize=[fixture["prefix"]])
    assert isinstance(v.store, IcechunkStore)
    manifest = location / "manifests" / v.store.snapshot.nodes["/vlong"].manifests[0].manifest_id
    refs = FbTable.root(_flatbuffer(manifest)[1], "manifest").tables(1)[0].tables(1)
    assert len(refs) == 40  # the writer compressed every location (field 8, no plain field 5)
    assert all(refs[i].has(8) and not refs[i].has(5) for i in range(40))
    ref = v.store.chunk_ref("vlong/c/39")
    assert ref is not None and ref.location == fixture["prefix"] + "raw.bin" and ref.offset == 39 * 40
    want = np.load(fixture["repos"]["repo2.icechunk"]["versions"]["branch.main"]["arrays"]["/vlong"])
    np.testing.assert_array_equal(v[...], want)


@pytest.mark.parametrize("repo", REPOS)
def test_named_container_locations(fixture: dict[str, Any], repo: str) -> None:
    location = fixture["root"] / repo
    v = zl.open(f"{location}::/vnamed")
    assert isinstance(v.store, IcechunkStore)
    ref = v.store.chunk_ref("vnamed/c/2")
    assert ref is not None and ref.location == "vcc://data/raw.bin"
    with pytest.raises(AccessDeniedError) as refused:  # a named container is no authorisation
        v[...]
    assert refused.value.url == fixture["prefix"] + "raw.bin"
    v = zl.open(f"{location}::/vnamed", authorize=[fixture["prefix"]])
    want = np.load(fixture["repos"][repo]["versions"]["branch.main"]["arrays"]["/vnamed"])
    np.testing.assert_array_equal(v[...], want)


def test_cli_tree_info_export(fixture: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = fixture["repos"]["repo2.icechunk"]
    location = fixture["root"] / "repo2.icechunk"
    assert cli_main(["tree", f"{location}@tag.v1"]) == 0
    text = capsys.readouterr().out
    for path in spec["versions"]["tag.v1"]["arrays"]:
        assert path.rsplit("/", 1)[-1] in text
    assert "c64" not in text  # added after v1
    assert cli_main(["info", f"{location}::/sh"]) == 0
    info = capsys.readouterr().out
    assert "uint16" in info and "16" in info
    out = tmp_path / "x.npy"
    assert cli_main(["export", f"{location}@branch.dev::/a", "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), np.load(spec["versions"]["branch.dev"]["arrays"]["/a"]))



@pytest.mark.parametrize("repo", REPOS)
def test_the_audit_counts_what_icechunk_lists(fixture: dict[str, Any], repo: str) -> None:
    """Every array of every version: its stored objects are the chunk keys icechunk's own
    listing holds, counted from the manifests (no chunk is read: the virtual ones need no
    authorisation)."""
    spec = fixture["repos"][repo]
    location = fixture["root"] / repo
    for label, version in spec["versions"].items():
        if version.get("empty"):
            continue
        keys = version["keys"]
        for path in version["arrays"]:
            arr = zl.open(f"{location}@{label}::{path}")
            assert isinstance(arr, zl.Array)
            listed = [k for k in keys if k.startswith(path[1:] + "/") and not k.endswith("zarr.json")]
            audit = arr.audit()
            assert audit.objects_stored == len(listed), (label, path, listed)
            assert audit.stray_objects == 0 and not audit.errors, (label, path)
            if arr.shards is None:
                assert audit.chunks_stored == len(listed)
        root = zl.open(f"{location}@{label}")  # a group counts the chunk objects of every array below it
        assert isinstance(root, zl.Group)
        counted = root.stored_objects()
        assert counted is not None and counted.count == len([k for k in keys if not k.endswith("zarr.json")]), label


def test_cli_reads_virtual_chunks_only_where_allowed(fixture: dict[str, Any], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    location = fixture["root"] / "repo2.icechunk"
    out = tmp_path / "vc.npy"
    assert cli_main(["export", f"{location}::/vc", "-o", str(out)]) == 1
    said = capsys.readouterr().err
    assert "vc/c/0/0" in said and f"--authorize {fixture['prefix']}" in said and not out.exists()
    assert cli_main(["export", f"{location}::/vc", "--authorize", fixture["prefix"], "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), np.load(fixture["repos"]["repo2.icechunk"]["versions"]["branch.main"]["arrays"]["/vc"]))
    assert cli_main(["info", f"{location}::/vc", "--authorize", fixture["prefix"]]) == 0
    assert "Version" in capsys.readouterr().out


@pytest.mark.parametrize("repo", REPOS)
def test_keys_are_icechunks(fixture: dict[str, Any], repo: str) -> None:
    for label, version in fixture["repos"][repo]["versions"].items():
        if version.get("empty"):
            continue
        store = IcechunkStore(LocalStore(fixture["root"] / repo), label)
        assert sorted(store.list_prefix("")) == version["keys"], label
        grp = sorted(k for k in version["keys"] if k.startswith("grp/"))
        assert sorted(k for k, _ in store.walk_sizes("grp/")) == grp
        keys, dirs = store.list_dir("grp/")
        assert keys == ["zarr.json"] and dirs == sorted({k.split("/")[1] for k in grp if k.count("/") > 1})


def test_ranges_of_native_inline_and_virtual_chunks(fixture: dict[str, Any]) -> None:
    from store_contract import ranges

    from zarrview.zarrlib.storage.base import ByteRequest, Scratch

    location = fixture["root"] / "repo2.icechunk"
    store = IcechunkStore(LocalStore(location), "tag.v1", AccessPolicy([fixture["prefix"]]))
    truth: dict[str, bytes] = {}
    for key in ("a/c/1/1", "small/c/0", "vc/c/1/0", "v/c/0/0"):
        ref = store.chunk_ref(key)
        assert ref is not None
        if ref.inline is not None:
            truth[key] = ref.inline
        else:
            file = location / "chunks" / ref.chunk_id if ref.chunk_id else Path(fixture["root"]) / "src.h5"
            truth[key] = file.read_bytes()[ref.offset:ref.offset + ref.length]
        assert len(truth[key]) == ref.size
    assert {store.chunk_ref(k).chunk_id is not None for k in truth} == {True, False}  # type: ignore[union-attr]
    reqs = []
    for key, data in truth.items():
        n = len(data)
        reqs += [ByteRequest(key), ByteRequest(key, 1, 5), ByteRequest(key, n - 3, n + 50), ByteRequest(key, -4),
                 ByteRequest(key, n + 1, n + 9), ByteRequest(key, -(n + 10))]
    want = []
    for r in reqs:
        data = truth[r.key]
        want.append(data if r.start is None else data[max(0, len(data) + r.start):] if r.start < 0
                    else data[r.start:r.stop])
    assert ranges(store, reqs) == want
    assert ranges(store, reqs, Scratch()) == want
    assert [store.get_range(r) for r in reqs] == want
    assert store.get("a/c/9/9") is None and store.get("a/c/0") is None and store.get("nope/zarr.json") is None
    with pytest.raises(zl.TooLargeError, match="a/c/1/1"):
        store.get_bounded("a/c/1/1", 4)


def test_stored_chunks_come_from_the_manifests(fixture: dict[str, Any]) -> None:
    a = zl.open(f"{fixture['root'] / 'repo2.icechunk'}::/grp/missing")
    count, _ = a.stored_objects()
    assert count == 2  # two chunks written, the rest are the fill value


def test_http_reads_one_round_of_chunk_files(fixture: dict[str, Any]) -> None:
    from http_server import serve

    spec = fixture["repos"]["repo2.icechunk"]
    with serve(fixture["root"]) as (url, state):
        root = zl.open(f"{url}/repo2.icechunk@tag.v1")
        assert [p for _, p, _ in state.requests("GET")] == [
            "/repo2.icechunk/repo", f"/repo2.icechunk/snapshots/{spec['tags']['v1']}"]
        a = root["a"]
        assert isinstance(a.store, IcechunkStore)
        base = a.store.base
        calls: list[int] = []
        forward = base.get_ranges

        def counted(reqs: Any, *args: Any, **kwargs: Any) -> None:
            calls.append(len(reqs))
            forward(reqs, *args, **kwargs)

        base.get_ranges = counted  # type: ignore[method-assign]
        state.clear()
        np.testing.assert_array_equal(a[...], np.load(spec["versions"]["tag.v1"]["arrays"]["/a"]))
        gets = [p for _, p, _ in state.requests("GET")]
        chunk_files = {a.store.chunk_ref(f"a/c/{i}/{j}").chunk_id for i in range(3) for j in range(3)}  # type: ignore[union-attr]
        # the metadata never again; the manifest once; each of the 9 chunk files once, in one call
        assert calls == [9]
        assert sorted(gets) == sorted([f"/repo2.icechunk/manifests/{a.store.snapshot.nodes['/a'].manifests[0].manifest_id}"]
                                      + [f"/repo2.icechunk/chunks/{c}" for c in chunk_files])
        state.clear()
        a[...]
        assert len(state.requests("GET")) == 9  # the manifest is kept


@pytest.mark.parametrize("repo", REPOS)
def test_http_versions(fixture: dict[str, Any], repo: str) -> None:
    from http_server import serve

    spec = fixture["repos"][repo]
    with serve(fixture["root"]) as (url, _):
        for label in ("branch.main", "tag.v1"):
            a = zl.open(f"{url}/{repo}@{label}::/a")
            np.testing.assert_array_equal(a[...], np.load(spec["versions"][label]["arrays"]["/a"]))


def test_remote_repository_found_without_its_name(fixture: dict[str, Any], tmp_path: Path) -> None:
    """A URL not ending in .icechunk and naming no version: plain Zarr is looked for first
    (no request more for a Zarr store), then the repository's own files."""
    from http_server import serve

    shutil.copytree(fixture["root"] / "repo1.icechunk", tmp_path / "data")
    spec = fixture["repos"]["repo1.icechunk"]
    with serve(tmp_path) as (url, _):
        a = zl.open(f"{url}/data::/grp/b")
        assert isinstance(a.store, IcechunkStore) and a.store.info.spec == 1
        np.testing.assert_array_equal(a[...], np.load(spec["versions"]["branch.main"]["arrays"]["/grp/b"]))
        with pytest.raises(zl.NodeNotFoundError, match="no Zarr node at /nope"):
            zl.open(f"{url}/data::/nope")


def _upload(fixture: dict[str, Any], put: Any) -> None:
    """Every file of both repositories to a bucket, object by object (``put(key, bytes)``)."""
    for repo in REPOS:
        for path in (fixture["root"] / repo).rglob("*"):
            if path.is_file():
                put(f"{repo}/{path.relative_to(fixture['root'] / repo).as_posix()}", path.read_bytes())


def _bucket_reads_as_icechunk(fixture: dict[str, Any], url: str, **options: Any) -> None:
    """Three versions of both repositories in the bucket at ``url`` read as icechunk read them."""
    for repo in REPOS:
        spec = fixture["repos"][repo]
        for label in ("branch.main", "branch.dev", "tag.v1"):
            root = zl.open(f"{url}/{repo}@{label}", authorize=[fixture["prefix"]], **options)
            arrays = _arrays(root)  # type: ignore[arg-type]
            assert sorted(arrays) == sorted(spec["versions"][label]["arrays"])
            for path, file in spec["versions"][label]["arrays"].items():
                np.testing.assert_array_equal(arrays[path][...], np.load(file), err_msg=f"{repo}@{label}{path}")
        assert refs(zl.open(f"{url}/{repo}", **options).store) == (spec["branches"], spec["tags"])


@pytest.mark.slow
def test_s3_repository(fixture: dict[str, Any]) -> None:
    pytest.importorskip("s3fs", reason="zarrview[cloud] is part of the test extras")
    pytest.importorskip("moto.server", reason="moto[server] is part of the test extras")
    import boto3
    from cloud_servers import moto_s3

    with moto_s3() as endpoint:
        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket="repos")
        _upload(fixture, lambda key, data: client.put_object(Bucket="repos", Key=key, Body=data))
        _bucket_reads_as_icechunk(fixture, "s3://repos", endpoint_url=endpoint)


@pytest.mark.slow
def test_gcs_repository(fixture: dict[str, Any]) -> None:
    pytest.importorskip("gcsfs", reason="zarrview[cloud] is part of the test extras")
    pytest.importorskip("gcp_storage_emulator.server", reason="gcp-storage-emulator is part of the test extras")
    from cloud_servers import gcs_emulator
    from gcsfs.core import GCSFileSystem

    with gcs_emulator("repos") as endpoint:
        fs = GCSFileSystem(endpoint_url=endpoint, token="anon")
        _upload(fixture, lambda key, data: fs.pipe_file(f"repos/{key}", data))
        _bucket_reads_as_icechunk(fixture, "gs://repos", endpoint_url=endpoint, token="anon", backend="fsspec")


@pytest.mark.slow
def test_gcs_repository_through_obstore(fixture: dict[str, Any], tmp_path: Path) -> None:
    """The same repositories in a bucket of GCS's XML API (the loopback server with buckets),
    which ``gs://`` reads through obstore."""
    from http_server import serve

    def put(key: str, data: bytes) -> None:
        path = tmp_path / "repos" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    _upload(fixture, put)
    with serve(tmp_path, buckets=True) as (endpoint, state):
        _bucket_reads_as_icechunk(fixture, "gs://repos", endpoint_url=endpoint, token="anon")
        assert state.requests(), "read from the server"


# -- hostile repositories: each a named ZarrError ------------------------------------------------
def _copy(fixture: dict[str, Any], tmp_path: Path, repo: str = "repo2.icechunk") -> Path:
    dst = tmp_path / repo
    shutil.copytree(fixture["root"] / repo, dst)
    return dst


def _flatbuffer(path: Path) -> tuple[bytes, bytes]:
    from numcodecs import Zstd

    data = path.read_bytes()
    return data[:39], Zstd().decode(data[39:])


def _rewrite(path: Path, header: bytes, buf: bytes) -> None:
    from numcodecs import Zstd

    path.write_bytes(header + Zstd(level=1).encode(buf))


def _reserved_block(data: bytes) -> bytes:
    """``data`` (an Icechunk file) with the first block of its zstd frame given the reserved
    block type, which every decoder refuses. Zeroing bytes inside the frame instead is not
    certain to break it: whether the result still decodes depends on where the compressor put
    the repository's snapshot ids, which are random (about 1 repository file in 60)."""
    frame = data[39:]
    descriptor = frame[4]
    single_segment = bool(descriptor & 0x20)
    start = (5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3]
             + (int(single_segment), 2, 4, 8)[descriptor >> 6])
    block = int.from_bytes(frame[start:start + 3], "little") | 0b110  # Block_Type 3: reserved
    return data[:39] + frame[:start] + block.to_bytes(3, "little") + frame[start + 3:]


@pytest.mark.parametrize("damage, message", [
    (lambda d: b"NOT" + d[3:], "no ICE🧊CHUNK magic"),
    (lambda d: d[:20], "too short for an Icechunk file header"),
    (lambda d: d[:37] + b"\x01" + d[38:], "a snapshot file where a repo_info was expected"),
    (_reserved_block, "cannot decompress"),
    (lambda d: d[:-30], "cannot decompress"),
])
def test_hostile_repo_file(fixture: dict[str, Any], tmp_path: Path, damage: Any, message: str) -> None:
    repo = _copy(fixture, tmp_path)
    (repo / "repo").write_bytes(damage((repo / "repo").read_bytes()))
    with pytest.raises(zl.ZarrError, match=message) as e:
        zl.open(str(repo))
    assert "repo" in str(e.value)


def test_decompression_bomb(fixture: dict[str, Any], tmp_path: Path) -> None:
    from numcodecs import Zstd

    repo = _copy(fixture, tmp_path)
    header = (repo / "repo").read_bytes()[:39]
    (repo / "repo").write_bytes(header + Zstd(level=1).encode(bytes(8 << 20)))
    old = zl.limits.configure(metadata_bytes=1 << 20)
    try:
        with pytest.raises(zl.ZarrError, match=r"repo: cannot decompress.*1 MiB"):
            zl.open(str(repo))
    finally:
        zl.limits.restore(old)


def _zstd_bomb(blocks: int) -> bytes:
    """A zstd frame of ``blocks`` RLE blocks of 128 KiB of zeros (4 bytes each) whose header
    declares no content size: 1 GiB in 32 KiB, and no decoder can tell its size before
    decoding it."""
    block = 128 << 10
    frame = bytearray((0xFD2FB528).to_bytes(4, "little"))
    frame += bytes([0x00, 17 - 10 << 3])  # no content size, not single segment; a 128 KiB window
    for i in range(blocks):
        frame += (block << 3 | 1 << 1 | (i == blocks - 1)).to_bytes(3, "little") + b"\x00"  # Block_Type 1: RLE
    return bytes(frame)


def test_the_crafted_bomb_is_a_zstd_frame_without_a_size() -> None:
    """numcodecs decodes the frame, and the system libzstd finds no content size in its header."""
    from numcodecs import Zstd

    frame = _zstd_bomb(3)
    assert Zstd().decode(frame) == bytes(3 * (128 << 10))
    name = ctypes.util.find_library("zstd")
    if name is None:
        pytest.skip("no system libzstd to read the frame header with")
    libzstd = ctypes.CDLL(name)
    libzstd.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    libzstd.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    assert libzstd.ZSTD_getFrameContentSize(frame, len(frame)) == (1 << 64) - 1  # ZSTD_CONTENTSIZE_UNKNOWN


@pytest.mark.parametrize("target", ["repo", "snapshot", "manifest"])
def test_bomb_without_declared_size_stops_at_the_bound(fixture: dict[str, Any], tmp_path: Path, target: str) -> None:
    """A metadata file whose frame declares no size is decoded a piece at a time and refused
    once it passes ``metadata_bytes``, having cost about that much memory, not the frame's
    gigabyte nor twice the bound."""
    repo = _copy(fixture, tmp_path)
    store = IcechunkStore(LocalStore(str(repo)))
    files = {"repo": repo / "repo", "snapshot": repo / "snapshots" / store.snapshot_id,
             "manifest": repo / "manifests" / store.snapshot.nodes["/a"].manifests[0].manifest_id}
    store.close()
    path = files[target]
    path.write_bytes(path.read_bytes()[:39] + _zstd_bomb(8192))  # 1 GiB
    bound = 64 << 20
    old = zl.limits.configure(metadata_bytes=bound)
    tracemalloc.start()
    try:
        with pytest.raises(zl.ZarrError) as e:
            zl.open(f"{repo}::/a")[...]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        zl.limits.restore(old)
    assert f"{path.name}: cannot decompress" in str(e.value) and "64 MiB" in str(e.value), str(e.value)
    assert peak < bound + (8 << 20), f"{peak / 2**20:.0f} MiB to refuse a file bounded at 64 MiB"


def test_missing_snapshot_file(fixture: dict[str, Any], tmp_path: Path) -> None:
    repo = _copy(fixture, tmp_path)
    sid = fixture["repos"]["repo2.icechunk"]["tags"]["v1"]
    (repo / "snapshots" / sid).unlink()
    with pytest.raises(zl.ZarrError, match=f"snapshots/{sid}: snapshot {sid} does not exist"):
        zl.open(f"{repo}@tag.v1")


def test_truncated_chunk_file_fails_that_chunk(fixture: dict[str, Any], tmp_path: Path) -> None:
    repo = _copy(fixture, tmp_path)
    a = zl.open(f"{repo}::/a")
    assert isinstance(a.store, IcechunkStore)
    ref = a.store.chunk_ref("a/c/1/1")
    assert ref is not None and ref.chunk_id is not None
    chunk = repo / "chunks" / ref.chunk_id
    chunk.write_bytes(chunk.read_bytes()[: ref.offset + ref.length // 2])
    failures: list[zl.ChunkFailure] = []
    a.read((slice(None), slice(None)), failures=failures)
    assert [f.key for f in failures] == ["a/c/1/1"]
    assert f"chunks/{ref.chunk_id}" in failures[0].message and "ends at byte" in failures[0].message


def test_range_past_the_end_of_a_chunk_file_names_the_files_end(fixture: dict[str, Any], tmp_path: Path) -> None:
    """A shard's index is read from its end: once the shard's file is cut to half, that range
    starts past the end and comes back empty, and the message still says where the file ends."""
    repo = _copy(fixture, tmp_path)
    sh = zl.open(f"{repo}::/sh")
    assert isinstance(sh.store, IcechunkStore)
    ref = sh.store.chunk_ref("sh/c/0/0")
    assert ref is not None and ref.chunk_id is not None
    chunk = repo / "chunks" / ref.chunk_id
    chunk.write_bytes(chunk.read_bytes()[: ref.offset + ref.length // 2])
    size = chunk.stat().st_size
    failures: list[zl.ChunkFailure] = []
    sh.read((slice(None), slice(None)), failures=failures)
    assert failures and {f.key for f in failures} == {"sh/c/0/0"}
    for failure in failures:
        found = re.search(rf"bytes (\d+)-(\d+) of \S*chunks/{ref.chunk_id}, which ends at byte (\d+) "
                          rf"\(a file of (\d+) bytes\)", failure.message)
        assert found is not None, failure.message
        start, stop, end, length = (int(g) for g in found.groups())
        assert size < start < stop and end == length == size


def test_virtual_chunk_to_a_file_outside_the_authorised_folder(fixture: dict[str, Any], tmp_path: Path) -> None:
    repo = _copy(fixture, tmp_path)
    a = zl.open(f"{repo}::/v")
    assert isinstance(a.store, IcechunkStore)
    ref = a.store.chunk_ref("v/c/0/0")
    assert ref is not None and ref.location is not None
    manifest = repo / "manifests" / a.store.snapshot.nodes["/v"].manifests[0].manifest_id
    header, buf = _flatbuffer(manifest)
    hostile = "file://" + "/" * (len(ref.location) - len("file://etc/passwd")) + "etc/passwd"
    assert len(hostile) == len(ref.location) and buf.count(ref.location.encode()) == 1
    _rewrite(manifest, header, buf.replace(ref.location.encode(), hostile.encode()))
    v = zl.open(f"{repo}::/v", authorize=[fixture["prefix"]])
    with pytest.raises(AccessDeniedError, match="v/c/0/0.*/etc/passwd") as e:
        v[...]
    assert e.value.prefix == "file:///etc/"


def test_virtual_chunk_file_modified_since(fixture: dict[str, Any], tmp_path: Path) -> None:
    import os
    import time

    root = tmp_path / "copy"
    shutil.copytree(fixture["root"], root)
    # the references name the original folder: authorise it, and change the file they point to
    src = Path(fixture["root"]) / "src.h5"
    stat = src.stat()
    os.utime(src, (stat.st_atime, time.time() + 5 * 86400))
    try:
        vc = zl.open(f"{root / 'repo2.icechunk'}::/vc", authorize=[fixture["prefix"]])
        with pytest.raises(zl.StoreError, match="vc/c/.*was modified after the chunk was recorded"):
            vc[...]
    finally:
        os.utime(src, (stat.st_atime, stat.st_mtime))


def test_ancestry_loop_is_an_error(fixture: dict[str, Any], tmp_path: Path) -> None:
    from zarrview.zarrlib.icechunk import ids

    repo = _copy(fixture, tmp_path, "repo1.icechunk")
    sid = fixture["repos"]["repo1.icechunk"]["branches"]["main"]
    parent = fixture["repos"]["repo1.icechunk"]["ancestry"]["branch.main"][0][1]
    snap = repo / "snapshots" / sid
    header, buf = _flatbuffer(snap)
    assert buf.count(ids.decode(parent)) == 1
    _rewrite(snap, header, buf.replace(ids.decode(parent), ids.decode(sid)))
    with pytest.raises(zl.ZarrError, match=f"ancestry of {sid} loops"):
        history(IcechunkStore(LocalStore(repo)), "branch.main")


@pytest.mark.parametrize("kind", ["repo", "snapshot", "manifest"])
def test_mutated_flatbuffers_cost_a_zarr_error(fixture: dict[str, Any], tmp_path: Path, kind: str) -> None:
    """Bytes of a decompressed metadata file changed at random: opening and reading every array
    fails, if at all, with a ZarrError; never another exception, a hang or a read elsewhere."""
    import random

    repo = _copy(fixture, tmp_path)
    main = fixture["repos"]["repo2.icechunk"]["branches"]["main"]
    store = IcechunkStore(LocalStore(repo))
    target = {"repo": repo / "repo", "snapshot": repo / "snapshots" / main,
              "manifest": repo / "manifests" / store.snapshot.nodes["/a"].manifests[0].manifest_id}[kind]
    header, buf = _flatbuffer(target)
    rng = random.Random(kind)
    for _ in range(60):
        mutated = bytearray(buf)
        for _ in range(rng.choice((1, 2, 8))):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        _rewrite(target, header, bytes(mutated))
        try:
            root = zl.open(str(repo), authorize=[])
            for array in _arrays(root).values():  # type: ignore[arg-type]
                array.read(tuple(slice(None) for _ in array.shape), failures=[])
        except zl.ZarrError:
            pass


def test_virtual_chunks_with_an_etag_read_only_the_file_recorded(fixture: dict[str, Any], tmp_path: Path) -> None:
    """Chunks recorded with their file's ETag (icechunk's checksum) read as icechunk reads them
    while the file is unchanged, at one HEAD per file; once the file changes, each is refused,
    naming the ETag, instead of being read from wherever its bytes now lie."""
    import os
    import time

    import h5py
    import py312_env
    from http_server import etag_of, serve

    web = tmp_path / "web"
    web.mkdir()
    shutil.copy(Path(fixture["root"]) / "src.h5", web / "src.h5")
    with h5py.File(web / "src.h5") as f:
        ds = f["chunked"]
        infos = sorted((ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())), key=lambda c: c.chunk_offset)
        truth = ds[...]
    ranges = ",".join(f"{c.byte_offset}:{c.size}" for c in infos)
    python = py312_env.require(py312_env.ICECHUNK)
    with serve(web) as (url, state):
        py312_env.run(python, Path(__file__).parent / "icechunk_etag_writer.py", str(tmp_path), url + "/",
                      etag_of(web / "src.h5"), ranges)
        np.testing.assert_array_equal(np.load(tmp_path / "e.npy"), truth)  # icechunk's read: the truth holds
        state.clear()
        e = zl.open(f"{tmp_path / 'web.icechunk'}::/e", authorize=[url + "/"])
        np.testing.assert_array_equal(e[...], truth)
        assert [m for m, p, _ in state.requests() if p.endswith("src.h5")].count("HEAD") == 1
        later = time.time() + 10
        os.utime(web / "src.h5", (later, later))  # the file is replaced: its ETag changes
        e = zl.open(f"{tmp_path / 'web.icechunk'}::/e", authorize=[url + "/"])
        with pytest.raises(zl.StoreError, match=r"e/c/0/0: the virtual chunk's file .*src.h5 changed .*ETag"):
            e[0:4, 0:4]
