"""The storage options people pass for s3fs, gcsfs and adlfs, spelled as obstore takes them.

Users already hold working options for the fsspec drivers (``endpoint_url``, ``anon``,
``key``/``secret``, ``client_kwargs={"region_name": ...}``, ``token="anon"``), so the same
options open a bucket on either backend. The mapping (each option: what obstore is given):

===========  ==============================================================================
s3://        ``anon=True``: ``skip_signature``; ``key``/``secret``/``token``:
             ``access_key_id``/``secret_access_key``/``session_token``; ``endpoint_url``
             (or ``client_kwargs["endpoint_url"]``): ``endpoint``, plain http allowed;
             ``region``/``region_name``/``client_kwargs["region_name"]``: ``region``
gs://        ``token="anon"``: ``skip_signature``; ``token=<path of a JSON key>``:
             ``service_account``; ``endpoint_url``: ``base_url`` (the emulator)
az://        ``anon=True``: ``skip_signature``; ``account_name``, ``account_key``,
abfs://      ``sas_token``: as named (``sas_key``); ``endpoint_url``: ``endpoint`` (Azurite,
             a sovereign cloud, a private endpoint)
http(s)://   ``headers``: the client's default headers
===========  ==============================================================================

Anything else (a profile, a session object, aiohttp's ``client_kwargs``, a credentials
object) has no obstore spelling: ``Unmapped`` names it, and the automatic choice then keeps
the fsspec driver, which understands it. Access is anonymous unless credentials exist, as for
fsspec (``credentials.py``); obstore itself reads keys from the environment (``AWS_*``,
``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_*``) but no profile or credentials file.

Tested against servers on loopback: HTTP, S3 (moto), GCS's XML API, which obstore's GCSStore
reads (objects with a ``Last-Modified`` header, listings as ``?list-type=2``), and Azure's
Blob service (listings as ``?comp=list``): the tests' HTTP server with buckets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import StoreError

#: schemes obstore reads, by the family of its store
SCHEMES = {"http": "http", "https": "http", "s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs",
           "az": "azure", "abfs": "azure", "abfss": "azure", "azure": "azure"}


class Unmapped(StoreError):
    """A storage option obstore has no spelling for."""


@dataclass
class ObstoreOptions:
    """What ``obstore.store.from_url`` is given: the store's config and the client's options."""

    url: str
    config: dict[str, Any] = field(default_factory=dict)
    client: dict[str, Any] = field(default_factory=dict)


def _take(options: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in options:
            return options.pop(name)
    return None


def _endpoint(options: dict[str, Any], client_kwargs: dict[str, Any]) -> str | None:
    return _take(options, "endpoint_url", "endpoint") or _take(client_kwargs, "endpoint_url")


def map_options(scheme: str, url: str, options: dict[str, Any]) -> ObstoreOptions:
    """``options`` (already without zarrlib's own ``io_*``) as obstore's; ``Unmapped`` names
    the first one that has no obstore spelling."""
    family = SCHEMES.get(scheme)
    if family is None:
        raise Unmapped(f"cannot open {url} with obstore: no obstore store for '{scheme}://'")
    rest = dict(options)
    client_kwargs = dict(rest.pop("client_kwargs", None) or {})
    out = ObstoreOptions(url)
    if family == "s3":
        out.url = "s3://" + url.split("://", 1)[1]
        if rest.pop("anon", False):
            out.config["skip_signature"] = True
        for ours, theirs in (("key", "access_key_id"), ("secret", "secret_access_key"), ("token", "session_token")):
            value = rest.pop(ours, None)
            if value is not None:
                out.config[theirs] = value
        region = _take(rest, "region", "region_name") or _take(client_kwargs, "region_name")
        if region:
            out.config["region"] = region
        endpoint = _endpoint(rest, client_kwargs)
        if endpoint:
            out.config["endpoint"] = endpoint
            out.config["virtual_hosted_style_request"] = False  # a custom endpoint names the bucket in the path
    elif family == "gcs":
        out.url = "gs://" + url.split("://", 1)[1]
        token = rest.pop("token", None)
        if token == "anon":
            out.config["skip_signature"] = True
        elif isinstance(token, str) and token.endswith(".json"):
            out.config["service_account"] = token
        elif token is not None:
            raise Unmapped(f"cannot open {url} with obstore: token={token!r} has no obstore spelling")
        endpoint = _endpoint(rest, client_kwargs)
        if endpoint:
            out.config["base_url"] = endpoint.rstrip("/")
        rest.pop("project", None)  # names the billing project of writes; reads need none
    elif family == "azure":
        if rest.pop("anon", False):
            out.config["skip_signature"] = True
        for ours, theirs in (("account_name", "account_name"), ("account_key", "account_key"),
                             ("sas_token", "sas_key")):
            value = rest.pop(ours, None)
            if value is not None:
                out.config[theirs] = value
        endpoint = _endpoint(rest, client_kwargs)
        if endpoint:
            out.config["endpoint"] = endpoint.rstrip("/")
    else:
        headers = rest.pop("headers", None)
        if headers:
            out.client["default_headers"] = dict(headers)
    left = sorted(rest) + sorted(f"client_kwargs[{k!r}]" for k in client_kwargs)
    if left:
        raise Unmapped(f"cannot open {url} with obstore: no obstore spelling for {', '.join(left)}")
    endpoint = out.config.get("endpoint") or out.config.get("base_url")
    if family == "http" or (isinstance(endpoint, str) and endpoint.startswith("http://")):
        out.client["allow_http"] = True
    return out
