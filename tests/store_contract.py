"""The Store contract (zarrview/zarrlib/storage/base.py) as one test class run against every store.

Every store zarrlib reads from (a folder, a zip, plain HTTP, S3, GCS, memory) and every test
wrapper must answer the same request the same way, or a reader proven on local files breaks
on a remote one. A subclass says how to put given bytes into its backing (files, archive
members, bucket objects) and open a store on them; the truth every answer is compared with
is those bytes, read back from the backing by other means than the store (``backing``).

What a store promises (the cases below): a whole object, a range ``[start, stop)`` clipped to
the object, a suffix (``start < 0``), an empty range; ``None`` for a missing key in every
method; a whole-object bound (``ByteRequest.limit``/``get_bounded``) refused with
``TooLargeError`` naming the key; ``get_ranges`` (a read's one call for its chunk data, into a
scratch buffer or not) giving the bytes ``get_range`` would, each request answered exactly once,
with its error in its place, however the store coalesces neighbouring ranges; listing
(where ``can_list``) of keys and sub-prefixes in name order, or a ``StoreError``, page by page
(``iter_dir``) and recursively with sizes (``walk_sizes``); ``size``; ``close`` twice;
answers unchanged under concurrent use; and nothing ever written to the backing.

Modelled on zarr-python 3's ``zarr.testing.store.StoreTests``, reduced to reading.
"""

from __future__ import annotations

import random
import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pytest

from zarrview.zarrlib.errors import StoreError, TooLargeError
from zarrview.zarrlib.storage.base import ByteRequest, Scratch, Store, fetch_each


def ranges(store: Store, reqs: list[ByteRequest], scratch: Scratch | None = None) -> list[Any]:
    """``get_ranges``'s answers in request order, copied as they arrive (an answer read into
    ``scratch`` is valid only until ``on_each`` returns); each must arrive exactly once."""
    got: dict[int, Any] = {}
    lock = threading.Lock()

    def on_each(i: int, answer: Any) -> None:
        with lock:
            assert i not in got, f"answer {i} reported twice"
            got[i] = bytes(answer) if isinstance(answer, (bytes, memoryview)) else answer

    store.get_ranges(reqs, on_each, scratch=scratch)
    assert sorted(got) == list(range(len(reqs))), "a request was not answered"
    return [got[i] for i in range(len(reqs))]


def read_into(store: Store, req: ByteRequest, scratch: Scratch) -> bytes | None:
    """One request through ``get_ranges`` into ``scratch``, as a read's worker asks for it."""
    answer = ranges(store, [req], scratch)[0]
    if isinstance(answer, StoreError):
        raise answer
    return answer  # type: ignore[no-any-return]

#: key names a URL gives meanings to (``#``, ``%``, ``?``, space) or must encode (non-ASCII)
ODD_NAMES = ("run #3", "50% done", "what?", "a b", "Zürich")


def _noise(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def sample_objects(odd_names: tuple[str, ...] = ODD_NAMES) -> dict[str, bytes]:
    """What every store under test holds: small and large objects, an empty one, nesting, and
    keys whose names need escaping. The large one spans several socket reads over HTTP."""
    objects = {
        "zarr.json": b'{"zarr_format": 3, "node_type": "group", "attributes": {}}',
        "c/0": bytes(range(256)) * 3,
        "foo/c/0.0": _noise(5000, 1),
        "foo/0/0": b"\x01\x02\x03\x04",
        "foo/bar/baz/deep": _noise(999, 2),
        "big": _noise(600_000, 3),
        "empty": b"",
    }
    for i, name in enumerate(odd_names):
        objects[f"{name}/c/{i}"] = f"{name}:{i}".encode() * (i + 1)
    return objects


#: keys a store must answer with None: absent, under an absent folder, below an object, folders
MISSING = ("nope", "foo/nope", "c/0/deeper", "foo", "foo/c")
FOLDERS = ("foo", "foo/c")

#: ranges as functions of an object's length n: (start, stop), expected by slicing the object
RANGES: dict[str, Callable[[int], tuple[int, int | None]]] = {
    "head": lambda n: (0, min(4, n)),
    "middle": lambda n: (1, n - 1),
    "to-end": lambda n: (n // 2, None),
    "stop-past-end": lambda n: (n - 3, n + 100),
    "suffix": lambda n: (-min(7, n), None),
    "suffix-longer-than-object": lambda n: (-(n + 10), None),
    "empty-range": lambda n: (2, 2),
    "stop-before-start": lambda n: (3, 1),
}
RANGE_KEYS = ("c/0", "big", "foo/0/0")


def expected_range(data: bytes, start: int, stop: int | None) -> bytes:
    if start < 0:
        return data[start:] if -start <= len(data) else data
    return data[start:stop]


def listing(objects: dict[str, bytes], prefix: str) -> tuple[list[str], list[str]]:
    """The (keys, sub-prefixes) directly below ``prefix``, from the objects themselves."""
    keys, dirs = set(), set()
    for k in objects:
        if k.startswith(prefix):
            head, sep, _ = k[len(prefix):].partition("/")
            (dirs if sep else keys).add(head)
    return sorted(keys), sorted(dirs)


class StoreContract:
    """Subclass with ``make_store`` and ``backing``; adjust the class attributes to the store."""

    #: True for stores that read many keys in one batch much more cheaply (network)
    prefers_batches: ClassVar[bool] = False
    can_list: ClassVar[bool] = True
    #: a range starting at or past the end: a StoreError (HTTP/S3 answer 416) rather than b""
    past_end_is_error: ClassVar[bool] = False
    #: contract tests this store is known to fail: name -> the reason (run as strict xfail)
    known_bugs: ClassVar[dict[str, str]] = {}
    odd_names: ClassVar[tuple[str, ...]] = ODD_NAMES

    @abstractmethod
    def make_store(self, objects: dict[str, bytes], where: Path, request: pytest.FixtureRequest) -> Store:
        """Write ``objects`` to a new backing (``where`` is an empty folder) and open a store on it."""

    @abstractmethod
    def backing(self, store: Store) -> dict[str, bytes]:
        """Every object in the store's backing, read without the store."""

    def expected_url(self, store: Store) -> str | None:
        """The ``url`` the store must report (None: not checked beyond being a string)."""
        return None

    # -- fixtures ---------------------------------------------------------------------------
    # class-scoped, so made once per class: on the class, not on an instance (each test gets its own)
    @pytest.fixture(scope="class")
    @classmethod
    def objects(cls) -> dict[str, bytes]:
        return sample_objects(cls.odd_names)

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, objects: dict[str, bytes], request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
        store = cls().make_store(objects, tmp_path_factory.mktemp(cls.__name__), request)
        yield store
        store.close()

    # -- the truth itself -------------------------------------------------------------------
    def test_backing_holds_the_objects(self, store: Store, objects: dict[str, bytes]) -> None:
        assert self.backing(store) == objects

    # -- whole objects ----------------------------------------------------------------------
    def test_get_returns_every_object_exactly(self, store: Store, objects: dict[str, bytes]) -> None:
        for key, data in objects.items():
            got = store.get(key)
            assert isinstance(got, bytes), (key, type(got))
            assert got == data, key

    def test_whole_object_by_every_method(self, store: Store, objects: dict[str, bytes]) -> None:
        for key, data in objects.items():
            assert store.get_range(ByteRequest(key)) == data, key
            assert bytes(read_into(store, ByteRequest(key), Scratch())) == data, key  # type: ignore[arg-type]
            assert store.get_bounded(key, len(data)) == data, key
            assert store.size(key) == len(data), key

    @pytest.mark.parametrize("key", MISSING)
    def test_missing_key_is_none_everywhere(self, store: Store, key: str) -> None:
        assert store.get(key) is None
        assert store.get_range(ByteRequest(key)) is None
        assert store.get_range(ByteRequest(key, 0, 4)) is None
        assert store.get_range(ByteRequest(key, -4)) is None
        assert read_into(store, ByteRequest(key, 1, 3), Scratch()) is None
        assert store.get_bounded(key, 1 << 20) is None
        assert fetch_each(store, [ByteRequest(key), ByteRequest(key, 0, 2)]) == [None, None]
        if key not in FOLDERS:
            assert store.size(key) is None

    @pytest.mark.parametrize("key", FOLDERS)
    def test_a_folder_has_no_size(self, store: Store, key: str, request: pytest.FixtureRequest) -> None:
        self._known_bug(request, "folder-size")
        assert store.size(key) is None

    def _known_bug(self, request: pytest.FixtureRequest, name: str) -> None:
        if name in self.known_bugs:
            request.node.add_marker(pytest.mark.xfail(strict=True, reason=self.known_bugs[name]))

    # -- ranges -----------------------------------------------------------------------------
    @pytest.mark.parametrize("key", RANGE_KEYS)
    @pytest.mark.parametrize("case", list(RANGES))
    def test_range(self, store: Store, objects: dict[str, bytes], key: str, case: str) -> None:
        data = objects[key]
        start, stop = RANGES[case](len(data))
        want = expected_range(data, start, stop)
        assert store.get_range(ByteRequest(key, start, stop)) == want
        scratch = Scratch()
        scratch.view(len(data) + 4096)  # a larger buffer than needed: the answer is cut to size
        got = read_into(store, ByteRequest(key, start, stop), scratch)
        assert got is not None and bytes(got) == want

    def test_get_ranges_reuses_its_scratch(self, store: Store, objects: dict[str, bytes]) -> None:
        scratch = Scratch()
        for key in ("big", "c/0", "foo/0/0", "big"):
            got = read_into(store, ByteRequest(key, 1, None), scratch)
            assert got is not None and bytes(got) == objects[key][1:], key

    @pytest.mark.parametrize("offset", [0, 10])
    def test_range_past_the_end(self, store: Store, objects: dict[str, bytes], offset: int) -> None:
        n = len(objects["c/0"])
        req = ByteRequest("c/0", n + offset, n + offset + 10)
        if self.past_end_is_error:
            with pytest.raises(StoreError) as info:
                store.get_range(req)
            assert "c/0" in str(info.value)
        else:
            assert store.get_range(req) == b""

    def test_empty_object(self, store: Store) -> None:
        assert store.get("empty") == b""
        assert store.get_range(ByteRequest("empty", -5)) == b""
        assert store.size("empty") == 0
        assert store.get_bounded("empty", 0) == b""

    # -- bounds and errors ------------------------------------------------------------------
    @pytest.mark.parametrize("key", ["zarr.json", "big", "run #3/c/0"])
    def test_whole_object_over_its_bound_is_refused_by_key(self, store: Store, objects: dict[str, bytes],
                                                           key: str) -> None:
        if key not in objects:
            pytest.skip("key not held by this store")
        n = len(objects[key])
        for call in (lambda: store.get_bounded(key, n - 1), lambda: store.get_range(ByteRequest(key, limit=n - 1)),
                     lambda: fetch_each(store, [ByteRequest(key, limit=n - 1)])):
            with pytest.raises(TooLargeError) as info:
                call()
            assert store.key_url(key) in str(info.value)
        assert store.get_range(ByteRequest(key, 0, n, limit=1)) == objects[key]  # a range is its own bound

    # -- batches ----------------------------------------------------------------------------
    def _batch(self, objects: dict[str, bytes]) -> tuple[list[ByteRequest], list[bytes | None]]:
        reqs = [ByteRequest("big", 100, 70_000), ByteRequest("nope"), ByteRequest("zarr.json"),
                ByteRequest("c/0", -10), ByteRequest("foo/0/0"), ByteRequest("big", 100, 70_000),
                ByteRequest("foo/nope", 0, 3), ByteRequest("foo/c/0.0", 4000)]
        return reqs, [None if r.key not in objects else
                      (objects[r.key] if r.start is None else expected_range(objects[r.key], r.start, r.stop))
                      for r in reqs]

    @pytest.mark.parametrize("scratch", [False, True])
    def test_get_ranges_answers_every_request(self, store: Store, objects: dict[str, bytes], scratch: bool) -> None:
        reqs, want = self._batch(objects)
        assert ranges(store, reqs, Scratch() if scratch else None) == want
        assert ranges(store, []) == []
        assert fetch_each(store, reqs) == want

    def test_get_ranges_coalesced_neighbours_get_their_own_bytes(self, store: Store, objects: dict[str, bytes]) -> None:
        """Touching, overlapping, nested, repeated and nearby ranges of one object, as a shard's
        inner chunks are asked for: however the store merges them, each gets its own bytes."""
        data = objects["big"]
        spans = [(0, 100), (100, 250), (200, 300), (120, 130), (100, 250), (5000, 5100), (60_000, 70_000),
                 (70_000, 70_001), (len(data) - 10, len(data))]
        reqs = [ByteRequest("big", a, b) for a, b in spans]
        assert ranges(store, reqs, Scratch()) == [data[a:b] for a, b in spans]

    def test_get_ranges_puts_errors_in_place(self, store: Store, objects: dict[str, bytes]) -> None:
        reqs, want = self._batch(objects)
        reqs.insert(3, ByteRequest("big", limit=10))
        got = ranges(store, reqs)
        assert isinstance(got[3], TooLargeError) and store.key_url("big") in str(got[3])
        assert got[:3] + got[4:] == want
        with pytest.raises(TooLargeError):
            fetch_each(store, reqs)

    # -- listing ----------------------------------------------------------------------------
    @pytest.mark.parametrize("prefix", ["", "foo/", "foo/bar/", "c/", "nope/", "run #3/"])
    def test_list_dir(self, store: Store, objects: dict[str, bytes], prefix: str) -> None:
        assert store.can_list is self.can_list
        if not self.can_list:
            with pytest.raises(StoreError):
                store.list_dir(prefix)
            return
        if prefix and prefix != "nope/" and not any(k.startswith(prefix) for k in objects):
            pytest.skip("prefix not held by this store")
        assert store.list_dir(prefix) == listing(objects, prefix)

    @pytest.mark.parametrize("prefix", ["", "foo/"])
    def test_list_prefix(self, store: Store, objects: dict[str, bytes], prefix: str) -> None:
        if not self.can_list:
            pytest.skip("this store cannot list")
        assert sorted(store.list_prefix(prefix)) == sorted(k for k in objects if k.startswith(prefix))

    @pytest.mark.parametrize("prefix", ["", "foo/", "nope/"])
    @pytest.mark.parametrize("page", [1, 2, 1000])
    def test_iter_dir_pages_add_up_to_the_listing(self, store: Store, objects: dict[str, bytes], prefix: str,
                                                  page: int) -> None:
        if not self.can_list:
            pytest.skip("this store cannot list")
        pages = list(store.iter_dir(prefix, page=page))
        assert all(len(keys) + len(dirs) <= page for keys, dirs in pages), pages
        keys = sorted(k for ks, _ in pages for k in ks)
        dirs = sorted(d for _, ds in pages for d in ds)
        assert (keys, dirs) == listing(objects, prefix)

    @pytest.mark.parametrize("prefix", ["", "foo/"])
    def test_walk_sizes_names_every_object_below_once(self, store: Store, objects: dict[str, bytes],
                                                      prefix: str) -> None:
        if not self.can_list:
            pytest.skip("this store cannot list")
        walked = list(store.walk_sizes(prefix))
        assert sorted(k for k, _ in walked) == sorted(k for k in objects if k.startswith(prefix))
        for key, size in walked:
            assert size is None or size == len(objects[key]), (key, size)

    # -- identity ---------------------------------------------------------------------------
    def test_url_and_key_urls(self, store: Store, objects: dict[str, bytes]) -> None:
        assert isinstance(store.url, str) and store.url
        want = self.expected_url(store)
        if want is not None:
            assert store.url == want
        for key in objects:
            assert store.key_url(key).startswith(store.url.rstrip("/") + "/"), key
        assert type(store).__name__ in repr(store)

    def test_prefers_batches(self, store: Store) -> None:
        assert store.prefers_batches is self.prefers_batches

    # -- concurrency ------------------------------------------------------------------------
    def test_concurrent_reads_get_their_own_bytes(self, store: Store, objects: dict[str, bytes]) -> None:
        """Decode threads share one store: every answer must be the one asked for."""
        keys = sorted(k for k in objects if objects[k])

        def worker(seed: int) -> list[str]:
            rnd, bad, scratch = random.Random(seed), [], Scratch()
            for _ in range(25):
                key = rnd.choice(keys)
                data = objects[key]
                a = rnd.randrange(len(data))
                b = rnd.randrange(a, len(data) + 1)
                got = read_into(store, ByteRequest(key, a, b), scratch) if rnd.random() < 0.5 else \
                    store.get_range(ByteRequest(key, a, b))
                if got is None or bytes(got) != data[a:b]:
                    bad.append(f"{key}[{a}:{b}]")
            return bad

        with ThreadPoolExecutor(8) as pool:
            bad = [b for part in pool.map(worker, range(8)) for b in part]
        assert not bad, bad[:5]

    def test_close_is_safe_to_repeat(self, objects: dict[str, bytes], request: pytest.FixtureRequest,
                                     tmp_path_factory: pytest.TempPathFactory) -> None:
        """A store of its own (the class's is shared): closing it twice raises nothing."""
        own = self.make_store(objects, tmp_path_factory.mktemp(type(self).__name__ + "Closed"), request)
        assert own.get("zarr.json") == objects["zarr.json"]
        own.close()
        own.close()

    # -- read-only --------------------------------------------------------------------------
    def test_reading_wrote_nothing(self, store: Store, objects: dict[str, bytes]) -> None:
        """Last in the class: after every read above, the backing still holds just the objects."""
        assert self.backing(store) == objects
