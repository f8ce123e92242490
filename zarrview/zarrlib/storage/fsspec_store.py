"""Any fsspec filesystem (s3, gcs, http, memory, ...) as a store.

fsspec is the field's standard for remote bytes. A remote read is dominated by round
trips, so ranges less than a MiB apart are read as one (``coalesce.REMOTE``) and the reads
are gathered on the I/O loop with many in flight at once, each retried on transient failures
(:mod:`.async_batch`, which also learns what a server does with ranges). This module is the
fsspec transport under that: one GET, one HEAD, listings, and what fsspec's errors mean.
"""

from __future__ import annotations

import asyncio
import errno
import inspect
from collections.abc import Iterator
from typing import Any

from ..cancel import CancelToken
from ..errors import StoreAccessError, StoreError
from ..limits import limits
from .async_batch import RANGE_REFUSED, AsyncBatchStore, RangeIgnored, hold
from .base import ByteRequest, too_large
from .io_loop import io_loop
from .keys import check_key
from .retry import RetryPolicy, http_status, is_transient

_MISSING = (FileNotFoundError, KeyError, IsADirectoryError)


def _pages_s3(fs: Any) -> bool:
    """Whether ``fs`` is s3fs, whose listing can be read a page at a time."""
    return callable(getattr(fs, "_list_pages", None)) and callable(getattr(fs, "split_path", None))


def _range_unsatisfiable(error: BaseException) -> bool:
    """A 416 (s3fs says so as ``OSError(EINVAL)``): asked for bytes an empty object has not."""
    return http_status(error) == 416 or (isinstance(error, OSError) and error.errno == errno.EINVAL
                                         and "range" in str(error).lower())


def _takes(fs: Any, method: str, name: str) -> bool:
    try:
        return name in inspect.signature(getattr(fs, method)).parameters
    except (AttributeError, TypeError, ValueError):
        return False


class FsspecStore(AsyncBatchStore):
    def __init__(self, fs: Any, root: str, url: str, *, retry: RetryPolicy | None = None,
                 io_concurrency: int = 64) -> None:
        super().__init__(url, retry=retry, io_concurrency=io_concurrency)
        self.fs = fs
        self.root = root.rstrip("/")
        #: s3fs sends a HEAD before every whole-object GET, to split large objects into parallel
        #: ranges (``max_concurrency`` > 1, its default): a second round trip per chunk, for
        #: objects far smaller than its 50 MiB split size. Asked for one stream, it sends the GET alone.
        self._one_stream = {"max_concurrency": 1} if _takes(fs, "_cat_file", "max_concurrency") else {}

    # -- addressing -------------------------------------------------------------------------
    def _path(self, key: str) -> str:
        check_key(key, self.url)
        return f"{self.root}/{key}" if self.root else key

    def _request_path(self, path: str) -> str:
        """The path a request names (an HTTP store adds its URL's query)."""
        return path

    # -- running on fsspec's loop -----------------------------------------------------------
    def _loop(self) -> asyncio.AbstractEventLoop:
        """The file system's own loop where it is asynchronous (the I/O loop, unless the user gave
        it another), else the I/O loop, whose executor runs the synchronous calls."""
        if getattr(self.fs, "async_impl", False) and getattr(self.fs, "loop", None) is not None:
            return self.fs.loop
        return io_loop()

    # -- one request ------------------------------------------------------------------------
    def _missing(self, error: BaseException) -> bool:
        return isinstance(error, _MISSING)

    def _transient(self, error: BaseException) -> bool:
        return is_transient(error)

    def _error(self, req: ByteRequest, e: BaseException, attempts: int, ours: bool = False) -> StoreError:
        """``ours``: the per-try timeout expired (else a timeout is the client's own setting)."""
        where = self._where(req)
        status = http_status(e)
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if isinstance(e, (asyncio.TimeoutError, TimeoutError)):
            within = f"within {self.retry.timeout:g} s" if ours else "within the client's timeout"
            return StoreError(f"{where}: no answer {within}{tries}")
        if isinstance(e, PermissionError) or status in (401, 403):
            return StoreAccessError(f"{where}: access denied ({status or 403}); check credentials or use anonymous access")
        detail = f"HTTP {status}" if status is not None else f"{type(e).__name__}: {e}"
        return StoreError(f"{where}: {detail}{tries}")

    def _url(self, path: str) -> str:
        """A request path as the user's URL, for messages."""
        root = self.root
        if root and (path == root or path.startswith(root + "/")):
            return self.key_url(path[len(root) + 1:])
        return path

    async def _get(self, path: str, start: int | None = None, stop: int | None = None,
                   limit: int | None = None) -> bytes:
        """``limit`` also bounds a range answered with the whole object. Object stores (s3, gcs)
        send what was asked, so a whole object is asked for as its first ``limit + 1`` bytes:
        one larger is refused after that much, not after all of it (an empty object refuses any
        range, and is then read without one). Plain HTTP servers are bounded while reading
        (``HttpStore``)."""
        bound = limit if limit is not None else limits().object_bytes
        if getattr(self.fs, "async_impl", False):
            if start is None and stop is None:
                try:
                    data = bytes(await self.fs._cat_file(path, start=0, end=bound + 1, **self._one_stream))
                except Exception as e:
                    if not _range_unsatisfiable(e):
                        raise
                    data = bytes(await self.fs._cat_file(path, **self._one_stream))
            else:
                data = bytes(await self.fs._cat_file(path, start=start, end=stop))
        else:
            data = bytes(await asyncio.to_thread(self.fs.cat_file, path, start=start, end=stop))
        if len(data) > bound:
            raise too_large(self._url(path), ByteRequest("", limit=limit), len(data))
        if start is None or start >= 0 and stop is None:
            await hold(len(data))  # counted once it is here: these clients read a body whole
        if start is not None and len(data) > (-start if start < 0 else len(data) if stop is None else stop - start):
            raise RangeIgnored(data)  # a 200 with the whole object: Range was ignored
        return data

    async def _info(self, path: str) -> dict[str, Any]:
        path = self._request_path(path)
        if getattr(self.fs, "async_impl", False):
            return dict(await self.fs._info(path))
        return dict(await asyncio.to_thread(self.fs.info, path))

    def _suffix_refused(self, error: BaseException) -> bool | None:
        return True if http_status(error) in RANGE_REFUSED else None

    # -- listing ----------------------------------------------------------------------------
    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        base = self._path(prefix.rstrip("/")) if prefix else self.root
        try:
            entries = self.fs.ls(base, detail=True)
        except _MISSING:
            return [], []
        except Exception as e:
            raise self._error(ByteRequest(prefix or ""), e, 1) from e
        keys: list[str] = []
        dirs: list[str] = []
        for entry in entries:
            name = entry["name"].rstrip("/").rsplit("/", 1)[-1]
            if not name or entry["name"].rstrip("/") == base.rstrip("/"):
                continue
            (dirs if entry.get("type") == "directory" else keys).append(name)
        return sorted(set(keys)), sorted(set(dirs))

    def iter_dir(self, prefix: str, page: int = 1000) -> Iterator[tuple[list[str], list[str]]]:
        """On S3, one ``ListObjectsV2`` request a page (``Delimiter='/'``, ``MaxKeys=page``), each
        retried as any other request: the first names of a prefix holding 100,000 come after one
        round trip. Other filesystems list once (``list_dir``) and the answer is cut."""
        if not _pages_s3(self.fs):
            yield from super().iter_dir(prefix, page)
            return
        base = self._path(prefix.rstrip("/")) if prefix else self.root
        bucket, key, _ = self.fs.split_path(base)
        stem = key.strip("/") + "/" if key.strip("/") else ""
        for answer in self._s3_pages(prefix, Bucket=bucket, Prefix=stem, Delimiter="/", MaxKeys=max(1, page)):
            dirs = [p["Prefix"][len(stem):].rstrip("/") for p in answer.get("CommonPrefixes", [])]
            keys = [c["Key"][len(stem):] for c in answer.get("Contents", [])]
            yield sorted(k for k in keys if k and "/" not in k), sorted(d for d in dirs if d)

    def walk_sizes(self, prefix: str, cancel: CancelToken | None = None) -> Iterator[tuple[str, int | None]]:
        """On S3 every key below ``prefix`` with its size, a thousand per request (no request per
        key); elsewhere ``fs.find`` with details, one listing."""
        base = self._path(prefix.rstrip("/")) if prefix else self.root
        if _pages_s3(self.fs):
            bucket, key, _ = self.fs.split_path(base)
            stem = key.strip("/") + "/" if key.strip("/") else ""
            for answer in self._s3_pages(prefix, Bucket=bucket, Prefix=stem):
                for c in answer.get("Contents", []):
                    if cancel is not None:
                        cancel.raise_if_cancelled()
                    if c["Key"] != stem:
                        yield prefix + c["Key"][len(stem):], c.get("Size")
            return
        try:
            found = self.fs.find(base, detail=True)
        except _MISSING:
            return
        except Exception as e:
            raise self._error(ByteRequest(prefix or ""), e, 1) from e
        root = base.rstrip("/") + "/"
        for name, info in sorted(found.items()):
            if cancel is not None:
                cancel.raise_if_cancelled()
            if name.startswith(root) and info.get("type") != "directory":
                yield prefix + name[len(root):], info.get("size")

    def _s3_pages(self, prefix: str, **request: Any) -> Iterator[dict[str, Any]]:
        """The answers of a paginated ``list_objects_v2``, fetched one at a time on fsspec's loop."""
        pages = self.fs._list_pages("list_objects_v2", **request)
        loop = self._loop()
        try:
            while True:
                try:
                    yield asyncio.run_coroutine_threadsafe(pages.__anext__(), loop).result()
                except StopAsyncIteration:
                    return
                except Exception as e:
                    if isinstance(e, _MISSING):
                        return
                    raise self._error(ByteRequest(prefix or ""), e, 1) from e
        finally:
            asyncio.run_coroutine_threadsafe(pages.aclose(), loop).result()
