"""Groups and arrays: the objects a caller holds.

A node is a snapshot of its metadata plus a handle on the hierarchy it came from, so a
group can open its children and an array can read its chunks.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .cache import ChunkCache
from .cancel import CancelToken
from .errors import NodeNotFoundError, UnsupportedFeatureError, ZarrError
from .hierarchy import Hierarchy, NodeDoc, join
from .metadata.written import WrittenArray, written_array
from .reader import ChunkFailure, ChunkReader, Progress


class Node:
    kind: str = ""

    def __init__(self, hierarchy: Hierarchy, doc: NodeDoc) -> None:
        self._h = hierarchy
        self._doc = doc

    @property
    def path(self) -> str:
        return self._doc.path

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def zarr_format(self) -> int:
        return self._doc.zarr_format

    @property
    def attrs(self) -> dict[str, Any]:
        return self._doc.attributes

    @property
    def metadata(self) -> dict[str, Any]:
        return self._doc.document

    @property
    def store(self) -> Any:
        return self._h.store

    @property
    def url(self) -> str:
        return self._h.store.url

    @property
    def format_name(self) -> str:
        """``v2``, ``v3``, or ``v3 (2022 draft)``."""
        return {"draft": "v3 (2022 draft)"}.get(self._doc.flavor, f"v{self.zarr_format}")

    @property
    def implicit(self) -> bool:
        return self._doc.implicit

    def ancestor(self, levels: int = 1) -> Group:
        """The group ``levels`` above this node (as far as the root); raises a ZarrError where
        its metadata cannot be read, NodeNotFoundError above the root."""
        parts = [p for p in self.path.split("/") if p]
        if levels > len(parts):
            raise NodeNotFoundError(f"{self.path} has no group {levels} levels above it in {self.url}")
        path = "/" + "/".join(parts[: len(parts) - levels])
        node = make_node(self._h, self._h.load_member(path))
        if not isinstance(node, Group):
            raise NodeNotFoundError(f"{path} in {self.url} is not a group")
        return node

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path} in {self.url}>"


class Group(Node):
    kind = "group"

    @property
    def can_list_members(self) -> bool:
        """False on a store that cannot list (plain HTTP) without consolidated metadata: children
        exist there but are found only by their path (``group["name"]``)."""
        return self._h.can_list_members

    def member_names(self) -> list[str]:
        """Names of the children, without reading their metadata."""
        return self._h.child_names(self.path)

    def members(self) -> list[Node]:
        """Children sorted by name; a child whose metadata is broken is an ``ErrorNode``."""
        out: list[Node] = []
        for name in self.member_names():
            path = join(self.path, name)
            try:
                out.append(make_node(self._h, self._h.load_member(path)))
            except NodeNotFoundError:
                continue
            except ZarrError as e:
                out.append(ErrorNode(self._h, path, e))
        return out

    def prefetch(self, relpaths: list[str]) -> None:
        """Fetch the metadata of these descendants in one batch (one round trip on a remote
        store), so that opening them afterwards asks nothing more: an OME image's levels, say."""
        paths = []
        for rel in relpaths:
            parts = [p for p in rel.strip("/").split("/") if p]
            if parts and not any(p in (".", "..") for p in parts):
                paths.append(join(self.path, "/".join(parts)))
        self._h.prefetch(paths, self.zarr_format)

    def __getitem__(self, relpath: str) -> Node:
        parts = [p for p in relpath.strip("/").split("/") if p]
        if not parts:
            return self
        if any(p in (".", "..") for p in parts):
            raise NodeNotFoundError(f"invalid member path {relpath!r} in {self.path}")
        path = self.path
        for p in parts:
            path = join(path, p)
        return make_node(self._h, self._h.load_member(path))

    def __contains__(self, relpath: object) -> bool:
        if not isinstance(relpath, str):
            return False
        try:
            self[relpath]
        except ZarrError:
            return False
        return True


class Array(Node):
    kind = "array"

    def __init__(self, hierarchy: Hierarchy, doc: NodeDoc) -> None:
        super().__init__(hierarchy, doc)
        assert doc.array is not None
        self.meta = doc.array
        self.reader = ChunkReader(hierarchy.store, doc.array, doc.path)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.meta.shape

    @property
    def ndim(self) -> int:
        return len(self.meta.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.meta.shape, dtype=object))

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.meta.dtype

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...]:
        """The inner chunk shape when sharded, else the chunk shape."""
        if self.meta.reported_sharding is not None:
            return self.meta.reported_sharding[0]
        return self.meta.read_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        if self.meta.reported_sharding is not None:
            return self.meta.reported_sharding[1]
        return self.meta.stored_shape if self.meta.shard_layout is not None else None

    @property
    def fill_value(self) -> Any:
        return self.meta.fill_value

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        return self.meta.dimension_names

    @property
    def codecs(self) -> str:
        return self.meta.codecs_description

    @property
    def data_type_name(self) -> str:
        return self.meta.dt.name

    def __getitem__(self, selection: Any) -> np.ndarray:
        return self.reader.read(selection)

    def read(self, selection: Any = Ellipsis, *, cancel: CancelToken | None = None, cache: ChunkCache | None = None,
             progress: Progress | None = None, executor: ThreadPoolExecutor | None = None,
             failures: list[ChunkFailure] | None = None) -> np.ndarray:
        """``self[selection]`` with cancellation, a decoded-chunk cache, progress reports and,
        given a ``failures`` list, unreadable chunks recorded there instead of raised."""
        return self.reader.read(selection, cancel=cancel, cache=cache, progress=progress, executor=executor,
                                failures=failures)

    def chunk_grid_shape(self) -> tuple[int, ...]:
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks))

    def stored_objects(self) -> tuple[int, int] | None:
        """(number of stored chunk or shard objects, their total bytes), or None if the store cannot list."""
        if not self._h.store.can_list:
            return None
        prefix = self._h.stored_keys_prefix(self._doc)
        store = self._h.store
        count = total = 0
        for key in store.list_prefix(prefix):
            leaf = key.rsplit("/", 1)[-1]
            if leaf in ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"):
                continue
            count += 1
            total += store.size(key) or 0
        return count, total


class ErrorNode(Node):
    """Stands in for a child whose metadata could not be read, so the rest of a listing works."""

    kind = "error"

    def __init__(self, hierarchy: Hierarchy, path: str, error: ZarrError, doc: NodeDoc | None = None) -> None:
        super().__init__(hierarchy, doc or NodeDoc(path, "group", 0, {}, {}))
        self.error = error


class UnsupportedArray(ErrorNode):
    """An array whose metadata is sound but names a codec or data type zarrlib cannot read.

    It is an ``ErrorNode``, so whatever shows broken nodes shows it, and it keeps its document,
    attributes and the fields that could be read (``written``), so its metadata is still shown;
    only reading its data raises the error.
    """

    kind = "array"

    def __init__(self, hierarchy: Hierarchy, doc: NodeDoc) -> None:
        assert doc.unsupported is not None
        super().__init__(hierarchy, doc.path, doc.unsupported, doc)
        self.written: WrittenArray = written_array(doc.document, doc.zarr_format, doc.flavor == "draft")

    @property
    def shape(self) -> tuple[int, ...] | None:
        return self.written.shape

    def read(self, selection: Any = Ellipsis, **_: Any) -> np.ndarray:
        """Always raises: the codec or data type that would decode the chunks is missing."""
        assert isinstance(self.error, UnsupportedFeatureError)
        raise type(self.error)(str(self.error))

    def __getitem__(self, selection: Any) -> np.ndarray:
        return self.read(selection)


def make_node(h: Hierarchy, doc: NodeDoc) -> Node:
    if doc.unsupported is not None:
        return UnsupportedArray(h, doc)
    return Array(h, doc) if doc.kind == "array" else Group(h, doc)
