"""An OME-Zarr plate as a grid of well thumbnails, read lazily on the shared worker pool.

Viewers that stitch a plate from its wells' full-resolution images read gigabytes to draw a
few hundred pixels per well. Here each well is drawn from the lowest-resolution level of its
first field: one 2-D plane (t = 0, the middle z, channel 0), strided where even that level has
more chunks than the per-well budget allows or more pixels than its cell, so a 384-well plate
of 100-MB images costs a few chunks per well.

``PlateModel`` works like ``LineModel``: a plate and its group in, ``PlateMosaic`` snapshots out
(through the injected ``post``, on the caller's thread). The wells are read in batches (a row
of wells each, chained as each lands) as jobs on the model's lane, so the grid fills in row
by row; progress counts wells, and a cancel (the lane's, or a newer job) stops between wells,
and inside a well between chunks. Answers of an earlier plate arrive stale and are dropped. A
well that is listed but cannot be drawn (no group, no well or image metadata, no
readable level, chunks that fail) is NaN in the mosaic and named in ``missing`` with the reason;
grid positions the plate lists no well for are ``absent``.

Each cell is scaled on its own, so wells of different sizes (or of pyramids with different
numbers of levels) fill their cells; the physical aspect of the pixels is kept. The contrast
comes from the finite values of all thumbnails (``image.contrast.summarize``).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from dataclasses import dataclass, field, replace

import numpy as np

from ...scheduling import Answer, Job
from ...zarrlib import Group
from ..image.contrast import NAN_RGBA, ValueSummary, displayable, summarize
from ..ome import OmePlate, PlateWell
from .reads import Batch, Missing, Thumb, read_batch

#: pixels of a cell's side (largest plates get smaller cells, see ``cell_size``)
CELL = 96
#: pixels between cells
GAP = 4
#: the mosaic's longest side at most (a 1536-well plate: 48 columns of 83 px)
MAX_MOSAIC = 4096
#: chunks one well may cost; a coarsest level with more is sampled one element every few chunks
WELL_CHUNK_BUDGET = 16
#: wells per request at most (a row of a plate wider than this is split)
BATCH_WELLS = 24



def cell_size(rows: int, columns: int) -> int:
    return max(16, min(CELL, MAX_MOSAIC // max(1, rows, columns) - GAP))


@dataclass(frozen=True)
class PlateMosaic:
    """What the plate view draws. ``image`` is filled in place as batches land (a snapshot shares
    it with the next): NaN wherever no thumbnail pixel is (gaps, padding, missing wells);
    ``covered`` marks the thumbnail pixels, so a NaN inside the data can be told apart."""

    plate: OmePlate | None = None
    image: np.ndarray | None = None
    covered: np.ndarray | None = None
    cell: int = CELL
    thumbs: dict[tuple[int, int], Thumb] = field(default_factory=dict)
    missing: tuple[Missing, ...] = ()
    absent: frozenset[tuple[int, int]] = frozenset()
    done: int = 0
    total: int = 0
    summary: ValueSummary | None = None
    status: str = ""
    busy: bool = False
    message: str | None = None

    @property
    def pitch(self) -> int:
        return self.cell + GAP

    @property
    def levels(self) -> tuple[float, float]:
        return self.summary.levels if self.summary is not None else (0.0, 1.0)

    def cell_origin(self, row: int, column: int) -> tuple[int, int]:
        """Top-left mosaic pixel of a cell's content."""
        return row * self.pitch + GAP // 2, column * self.pitch + GAP // 2

    def cell_at(self, y: float, x: float) -> tuple[int, int] | None:
        """The (row, column) of the cell under mosaic pixel (y, x), gaps included."""
        if self.plate is None or y < 0 or x < 0:
            return None
        r, c = int(y // self.pitch), int(x // self.pitch)
        if r >= len(self.plate.rows) or c >= len(self.plate.columns):
            return None
        return r, c

    def name(self, row: int, column: int) -> str:
        assert self.plate is not None
        return f"{self.plate.rows[row]}/{self.plate.columns[column]}"

    def missing_reason(self, row: int, column: int) -> str | None:
        return next((why for r, c, why in self.missing if (r, c) == (row, column)), None)

    def open_path(self, row: int, column: int) -> str | None:
        """The path, from the plate group, of what a click on a cell opens: the well's first
        field once it is known, else the well (None where the plate lists no well)."""
        if self.plate is None:
            return None
        thumb = self.thumbs.get((row, column))
        if thumb is not None:
            return thumb.path
        well = self.plate.well_at(row, column)
        return None if well is None else well.path

    def readout(self, y: float, x: float) -> str:
        """What is under mosaic pixel (y, x): the well, its field and level, and the value there."""
        at = self.cell_at(y, x)
        if at is None:
            return ""
        r, c = at
        name = self.name(r, c)
        if (r, c) in self.absent:
            return f"{name}: no well (the plate lists none here)"
        why = self.missing_reason(r, c)
        if why is not None:
            return f"{name}: missing: {why}"
        thumb = self.thumbs.get((r, c))
        if thumb is None:
            return f"{name}: not read yet"
        shape = " × ".join(str(n) for n in (thumb.shape[thumb.dims[0]], thumb.shape[thumb.dims[1]]))
        head = f"{name}, field {thumb.field}, level {thumb.level} of {thumb.levels} ({shape})"
        y0, x0 = self.cell_origin(r, c)
        ty, tx = int(y) - y0 - thumb.offset[0], int(x) - x0 - thumb.offset[1]
        th, tw = thumb.tile.shape
        if not (0 <= ty < th and 0 <= tx < tw):
            return head
        h, w = thumb.values.shape
        vy, vx = min(h - 1, ty * h // th), min(w - 1, tx * w // tw)
        sel_r, sel_c = thumb.selection[thumb.dims[0]], thumb.selection[thumb.dims[1]]
        ly, lx = sel_r.start + vy * thumb.step[0], sel_c.start + vx * thumb.step[1]
        return f"{head}: y {ly}, x {lx} = {thumb.values[vy, vx]}"


#: how cells without a thumbnail are drawn (RGBA over the view's background)
ABSENT_RGBA = (128, 128, 128, 40)      # the plate lists no well here
PENDING_RGBA = (128, 128, 128, 90)     # listed, not read yet
MISSING_RGBA = (255, 59, 48, 170)      # listed, cannot be drawn: red stripes, as failed chunks are hatched


def render(mosaic: PlateMosaic) -> np.ndarray:
    """The mosaic as RGBA (rows, columns, 4): thumbnails in grey through the contrast levels, a NaN
    inside one in the NaN colour; gaps transparent; absent wells faint grey, wells not read yet a
    darker grey, missing ones hatched in red."""
    img, covered = mosaic.image, mosaic.covered
    if img is None or covered is None or mosaic.plate is None or not img.size:
        return np.zeros((1, 1, 4), np.uint8)
    lo, hi = mosaic.levels
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        grey = np.nan_to_num(np.clip((img - lo) / ((hi - lo) or 1.0), 0.0, 1.0) * 255.0)
    out = np.zeros(img.shape + (4,), np.uint8)
    out[..., :3] = grey.astype(np.uint8)[..., None]
    out[..., 3] = np.where(covered, 255, 0)
    out[covered & np.isnan(img)] = NAN_RGBA
    cell = mosaic.cell
    yy, xx = np.mgrid[0:cell, 0:cell]
    stripes = ((yy + xx) // 6) % 2 == 0
    missing = {(r, c) for r, c, _ in mosaic.missing}
    for r in range(len(mosaic.plate.rows)):
        for c in range(len(mosaic.plate.columns)):
            if (r, c) in mosaic.thumbs:
                continue
            y0, x0 = mosaic.cell_origin(r, c)
            box = out[y0:y0 + cell, x0:x0 + cell]
            if (r, c) in missing:
                box[stripes] = MISSING_RGBA
            else:
                box[...] = ABSENT_RGBA if (r, c) in mosaic.absent else PENDING_RGBA
    return out


# -- on the caller's thread ---------------------------------------------------------------------
def batches(wells: tuple[PlateWell, ...], size: int = BATCH_WELLS) -> list[tuple[PlateWell, ...]]:
    """Wells in reading order, a row of the plate (at most ``size`` wells) per batch."""
    out: list[tuple[PlateWell, ...]] = []
    ordered = sorted(wells, key=lambda w: (w.row, w.column))
    for row in sorted({w.row for w in ordered}):
        in_row = [w for w in ordered if w.row == row]
        out += [tuple(in_row[i:i + size]) for i in range(0, len(in_row), size)]
    return out


@dataclass(frozen=True)
class WellsRequest:
    """A batch of wells the plate model asked for: the job and the wells it reads."""

    job: Job[Batch]
    wells: tuple[PlateWell, ...]
    #: the batch's place in the plate's reading order
    number: int = 0
    #: the plate it belongs to (a batch of another plate is another read)
    of: PlateShown | None = None

    @property
    def read(self) -> Hashable:
        return (self.of, self.number)


@dataclass(frozen=True, eq=False)
class PlateShown:
    """The state of a plate view: the plate and its group (each given one is read anew)."""

    plate: OmePlate
    group: Group


class PlateModel:
    """A plate in, ``PlateMosaic`` snapshots out as its wells land, run by a driver
    (``scheduling.Driver``): each answered batch makes the next one the plate's request, so the
    driver reads the batches one after another until the plate is drawn or stopped."""

    def __init__(self, *, budget: int = WELL_CHUNK_BUDGET, cell: int | None = None) -> None:
        self.budget = budget
        self.cell = cell
        self.group: Group | None = None
        self.mosaic = PlateMosaic()
        self._batches: list[tuple[PlateWell, ...]] = []
        self._next = 0
        self._values: list[np.ndarray] = []  # every thumbnail's finite values, for the contrast
        self._given: PlateShown | None = None
        #: what a plate that lists no wells shows (said once, by ``waiting``)
        self._empty: PlateMosaic | None = None

    def clear(self) -> None:
        self.group = None
        self._given = self._empty = None
        self._batches, self._next, self._values = [], 0, []
        self.mosaic = PlateMosaic()

    def _take(self, shown: PlateShown) -> None:
        plate, group = shown.plate, shown.group
        self.clear()
        self._given = shown
        self.group = group
        rows, cols = len(plate.rows), len(plate.columns)
        cell = self.cell or cell_size(rows, cols)
        listed = {(w.row, w.column) for w in plate.wells}
        absent = frozenset((r, c) for r in range(rows) for c in range(cols) if (r, c) not in listed)
        pitch = cell + GAP
        image = np.full((rows * pitch, cols * pitch), np.nan, dtype=np.float32)
        mosaic = PlateMosaic(plate, image, np.zeros(image.shape, bool), cell, {}, (), absent, 0, len(plate.wells))
        if not plate.wells:
            self._empty = replace(mosaic, status=f"The plate {plate.path} lists no wells",
                                  message=f"The plate {plate.path} lists no wells ({rows} × {cols} positions).")
            return
        self.mosaic = mosaic
        self._batches = batches(plate.wells)

    def request(self, shown: PlateShown) -> WellsRequest | None:
        """The next batch of wells to read, or None when every batch was read (a plate not
        given before is taken first: its empty mosaic, its batches)."""
        if shown is not self._given:
            self._take(shown)
        group, plate = self.group, self.mosaic.plate
        if group is None or plate is None or self._next >= len(self._batches):
            return None
        wells = self._batches[self._next]
        work = functools.partial(read_batch, group, wells, self.budget, self.mosaic.cell, self.mosaic.done,
                                 self.mosaic.total)
        first = self.mosaic.name(wells[0].row, wells[0].column)
        label = f"wells {first}…{self.mosaic.name(wells[-1].row, wells[-1].column)} of the plate {plate.path}"
        return WellsRequest(Job(work, label), wells, self._next, self._given)

    def waiting(self, req: WellsRequest | None) -> PlateMosaic | None:
        """The mosaic while ``req`` is read (or why a plate shows none)."""
        if req is None:
            empty, self._empty = self._empty, None
            return None if empty is None else self._keep(empty)
        return self._keep(replace(self.mosaic, busy=True, status=f"Reading the {req.job.label} ({self.mosaic.done} "
                                                                 f"of {self.mosaic.total} wells done)…"))

    def apply(self, req: WellsRequest, result: Answer[Batch]) -> PlateMosaic | None:
        """The wells of the answer drawn into the mosaic; the next batch becomes the request."""
        if self.mosaic.plate is None:
            return None
        self._next += 1
        m = self.mosaic
        batch = result.value if isinstance(result.value, Batch) else Batch([])
        thumbs = dict(m.thumbs)
        missing = list(m.missing)
        assert m.image is not None and m.covered is not None and m.plate is not None
        for got in batch.wells:
            if isinstance(got, Thumb):
                thumbs[(got.row, got.column)] = got
                y0, x0 = m.cell_origin(got.row, got.column)
                y0, x0 = y0 + got.offset[0], x0 + got.offset[1]
                th, tw = got.tile.shape
                m.image[y0:y0 + th, x0:x0 + tw] = got.tile
                m.covered[y0:y0 + th, x0:x0 + tw] = True
                self._values.append(np.asarray(displayable(got.values), dtype=np.float32).reshape(-1))
            else:
                missing.append(got)
        done = m.done + len(batch.wells)
        summary = summarize(np.concatenate(self._values)) if self._values else None
        stopped = result.cancelled or batch.cancelled or result.error is not None
        if stopped:  # the wells not read are missing, and nothing more is asked for
            read = {(t[0], t[1]) if isinstance(t, tuple) else (t.row, t.column) for t in batch.wells}
            left = [w for b in [req.wells, *self._batches[self._next:]] for w in b
                    if (w.row, w.column) not in read]
            why = f"not read: {result.error}" if result.error is not None else "not read: cancelled"
            missing += [(w.row, w.column, why) for w in left]
            self._batches = []
        finished = self._next >= len(self._batches)
        drawn = len(thumbs)
        status = (f"Plate {m.plate.path}: {drawn} of {m.total} wells drawn from the lowest resolution of their "
                  f"first field" + (f", {len(missing)} missing" if missing else "") +
                  ("" if finished else f" ({done} of {m.total} read)…"))
        if stopped:
            status = ("Cancelled" if result.error is None else f"Error: {result.error}") + f": {done} of " \
                     f"{m.total} wells of the plate {m.plate.path} read, {drawn} drawn"
        return self._keep(replace(m, thumbs=thumbs, missing=tuple(missing), done=done, summary=summary,
                                  busy=not finished, status=status))

    def _keep(self, mosaic: PlateMosaic) -> PlateMosaic:
        self.mosaic = mosaic
        return mosaic

