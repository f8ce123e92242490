"""Nodes that stand in for what cannot be read: a child whose metadata is broken, and an array
whose metadata names a codec or data type zarrlib cannot decode (its document is still shown)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .cancel import CancelToken
from .errors import UnsupportedFeatureError, ZarrError
from .hierarchy import Hierarchy, NodeDoc
from .metadata.written import WrittenArray, written_array
from .nodes import Node
from .reader import ChunkReader
from .stored_objects import StoredObjects, count_stored

if TYPE_CHECKING:
    from .grid import RectilinearGrid


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
