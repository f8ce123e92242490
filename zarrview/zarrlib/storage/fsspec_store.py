"""Any fsspec filesystem (http, s3, gcs, memory, ...) as a store.

fsspec is the field's standard for remote bytes; batching goes through ``cat_ranges`` so an
async filesystem keeps many requests in flight at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import StoreError
from .base import ByteRequest, Store

_MISSING = (FileNotFoundError, KeyError)


class FsspecStore(Store):
    prefers_batches = True

    def __init__(self, fs: Any, root: str, url: str) -> None:
        super().__init__(url)
        self.fs = fs
        self.root = root.rstrip("/")
        self._listable = not _is_http(fs)

    def _path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key

    def _fail(self, what: str, e: BaseException) -> StoreError:
        return StoreError(f"cannot read {what} from {self.url}: {type(e).__name__}: {e}")

    def get(self, key: str) -> bytes | None:
        try:
            return self.fs.cat_file(self._path(key))
        except _MISSING:
            return None
        except IsADirectoryError:
            return None
        except Exception as e:  # fsspec drivers raise many unrelated types
            raise self._fail(key, e) from e

    def get_range(self, req: ByteRequest) -> bytes | None:
        if req.start is None:
            return self.get(req.key)
        try:
            return self.fs.cat_file(self._path(req.key), start=req.start, end=req.stop)
        except _MISSING:
            return None
        except Exception as e:
            raise self._fail(req.describe(), e) from e

    def get_many(self, reqs: Sequence[ByteRequest]) -> list[bytes | None]:
        if len(reqs) <= 1:
            return [self.get_range(r) for r in reqs]
        paths = [self._path(r.key) for r in reqs]
        starts = [r.start for r in reqs]
        stops = [r.stop for r in reqs]
        try:
            results = self.fs.cat_ranges(paths, starts, stops, on_error="return")
        except Exception as e:
            raise self._fail(f"{len(reqs)} keys", e) from e
        out: list[bytes | None] = []
        for req, res in zip(reqs, results):
            if isinstance(res, _MISSING):
                out.append(None)
            elif isinstance(res, BaseException):
                raise self._fail(req.describe(), res) from res
            else:
                out.append(res)
        return out

    @property
    def can_list(self) -> bool:
        return self._listable

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        base = self._path(prefix.rstrip("/")) if prefix else self.root
        try:
            entries = self.fs.ls(base, detail=True)
        except _MISSING:
            return [], []
        except Exception as e:
            raise self._fail(f"the listing of {prefix or '/'}", e) from e
        keys: list[str] = []
        dirs: list[str] = []
        for entry in entries:
            name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
            if not name or entry["name"].rstrip("/") == base.rstrip("/"):
                continue
            (dirs if entry.get("type") == "directory" else keys).append(name)
        return sorted(set(keys)), sorted(set(dirs))

    def size(self, key: str) -> int | None:
        try:
            return int(self.fs.size(self._path(key)))
        except _MISSING:
            return None
        except Exception as e:
            raise self._fail(key, e) from e


def _is_http(fs: Any) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    return any(p in ("http", "https") for p in protocol)
