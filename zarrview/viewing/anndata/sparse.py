"""A CSR or CSC sparse matrix of an AnnData store (``X``, ``layers/*``, ``obsp``), read a block
or a run of stored entries at a time, never whole.

A block of rows ``r0:r1`` and columns ``c0:c1`` of a CSR matrix reads ``indptr[r0:r1 + 1]``,
then ``indices`` and ``data`` between its first and last pointer, and nothing else; a CSC
matrix the same along its columns. The stored entries are the matrix's non-zeros in storage
order: entry ``k``'s row (CSR) or column (CSC) is found by a binary search of ``indptr`` that
reads one element at a time until the range left fits one chunk, then that range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...zarrlib import Array, Group, TooLargeError
from .encoding import AnnDataError, encoding_of, member

#: stored entries one block read may hold: a block of rows whose entries are more is refused
MAX_BLOCK_ENTRIES = 1 << 25
#: cells of a dense block
MAX_BLOCK_CELLS = 1 << 26


@dataclass(frozen=True)
class Entries:
    """Stored entries ``start:stop``: their rows, columns and values."""

    start: int
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray


@dataclass(frozen=True, eq=False)
class SparseMatrix:
    group: Group
    format: str  # "csr" or "csc"
    shape: tuple[int, int]
    data: Array
    indices: Array
    indptr: Array
    nnz: int

    @property
    def path(self) -> str:
        return self.group.path

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.data.dtype

    def block(self, rows: tuple[int, int], cols: tuple[int, int], **read: Any) -> np.ndarray:
        """The dense block ``[r0:r1, c0:c1]`` (clipped to the matrix), zeros where nothing is stored
        and duplicates summed as scipy sums them; ``read``: ``Array.read``'s keywords."""
        (r0, r1), (c0, c1) = _clip(rows, self.shape[0]), _clip(cols, self.shape[1])
        if (r1 - r0) * (c1 - c0) > MAX_BLOCK_CELLS:
            raise TooLargeError(f"{self.path}: a block of {r1 - r0:,} × {c1 - c0:,} cells is more than "
                                f"{MAX_BLOCK_CELLS:,}")
        (m0, m1), (n0, n1) = ((r0, r1), (c0, c1)) if self.format == "csr" else ((c0, c1), (r0, r1))
        out = np.zeros((m1 - m0, n1 - n0), dtype=self.dtype)
        if m1 > m0 and n1 > n0:
            ptr = self._pointers(m0, m1, **read)
            first, last = int(ptr[0]), int(ptr[-1])
            if last - first > MAX_BLOCK_ENTRIES:
                raise TooLargeError(f"{self.path}: {last - first:,} stored entries in the block, more than "
                                    f"{MAX_BLOCK_ENTRIES:,} one read may hold")
            minor = self.indices.read((slice(first, last),), **read).astype(np.int64, copy=False)
            values = self.data.read((slice(first, last),), **read)
            major = np.repeat(np.arange(m1 - m0), np.diff(ptr))
            keep = (minor >= n0) & (minor < n1)
            np.add.at(out, (major[keep], minor[keep] - n0), values[keep])
        return out if self.format == "csr" else out.T

    def entries(self, start: int, stop: int, **read: Any) -> Entries:
        """Stored entries ``start:stop`` (clipped to ``nnz``) with their rows and columns."""
        start, stop = max(0, min(start, self.nnz)), max(0, min(stop, self.nnz))
        stop = max(start, stop)
        minor = self.indices.read((slice(start, stop),), **read).astype(np.int64, copy=False)
        values = self.data.read((slice(start, stop),), **read)
        if stop == start:
            major = np.zeros(0, np.int64)
        else:
            m0, m1 = self.major_of(start, **read), self.major_of(stop - 1, **read)
            ptr = self._pointers(m0, m1 + 1, **read)
            major = m0 + np.searchsorted(ptr, np.arange(start, stop), side="right") - 1
        rows, cols = (major, minor) if self.format == "csr" else (minor, major)
        return Entries(start, rows, cols, values)

    def major_of(self, k: int, **read: Any) -> int:
        """The row (CSR) or column (CSC) that stored entry ``k`` belongs to: the last ``m`` with
        ``indptr[m] <= k`` (empty rows skipped)."""
        lo, hi = 0, self.indptr.shape[0] - 1  # indptr[lo] <= k < indptr[hi]
        span = max(2, self.indptr.chunks[0])
        while hi - lo > span:
            mid = (lo + hi) // 2
            if int(self.indptr.read((slice(mid, mid + 1),), **read)[0]) <= k:
                lo = mid
            else:
                hi = mid
        ptr = self._pointers(lo, hi, **read)
        return lo + int(np.searchsorted(ptr, k, side="right")) - 1

    def _pointers(self, m0: int, m1: int, **read: Any) -> np.ndarray:
        ptr = self.indptr.read((slice(m0, m1 + 1),), **read).astype(np.int64, copy=False)
        if ptr.size and (np.any(np.diff(ptr) < 0) or ptr[0] < 0 or ptr[-1] > self.data.shape[0]):
            raise AnnDataError(f"{self.indptr.path}: pointers {m0}:{m1 + 1} decrease or point past the "
                               f"{self.data.shape[0]:,} stored entries")
        return ptr


#: rows and columns of the block a view reads at most, each way
MAX_VIEW_SIDE = 1024


def block_in_view(x: tuple[float, float], y: tuple[float, float], shape: tuple[int, int],
                  max_side: int = MAX_VIEW_SIDE) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (rows, columns) of the block a view of columns ``x`` and rows ``y`` (data coordinates,
    a cell ``[r, c]`` covering ``c..c+1``, ``r..r+1``) shows: clipped to the matrix, at most
    ``max_side`` each way from its top left."""
    def span(lo: float, hi: float, n: int) -> tuple[int, int]:
        a = max(0, min(n, math.floor(lo)))
        b = max(a, min(n, math.ceil(hi), a + max_side))
        return a, b

    return span(y[0], y[1], shape[0]), span(x[0], x[1], shape[1])


def _clip(span: tuple[int, int], n: int) -> tuple[int, int]:
    a, b = max(0, min(int(span[0]), n)), max(0, min(int(span[1]), n))
    return a, max(a, b)


def is_sparse(node: Any) -> bool:
    enc = encoding_of(node)
    return isinstance(node, Group) and enc is not None and enc.type in ("csr_matrix", "csc_matrix")


def open_sparse(group: Group, **read: Any) -> SparseMatrix:
    """The sparse matrix ``group`` holds (opens its arrays and reads ``indptr``'s last element:
    not for the GUI thread); AnnDataError naming what breaks the format."""
    enc = encoding_of(group)
    if enc is None or enc.type not in ("csr_matrix", "csc_matrix"):
        raise AnnDataError(f"{group.path} is not a sparse matrix (encoding-type {enc.type if enc else None!r})")
    shape = group.attrs.get("shape")
    if not (isinstance(shape, list) and len(shape) == 2 and all(isinstance(s, int) and s >= 0 for s in shape)):
        raise AnnDataError(f"{group.path}: a sparse matrix's attribute shape must be two sizes, not {shape!r}")
    data, indices, indptr = (member(group, name) for name in ("data", "indices", "indptr"))
    fmt = enc.type[:3]
    majors = shape[0] if fmt == "csr" else shape[1]
    for arr in (data, indices, indptr):
        if arr.ndim != 1:
            raise AnnDataError(f"{arr.path} must be one-dimensional, not of shape {arr.shape}")
    if indptr.shape[0] != majors + 1:
        raise AnnDataError(f"{indptr.path} holds {indptr.shape[0]:,} pointers where a {shape[0]:,} × {shape[1]:,} "
                           f"{enc.type} needs {majors + 1:,}")
    if indices.shape != data.shape or indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        raise AnnDataError(f"{group.path}: indices {indices.shape} {indices.dtype} and data {data.shape} must be "
                           f"as long as each other, with integer indices and pointers")
    nnz = int(indptr.read((slice(majors, majors + 1),), **read)[0]) if majors else 0
    if not 0 <= nnz <= data.shape[0]:
        raise AnnDataError(f"{indptr.path}: its last pointer {nnz:,} is past the {data.shape[0]:,} stored entries")
    return SparseMatrix(group, fmt, (shape[0], shape[1]), data, indices, indptr, nnz)
