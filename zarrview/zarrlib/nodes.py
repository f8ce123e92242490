"""Groups and arrays: the objects a caller holds.

A node is a snapshot of its metadata plus a handle on the hierarchy it came from, so a
group can open its children and an array can read its chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from .cache import ChunkCache
from .cancel import CancelToken
from .errors import NodeNotFoundError, ZarrError
from .hierarchy import Hierarchy, NodeDoc, join
from .mltypes import widened
from .storage.keys import key_problem
from .stored_objects import StoredObjects, count_stored

if TYPE_CHECKING:
    from .grid import RectilinearGrid
    from .outline import Outline
from .reader import ChunkFailure, ChunkReader, Progress
from .sink import Visit


class Node:
    kind: str = ""

    def __init__(self, hierarchy: Hierarchy, doc: NodeDoc) -> None:
        self._h = hierarchy
        self._doc = doc

    @property
    def doc(self) -> NodeDoc:
        """The node's document as the hierarchy read it (what its kind and fields come from)."""
        return self._doc

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
        """The node's metadata document, whole (for a root holding the consolidated metadata of
        100,000 nodes that is 50-90 MB of text, decoded on first use: see ``metadata_preview``)."""
        return self._doc.full_document()

    def metadata_preview(self, entries: int = 100) -> dict[str, Any]:
        """The metadata document with at most ``entries`` of its consolidated entries (the rest
        counted under ``"…"``): what a panel or a terminal can show at once."""
        cons = self._h.consolidated if self._doc.whole is not None else None
        if cons is None or cons.entry_count <= entries:
            return self.metadata
        doc = dict(self._doc.document)
        held = doc.get("consolidated_metadata")
        shown = cons.preview(entries)
        shown["…"] = f"{cons.entry_count - len(shown):,} more entries not shown"
        doc["consolidated_metadata"] = {**held, "metadata": shown} if isinstance(held, dict) else shown
        return doc

    @property
    def store(self) -> Any:
        return self._h.store

    @property
    def url(self) -> str:
        return self._h.store.url

    @property
    def hierarchy(self) -> Hierarchy:
        """The hierarchy this node was found in (its store, format and consolidated metadata)."""
        return self._h

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
        return self.load_members(self.member_names())

    def iter_member_names(self, page: int = 1000) -> Iterator[list[str]]:
        """The children's names, at most ``page`` at a time, without reading their metadata.

        From consolidated metadata: every name, sorted. Otherwise as the store lists the group's
        sub-folders: each page sorted (on S3 the pages also follow one another in order), the
        first one after a single listing request (a folder: after reading ``page`` entries) however
        many children there are. Listed names are candidates: ``load_members`` leaves out those
        that hold no node. Raises StoreError where the listing fails."""
        return self._h.iter_child_names(self.path, page)

    def load_members(self, names: Sequence[str]) -> list[Node]:
        """The children ``names`` (from ``iter_member_names`` or ``member_names``), in that order:
        on a remote store their metadata is fetched in one batch first (``prefetch``); a name that
        holds no node is left out, one whose metadata is broken is an ``ErrorNode``."""
        paths = [join(self.path, n) for n in names if n and "/" not in n and n not in (".", "..")]
        if self._h.store.prefers_batches and len(paths) > 1:
            self._h.prefetch(paths, self.zarr_format)
        out: list[Node] = []
        for path in paths:
            try:
                out.append(make_node(self._h, self._h.load_listed(path)))
            except NodeNotFoundError:
                continue
            except ZarrError as e:
                out.append(error_node(self._h, path, e))
        return out

    def member_outlines(self, names: Sequence[str] | None = None) -> list[Outline]:
        """The children (``names``, else all) as a listing shows them, most arrays without a
        node of their own: ``outline.Outline``. Five times cheaper than ``load_members`` for
        arrays of a consolidated hierarchy that share their data type, chunks and codecs."""
        from .outline import outlines

        return outlines(self, self.member_names() if names is None else names)

    def descendant_paths(self) -> list[str] | None:
        """Every node path below this group that the consolidated metadata names, sorted, without
        reading any node's metadata (a filter can search 100,000 of them); None without consolidated
        metadata: then only listing finds them."""
        cons = self._h.consolidated
        if not cons:
            return None
        base = "" if self.path == "/" else self.path
        return [p for p in cons.paths() if p.startswith(base + "/") and p != self.path]

    def prefetch(self, relpaths: list[str]) -> None:
        """Fetch the metadata of these descendants in one batch (one round trip on a remote
        store), so that opening them afterwards asks nothing more: an OME image's levels, say."""
        paths = []
        for rel in relpaths:
            parts = [p for p in rel.strip("/").split("/") if p]
            if parts and key_problem("/".join(parts)) is None:
                paths.append(join(self.path, "/".join(parts)))
        self._h.prefetch(paths, self.zarr_format)

    def __getitem__(self, relpath: str) -> Node:
        if not isinstance(relpath, str):
            raise NodeNotFoundError(f"{self.path} in {self.url}: members are named by path strings, not {relpath!r}")
        parts = [p for p in relpath.strip("/").split("/") if p]
        if not parts:
            return self
        problem = key_problem("/".join(parts))
        if problem is not None:
            raise NodeNotFoundError(f"invalid member path {relpath!r} in {self.path}: it has {problem}")
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
        self._reader: ChunkReader | None = None

    @property
    def reader(self) -> ChunkReader:
        """Made on first read: a listing of a thousand arrays reads none of them."""
        if self._reader is None:
            self._reader = ChunkReader(self._h.store, self.meta, self._doc.path)
        return self._reader

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
        """The type reads return: the stored type, or float32 for an ML or sub-byte type where
        the hierarchy widens them (``Hierarchy.widen_ml_types``)."""
        return widened(self.meta.dtype) if self._h.widen_ml_types else self.meta.dtype

    @property
    def stored_dtype(self) -> np.dtype[Any]:
        """The data type's own numpy type, whatever reads return."""
        return self.meta.dtype

    @property
    def nbytes(self) -> int:
        """The array's size in its data type's elements (whatever reads widen them to): a
        ``complex_bfloat16`` element is 4 bytes, though it reads as a complex64."""
        storage = self.meta.dt.storage
        return self.size * (storage.components * storage.itemsize if storage is not None else self.stored_dtype.itemsize)

    @property
    def chunks(self) -> tuple[int, ...]:
        """The inner chunk shape when sharded, else the chunk shape; on a rectilinear grid of
        chunks, the largest extent of each dimension (``grid`` has them all)."""
        return self.meta.chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape when sharded (on a rectilinear grid of shards, the largest extents)."""
        return self.meta.shard_shape

    @property
    def typical_chunks(self) -> tuple[int, ...]:
        """The chunk extents a view plans by (``ArrayMetadata.typical_chunks``)."""
        return self.meta.typical_chunks

    @property
    def grid(self) -> RectilinearGrid | None:
        """The rectilinear grid of the stored chunks (or shards), None where it is regular."""
        return self.meta.grid

    def chunk_box(self, coords: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        """[start, stop) per dimension of the chunk a read decodes at ``coords`` (the inner chunk
        when sharded; the shard where codecs around it make shards decode whole), as a read's
        ``ChunkFailure.box`` gives it: what a chunk outline draws."""
        return self.meta.chunk_box(coords)

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
        return self.read(selection)

    def read(self, selection: Any = Ellipsis, *, cancel: CancelToken | None = None, cache: ChunkCache | None = None,
             progress: Progress | None = None, executor: ThreadPoolExecutor | None = None,
             failures: list[ChunkFailure] | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """``self[selection]`` with cancellation, a decoded-chunk cache, progress reports and,
        given a ``failures`` list, unreadable chunks recorded there instead of raised; ``out``
        (of the result's shape and ``dtype``, C-contiguous) is filled and returned instead of a new array."""
        return self.reader.read(selection, cancel=cancel, cache=cache, progress=progress, executor=executor,
                                failures=failures, dtype=self.dtype, out=out)

    def visit(self, selection: Any, visit: Visit, *, cancel: CancelToken | None = None,
              cache: ChunkCache | None = None, progress: Progress | None = None,
              executor: ThreadPoolExecutor | None = None, failures: list[ChunkFailure] | None = None) -> None:
        """Each chunk's part of ``self[selection]`` handed to ``visit(index, values)`` as it is
        decoded, on the decode workers, instead of one array of the whole selection
        (``ChunkReader.visit``): what a reduction over many chunks reads through."""
        self.reader.visit(selection, visit, cancel=cancel, cache=cache, progress=progress, executor=executor,
                          failures=failures, dtype=self.dtype)

    def chunk_grid_shape(self) -> tuple[int, ...]:
        """Chunks along each dimension (inner chunks when sharded)."""
        grid = self.meta.read_grid
        if grid is not None and self.meta.reported_sharding is None:
            return grid.grid_shape
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks))

    def stored_grid_shape(self) -> tuple[int, ...]:
        """Stored objects along each dimension: shards when sharded, else chunks."""
        if self.meta.grid is not None:
            return self.meta.grid.grid_shape
        return tuple(-(-s // c) for s, c in zip(self.shape, self.shards or self.chunks))

    def stored_objects(self, cancel: CancelToken | None = None, limit: int | None = None) -> StoredObjects | None:
        """(number of stored chunk or shard objects, their total bytes), or None if the store cannot
        list. It lists what is stored below the array, never the keys of its grid (an array of
        10**15 elements has 10**12 of those): an empty array answers after one listing. Counting
        stops after ``limit`` objects (then ``.complete`` is False); ``cancel`` stops it with
        ReadCancelled, so it can run on a worker for as long as it takes."""
        return count_stored(self._h, self._doc, cancel, limit)


def make_node(h: Hierarchy, doc: NodeDoc) -> Node:
    """The node a document describes: a group, an array, or an array that cannot be read."""
    from .error_nodes import UnsupportedArray  # a subclass of Node, defined after it

    if doc.unsupported is not None:
        return UnsupportedArray(h, doc)
    return Array(h, doc) if doc.kind == "array" else Group(h, doc)


def error_node(h: Hierarchy, path: str, error: ZarrError) -> Node:
    """What stands in for a child whose metadata cannot be read (``error_nodes.ErrorNode``)."""
    from .error_nodes import ErrorNode  # a subclass of Node, defined after it

    return ErrorNode(h, path, error)
