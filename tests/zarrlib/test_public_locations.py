"""What may leave the app in a saved view, a link or a snippet: storage options without
credentials, and URLs without signed query strings."""

from __future__ import annotations

import pytest

from zarrview.zarrlib.storage.credentials import is_secret, public_location, public_options


def test_credentials_are_left_out_of_options() -> None:
    options = {"key": "AKID", "secret": "s", "token": "t", "account_key": "k", "sas_token": "sv=1&sig=x",
               "connection_string": "AccountKey=x", "password": "p", "client_secret": "c",
               "endpoint_url": "http://127.0.0.1:9000", "region": "eu-west-1", "anon": True, "account_name": "acct"}
    assert public_options(options) == {"endpoint_url": "http://127.0.0.1:9000", "region": "eu-west-1", "anon": True,
                                       "account_name": "acct"}
    assert not is_secret("token", "anon")  # GCS's anonymous access is a choice, not a credential
    assert public_options({"token": "anon"}) == {"token": "anon"}


@pytest.mark.parametrize("url,public", [
    ("https://bucket.s3.amazonaws.com/a.zarr?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc",
     "https://bucket.s3.amazonaws.com/a.zarr"),
    ("https://acct.blob.core.windows.net/c/a.zarr?sv=2022-11-02&ss=b&sig=abc%3D::/img",
     "https://acct.blob.core.windows.net/c/a.zarr::/img"),
    ("https://storage.googleapis.com/b/a.zarr?X-Goog-Signature=1", "https://storage.googleapis.com/b/a.zarr"),
    ("https://example.org/a.zarr?token=abc", "https://example.org/a.zarr"),
    ("https://example.org/a.zarr?version=2", "https://example.org/a.zarr?version=2"),  # no secret: kept
    ("/data/a.zarr::/x", "/data/a.zarr::/x"),
    ("https://me:hunter2@example.org:8443/a.zarr::/x", "https://me@example.org:8443/a.zarr::/x"),
    ("repo.icechunk@branch.main::/a", "repo.icechunk@branch.main::/a"),
])
def test_signed_query_strings_are_left_out_of_locations(url: str, public: str) -> None:
    assert public_location(url) == public
