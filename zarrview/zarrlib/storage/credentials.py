"""Anonymous access to public buckets unless the user has credentials.

Most Zarr data in S3, GCS and Azure is public, and the clients would otherwise fail (or wait on
cloud metadata endpoints) looking for credentials a scientist never set up. Only cheap,
local sources are checked — environment variables and the SDKs' credential files — never a
network endpoint; passing ``anon=False`` (S3) or a ``token`` (GCS) overrides the guess.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

_S3_OPTIONS = ("anon", "key", "secret", "token", "profile", "session", "username", "password")
_AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")


def aws_credentials_found() -> bool:
    """Whether the environment or the AWS SDK's files hold credentials (or say how to get them)."""
    if any(os.environ.get(name) for name in _AWS_ENV):
        return True
    files = [os.environ.get("AWS_SHARED_CREDENTIALS_FILE"), os.environ.get("AWS_CONFIG_FILE"),
             "~/.aws/credentials", "~/.aws/config"]
    for name in files:
        if not name:
            continue
        try:
            text = Path(name).expanduser().read_text(errors="replace")
        except OSError:
            continue
        if "aws_access_key_id" in text or "credential_process" in text or "sso_" in text or "role_arn" in text:
            return True
    return False


def _gcp_credentials_found() -> bool:
    if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return True
    config = Path(os.environ.get("CLOUDSDK_CONFIG") or "~/.config/gcloud").expanduser()
    return (config / "application_default_credentials.json").is_file()


_AZURE_OPTIONS = ("anon", "account_key", "sas_token", "connection_string", "credential", "client_secret")
_AZURE_ENV = ("AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_SAS_KEY", "AZURE_STORAGE_SAS_TOKEN",
              "AZURE_STORAGE_CONNECTION_STRING", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE")
AZURE_SCHEMES = ("az", "abfs", "abfss", "azure")


def anonymous_unless_credentials(scheme: str, options: dict[str, Any]) -> dict[str, Any]:
    if scheme in ("s3", "s3a") and not any(k in options for k in _S3_OPTIONS):
        if not aws_credentials_found():
            return {**options, "anon": True}
    if scheme in ("gs", "gcs") and "token" not in options and not _gcp_credentials_found():
        return {**options, "token": "anon"}
    if scheme in AZURE_SCHEMES and not any(k in options for k in _AZURE_OPTIONS) \
            and not any(os.environ.get(name) for name in _AZURE_ENV):
        return {**options, "anon": True}
    return options


#: words in a storage option's name that make it a credential (never written to a file, a
#: link or a snippet): keys, secrets, tokens, passwords, SAS tokens, connection strings
_SECRET_WORDS = ("key", "secret", "token", "password", "credential", "auth", "connection", "signature")


def is_secret(name: str, value: Any) -> bool:
    """Whether a storage option is a credential, kept in memory only; ``token="anon"`` (GCS's
    anonymous access) is no secret."""
    lowered = name.lower()
    if lowered == "token" and value == "anon":
        return False
    return any(word in lowered for word in _SECRET_WORDS)


def public_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` without credentials: what a saved view, a link or a snippet may hold."""
    return {k: v for k, v in options.items() if not is_secret(k, v)}


def _signed(name: str) -> bool:
    lowered = name.lower()
    return (lowered.startswith(("x-amz-", "x-goog-", "x-ms-")) or lowered in ("sig", "se", "sp", "sv", "st", "spr", "srt", "ss", "skoid")
            or any(word in lowered for word in _SECRET_WORDS))


def public_location(location: str) -> str:
    """``location`` without a signed query string (an S3 pre-signed URL's signature, an Azure SAS
    token, a token parameter) and without a password in the URL: the URL a person can share,
    which needs the credentials again to open. A query without any such parameter is kept."""
    head, sep, node = location.partition("::")
    parts = urlsplit(head)
    if not parts.scheme or not parts.netloc:
        return location
    if parts.password is not None:  # https://user:password@host/: the user stays, the password not
        host = parts.hostname or ""
        netloc = (f"{parts.username}@" if parts.username else "") + host + (f":{parts.port}" if parts.port else "")
        parts = parts._replace(netloc=netloc)
    if parts.query and any(_signed(name) for name, _ in parse_qsl(parts.query, keep_blank_values=True)):
        parts = parts._replace(query="")
    shown = urlunsplit(parts)
    return location if shown == head else shown + sep + node
