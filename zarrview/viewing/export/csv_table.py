"""A plane as CSV: rows as lines, labelled by the dimensions' coordinates where they have them."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from ...zarrlib import Array, CancelToken, ZarrError

if TYPE_CHECKING:
    from ..cf.view import CFOnce

#: a written dimension's name and the label of each of its positions (coordinate values)
CsvAxis = tuple[str, list[str]]


def csv_axes(array: Array, selection: Sequence[int | slice], coordinates: CFOnce | None = None, *,
             executor: ThreadPoolExecutor | None = None) -> list[CsvAxis]:
    """The written (sliced) dimensions of ``array[selection]``, in the array's order: each named
    as the views name it (``dimension_names``, ``_ARRAY_DIMENSIONS``, NCZarr; else ``dim_N``) and
    labelled by its CF coordinate variable's values where it has one, else by index. Reads the
    coordinates (through ``coordinates``, the CF view read once, where given), decoded on
    ``executor`` (the export job's)."""
    from ..cf.dims import dimension_names
    from ..cf.view import read_cf

    names = dimension_names(array)
    try:
        view = coordinates(executor=executor) if coordinates is not None else read_cf(array, executor=executor)
    except ZarrError:
        view = None
    axes = dict(view.axes) if view is not None else {}
    out: list[CsvAxis] = []
    for d, s in enumerate(selection):
        if isinstance(s, slice):
            n, axis = array.shape[d], axes.get(d)
            if axis is not None and len(axis) == n:
                labels = [axis.label(i) if axis.time is not None else csv_cell(axis.values[i]) for i in range(n)]
            else:
                labels = [str(i) for i in range(n)]
            out.append((names[d] or f"dim_{d}", labels))
    return out


def write_csv(data: np.ndarray, f: BinaryIO, cancel: CancelToken | None = None,
              axes: list[CsvAxis] | None = None) -> None:
    """Rows as lines (the first dimension; further ones flattened into columns), a 1-D or 0-d
    plane as one column, records under a header of field names; floats exactly (``repr``).
    With ``axes`` (``csv_axes``) of a 1-D or 2-D plane, the first line names the dimensions and
    holds the column dimension's coordinates, and each row starts with its own coordinate."""
    arr = np.atleast_1d(data)
    text = io.TextIOWrapper(f, encoding="utf-8", newline="")
    labelled = axes is not None and not arr.dtype.names and len(axes) == arr.ndim and arr.ndim in (1, 2)
    try:
        writer = csv.writer(text)
        if arr.dtype.names:
            names = arr.dtype.names
            writer.writerow(names)
            rows: Any = ([csv_cell(rec[n]) for n in names] for rec in arr.reshape(-1))
        elif labelled:
            assert axes is not None
            (row_name, row_labels), *rest = axes
            writer.writerow([row_name, "value"] if not rest else [f"{row_name} \\ {rest[0][0]}", *rest[0][1]])
            table = arr.reshape(-1, 1) if arr.ndim == 1 else arr
            rows = ([row_labels[i], *(csv_cell(v) for v in row)] for i, row in enumerate(table))
        else:
            table = arr.reshape(-1, 1) if arr.ndim == 1 else arr.reshape(arr.shape[0], -1)
            rows = ([csv_cell(v) for v in row] for row in table)
        for i, row in enumerate(rows):
            if cancel is not None and i % 1024 == 0:
                cancel.raise_if_cancelled()
            writer.writerow(row)
    finally:
        text.flush()
        text.detach()  # the caller closes the file


def csv_cell(v: object) -> str:
    """One value as a CSV cell: floats exactly (``repr``), bytes as UTF-8, times as numpy prints them."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, np.generic):
        return repr(v.item()) if v.dtype.kind in "f" else str(v.item() if v.dtype.kind not in "mMV" else v)
    return str(v)
