"""An AnnData dataframe (``obs``, ``var``) as one table: the index first, then the columns in
``column-order``, each read a page of rows at a time.

A column is a plain array (numbers, booleans, strings), a categorical (integer codes into an
array of labels, -1 for missing), or a nullable integer, boolean or string array (values and a
mask, True where missing). A page reads rows ``start:stop`` of every member array and nothing
else; a categorical's labels are read once and kept while they are few (``CATEGORY_CACHE``),
else only the range of labels a page's codes name.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...zarrlib import Array, Group, Node
from .encoding import AnnDataError, encoding_of, member

#: labels of a categorical read whole and kept; a longer list is read per page, in range
CATEGORY_CACHE = 100_000
NULLABLE = ("nullable-integer", "nullable-boolean", "nullable-string-array")


@dataclass(frozen=True)
class ColumnValues:
    """A column's values for a run of rows; ``missing`` True where the value is absent (a
    masked nullable value, a categorical code of -1); None where nothing is missing."""

    values: np.ndarray
    missing: np.ndarray | None = None


@dataclass(eq=False)
class Column:
    """One column: ``kind`` is ``array``, ``categorical`` or a nullable encoding; ``values`` is
    the array of values or codes, ``mask`` a nullable's mask, ``categories`` a categorical's labels."""

    name: str
    kind: str
    node: Node
    values: Array
    mask: Array | None = None
    categories: Array | None = None
    ordered: bool = False
    _labels: np.ndarray | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def rows(self) -> int:
        return self.values.shape[0]

    @property
    def is_categorical(self) -> bool:
        return self.kind == "categorical"

    @property
    def numeric(self) -> bool:
        """Numbers a colour map can show (not booleans, not labels)."""
        return not self.is_categorical and self.values.dtype.kind in "iuf"

    def read(self, rows: slice, **read: Any) -> ColumnValues:
        """Rows ``rows`` (a slice, a step allowed) as values; ``read``: ``Array.read``'s keywords."""
        raw = self.values.read((rows,), **read)
        if self.is_categorical:
            return self._labelled(raw, **read)
        if self.mask is not None:
            return ColumnValues(raw, self.mask.read((rows,), **read).astype(bool))
        return ColumnValues(raw)

    def codes(self, rows: slice, **read: Any) -> np.ndarray:
        """A categorical's codes (-1: missing) for ``rows``."""
        return self.values.read((rows,), **read)

    def labels(self, **read: Any) -> np.ndarray:
        """Every label of a categorical (for a legend, a colour each): read once, bounded."""
        assert self.categories is not None
        with self._lock:
            if self._labels is None:
                n = self.categories.shape[0]
                if n > CATEGORY_CACHE:
                    raise AnnDataError(f"{self.node.path}: {n:,} categories are more than the {CATEGORY_CACHE:,} "
                                       f"that can be told apart")
                self._labels = self.categories.read((slice(0, n),), **read)
            return self._labels

    def _labelled(self, codes: np.ndarray, **read: Any) -> ColumnValues:
        assert self.categories is not None
        n = self.categories.shape[0]
        codes = codes.astype(np.int64, copy=False)
        missing = (codes < 0) | (codes >= n)  # codes past the labels are absent too, not a crash
        labels_out = np.empty(codes.shape, dtype=object)
        if (~missing).any():
            if n <= CATEGORY_CACHE:
                labels, base = self.labels(**read), 0
            else:
                base = int(codes[~missing].min())
                labels = self.categories.read((slice(base, int(codes[~missing].max()) + 1),), **read)
            labels_out[~missing] = labels[codes[~missing] - base]
        labels_out[missing] = ""
        return ColumnValues(labels_out, missing if missing.any() else None)


@dataclass(frozen=True)
class FramePage:
    """Rows ``start:stop`` of a frame: the index and each column's values."""

    start: int
    stop: int
    index: ColumnValues
    columns: tuple[ColumnValues, ...]

    def text(self, row: int, column: int, missing: str = "NA") -> str:
        """The cell at frame row ``row`` and table column ``column`` (0: the index) as a person
        reads it; ``missing`` for an absent value."""
        col = self.index if column == 0 else self.columns[column - 1]
        i = row - self.start
        if col.missing is not None and col.missing[i]:
            return missing
        return cell_text(col.values[i], missing)


def cell_text(v: Any, missing: str = "NA") -> str:
    """One value as text: floats exactly (shortest repr), NaN as ``missing``, bytes decoded."""
    if isinstance(v, str):
        return v
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (float, np.floating)):
        return missing if math.isnan(v) else str(v)
    if v is None:
        return missing
    return str(v)


@dataclass(frozen=True, eq=False)
class Frame:
    """A dataframe group: its index column, its columns in ``column-order``, and its row count."""

    group: Group
    index_key: str
    index: Column
    columns: tuple[Column, ...]

    @property
    def rows(self) -> int:
        return self.index.rows

    @property
    def path(self) -> str:
        return self.group.path

    @property
    def index_name(self) -> str | None:
        """The index's name as anndata reads it: none where the key is the reserved ``_index``."""
        return None if self.index_key == "_index" else self.index_key

    @property
    def headers(self) -> list[str]:
        """The table's column titles: the index's key, then each column's name."""
        return [self.index_key, *(c.name for c in self.columns)]

    def column(self, name: str) -> Column:
        found = next((c for c in self.columns if c.name == name), None)
        if found is None:
            raise AnnDataError(f"{self.path} has no column {name!r}")
        return found

    def read_page(self, start: int, stop: int, **read: Any) -> FramePage:
        """Rows ``start:stop`` (clipped to the frame) of the index and every column."""
        start, stop = max(0, start), min(self.rows, stop)
        rows = slice(start, max(start, stop))
        return FramePage(start, max(start, stop), self.index.read(rows, **read),
                         tuple(c.read(rows, **read) for c in self.columns))


def column_frame(node: Group) -> Frame:
    """A column group of a dataframe (a categorical, a nullable array) as a table of the frame's
    index and that column alone (reads the parent's document: not for the GUI thread)."""
    parent = node.ancestor(1)
    if not is_frame(parent):
        raise AnnDataError(f"{node.path} is a column outside a dataframe: {parent.path} is not one")
    frame = open_frame(parent)
    return replace(frame, columns=(open_column(frame.group, node.name),))


def is_frame(node: Node) -> bool:
    enc = encoding_of(node)
    return isinstance(node, Group) and enc is not None and enc.type == "dataframe"


def open_frame(group: Group) -> Frame:
    """The dataframe ``group`` describes (opens its member arrays: not for the GUI thread);
    AnnDataError naming the group and what is wrong where it breaks the format."""
    enc = encoding_of(group)
    if enc is None or enc.type != "dataframe":
        raise AnnDataError(f"{group.path} is not an AnnData dataframe (its encoding-type is "
                           f"{enc.type if enc else 'not given'!r})")
    attrs = group.attrs
    index_key = attrs.get("_index")
    if not isinstance(index_key, str) or not index_key:
        raise AnnDataError(f"{group.path}: a dataframe's attribute _index must name its index array, not "
                           f"{index_key!r}")
    order = attrs.get("column-order", [])
    if isinstance(order, str):
        order = [order]
    if not isinstance(order, Sequence) or not all(isinstance(c, str) for c in order):
        raise AnnDataError(f"{group.path}: column-order must be a list of column names, not {order!r}")
    index = open_column(group, index_key)
    columns = tuple(open_column(group, name) for name in order)
    for col in columns:
        if col.rows != index.rows:
            raise AnnDataError(f"{group.path}/{col.name} has {col.rows:,} rows where the index has {index.rows:,}")
    return Frame(group, index_key, index, columns)


def open_column(group: Group, name: str) -> Column:
    """The member ``name`` of a dataframe as a column, whatever its encoding."""
    node = member(group, name, Node)
    enc = encoding_of(node)
    kind = enc.type if enc is not None else "array"
    if isinstance(node, Array):
        if node.ndim != 1:
            raise AnnDataError(f"{node.path}: a column is one-dimensional, not of shape {node.shape}")
        return Column(name, "array", node, node)
    if not isinstance(node, Group):
        raise AnnDataError(f"{group.path}/{name} cannot be read: {getattr(node, 'error', node.kind)}")
    if kind == "categorical":
        codes, categories = member(node, "codes"), member(node, "categories")
        if codes.dtype.kind not in "iu":
            raise AnnDataError(f"{codes.path}: a categorical's codes are integers, not {codes.dtype}")
        return Column(name, kind, node, codes, categories=categories, ordered=bool(node.attrs.get("ordered")))
    if kind in NULLABLE:
        values, mask = member(node, "values"), member(node, "mask")
        if values.shape != mask.shape or values.ndim != 1:
            raise AnnDataError(f"{node.path}: values {values.shape} and mask {mask.shape} must be one column "
                               f"of the same length")
        return Column(name, kind, node, values, mask=mask)
    raise AnnDataError(f"{node.path}: a dataframe column encoded as {kind!r} cannot be shown as a column")
