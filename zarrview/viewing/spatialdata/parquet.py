"""The Parquet inside a SpatialData store: a points element's ``points.parquet`` (a file or a
folder of parts, columns ``x``, ``y``[, ``z``] and its feature and instance columns) and a shapes
element's ``shapes.parquet`` (GeoParquet: a ``geometry`` column, WKB or GeoArrow's native
encoding, ``geometry.py``; ``radius`` for circles).

pyarrow reads them (the ``zarrview[spatialdata]`` extra: without it a :class:`MissingExtraError`
names it) through :class:`StoreFile`, a file whose reads are range requests on the store, so
only the footer and the columns asked for are fetched, on any store. Memory is bounded: rows
stream in batches, and at most ``max_points`` points or ``max_shapes`` shapes (evenly spaced
through the element) and ``MAX_VERTICES`` polygon vertices are kept; the answer says how many
there were. Where a points element holds many times the points drawn, only row groups evenly
spaced through it are read (``row_groups``), so millions of points cost a fraction of the file.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...zarrlib import CancelToken, Group, ZarrError
from ...zarrlib.errors import MissingExtraError, StoreError
from ...zarrlib.hierarchy import prefix_of
from ...zarrlib.storage.base import ByteRequest, Store
from .geometry import GeometryError, WkbError, decode

EXTRA = "zarrview[spatialdata]"
#: points and shapes kept for drawing, polygon vertices in all, Parquet parts of one element
MAX_POINTS = 100_000
MAX_SHAPES = 50_000
MAX_VERTICES = 2_000_000
MAX_PARTS = 10_000
#: rows decoded at a time, and the bytes of a column read at a time (pages are streamed, not
#: whole row groups buffered)
BATCH = 65_536
BUFFER = 1 << 20
#: the fewest row groups a sample of a large points element is read from, spread through it
SPREAD = 4
#: distinct feature values coloured apart (the rest share one colour)
MAX_CATEGORIES = 256


class ParquetError(ZarrError):
    """A points or shapes element whose Parquet cannot be read: names the element and why."""


def pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise MissingExtraError(f"reading SpatialData points and shapes (Parquet) needs pyarrow: install {EXTRA} "
                                f"({e})") from None
    return pq


class StoreFile(io.RawIOBase):
    """A stored object as a read-only, seekable file: each read is one range request."""

    def __init__(self, store: Store, key: str) -> None:
        super().__init__()
        size = store.size(key)
        if size is None:
            raise ParquetError(f"{store.key_url(key)} does not exist")
        self.store, self.key, self.length, self.pos = store, key, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.length}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        stop = min(self.length, self.pos + len(view))
        if stop <= self.pos:
            return 0
        data = self.store.get_range(ByteRequest(self.key, self.pos, stop))
        if data is None:
            raise ParquetError(f"{self.store.key_url(self.key)} vanished while it was read")
        view[: len(data)] = data
        self.pos += len(data)
        return len(data)


def _natural(name: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def parts(group: Group, name: str) -> list[str]:
    """The keys of the Parquet file ``name`` in an element's folder, or of its parts where it is a
    folder (listed, or probed as ``part.0.parquet``, ``part.1.parquet``... where the store cannot list)."""
    store, base = group.store, prefix_of(group.path) + name
    if store.can_list:
        keys, _dirs = store.list_dir(base + "/")
        found = sorted((k for k in keys if k.endswith(".parquet")), key=_natural)
        if found:
            return [f"{base}/{k}" for k in found[:MAX_PARTS]]
    if store.size(base) is not None:
        return [base]
    out = []
    for i in range(MAX_PARTS):
        key = f"{base}/part.{i}.parquet"
        if store.size(key) is None:
            break
        out.append(key)
    if not out:
        raise ParquetError(f"{group.path}: no {name} (neither a file nor parts) in {store.url}")
    return out


def _files(group: Group, name: str) -> list[Any]:
    pq = pyarrow_parquet()
    out = []
    for key in parts(group, name):
        try:
            out.append(pq.ParquetFile(StoreFile(group.store, key), pre_buffer=False, buffer_size=BUFFER))
        except (OSError, ValueError) as e:  # pyarrow's errors are ArrowException, both OSError and ValueError
            raise ParquetError(f"{group.store.key_url(key)} is not a Parquet file pyarrow can read: {e}") from None
    return out


def row_groups(files: list[Any], wanted: int) -> tuple[list[list[int]], int]:
    """Which row groups of each file to read for about ``wanted`` rows: all of them where the
    element is not much larger, else row groups evenly spaced through it (a sample that reads
    a fraction of the bytes); and the rows they hold."""
    groups = [(i, g, f.metadata.row_group(g).num_rows) for i, f in enumerate(files)
              for g in range(f.metadata.num_row_groups)]
    total = sum(n for _, _, n in groups)
    chosen = groups
    if total > 4 * wanted and len(groups) > 1:
        count = min(len(groups), max(SPREAD, -(-2 * wanted * len(groups) // total)))
        chosen = [groups[k] for k in sorted(set(np.linspace(0, len(groups) - 1, count).round().astype(int).tolist()))]
    picked: list[list[int]] = [[] for _ in files]
    for i, g, _ in chosen:
        picked[i].append(g)
    return picked, sum(n for _, _, n in chosen)


def _batches(files: list[Any], columns: list[str], cancel: CancelToken | None, where: str,
             groups: list[list[int]] | None = None) -> Iterator[Any]:
    for k, f in enumerate(files):
        names = f.schema_arrow.names
        missing = [c for c in columns if c not in names]
        if missing:
            raise ParquetError(f"{where}: no column {missing} (it has {names[:20]})")
        if groups is not None and not groups[k]:
            continue
        try:
            for batch in f.iter_batches(batch_size=BATCH, columns=columns,
                                        row_groups=groups[k] if groups is not None else None):
                if cancel is not None:
                    cancel.raise_if_cancelled()
                yield batch
        except (OSError, ValueError) as e:
            if isinstance(e, StoreError):
                raise
            raise ParquetError(f"{where}: the Parquet data cannot be read: {e}") from None


def _picked(start: int, n: int, stride: int) -> np.ndarray:
    """The rows of a batch of ``n`` rows from row ``start`` on that a stride of ``stride`` keeps."""
    first = (-start) % stride
    return np.arange(first, n, stride)


@dataclass(frozen=True, eq=False)
class PointsData:
    """The points kept: ``xy`` (n × 2, in the element's own space), each one's feature code into
    ``categories`` (-1: none), and how many the element has."""

    xy: np.ndarray
    codes: np.ndarray | None
    categories: tuple[str, ...]
    total: int
    #: how the sample was taken where only some row groups were read ("" where all were)
    sampled: str = ""


def read_points(group: Group, feature: str | None = None, max_points: int = MAX_POINTS,
                cancel: CancelToken | None = None) -> PointsData:
    """The points of a points element: the ``x`` and ``y`` columns (and ``feature``), at most
    ``max_points`` of them, evenly spaced."""
    files = _files(group, "points.parquet")
    total = sum(f.metadata.num_rows for f in files)
    groups, read = row_groups(files, max(1, max_points))
    stride = max(1, -(-read // max(1, max_points)))
    names = files[0].schema_arrow.names if files else []
    columns = ["x", "y"] + ([feature] if feature and feature in names else [])
    xs, ys, codes = [], [], []
    categories: dict[str, int] = {}
    seen = 0
    for batch in _batches(files, columns, cancel, group.path, groups):
        keep = _picked(seen, batch.num_rows, stride)
        seen += batch.num_rows
        if not keep.size:
            continue
        xs.append(np.asarray(batch.column(0).take(keep).to_numpy(zero_copy_only=False), dtype=np.float64))
        ys.append(np.asarray(batch.column(1).take(keep).to_numpy(zero_copy_only=False), dtype=np.float64))
        if len(columns) == 3:
            codes.append(_codes(batch.column(2).take(keep), categories))
    xy = np.column_stack([np.concatenate(xs), np.concatenate(ys)]) if xs else np.zeros((0, 2))
    code = np.concatenate(codes).astype(np.int32) if codes else None
    counts = (sum(len(g) for g in groups), sum(f.metadata.num_row_groups for f in files))
    sampled = f"from {counts[0]:,} of {counts[1]:,} row groups" if counts[0] < counts[1] else ""
    return PointsData(xy, code, tuple(categories), total, sampled)


def _codes(column: Any, categories: dict[str, int]) -> np.ndarray:
    """Each value's code in ``categories`` (new values added, up to ``MAX_CATEGORIES``; -1 past it
    and for nulls)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    local = [str(v) for v in column.dictionary.to_pylist()]
    table = np.array([categories.setdefault(v, len(categories)) if v in categories or len(categories) < MAX_CATEGORIES
                      else -1 for v in local] + [-1], dtype=np.int32)
    idx = column.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return table[np.where(idx < 0, len(local), idx)]


@dataclass(frozen=True, eq=False)
class ShapesData:
    """The shapes kept, in the element's own space: ``centers`` (n × 2) with ``radius`` for
    circles (points with a radius column), ``rings`` for polygons (exteriors and holes, each
    n × 2) and ``owner`` (the shape each ring is of); ``total`` shapes in the element."""

    centers: np.ndarray
    radius: np.ndarray | None
    rings: tuple[np.ndarray, ...]
    owner: np.ndarray
    total: int
    note: str = ""


def read_shapes(group: Group, max_shapes: int = MAX_SHAPES, cancel: CancelToken | None = None) -> ShapesData:
    """The shapes of a shapes element (WKB geometry; ``radius`` where stated), at most
    ``max_shapes`` evenly spaced, and at most ``MAX_VERTICES`` polygon vertices."""
    files = _files(group, "shapes.parquet")
    total = sum(f.metadata.num_rows for f in files)
    stride = max(1, -(-total // max(1, max_shapes)))
    names = files[0].schema_arrow.names if files else []
    columns = ["geometry"] + (["radius"] if "radius" in names else [])
    centers: list[np.ndarray] = []
    radius: list[float] = []
    rings: list[np.ndarray] = []
    owner: list[int] = []
    vertices, seen, note = 0, 0, ""
    for batch in _batches(files, columns, cancel, group.path):
        keep = _picked(seen, batch.num_rows, stride)
        radii = batch.column(1).take(keep).to_numpy(zero_copy_only=False) if len(columns) == 2 else None
        try:
            decoded = decode(batch.column(0).take(keep))
        except (WkbError, GeometryError) as e:
            raise ParquetError(f"{group.path}: shapes {seen}-{seen + batch.num_rows}: {e}") from None
        for j, shape in enumerate(decoded):
            if shape is None:
                continue
            if shape.kind == "point":
                centers.append(shape.points)
                radius += [float(radii[j]) if radii is not None else 0.0] * len(shape.points)
            elif vertices + sum(len(r) for r in shape.rings) <= MAX_VERTICES:
                rings += shape.rings
                owner += [seen + int(keep[j])] * len(shape.rings)
                vertices += sum(len(r) for r in shape.rings)
            else:
                note = f"polygons past {MAX_VERTICES:,} vertices are left out"
        seen += batch.num_rows
    return ShapesData(np.vstack(centers) if centers else np.zeros((0, 2)),
                      np.array(radius) if centers and len(columns) == 2 else None,
                      tuple(rings), np.array(owner, dtype=np.int64), total, note)
