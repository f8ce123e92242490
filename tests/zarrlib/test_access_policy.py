"""The policy that guards reads outside an opened store (virtual chunks, references)."""

from __future__ import annotations

import threading

import pytest

from zarrview.zarrlib.errors import StoreError
from zarrview.zarrlib.storage.access import AccessDeniedError, AccessPolicy, normal_url, url_prefix


@pytest.mark.parametrize("url, prefix", [
    ("s3://bucket/data/x.nc", "s3://bucket/"),
    ("S3://bucket/data/x.nc", "s3://bucket/"),
    ("https://host:8080/a/b.nc", "https://host:8080/"),
    ("file:///data/run/x.nc", "file:///data/run/"),
    ("/data/run/x.nc", "file:///data/run/"),
    ("file:///data/run/../../etc/passwd", "file:///etc/"),
])
def test_prefix_is_host_or_folder(url: str, prefix: str) -> None:
    assert url_prefix(url) == prefix


def test_dotdot_cannot_escape_an_authorised_folder() -> None:
    policy = AccessPolicy(["file:///data/run/"])
    assert policy.permits("file:///data/run/x.nc")
    assert policy.permits("/data/run/sub/y.nc")
    assert not policy.permits("file:///data/run/../../etc/passwd")
    assert not policy.permits("file:///data/runner/x.nc")  # a sibling sharing the prefix's letters
    assert normal_url("file:///data/run/../x") == "file:///data/x"


def test_other_hosts_and_buckets_are_refused_with_the_prefix_to_authorise() -> None:
    policy = AccessPolicy(["s3://bucket/"])
    assert policy.permits("s3://bucket/k/0")
    assert not policy.permits("s3://bucket2/k/0")
    with pytest.raises(AccessDeniedError) as info:
        policy.check("https://evil.example/x", "reference a/0 of refs.json")
    assert isinstance(info.value, StoreError)
    assert info.value.prefix == "https://evil.example/"
    assert "reference a/0 of refs.json" in str(info.value) and "https://evil.example/x" in str(info.value)
    policy.allow(info.value.prefix)
    policy.check("https://evil.example/x", "reference a/0")
    assert policy.allowed() == ("https://evil.example/", "s3://bucket/")


def test_threads_widen_and_check_the_policy_at_once() -> None:
    policy = AccessPolicy()
    urls = [f"s3://b{i}/k" for i in range(200)]
    threads = [threading.Thread(target=policy.allow, args=(url_prefix(u),)) for u in urls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(policy.permits(u) for u in urls)
