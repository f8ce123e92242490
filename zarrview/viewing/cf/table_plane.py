"""The plane a table shows of an array, and its values as the image shows them.

"Show as table" on a packed ``precip`` (time, lat, lon) is read beside the image: it shows the
image's plane (lat as rows, lon as columns, at the time the slider is on), decoded (mm/day, not
the stored int16), its rows and columns named by their coordinates (``45.25 °N``, dates). The
plane and the decoding are values here, without Qt; the read and the decoding of each page run
on a worker (``page_values``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ...zarrlib import Array
from ..image.readout import request_label
from .decoded import Decoding
from .view import CFView

#: columns a table shows at most (a page is its rows by these columns)
TABLE_COLUMNS = 100


@dataclass(frozen=True, eq=False)
class TablePlane:
    """``rows`` (a dimension; None for a 0-d array) by ``columns`` (None: one column, for a 1-D
    array or records) of ``array``, every other dimension at its index in ``fixed`` (else 0),
    decoded as ``cf`` says unless ``raw``."""

    array: Array
    rows: int | None
    columns: int | None
    fixed: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    cf: CFView | None = None
    raw: bool = False

    @property
    def decoding(self) -> Decoding | None:
        """The decoding the values go through, or None (shown as stored)."""
        dec = None if self.cf is None or self.raw else self.cf.decoding
        return dec if dec is not None and dec.active and not self.array.dtype.names else None

    @property
    def row_count(self) -> int:
        return 1 if self.rows is None else self.array.shape[self.rows]

    @property
    def column_count(self) -> int:
        return 1 if self.columns is None else min(self.array.shape[self.columns], TABLE_COLUMNS)

    def index(self, dim: int) -> int:
        return int(self.fixed.get(dim, 0))

    def selection(self, start: int, stop: int, columns: int | None = None) -> tuple[Any, ...]:
        """Rows ``start:stop`` by the first ``columns`` (else ``column_count``) columns."""
        ncols = self.column_count if columns is None else columns
        return tuple(slice(start, stop) if d == self.rows else slice(0, ncols) if d == self.columns
                     else self.index(d) for d in range(self.array.ndim))

    def whole(self) -> tuple[int | slice, ...]:
        """The whole plane, every column, as export writes it."""
        return tuple(slice(None) if d in (self.rows, self.columns) else self.index(d) for d in range(self.array.ndim))

    def page_label(self, start: int, stop: int) -> str:
        sel = self.selection(start, stop)
        return request_label(self.array.path, sel, self.array.shape)

    def page_values(self, data: np.ndarray) -> np.ndarray:
        """A page as read (dimensions in the array's order) as rows by columns, decoded: numbers
        as the image shows them, times as their labels (every calendar)."""
        data = np.asarray(data)
        if self.rows is not None and self.columns is not None and self.rows > self.columns:
            data = data.T
        dec = self.decoding
        return data if dec is None else dec.values(data, text=True)

    def row_label(self, row: int) -> str:
        return self._label(self.rows, row)

    def column_label(self, column: int) -> str:
        if self.columns is None:
            return self.cf.heading if self.cf is not None and self.decoding is not None else "value"
        return self._label(self.columns, column)

    def _label(self, dim: int | None, i: int) -> str:
        place = None if dim is None or self.cf is None or self.raw else self.cf.place(dim, i)
        return str(i) if place is None else place

    @property
    def heading(self) -> str:
        """What the cells are: ``2 metre temperature (K), decoded from int16``, else ''."""
        dec = self.decoding
        if self.cf is None or dec is None:
            return ""
        what = "as dates" if dec.times is not None else f"decoded from {self.array.dtype}"
        return f"{self.cf.heading}, {what}"
