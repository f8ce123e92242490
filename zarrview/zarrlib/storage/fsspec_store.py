"""Any fsspec filesystem (s3, gcs, http, memory, ...) as a store.

fsspec is the field's standard for remote bytes. A remote read is dominated by round
trips, so ranges less than a MiB apart are read as one (``coalesce.REMOTE``) and the reads
are gathered on fsspec's event loop with many in flight at once (I/O concurrency, separate
from the decode pool); the caller's thread waits and can abandon them through a
cancellation token. Each request is retried on
transient failures (:mod:`.retry`); servers that ignore ``Range`` or refuse suffix ranges
are detected from what they answer and handled from then on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import inspect
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from ..cancel import CancelToken
from ..errors import ReadCancelled, StoreAccessError, StoreError
from ..limits import limits
from .base import ByteRequest, OnEach, Scratch, Store, slice_range, too_large
from .coalesce import REMOTE, coalesce, member
from .retry import RetryPolicy, http_status, is_transient

_MISSING = (FileNotFoundError, KeyError, IsADirectoryError)
#: answers to a suffix range that mean "not this way" rather than "no such object"
_RANGE_REFUSED = frozenset({400, 405, 416, 501})
_WHOLE_CACHE_BYTES = 256 << 20

Settled = bytes | None | StoreError


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


class FsspecStore(Store):
    prefers_batches = True
    coalescing = REMOTE

    def __init__(self, fs: Any, root: str, url: str, *, retry: RetryPolicy | None = None,
                 io_concurrency: int = 64) -> None:
        super().__init__(url)
        self.fs = fs
        self.root = root.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.io_concurrency = max(1, io_concurrency)
        self.ignores_ranges = False  # learned: the server answers ranged requests with whole objects
        self.refuses_suffix = False  # learned: the server rejects "bytes=-N"
        self._semaphore: asyncio.Semaphore | None = None
        self._whole: OrderedDict[str, bytes] = OrderedDict()  # whole objects, when ranges are ignored
        self._whole_pending: dict[str, asyncio.Future[bytes | None]] = {}
        #: s3fs sends a HEAD before every whole-object GET, to split large objects into parallel
        #: ranges (``max_concurrency`` > 1, its default): a second round trip per chunk, for
        #: objects far smaller than its 50 MiB split size. Asked for one stream, it sends the GET alone.
        self._one_stream = {"max_concurrency": 1} if _takes(fs, "_cat_file", "max_concurrency") else {}

    # -- addressing -------------------------------------------------------------------------
    def _path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key

    def key_url(self, key: str) -> str:
        return f"{self.url.rstrip('/')}/{key}"

    # -- the synchronous API ----------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        return self.get_range(ByteRequest(key))

    def get_range(self, req: ByteRequest) -> bytes | None:
        res = self._run(lambda: self._gather([req]), None)[0]
        if isinstance(res, StoreError):
            raise res
        return res

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        """The coalesced reads all in flight at once; ``on_each`` runs on fsspec's loop thread as
        each read lands (keep it quick), for every request that read answers."""
        if not reqs:
            return
        groups = coalesce(reqs, self.coalescing)

        def landed(g: int, res: Settled) -> None:
            group = groups[g]
            for i in group.members:
                on_each(i, res if res is None or isinstance(res, StoreError) else member(res, group.req, reqs[i]))

        self._run(lambda: self._gather([g.req for g in groups], landed), cancel)

    # -- running on fsspec's loop -----------------------------------------------------------
    def _loop(self) -> asyncio.AbstractEventLoop:
        if getattr(self.fs, "async_impl", False) and getattr(self.fs, "loop", None) is not None:
            return self.fs.loop
        from fsspec.asyn import get_loop
        return get_loop()

    def _run(self, make: Callable[[], Awaitable[list[Any]]], cancel: CancelToken | None) -> list[Any]:
        async def main() -> list[Any]:
            return await make()

        future = asyncio.run_coroutine_threadsafe(main(), self._loop())
        while True:
            try:
                return future.result(timeout=0.05 if cancel is not None else None)
            except concurrent.futures.TimeoutError:
                if cancel is not None and cancel.cancelled:
                    future.cancel()  # cancels every request of the batch still in flight
                    raise ReadCancelled(f"read from {self.url} cancelled") from None

    async def _gather(self, reqs: list[ByteRequest],
                      on_each: Callable[[int, Settled], None] | None = None) -> list[Settled]:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.io_concurrency)

        async def one(i: int, req: ByteRequest) -> Settled:
            res = await self._fetch(req)
            if on_each is not None:
                on_each(i, res)
            return res

        return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(reqs))))

    # -- one request ------------------------------------------------------------------------
    async def _fetch(self, req: ByteRequest) -> Settled:
        delays: Iterator[float] | None = None
        attempt = 0
        while True:
            attempt += 1
            deadline: asyncio.Timeout | None = None
            try:
                assert self._semaphore is not None
                async with self._semaphore:
                    async with asyncio.timeout(self.retry.timeout) as deadline:
                        return await self._answer(req)
            except _MISSING:
                return None
            except asyncio.CancelledError:
                raise
            except StoreError as e:  # our own verdict on an answer (too large): final, already named
                return e
            except Exception as e:  # fsspec drivers raise many unrelated types
                if is_transient(e):
                    delays = delays or self.retry.delays()
                    delay = next(delays, None)
                    if delay is not None:
                        await asyncio.sleep(delay)
                        continue
                return self._error(req, e, attempt, ours=deadline is not None and deadline.expired())

    def _error(self, req: ByteRequest, e: BaseException, attempts: int, ours: bool = False) -> StoreError:
        """``ours``: the per-try timeout expired (else a timeout is the client's own setting)."""
        where = self.key_url(req.key) + req.describe()[len(req.key):]
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

    async def _cat(self, path: str, start: int | None = None, stop: int | None = None,
                   limit: int | None = None) -> bytes:
        """``limit``: the most bytes of a whole object (None: ``limits().object_bytes``), which
        also bounds a range answered with the whole object. Object stores (s3, gcs) send what
        was asked, so a whole object is asked for as its first ``limit + 1`` bytes: one larger
        is refused after that much, not after all of it (an empty object refuses any range, and
        is then read without one). Plain HTTP servers are bounded while reading (``HttpStore``)."""
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
        return data

    async def _size(self, path: str) -> int:
        if getattr(self.fs, "async_impl", False):
            info = await self.fs._info(path)
        else:
            info = await asyncio.to_thread(self.fs.info, path)
        size = info.get("size")
        if size is None:
            raise StoreError(f"{self._url(path)}: the server reports no size, needed to read its end")
        return int(size)

    async def _answer(self, req: ByteRequest) -> bytes:
        path = self._path(req.key)
        if req.start is None:
            return await self._cat(path, limit=req.limit)
        if self.ignores_ranges:
            return slice_range(await self._whole_object(path), req)
        if req.start < 0:
            return await self._suffix(path, req)
        if req.stop is not None and req.stop <= req.start:
            return b""
        data = await self._cat(path, req.start, req.stop)
        if req.stop is not None and len(data) > req.stop - req.start:
            self._learned_whole(path, data)  # a 200 with the whole object: Range was ignored
            return data[req.start:req.stop]
        return data

    async def _suffix(self, path: str, req: ByteRequest) -> bytes:
        assert req.start is not None
        want = -req.start
        if not self.refuses_suffix:
            try:
                data = await self._cat(path, req.start)
            except Exception as e:
                if http_status(e) not in _RANGE_REFUSED:
                    raise
                self.refuses_suffix = True
            else:
                if len(data) > want:
                    self._learned_whole(path, data)
                    return data[-want:]
                return data
        size = await self._size(path)
        return await self._cat(path, max(0, size - want), size) if size else b""

    def _learned_whole(self, path: str, data: bytes) -> None:
        self.ignores_ranges = True
        self._keep_whole(path, data)

    def _keep_whole(self, path: str, data: bytes) -> None:
        self._whole[path] = data
        self._whole.move_to_end(path)
        total = sum(len(v) for v in self._whole.values())
        while total > _WHOLE_CACHE_BYTES and len(self._whole) > 1:
            _, dropped = self._whole.popitem(last=False)
            total -= len(dropped)

    async def _whole_object(self, path: str) -> bytes:
        """Each object once, however many ranges of it are wanted at the same time."""
        if path in self._whole:
            self._whole.move_to_end(path)
            return self._whole[path]
        pending = self._whole_pending.get(path)
        if pending is not None:
            data = await asyncio.shield(pending)
            assert data is not None
            return data
        future: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        self._whole_pending[path] = future
        try:
            data = await self._cat(path)
        except BaseException as e:
            if isinstance(e, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(e)
                future.exception()  # retrieved: waiters re-raise it, asyncio need not log it
            raise
        finally:
            self._whole_pending.pop(path, None)
        future.set_result(data)
        self._keep_whole(path, data)
        return data

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

    def size(self, key: str) -> int | None:
        async def one() -> list[Any]:
            try:
                return [await self._size(self._path(key))]
            except _MISSING:
                return [None]
            except Exception as e:
                return [self._error(ByteRequest(key), e, 1)]

        res = self._run(one, None)[0]
        if isinstance(res, StoreError):
            raise res
        return None if res is None else int(res)
