"""A Parquet reference set (kerchunk's ``refs_to_dataframe``): a folder whose ``.zmetadata``
holds every metadata document and ``record_size``, and per array ``refs.N.parq`` files of
``record_size`` rows each (``path``, ``offset``, ``size``, ``raw``), one row per chunk in C order.

The folder is read through a zarrlib store (local, HTTP, S3, ...), so its files are bounded
like any metadata; a record file is decoded by fastparquet when a key of it is first read and
a few are kept.

``.zmetadata`` is parsed as every Zarr metadata document is (``jsonutil.load_json_object``):
kerchunk writes it with Python's json, which spells a NaN or infinite attribute (a loaded
coordinate's ``_FillValue``, a ``missing_value``) as a bare ``NaN``/``Infinity``, and fsspec
and zarr-python read those. A document is handed on as Python's json writes it, so such a
value reaches the metadata reader as it was written rather than as ``null``.
"""

from __future__ import annotations

import io
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from ...errors import MetadataError, MissingExtraError
from ...jsonutil import load_json_object
from ...limits import limits
from ..base import Store
from .entries import BadReferenceError, Entry, Inline, Pointer

__all__ = ["ParquetReferences", "MissingExtraError", "zmetadata_is_references", "EXTRA"]

EXTRA = "zarrview[references]"
#: record files kept decoded (each holds ``record_size`` rows, 100,000 by default)
_KEPT = 16


def zmetadata_is_references(doc: Any) -> bool:
    """A ``.zmetadata`` written for Parquet references carries ``record_size`` beside ``metadata``."""
    return isinstance(doc, dict) and "record_size" in doc and isinstance(doc.get("metadata"), dict)


def _fastparquet() -> Any:
    try:
        import fastparquet
        import pandas  # noqa: F401  # fastparquet decodes into pandas frames
    except ImportError as e:
        raise MissingExtraError(f"reading Parquet references needs pandas and fastparquet: install {EXTRA} ({e})") from None
    return fastparquet


class ParquetReferences:
    """Metadata keys from ``.zmetadata``; chunk keys found in their record file on demand."""

    def __init__(self, folder: Store, name: str) -> None:
        self._pq = _fastparquet()
        self.folder = folder
        self.name = name
        raw = folder.get_bounded(".zmetadata", limits().metadata_bytes)
        if raw is None:
            raise BadReferenceError(f"{name} has no .zmetadata: not a Parquet reference set")
        try:
            doc = load_json_object(raw, f"{name}/.zmetadata")
        except MetadataError as e:
            raise BadReferenceError(str(e)) from None
        if not zmetadata_is_references(doc):
            raise BadReferenceError(f"{name}/.zmetadata has no 'record_size': not a Parquet reference set")
        size = doc["record_size"]
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise BadReferenceError(f"{name}/.zmetadata: record_size {size!r} is not a positive integer")
        self.record_size = size
        self.metadata: dict[str, Any] = {k.lstrip("/"): v for k, v in doc["metadata"].items()}
        self._grids: dict[str, tuple[list[int], str] | None] = {}
        self._records: OrderedDict[tuple[str, int], dict[str, list[Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def keys(self) -> Iterator[str]:
        return iter(self.metadata)

    def chunk_keys(self, prefix: str) -> list[str]:
        """The chunk keys stored for the array at ``prefix`` (``"a/b/"``), read from its record
        files: listing an array (the count of its stored chunks) costs a read of each."""
        field = prefix.rstrip("/")
        grid = self._grid(field)
        if grid is None or grid[1] != ".":
            return []
        sizes, _ = grid
        total = math.prod(sizes)
        out: list[str] = []
        for record in range(math.ceil(total / self.record_size)):
            cols = self._record(field, record, f"{prefix}refs.{record}.parq")
            raws = cols.get("raw", [None] * len(cols["path"]))
            for row, (path, raw) in enumerate(zip(cols["path"], raws)):
                number = record * self.record_size + row
                if number < total and (path is not None and not _missing(path) or raw is not None and not _missing(raw)):
                    index = []
                    for n in reversed(sizes):
                        number, i = divmod(number, n)
                        index.append(str(i))
                    out.append(prefix + ".".join(reversed(index)))
        return out

    def lookup(self, key: str) -> Entry | None:
        if key in self.metadata:
            value = self.metadata[key]
            return Inline(value.encode() if isinstance(value, str) else json.dumps(value).encode())
        field, chunk = self._split(key)
        if field is None:
            return None
        grid, sep = self._grid(field) or ([], ".")
        try:
            index = [int(c) for c in chunk.split(sep)] if chunk else [0]
        except ValueError:
            return None
        if len(index) != len(grid) or any(not 0 <= i < n for i, n in zip(index, grid)):
            return None
        number = 0
        for i, n in zip(index, grid):
            number = number * n + i
        record, row = divmod(number, self.record_size)
        cols = self._record(field, record, key)
        if row >= len(cols["path"]):
            return None
        raw = cols["raw"][row] if "raw" in cols else None
        if raw is not None and not _missing(raw):
            return Inline(raw if isinstance(raw, bytes) else str(raw).encode())
        path = cols["path"][row]
        if path is None or _missing(path):
            return None
        offset, size = int(cols["offset"][row]), int(cols["size"][row])
        if offset == 0 and size == 0:
            return Pointer(str(path))
        if offset < 0 or size < 0 or size > limits().object_bytes:
            raise BadReferenceError(f"reference {key}: offset {offset} and length {size} of {path} are out of bounds")
        return Pointer(str(path), offset, size)

    def _split(self, key: str) -> tuple[str | None, str]:
        """(array path, chunk part) of a chunk key: the longest prefix that is an array."""
        parts = key.split("/")
        for n in range(len(parts) - 1, -1, -1):
            field = "/".join(parts[:n])
            if self._grid(field) is not None:
                return field, "/".join(parts[n:])
        return None, ""

    def _grid(self, field: str) -> tuple[list[int], str] | None:
        """Chunks along each axis of the v2 array ``field``, and its chunk key separator."""
        if field not in self._grids:
            meta = self.metadata.get(f"{field}/.zarray" if field else ".zarray")
            if isinstance(meta, str | bytes):
                try:
                    meta = load_json_object(meta.encode() if isinstance(meta, str) else meta, f"{field}/.zarray")
                except MetadataError:
                    meta = None
            grid: tuple[list[int], str] | None = None
            if isinstance(meta, dict):
                try:
                    shape, chunks = meta["shape"], meta["chunks"]
                    sizes = [math.ceil(int(s) / int(c)) for s, c in zip(shape, chunks)] if len(shape) == len(chunks) else None
                except (KeyError, TypeError, ValueError, ZeroDivisionError):
                    sizes = None
                if sizes is not None:
                    grid = (sizes or [1], str(meta.get("dimension_separator") or "."))  # a scalar is one chunk
            self._grids[field] = grid
        return self._grids[field]

    def _record(self, field: str, record: int, key: str) -> dict[str, list[Any]]:
        with self._lock:
            if (field, record) in self._records:
                self._records.move_to_end((field, record))
                return self._records[(field, record)]
        name = f"{field}/refs.{record}.parq" if field else f"refs.{record}.parq"
        raw = self.folder.get_bounded(name, limits().metadata_bytes)
        if raw is None:
            raise BadReferenceError(f"reference {key}: its record file {self.name}/{name} does not exist")
        try:
            frame = self._pq.ParquetFile(io.BytesIO(raw)).to_pandas()
            cols = {c: list(frame[c]) for c in ("path", "offset", "size", "raw") if c in frame.columns}
        except Exception as e:  # fastparquet's errors are of many kinds
            raise BadReferenceError(f"reference {key}: cannot read {self.name}/{name}: {type(e).__name__}: {e}") from None
        if "path" not in cols or "offset" not in cols or "size" not in cols:
            if "raw" not in cols:
                raise BadReferenceError(f"reference {key}: {self.name}/{name} has no path/offset/size or raw columns")
            n = len(cols["raw"])
            cols.update(path=[None] * n, offset=[0] * n, size=[0] * n)
        with self._lock:
            self._records[(field, record)] = cols
            while len(self._records) > _KEPT:
                self._records.popitem(last=False)
        return cols


def _missing(value: Any) -> bool:
    """pandas' missing values (None, NaN) in an object column."""
    return isinstance(value, float) and math.isnan(value)
