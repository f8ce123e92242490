"""Groups, arrays and the nodes that stand in for what cannot be read: the objects a caller holds.

A node is a snapshot of its metadata plus a handle on the hierarchy it came from, so a
group can open its children and an array can read its chunks. The kinds live together
because each makes the others: a group's children are of every kind (a broken one is an
``ErrorNode``), ``make_node`` picks the kind a document describes, and every node's
``ancestor`` is a group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .audit import ArrayAudit, ChunkStored, audit_array, chunks_stored
from .cache import ChunkCache
from .cancel import CancelToken
from .errors import NodeNotFoundError, UnsupportedFeatureError, ZarrError
from .hierarchy import Hierarchy, NodeDoc, join
from .metadata.model import ArrayMetadata
from .metadata.written import WrittenArray, written_array
from .mltypes import widened
from .outline import by_template, template_of
from .reader import ChunkFailure, ChunkReader, Progress
from .sink import Visit
from .storage.keys import key_problem
from .stored_objects import StoredObjects, count_stored

if TYPE_CHECKING:
    from .grid import RectilinearGrid


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
        node of their own (``Outline``). Five times cheaper than ``load_members`` for arrays of
        a consolidated hierarchy that share their data type, chunks and codecs; names that hold
        no node are left out, as ``load_members`` leaves them out."""
        names = self.member_names() if names is None else names
        if not by_template(self._h):
            return [Outline(node.name, node) for node in self.load_members(names)]
        out: list[Outline] = []
        for name in names:  # in order: an array made here makes those like it quick to outline
            found = template_of(self._h, join(self.path, name))
            if found is not None:
                out.append(Outline(name, None, *found))
            else:  # from the consolidated metadata too, where it holds the node: no request
                out.extend(Outline(node.name, node) for node in self.load_members([name]))
        return out

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

    def stored_objects(self, cancel: CancelToken | None = None, limit: int | None = None) -> StoredObjects | None:
        """(number of objects stored below this group that are not documents, their total
        bytes): the chunks and shards of every array below, from one listing of the group's
        prefix; None where the store cannot list. As ``Array.stored_objects``, counting stops
        after ``limit`` objects and ``cancel`` stops it with ReadCancelled."""
        return count_stored(self._h, self._doc, cancel, limit)


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

    def audit(self, cancel: CancelToken | None = None, progress: Callable[[int], None] | None = None) -> ArrayAudit:
        """How this array is stored (``audit.py``): chunks stored and missing, bytes, compression,
        shard fill, a map of stored chunks, from one listing and its shard indexes; ``progress``
        is told the objects looked at so far, ``cancel`` stops it with ReadCancelled."""
        store = self._h.store
        prefix = self._h.stored_keys_prefix(self._doc)
        objects = store.walk_sizes(prefix, cancel) if store.can_list else None
        return audit_array(store, self.meta, self.path, prefix, objects, cancel, progress)

    def chunks_stored(self, coords: list[tuple[int, ...]], cancel: CancelToken | None = None) -> list[ChunkStored]:
        """Each read chunk at ``coords`` (grid coordinates, inner chunks where sharded) with the
        object that holds it and its stored bytes, None where nothing is stored; from the shard
        index or the object's size, never its data."""
        return chunks_stored(self.reader, coords, cancel)

    def stored_objects(self, cancel: CancelToken | None = None, limit: int | None = None) -> StoredObjects | None:
        """(number of stored chunk or shard objects, their total bytes), or None if the store cannot
        list. It lists what is stored below the array, never the keys of its grid (an array of
        10**15 elements has 10**12 of those): an empty array answers after one listing. Counting
        stops after ``limit`` objects (then ``.complete`` is False); ``cancel`` stops it with
        ReadCancelled, so it can run on a worker for as long as it takes."""
        return count_stored(self._h, self._doc, cancel, limit)


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

    # An array's other attributes: what the document states readably, else the node's error
    # (a caller holding an "array" asks for them; an AttributeError would be a crash in it)
    def _unknown(self, what: str) -> ZarrError:
        assert isinstance(self.error, UnsupportedFeatureError)
        return type(self.error)(f"{self.path}: the {what} of an array that cannot be read: {self.error}")

    @property
    def ndim(self) -> int:
        if self.shape is None:
            raise self._unknown("shape")
        return len(self.shape)

    @property
    def size(self) -> int:
        if self.shape is None:
            raise self._unknown("shape")
        return int(np.prod(self.shape, dtype=object))

    @property
    def dtype(self) -> np.dtype[Any]:
        raise self._unknown("numpy data type")

    @property
    def stored_dtype(self) -> np.dtype[Any]:
        raise self._unknown("numpy data type")

    @property
    def reader(self) -> ChunkReader:
        raise self._unknown("chunk reader")

    @property
    def nbytes(self) -> int:
        raise self._unknown("size in bytes")

    @property
    def chunks(self) -> tuple[int, ...] | None:
        return self.written.chunks

    @property
    def shards(self) -> tuple[int, ...] | None:
        raise self._unknown("shard shape")

    @property
    def fill_value(self) -> Any:
        raise self._unknown("fill value")

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        names = self.doc.document.get("dimension_names")
        if isinstance(names, list) and all(n is None or isinstance(n, str) for n in names):
            return tuple(names)
        return None

    @property
    def codecs(self) -> str:
        return self.written.codecs or "?"

    @property
    def data_type_name(self) -> str:
        return self.written.data_type or "?"

    def chunk_grid_shape(self) -> tuple[int, ...]:
        if self.shape is None or self.chunks is None or len(self.shape) != len(self.chunks) or min(self.chunks, default=1) < 1:
            raise self._unknown("chunk grid")
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunks))

    def stored_objects(self, cancel: CancelToken | None = None, limit: int | None = None) -> StoredObjects | None:
        return count_stored(self.hierarchy, self.doc, cancel, limit)

    def audit(self, cancel: CancelToken | None = None, progress: Callable[[int], None] | None = None) -> ArrayAudit:
        """Always raises: which objects are chunks, and what they hold, needs the codecs it lacks."""
        raise self._unknown("storage audit")

    def chunks_stored(self, coords: list[tuple[int, ...]], cancel: CancelToken | None = None) -> list[ChunkStored]:
        """Always raises, as ``audit`` does."""
        raise self._unknown("chunk storage")

    def read(self, selection: Any = Ellipsis, **_: Any) -> np.ndarray:
        """Always raises: the codec or data type that would decode the chunks is missing."""
        assert isinstance(self.error, UnsupportedFeatureError)
        raise type(self.error)(str(self.error))

    def __getitem__(self, selection: Any) -> np.ndarray:
        return self.read(selection)

    def visit(self, selection: Any, visit: Any, **_: Any) -> None:
        """Always raises, as ``read`` does: there are no chunks to hand over."""
        self.read(selection)

    # an Array's chunk-grid members: what the document states readably, else the node's error
    @property
    def grid(self) -> RectilinearGrid | None:
        return self.written.grid

    @property
    def typical_chunks(self) -> tuple[int, ...] | None:
        return self.written.chunks

    def chunk_box(self, coords: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        raise self._no_grid()

    def stored_grid_shape(self) -> tuple[int, ...]:
        if self.written.grid is None:
            raise self._no_grid()
        return self.written.grid.grid_shape

    def _no_grid(self) -> ZarrError:
        assert isinstance(self.error, UnsupportedFeatureError)
        return type(self.error)(f"{self.path}: the chunks of an array that cannot be read: {self.error}")


class Outline(NamedTuple):
    """One child as a listing shows it: its ``node``, or (node None) an array of ``shape`` whose
    data type, chunk and shard shapes and codecs are those of ``like`` (``outline`` says when).
    (A tuple: a dataclass took a tenth of an outline's time to make.)"""

    name: str
    node: Node | None
    like: ArrayMetadata | None = None
    shape: tuple[int, ...] = ()


def make_node(h: Hierarchy, doc: NodeDoc) -> Node:
    """The node a document describes: a group, an array, or an array that cannot be read."""
    if doc.unsupported is not None:
        return UnsupportedArray(h, doc)
    return Array(h, doc) if doc.kind == "array" else Group(h, doc)


def error_node(h: Hierarchy, path: str, error: ZarrError) -> Node:
    """What stands in for a child whose metadata cannot be read (``ErrorNode``)."""
    return ErrorNode(h, path, error)
