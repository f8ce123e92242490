"""S3 through obstore (the automatic choice, an endpoint being named) and s3fs against moto's
S3-compatible server on 127.0.0.1.

Stores written by zarr-python on disk are uploaded to a bucket object by object; the truth
is the numpy data and zarr-python's own read. S3 can list, so hierarchies need no
consolidated metadata there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from cloud_servers import moto_s3
from remote_backends import backend  # noqa: F401  (runs every test on each backend)
from conformance_helpers import assert_same_tree, write_bucket_fixtures
from zarrview.zarrlib.storage.credentials import anonymous_unless_credentials

pytest.importorskip("s3fs", reason="zarrview[cloud] is part of the test extras")
pytest.importorskip("moto.server", reason="moto[server] is part of the test extras")

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

BUCKET = "zarr-data"
DATA = np.arange(3 * 40 * 30, dtype="<i4").reshape(3, 40, 30)


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with moto_s3() as endpoint:
        local = tmp_path_factory.mktemp("s3src")
        write_bucket_fixtures(local, DATA, "on s3", ("run #3", "50% done", "Zürich"))
        import boto3

        client = boto3.client("s3", endpoint_url=endpoint)
        client.create_bucket(Bucket=BUCKET)
        for path in local.rglob("*"):
            if path.is_file():
                client.put_object(Bucket=BUCKET, Key=path.relative_to(local).as_posix(), Body=path.read_bytes())
        client.put_object(Bucket=BUCKET, Key="public/v3.zarr/zarr.json", ACL="public-read",
                          Body=(local / "v3.zarr" / "zarr.json").read_bytes())
        yield endpoint, local


@pytest.mark.parametrize("name", ["v3.zarr", "sharded.zarr", "v2.zarr"])
def test_arrays_read_like_zarr_python(s3: tuple[str, Path], name: str) -> None:
    endpoint, local = s3
    arr = zl.open(f"s3://{BUCKET}/{name}", endpoint_url=endpoint)
    np.testing.assert_array_equal(arr[...], DATA)
    np.testing.assert_array_equal(arr[1, 5:33, 7:29], zarr.open_array(local / name, mode="r")[1, 5:33, 7:29])
    assert arr.shape == DATA.shape and arr.dtype == DATA.dtype


def test_hierarchy_is_listed_like_on_disk(s3: tuple[str, Path]) -> None:
    endpoint, local = s3
    remote = zl.open(f"s3://{BUCKET}/tree.zarr", endpoint_url=endpoint)
    assert_same_tree(remote, zl.open(local / "tree.zarr"), 5)
    assert remote.attrs == {"title": "on s3"}


def test_stored_objects_counted_by_listing(s3: tuple[str, Path]) -> None:
    endpoint, local = s3
    arr = zl.open(f"s3://{BUCKET}/v3.zarr", endpoint_url=endpoint)
    files = [p for p in (local / "v3.zarr" / "c").rglob("*") if p.is_file()]
    assert arr.stored_objects() == (len(files), sum(p.stat().st_size for p in files))


def test_anonymous_access_to_a_private_bucket_is_refused_by_name(s3: tuple[str, Path]) -> None:
    endpoint, _ = s3
    with pytest.raises(zl.StoreAccessError, match=rf"s3://{BUCKET}/v3\.zarr/zarr\.json: access denied"):
        zl.open(f"s3://{BUCKET}/v3.zarr", endpoint_url=endpoint, anon=True)


def test_anonymous_access_to_a_public_object(s3: tuple[str, Path]) -> None:
    endpoint, _ = s3
    node = zl.open(f"s3://{BUCKET}/public/v3.zarr", endpoint_url=endpoint, anon=True)
    assert node.shape == DATA.shape


def test_missing_store_and_missing_bucket(s3: tuple[str, Path]) -> None:
    endpoint, _ = s3
    with pytest.raises(zl.StoreNotFoundError, match=r"no Zarr metadata at s3://zarr-data/nothing\.zarr/zarr\.json"):
        zl.open(f"s3://{BUCKET}/nothing.zarr", endpoint_url=endpoint)
    with pytest.raises(zl.StoreError, match=r"s3://no-such-bucket/x\.zarr"):
        zl.open("s3://no-such-bucket/x.zarr", endpoint_url=endpoint)


def test_anonymous_unless_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(("AWS_", "GOOGLE_", "CLOUDSDK_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert anonymous_unless_credentials("s3", {}) == {"anon": True}
    assert anonymous_unless_credentials("gs", {}) == {"token": "anon"}
    assert anonymous_unless_credentials("s3", {"anon": False}) == {"anon": False}
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\naws_access_key_id = X\naws_secret_access_key = Y\n")
    assert anonymous_unless_credentials("s3", {}) == {}
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "key.json"))
    assert anonymous_unless_credentials("gs", {}) == {}
    assert anonymous_unless_credentials("https", {}) == {}


def test_the_automatic_choice_takes_obstore_where_it_finds_the_bucket(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    """obstore where the options say where the bucket is and its credentials are ones obstore
    reads; s3fs for a bucket named only by its name (object_store stops at S3's redirect to the
    bucket's region) or credentials in a profile. Nothing is sent: opening a store asks nothing."""
    from remote_backends import prefer
    from zarrview.zarrlib.storage.location import open_store

    prefer(monkeypatch, "auto")  # the choice itself, under either of this module's backends
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))

    def kind(**options: Any) -> str:
        return type(open_store("s3://bucket/data.zarr", **options)).__name__

    assert kind() == "FsspecStore"  # anonymous, but which region?
    assert kind(region="eu-central-1") == "ObstoreStore"
    assert kind(client_kwargs={"region_name": "eu-central-1"}) == "ObstoreStore"
    assert kind(endpoint_url="http://127.0.0.1:9") == "ObstoreStore"
    assert kind(region="eu-central-1", key="k", secret="s") == "ObstoreStore"
    assert kind(region="eu-central-1", profile="work") == "FsspecStore"  # no obstore spelling
    assert kind(region="eu-central-1", backend="fsspec") == "FsspecStore"
    assert kind(backend="obstore") == "ObstoreStore"
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\naws_access_key_id = X\naws_secret_access_key = Y\n")
    assert kind(region="eu-central-1") == "FsspecStore"  # the keys are in a file obstore does not read
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "X")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "Y")
    assert kind(region="eu-central-1") == "ObstoreStore"


def test_a_bucket_in_another_region_is_named_as_such() -> None:
    """object_store's words when S3 redirects to the bucket's own region, as the error says them."""
    from zarrview.zarrlib.storage.obstore_store import cause_of, is_transient

    error = Exception("Generic S3 error: Error performing GET https://b.s3.us-east-1.amazonaws.com/k in 120ms - "
                      "Received redirect without LOCATION, this normally indicates an incorrectly configured region")
    assert cause_of(error) == "S3 redirected the request to the bucket's own region: name it with region=..."
    assert not is_transient(error)


def test_a_chunk_costs_one_request(s3: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    """s3fs would send a HEAD before each whole-object GET (to split large objects); a chunk is
    read with the GET alone, and missing chunks cost one request too."""
    if backend != "fsspec":
        pytest.skip("counts the calls s3fs makes; obstore's requests are counted over HTTP (test_remote_requests)")
    import s3fs

    endpoint, local = s3
    sent: list[str] = []
    real = s3fs.S3FileSystem._call_s3

    async def counted(self: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(method)
        return await real(self, method, *args, **kwargs)

    monkeypatch.setattr(s3fs.S3FileSystem, "_call_s3", counted)
    arr = zl.open(f"s3://{BUCKET}/v3.zarr", endpoint_url=endpoint)
    sent.clear()
    chunks = len(zl.open(str(local / "v3.zarr")).reader.chunk_coords((1, slice(None), slice(None))))
    np.testing.assert_array_equal(arr[1], DATA[1])
    assert chunks > 1 and sent == ["get_object"] * chunks


def test_whole_objects_are_asked_for_up_to_the_bound(s3: tuple[str, Path], monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    """An object over the bound is refused after ``bound + 1`` bytes, not after all of it; an
    empty object, which refuses any range, still reads as empty."""
    if backend != "fsspec":
        pytest.skip("counts the calls s3fs makes; obstore's requests are counted over HTTP (test_remote_requests)")
    import boto3
    import s3fs

    from zarrview.zarrlib.storage.location import open_store

    endpoint, _ = s3
    client = boto3.client("s3", endpoint_url=endpoint)
    client.put_object(Bucket=BUCKET, Key="bounds/big", Body=b"x" * 300_000)
    client.put_object(Bucket=BUCKET, Key="bounds/small", Body=b"y" * 1000)
    client.put_object(Bucket=BUCKET, Key="bounds/empty", Body=b"")
    received: list[tuple[str, str | None, int]] = []
    real = s3fs.S3FileSystem._cat_file

    async def counted(self: Any, path: str, *args: Any, **kwargs: Any) -> Any:
        data = await real(self, path, *args, **kwargs)
        received.append((path.rsplit("/", 1)[-1], repr((kwargs.get("start"), kwargs.get("end"))), len(data)))
        return data

    monkeypatch.setattr(s3fs.S3FileSystem, "_cat_file", counted)
    store = open_store(f"s3://{BUCKET}/bounds", endpoint_url=endpoint)
    old = zl.limits.configure(object_bytes=4096)
    try:
        with pytest.raises(zl.TooLargeError, match=r"bounds/big"):
            store.get("big")
        assert store.get("small") == b"y" * 1000
        assert store.get("empty") == b""
        assert store.get("missing") is None
    finally:
        zl.limits.restore(old)
    assert received[0] == ("big", repr((0, 4097)), 4097)  # not 300,000
    assert received[1] == ("small", repr((0, 4097)), 1000)
    assert [r[0] for r in received[2:]] == ["empty"] and received[2][2] == 0  # the range refused, then read whole


def _moto_recording(endpoint: str, action: str) -> list[dict[str, Any]]:
    """moto's own record of the requests it answered (``start``, ``stop``, ``download``)."""
    import json
    from urllib.request import ProxyHandler, Request, build_opener

    opener = build_opener(ProxyHandler({}))  # loopback: never a proxy
    if action == "download":
        text = opener.open(f"{endpoint}/moto-api/recorder/download-recording", timeout=30).read().decode()
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if action == "start":
        opener.open(Request(f"{endpoint}/moto-api/recorder/reset-recording", method="POST"), timeout=30).read()
    opener.open(Request(f"{endpoint}/moto-api/recorder/{action}-recording", method="POST"), timeout=30).read()
    return []


def test_audit_and_io_figures_agree_with_moto(s3: tuple[str, Path], tmp_path: Path, backend: str) -> None:
    """An audit costs the listing and one request per stored shard at the server, and a read's
    I/O log counts the requests moto answered for its chunks."""
    import boto3

    from zarrview.zarrlib.io_log import IoLog, recording

    endpoint, _ = s3
    local = tmp_path / "s.zarr"
    s = zarr.create_array(local, shape=(64, 64), chunks=(4, 4), shards=(16, 16), dtype="u2", fill_value=0)
    s[:40, :20] = 5
    client = boto3.client("s3", endpoint_url=endpoint)
    for p in local.rglob("*"):
        if p.is_file():
            client.put_object(Bucket=BUCKET, Key=f"audited/{p.relative_to(local).as_posix()}", Body=p.read_bytes())
    shards = [p for p in local.rglob("*") if p.is_file() and p.name != "zarr.json"]
    arr = zl.open(f"s3://{BUCKET}/audited", endpoint_url=endpoint)
    _moto_recording(endpoint, "start")
    try:
        audit = arr.audit()
    finally:
        _moto_recording(endpoint, "stop")
    answered = _moto_recording(endpoint, "download")
    gets = [r for r in answered if r["method"] == "GET" and "list-type=2" not in r["url"]]
    lists = [r for r in answered if "list-type=2" in r["url"]]
    assert audit.shards_stored == len(shards) == len(gets) and len(lists) == 1
    assert audit.as_json() == zl.open(local).audit().as_json()
    plain = zl.open(f"s3://{BUCKET}/v3.zarr", endpoint_url=endpoint)
    _moto_recording(endpoint, "start")
    try:
        with recording(IoLog()) as log:
            np.testing.assert_array_equal(plain[1], DATA[1])
    finally:
        _moto_recording(endpoint, "stop")
    chunk_gets = [r for r in _moto_recording(endpoint, "download") if r["method"] == "GET" and "/v3.zarr/c/" in r["url"]]
    assert log.request_count == len(chunk_gets) > 1
