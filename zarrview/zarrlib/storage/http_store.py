"""A plain HTTP(S) server as a store: keys become percent-encoded URLs, nothing can be listed.

Zarr keys are node names chosen by people (``"run #3"``, ``"50%"``, ``"Zürich"``) but a URL
gives ``#``, ``%``, ``?`` and spaces their own meanings, so every key segment is
percent-encoded on its own (RFC 3986 unreserved characters stay). The user's base URL is
used as typed. An HTTP server has no standard listing, so hierarchies are known only from
consolidated metadata or by asking for a child path directly.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote

from ..errors import StoreError
from .fsspec_store import FsspecStore


@lru_cache(maxsize=1 << 16)  # a view asks for the same keys again and again
def encode_key(key: str) -> str:
    return "/".join(quote(segment, safe="") for segment in key.split("/"))


class HttpStore(FsspecStore):
    def _path(self, key: str) -> str:
        return f"{self.root}/{encode_key(key)}" if key else self.root

    def key_url(self, key: str) -> str:
        return self._path(key)

    @property
    def can_list(self) -> bool:
        return False

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        raise StoreError(f"{self.url}: an HTTP server cannot list {prefix or 'the root'}; "
                         "use consolidated metadata or open a child path directly")
