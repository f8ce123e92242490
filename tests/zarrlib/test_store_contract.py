"""The store contract (tests/store_contract.py) run against every store and test wrapper.

Each class writes the contract's objects to its own backing: files in a folder, members of a
zip (stored, deflated, under a top folder), a dict, fsspec's memory filesystem, files served
by the loopback HTTP server, objects in a moto S3 bucket, in a GCS emulator bucket and in a
bucket of the loopback server speaking GCS's XML API (all on 127.0.0.1), and the counting wrapper over a local and an HTTP store. The wrapper's own
counts, latency and faults are checked at the end against what was asked of it.
"""

from __future__ import annotations

import os
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote

import pytest

from cloud_servers import gcs_emulator, moto_s3
from http_server import serve
from ozx_files import add_zip64_end, rfc9_comment, rfc9_order
from store_contract import ODD_NAMES, StoreContract, sample_objects
from store_wrappers import CountingStore
from zarrview.zarrlib.errors import StoreError
from zarrview.zarrlib.storage import ByteRequest, LocalStore, MemoryStore, ZipStore, open_store
from zarrview.zarrlib.storage.base import Store, fetch_each

pytestmark = pytest.mark.timeout(120)

#: zarrview bug: FsspecStore.size asks the filesystem's info(), which describes a folder
#: (a common prefix) as a 0-byte "directory" entry, so size() of a folder is 0, not None
FOLDER_SIZE = {"folder-size": "FsspecStore.size reports a folder as a 0-byte object"}


def write_files(objects: dict[str, bytes], root: Path) -> Path:
    for key, data in objects.items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def read_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


class FolderBacked(StoreContract):
    """Stores over a folder of files: the backing is the folder, read with pathlib."""

    def backing(self, store: Store) -> dict[str, bytes]:
        return read_files(self.root)

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        type(self).root = write_files(objects, where / "data")
        return self.open(self.root, request)

    def open(self, root: Path, request: pytest.FixtureRequest) -> Store:
        raise NotImplementedError


class TestLocalStore(FolderBacked):
    def open(self, root: Path, request: pytest.FixtureRequest) -> Store:
        return LocalStore(root)

    def expected_url(self, store: Store) -> str:
        return str(self.root.resolve())


class TestCountingLocalStore(FolderBacked):
    def open(self, root: Path, request: pytest.FixtureRequest) -> Store:
        return CountingStore(LocalStore(root))


class TestHttpStore(FolderBacked):
    """Files served by tests/http_server.py (ranges, 404s, no listing) through the remote
    transport an ``http://`` URL gets: obstore's HTTPStore."""

    prefers_batches = True
    can_list = False
    past_end_is_error = False  # a range past the end holds nothing, as in a file

    def open(self, root: Path, request: pytest.FixtureRequest) -> Store:
        type(self).url = request.getfixturevalue("files_over_http") + quote(str(root.resolve()))
        store = open_store(self.url)
        assert type(store).__name__ == "ObstoreStore"
        return store

    def expected_url(self, store: Store) -> str:
        return self.url


class TestFsspecHttp(TestHttpStore):
    """The same files through the fsspec route (``backend="fsspec"``: aiohttp), which reads what
    obstore cannot (a URL with a query, a server whose answers state no size)."""

    past_end_is_error = True  # 416 Range Not Satisfiable

    def open(self, root: Path, request: pytest.FixtureRequest) -> Store:
        type(self).url = request.getfixturevalue("files_over_http") + quote(str(root.resolve()))
        store = open_store(self.url, backend="fsspec")
        assert type(store).__name__ == "HttpStore"
        return store


class TestCountingHttpStore(TestHttpStore):
    """The wrapper over a batching store: batches stay batches."""

    def open(self, root: Path, request: pytest.FixtureRequest) -> Store:
        return CountingStore(super().open(root, request))


class ZipBacked(StoreContract):
    compression = zipfile.ZIP_STORED
    top = ""  # ``zip -r x.zip x.zarr`` puts every key below one folder

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        path = type(self).path = where / "store.zip"
        with zipfile.ZipFile(path, "w", compression=self.compression) as zf:
            for key, data in objects.items():
                zf.writestr(self.top + key, data)
        return ZipStore(open(path, "rb"), str(path))

    def backing(self, store: Store) -> dict[str, bytes]:
        with zipfile.ZipFile(self.path) as zf:
            return {n[len(self.top):]: zf.read(n) for n in zf.namelist()}

    def expected_url(self, store: Store) -> str:
        return str(self.path)


class TestZipStored(ZipBacked):
    pass


class TestZipDeflated(ZipBacked):
    compression = zipfile.ZIP_DEFLATED


class TestZipUnderATopFolder(ZipBacked):
    top = "store.zarr/"


class TestOzx(ZipBacked):
    """Single-file OME-Zarr: stored entries, zarr.json files first, a ZIP64 end record and the
    comment that says so (the metadata is read in one piece, the rest straight from the file)."""

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        path = type(self).path = where / "store.ozx"
        with zipfile.ZipFile(path, "w") as zf:
            for key in rfc9_order(list(objects)):
                zf.writestr(key, objects[key])
            zf.comment = rfc9_comment()
        add_zip64_end(path)
        return self.open_ozx(path, request)

    def open_ozx(self, path: Path, request: pytest.FixtureRequest) -> Store:
        return ZipStore(open(path, "rb"), str(path))


class TestOzxOverHttp(TestOzx):
    """The same archive read through fsspec from the loopback HTTP server, in ranges: the stored
    members of one read go out together."""

    prefers_batches = True

    def open_ozx(self, path: Path, request: pytest.FixtureRequest) -> Store:
        type(self).url = request.getfixturevalue("files_over_http") + quote(str(path.resolve()))
        return open_store(self.url)

    def expected_url(self, store: Store) -> str:
        return self.url


class TestMemoryStore(StoreContract):
    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        return MemoryStore(objects)

    def backing(self, store: Store) -> dict[str, bytes]:
        return dict(store._data)  # type: ignore[attr-defined]


class TestFsspecMemory(StoreContract):
    """fsspec's synchronous memory filesystem: the FsspecStore path without a network."""

    prefers_batches = True
    known_bugs = FOLDER_SIZE

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        import fsspec

        fs = fsspec.filesystem("memory")
        type(self).root = f"/contract-{os.getpid()}-{where.name}"
        for key, data in objects.items():
            fs.pipe_file(f"{self.root}/{key}", data)
        return open_store(f"memory://{self.root}")

    def backing(self, store: Store) -> dict[str, bytes]:
        import fsspec

        fs = fsspec.filesystem("memory")
        return {p[len(self.root) + 1:]: fs.cat_file(p) for p in fs.find(self.root)}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    pytest.importorskip("s3fs", reason="zarrview[cloud] is part of the test extras")
    pytest.importorskip("moto.server", reason="moto[server] is part of the test extras")
    with moto_s3() as endpoint:
        yield endpoint


@pytest.mark.slow
class TestS3Store(StoreContract):
    """A bucket on moto's S3 server through s3fs (``backend="fsspec"``), with the options s3fs
    takes (``endpoint_url``)."""

    prefers_batches = True
    known_bugs = FOLDER_SIZE
    past_end_is_error = True  # S3 answers InvalidRange (416)
    bucket = "contract"
    backend: ClassVar[str | None] = "fsspec"
    store_type = "FsspecStore"

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        import boto3

        endpoint = request.getfixturevalue("s3_endpoint")
        type(self).client = boto3.client("s3", endpoint_url=endpoint)
        self.client.create_bucket(Bucket=self.bucket)
        for key, data in objects.items():
            self.client.put_object(Bucket=self.bucket, Key=f"root/{key}", Body=data)
        named = {} if self.backend is None else {"backend": self.backend}
        store = open_store(f"s3://{self.bucket}/root", endpoint_url=endpoint, **named)
        assert type(store).__name__ == self.store_type
        return store

    def backing(self, store: Store) -> dict[str, bytes]:
        listed = self.client.list_objects_v2(Bucket=self.bucket, Prefix="root/")["Contents"]
        return {o["Key"][5:]: self.client.get_object(Bucket=self.bucket, Key=o["Key"])["Body"].read()
                for o in listed}

    def expected_url(self, store: Store) -> str:
        return f"s3://{self.bucket}/root"


@pytest.mark.slow
class TestObstoreS3(TestS3Store):
    """The same bucket with the same options through obstore's S3Store, which an ``s3://`` URL
    with an endpoint gets (no ``backend`` named), s3fs listing its pages."""

    known_bugs: ClassVar[dict[str, str]] = {}  # obstore's HEAD of a folder is a 404, so no size
    past_end_is_error = False  # a range past the end holds nothing, as in a file
    backend = None
    store_type = "ObstoreStore"


@pytest.fixture(scope="module")
def gcs_endpoint() -> Iterator[str]:
    pytest.importorskip("gcsfs", reason="zarrview[cloud] is part of the test extras")
    pytest.importorskip("gcp_storage_emulator.server", reason="gcp-storage-emulator is part of the test extras")
    with gcs_emulator("contract") as endpoint:
        yield endpoint


@pytest.mark.slow
class TestGcsStore(StoreContract):
    """A bucket of the GCS emulator (JSON API) through gcsfs (``backend="fsspec"``)."""

    prefers_batches = True  # gcsfs clips a range past the end, as files do
    known_bugs = FOLDER_SIZE

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        from gcsfs.core import GCSFileSystem

        endpoint = request.getfixturevalue("gcs_endpoint")
        type(self).fs = GCSFileSystem(endpoint_url=endpoint, token="anon")
        for key, data in objects.items():
            self.fs.pipe_file(f"contract/root/{key}", data)
        return open_store("gs://contract/root", endpoint_url=endpoint, token="anon", backend="fsspec")

    def backing(self, store: Store) -> dict[str, bytes]:
        self.fs.invalidate_cache()
        return {p[len("contract/root/"):]: self.fs.cat_file(p) for p in self.fs.find("contract/root")}

    def expected_url(self, store: Store) -> str:
        return "gs://contract/root"


@pytest.fixture(scope="module")
def bucket_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The loopback HTTP server with buckets: GCS's XML API and Azure's Blob service, as obstore reads them."""
    served = tmp_path_factory.mktemp("gcsxml")
    with serve(served, buckets=True) as (endpoint, _):
        yield endpoint, served


class BucketServed(StoreContract):
    """A bucket of the loopback server with buckets through the transport a ``scheme://`` URL
    gets (obstore), opened with ``options`` as the fsspec driver of that scheme takes them."""

    prefers_batches = True
    past_end_is_error = False  # a range past the end holds nothing, as in a file
    scheme: ClassVar[str]
    options: ClassVar[dict[str, str]]

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        endpoint, served = request.getfixturevalue("bucket_server")
        type(self).bucket = "b-" + "".join(c if c.isalnum() else "-" for c in where.name.lower())[:50]
        type(self).root = write_files(objects, served / self.bucket / "root")
        store = open_store(f"{self.scheme}://{self.bucket}/root", endpoint_url=endpoint, **self.options)
        assert type(store).__name__ == "ObstoreStore"
        return store

    def backing(self, store: Store) -> dict[str, bytes]:
        return read_files(self.root)

    def expected_url(self, store: Store) -> str:
        return f"{self.scheme}://{self.bucket}/root"


class TestObstoreGcs(BucketServed):
    """GCS's XML API through obstore's GCSStore, with the options gcsfs takes (``token="anon"``)."""

    scheme = "gs"
    options = {"token": "anon"}


class TestObstoreAzure(BucketServed):
    """Azure's Blob service through obstore's AzureStore, with the options adlfs takes
    (``account_name``), anonymous where no credentials are found."""

    scheme = "az"
    options = {"account_name": "devstoreaccount1"}


# --------------------------------------------------------------------------- the wrapper itself


@pytest.fixture
def counted(tmp_path: Path) -> tuple[dict[str, bytes], Path]:
    objects = sample_objects(ODD_NAMES[:1])
    return objects, write_files(objects, tmp_path)


def test_counts_follow_the_requests(counted: tuple[dict[str, bytes], Path]) -> None:
    objects, root = counted
    store = CountingStore(LocalStore(root))
    store.get("zarr.json")
    store.get_range(ByteRequest("big", 10, 110))
    fetch_each(store, [ByteRequest("big", -5), ByteRequest("c/0"), ByteRequest("nope")])
    assert store.gets == {"zarr.json": 1, "c/0": 1, "nope": 1}
    assert store.ranges == {"big": 2}
    assert store.bytes == {"zarr.json": len(objects["zarr.json"]), "big": 105, "c/0": len(objects["c/0"])}
    assert store.chunk_keys() == ["big", "big", "c/0", "nope"] and store.batches == 0
    store.reset()
    assert not store.requests and not store.gets and not store.bytes


def test_latency_is_per_request_or_per_batch(counted: tuple[dict[str, bytes], Path],
                                             files_over_http: str) -> None:
    _, root = counted
    reqs = [ByteRequest("c/0", 2 * i, 2 * i + 1) for i in range(8)]  # apart: a folder reads each alone
    local = CountingStore(LocalStore(root), latency=0.05, slow=lambda key: key.startswith("c/"))
    t0 = time.perf_counter()
    fetch_each(local, reqs)
    local.get("zarr.json")  # not slow
    assert 0.4 <= time.perf_counter() - t0 < 2.0  # eight round trips of 50 ms
    remote = CountingStore(open_store(files_over_http + quote(str(root.resolve()))), latency=0.3)
    t0 = time.perf_counter()
    assert fetch_each(remote, reqs) == [bytes([2 * i]) for i in range(8)]
    assert 0.3 <= time.perf_counter() - t0 < 2.0 and remote.batches == 1  # one round trip
    assert remote.ranges == {"c/0": 8}


@pytest.mark.parametrize("over", ["local", "http"])
def test_faults_are_raised_or_settled_in_place(counted: tuple[dict[str, bytes], Path], files_over_http: str,
                                               over: str) -> None:
    objects, root = counted
    inner = LocalStore(root) if over == "local" else open_store(files_over_http + quote(str(root.resolve())))
    store = CountingStore(inner, fail=lambda r: StoreError(f"{r.key}: injected") if r.key == "big" else None)
    with pytest.raises(StoreError, match="big: injected"):
        store.get_range(ByteRequest("big", 0, 4))
    seen: dict[int, object] = {}
    lock = threading.Lock()

    got: list[object] = [None] * 3

    def on_each(i: int, answer: object) -> None:
        with lock:
            seen[i] = got[i] = bytes(answer) if isinstance(answer, (bytes, memoryview)) else answer

    store.get_ranges([ByteRequest("c/0"), ByteRequest("big"), ByteRequest("foo/0/0")], on_each)
    assert got[0] == objects["c/0"] and got[2] == objects["foo/0/0"]
    assert isinstance(got[1], StoreError) and "injected" in str(got[1])
    assert sorted(seen) == [0, 1, 2] and seen[1] is got[1]
    assert store.bytes["big"] == 0  # never read


class ReferenceBacked(StoreContract):
    """A kerchunk JSON reference set: each object a range of one packed file beside it (or, with
    ``inline``, its bytes in the set as base64); the backing is the set decoded by hand."""

    prefers_batches = False  # a local set: each decode worker reads its own block
    inline = False

    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        import base64
        import json

        refs: dict[str, object] = {}
        pack = bytearray()
        for key, data in objects.items():
            if self.inline:
                refs[key] = "base64:" + base64.b64encode(data).decode()
            else:
                refs[key] = ["pack.bin", len(pack), len(data)]
                pack += data + b"\xee" * 3  # a gap: neighbours must not bleed into each other
        (where / "pack.bin").write_bytes(bytes(pack))
        type(self).root = where
        (where / "refs.json").write_text(json.dumps({"version": 1, "refs": refs}))
        return open_store(f"reference::{where}/refs.json")

    def backing(self, store: Store) -> dict[str, bytes]:
        import base64
        import json

        pack = (self.root / "pack.bin").read_bytes()
        refs = json.loads((self.root / "refs.json").read_text())["refs"]
        return {k: base64.b64decode(v[7:]) if isinstance(v, str) else pack[v[1]:v[1] + v[2]] for k, v in refs.items()}

    def expected_url(self, store: Store) -> str:
        return f"reference::{self.root.resolve()}/refs.json"


class TestReferenceStore(ReferenceBacked):
    pass


class TestInlineReferenceStore(ReferenceBacked):
    inline = True
