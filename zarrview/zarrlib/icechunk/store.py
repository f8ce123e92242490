"""``IcechunkStore``: one version of an Icechunk repository as a read-only Zarr v3 store.

A repository holds no ``zarr.json`` files and no chunk keys: its snapshot lists the nodes with
their metadata, and its manifests say where each chunk is. This store presents the keys a Zarr
reader asks for (``a/b/zarr.json``, ``a/b/c/0/1``) and answers them from those: metadata from
the snapshot, chunks as ranges of the repository's chunk files (``chunks/ID``, through the
store of the repository's location, one ``get_ranges`` call for a read), bytes kept in the
manifest, or ranges of other files (virtual chunks), read only from prefixes the user has
authorised through an ``AccessPolicy``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence

from ..cancel import CancelToken
from ..errors import StoreError, StoreNotFoundError, ZarrError
from ..storage.access import AccessPolicy, normal_url
from ..storage.base import OnEach, Scratch, Store, fetch_each, slice_range, too_large
from ..storage.byte_request import ByteRequest
from ..storage.plain import open_plain
from ..storage.revision import Revision, mismatch
from .containers import containers_v1, containers_v2
from .manifest import ChunkRef, Manifest, read_manifest
from .repo_info import RepoInfo, read_refs_v1, read_repo_info
from .snapshot import Node, Snapshot, read_snapshot
from .versions import MAIN, Version, require_version, resolve

#: manifests kept decoded per store (each is at most ``limits().metadata_bytes``)
MANIFESTS_KEPT = 32

OpenLocation = Callable[[str], Store]


def read_info(base: Store, version: Version | None = None) -> RepoInfo:
    """The repository's refs: the spec 2 ``repo`` file, else spec 1's ``refs/`` (where it
    cannot be listed: ``main`` and the ref ``version`` names)."""
    info = read_repo_info(base)
    if info is None:
        info = read_refs_v1(base, None if version is None or version.kind == "snapshot" else str(version))
    if info is None:
        raise StoreNotFoundError(f"{base.url} is not an Icechunk repository (no repo file and no refs/)")
    return info


class IcechunkStore(Store):
    """One version (branch, tag or snapshot) of a repository at ``base``."""

    def __init__(self, base: Store, version: Version | str | None = None, policy: AccessPolicy | None = None,
                 open_location: OpenLocation | None = None) -> None:
        if isinstance(version, str):
            version = require_version(version, f"{base.url}: {version!r}")
        super().__init__(base.url if version is None else f"{base.url}@{version}")
        self.base = base
        self.version: Version = version or MAIN
        self.policy = policy if policy is not None else AccessPolicy()
        self.prefers_batches = base.prefers_batches
        self._open_location = open_location
        self.info = read_info(base, self.version)
        self.snapshot_id = resolve(self.info, self.version, base.url)
        self.snapshot: Snapshot = read_snapshot(base, self.snapshot_id)
        self._children: dict[str, list[str]] = {}
        for path in self.snapshot.nodes:
            if path != "/":
                parent, _, name = path.rpartition("/")
                self._children.setdefault(parent or "/", []).append(name)
        self._lock = threading.Lock()
        self._manifests: OrderedDict[str, Manifest] = OrderedDict()
        self._virtual: dict[str, Store] = {}
        self._revisions: dict[str, Revision | None] = {}  # virtual chunks' files, by URL
        self._containers: dict[str, str] | None = None

    # -- keys -> nodes and chunk references --------------------------------------------------
    def _node_doc(self, key: str) -> Node | None:
        if key == "zarr.json":
            return self.snapshot.nodes.get("/")
        if key.endswith("/zarr.json"):
            return self.snapshot.nodes.get("/" + key[: -len("/zarr.json")])
        return None

    def _array_of(self, key: str) -> tuple[Node, str] | None:
        """The array a chunk key belongs to and the rest of the key after the array's path."""
        root = self.snapshot.nodes["/"]
        if root.is_array:
            return root, key
        head = key
        while "/" in head:
            head = head.rpartition("/")[0]
            node = self.snapshot.nodes.get("/" + head)
            if node is not None:
                return (node, key[len(head) + 1:]) if node.is_array else None
        return None

    @staticmethod
    def _index(node: Node, rest: str) -> tuple[int, ...] | None:
        prefix, sep = node.encoding
        if prefix:
            if rest == prefix:
                return () if node.ndim == 0 else None
            if not rest.startswith(prefix + sep):
                return None
            rest = rest[len(prefix) + 1:]
        elif node.ndim == 0:
            return () if rest == "0" else None
        parts = rest.split(sep)
        if len(parts) != node.ndim or not all(p.isdigit() and len(p) < 11 for p in parts):
            return None
        return tuple(int(p) for p in parts)

    def chunk_key(self, node: Node, index: tuple[int, ...]) -> str:
        prefix, sep = node.encoding
        base = "" if node.path == "/" else node.path[1:] + "/"
        if not index:
            return base + (prefix or "0")
        return base + (prefix + sep if prefix else "") + sep.join(str(i) for i in index)

    def _manifest(self, manifest_id: str) -> Manifest:
        with self._lock:
            m = self._manifests.get(manifest_id)
            if m is not None:
                self._manifests.move_to_end(manifest_id)
                return m
        m = read_manifest(self.base, manifest_id)
        with self._lock:
            self._manifests[manifest_id] = m
            while len(self._manifests) > MANIFESTS_KEPT:
                self._manifests.popitem(last=False)
        return m

    def chunk_ref(self, key: str) -> ChunkRef | None:
        """Where the chunk at ``key`` is stored, or None for a key that holds no chunk."""
        found = self._array_of(key)
        if found is None:
            return None
        node, rest = found
        index = self._index(node, rest)
        if index is None:
            return None
        for ref in node.manifests:
            if ref.covers(index):
                return self._manifest(ref.manifest_id).find(node.node_id, index)
        return None

    # -- reads -------------------------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        return self.get_range(ByteRequest(key))

    def get_range(self, req: ByteRequest) -> bytes | None:
        return fetch_each(self, [req])[0]

    def get_ranges(self, reqs: Sequence[ByteRequest], on_each: OnEach, cancel: CancelToken | None = None,
                   scratch: Scratch | None = None) -> None:
        """Metadata and inline chunks answered at once; native chunks as ranges of their chunk
        files in one ``get_ranges`` call on the repository's store (which coalesces them);
        virtual chunks, once authorised, in one call per file they lie in."""
        native: list[tuple[int, ByteRequest, int]] = []
        virtual: dict[str, list[tuple[int, ByteRequest, int]]] = {}
        for i, req in enumerate(reqs):
            try:
                doc = self._node_doc(req.key)
                if doc is not None:
                    on_each(i, self._answer_doc(doc, req))
                    continue
                ref = self.chunk_ref(req.key)
            except StoreError as e:
                on_each(i, e)
                continue
            except ZarrError as e:
                on_each(i, StoreError(f"{req.key}: {e}"))
                continue
            if ref is None:
                on_each(i, None)
                continue
            if req.start is None and ref.size > req.max_bytes():
                on_each(i, too_large(self.key_url(req.key), req, ref.size))
                continue
            if ref.inline is not None:
                on_each(i, slice_range(ref.inline, req))
                continue
            start, stop = _window(ref, req)
            if ref.chunk_id is not None:
                native.append((i, ByteRequest(f"chunks/{ref.chunk_id}", start, stop), stop - start))
                continue
            try:
                folder, name = self._virtual_store(req.key, ref)
            except StoreError as e:
                on_each(i, e)
                continue
            virtual.setdefault(folder, []).append((i, ByteRequest(name, start, stop), stop - start))
        if native:
            self._forward(self.base, native, reqs, on_each, cancel, scratch, "chunk file")
        for folder, group in virtual.items():
            self._forward(self._virtual[folder], group, reqs, on_each, cancel, scratch, "virtual chunk's file")

    def _forward(self, store: Store, group: list[tuple[int, ByteRequest, int]], reqs: Sequence[ByteRequest],
                 on_each: OnEach, cancel: CancelToken | None, scratch: Scratch | None, what: str) -> None:
        """``group``'s ranges read from ``store``; a range the file answers short is failed once
        the read is over, with the file's size asked of the store: a range that starts past the
        end comes back empty, which says nothing of where the file ends."""
        short: list[tuple[int, ByteRequest, int]] = []

        def landed(j: int, data: bytes | memoryview | None | StoreError) -> None:
            i, mapped, want = group[j]
            if data is None:
                data = StoreError(f"{self.key_url(reqs[i].key)}: the {what} {store.key_url(mapped.key)} does not exist")
            elif not isinstance(data, StoreError) and len(data) != want:
                short.append((i, mapped, len(data)))
                return
            on_each(i, data)

        store.get_ranges([m for _, m, _ in group], landed, cancel, scratch)
        sizes: dict[str, int | None] = {}
        for i, mapped, got in short:
            if mapped.key not in sizes:
                sizes[mapped.key] = _file_size(store, mapped.key)
            on_each(i, StoreError(f"{self.key_url(reqs[i].key)}: the manifest places it at bytes "
                                  f"{mapped.start}-{mapped.stop} of {store.key_url(mapped.key)}, "
                                  f"{_where_it_ends(mapped, got, sizes[mapped.key])}"))

    def _answer_doc(self, node: Node, req: ByteRequest) -> bytes:
        data = node.user_data
        if req.start is None and len(data) > req.max_bytes():
            raise too_large(self.key_url(req.key), req, len(data))
        return slice_range(data, req)

    def _virtual_store(self, key: str, ref: ChunkRef) -> tuple[str, str]:
        """The folder a virtual chunk's file is in (its store opened and kept) and the file's
        name, once the policy allows it."""
        assert ref.location is not None
        url = self._absolute(key, ref.location)
        self.policy.check(url, f"virtual chunk {key} of {self.url}")
        folder, _, name = normal_url(url).rpartition("/")
        if not name:
            raise StoreError(f"{self.key_url(key)}: virtual chunk location {url!r} names no file")
        with self._lock:
            store = self._virtual.get(folder)
        if store is None:
            store = self._open(folder)
            with self._lock:
                store = self._virtual.setdefault(folder, store)
        if ref.etag or ref.last_modified:
            why = mismatch(self._revision(store, url, name), ref.etag, ref.last_modified)
            if why is not None:
                raise StoreError(f"{self.url}/{key}: the virtual chunk's file {url} changed since the chunk "
                                 f"was recorded: {why}")
        return folder, name

    def _revision(self, store: Store, url: str, name: str) -> Revision | None:
        """The file's revision, asked once per file for the store's life (a request where
        remote); unknown where the store cannot tell or the asking fails (the read says why)."""
        with self._lock:
            if url in self._revisions:
                return self._revisions[url]
        try:
            found = store.revision(name)
        except StoreError:
            found = None
        with self._lock:
            self._revisions[url] = found
        return found

    def _absolute(self, key: str, location: str) -> str:
        """``vcc://NAME/path`` resolved against the named container's URL prefix."""
        if not location.startswith("vcc://"):
            return location
        if self._containers is None:
            self._containers = (containers_v2(self.info.config, self.base.key_url("repo")) if self.info.spec >= 2
                                else containers_v1(self.base))
        name, _, rest = location[len("vcc://"):].partition("/")
        prefix = self._containers.get(name)
        if prefix is None:
            raise StoreError(f"{self.key_url(key)}: virtual chunk location {location} names container {name!r}, "
                             "which the repository's configuration does not define")
        return prefix.rstrip("/") + "/" + rest

    def _open(self, folder: str) -> Store:
        """The store of a virtual chunk's folder: the files there are read as bytes, so it opens
        as it is (``open_plain``), never as a repository."""
        if self._open_location is not None:
            return self._open_location(folder)
        return open_plain(folder)

    # -- listing -------------------------------------------------------------------------------
    def _chunk_keys(self, node: Node) -> Iterator[tuple[str, int]]:
        for ref in node.manifests:
            for index, size in self._manifest(ref.manifest_id).sizes(node.node_id):
                yield self.chunk_key(node, index), size

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        path = "/" + prefix.strip("/") if prefix.strip("/") else "/"
        node = self.snapshot.nodes.get(path)
        if node is not None:
            dirs = set(self._children.get(path, ()))
            if node.is_array and node.encoding == ("c", "/") and node.ndim:
                # the common encoding: every chunk is below c/, said without reading a manifest
                # (a tree lists each child of a group to see whether it holds a node)
                return ["zarr.json"], sorted(dirs | ({"c"} if node.manifests else set()))
            if node.is_array:
                dirs.update(k[len(prefix):].split("/", 1)[0] for k, _ in self._chunk_keys(node)
                            if "/" in k[len(prefix):])
            keys = ["zarr.json"]
            if node.is_array:
                keys += sorted({k[len(prefix):] for k, _ in self._chunk_keys(node) if "/" not in k[len(prefix):]})
            return keys, sorted(dirs)
        found = self._array_of(prefix + "x")
        if found is None:
            return [], []
        below: set[str] = set()
        inside: set[str] = set()
        for k, _ in self._chunk_keys(found[0]):
            if k.startswith(prefix):
                head, sep, _ = k[len(prefix):].partition("/")
                (inside if sep else below).add(head)
        return sorted(below), sorted(inside)

    def walk_sizes(self, prefix: str, cancel: CancelToken | None = None) -> Iterator[tuple[str, int | None]]:
        """From the snapshot and the manifests alone: no chunk is read or sized by a request."""
        for path, node in self.snapshot.nodes.items():
            key = "zarr.json" if path == "/" else path[1:] + "/zarr.json"
            if not key.startswith(prefix) and not (prefix.startswith(key[:-len("zarr.json")]) and node.is_array):
                continue
            if cancel is not None:
                cancel.raise_if_cancelled()
            if key.startswith(prefix):
                yield key, len(node.user_data)
            if node.is_array:
                for chunk_key, size in self._chunk_keys(node):
                    if chunk_key.startswith(prefix):
                        yield chunk_key, size

    def list_prefix(self, prefix: str) -> list[str]:
        return [k for k, _ in self.walk_sizes(prefix)]

    def size(self, key: str) -> int | None:
        doc = self._node_doc(key)
        if doc is not None:
            return len(doc.user_data)
        ref = self.chunk_ref(key)
        return None if ref is None else ref.size

    def close(self) -> None:
        self.base.close()
        with self._lock:
            stores, self._virtual = list(self._virtual.values()), {}
        for s in {id(s): s for s in stores}.values():
            s.close()


def _file_size(store: Store, key: str) -> int | None:
    """The size of a file a range of which came back short; None where the store cannot tell."""
    try:
        return store.size(key)
    except StoreError:
        return None


def _where_it_ends(mapped: ByteRequest, got: int, size: int | None) -> str:
    """Why ``got`` bytes answered the range ``mapped``: where the file ends, as its size says,
    else as the short answer shows (an empty answer only bounds it)."""
    start = mapped.start or 0
    stop = mapped.stop if mapped.stop is not None else start + got + 1
    if size is not None and size < stop:
        return f"which ends at byte {size} (a file of {size} bytes)"
    if size is not None:  # changed since it was read, or a store that answers short
        return f"which answered {got} of those bytes although it holds {size}"
    if got:
        return f"which ends at byte {start + got}"
    return f"which ends at or before byte {start}"


def _window(ref: ChunkRef, req: ByteRequest) -> tuple[int, int]:
    """The range of the chunk's file that ``req`` (a range of the chunk) asks for."""
    n = ref.length
    if req.start is None:
        a, b = 0, n
    elif req.start < 0:
        a, b = max(0, n + req.start), n
    else:
        a, b = min(req.start, n), n if req.stop is None else min(max(req.stop, req.start), n)
    return ref.offset + a, ref.offset + b
