"""OME-Zarr plates as a grid of well thumbnails, without Qt: plates written by ome-zarr-py (0.4
and 0.5) and a sparse one built by hand (wells missing, broken, of different sizes and levels,
no ``plate.version``); every thumbnail checked against zarr-python's read of the same strided
plane of the coarsest level; chunk requests counted; cancel stops between wells."""

from __future__ import annotations

import queue
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Driver, WorkerPool
from zarrview.viewing.image.contrast import NAN_RGBA, summarize
from zarrview.viewing.ome import OmePlate, detect
from zarrview.viewing.plate.mosaic import (
    ABSENT_RGBA,
    MISSING_RGBA,
    PENDING_RGBA,
    WELL_CHUNK_BUDGET,
    PlateModel,
    PlateShown,
    PlateMosaic,
    batches,
    render,
)
from zarrview.viewing.plate.reads import read_well
from zarrview.zarrlib.storage import LocalStore

from ome_stores import hand_image, ome_zarr_plate, write_group
from store_wrappers import CountingStore, is_chunk_key


class PlateHarness:
    def __init__(self, budget: int = WELL_CHUNK_BUDGET, cell: int | None = None) -> None:
        self.pool = WorkerPool()
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.mosaics: list[PlateMosaic] = []
        self.progress: list[tuple[int, int]] = []
        self.model = PlateModel(budget=budget, cell=cell)
        self.driver = Driver(self.model, self.pool, self.mosaics.append, post=self.inbox.put, name="plate",
                             on_progress=lambda d, t: self.progress.append((d, t)))

    def show(self, plate: Any, group: Any) -> None:
        self.driver.show(PlateShown(plate, group))

    def clear(self) -> None:
        self.driver.clear()
        self.model.clear()

    def settle(self) -> PlateMosaic:
        while True:
            assert self.pool.wait_until_idle(60)
            if self.inbox.empty():
                return self.model.mosaic
            while not self.inbox.empty():
                self.inbox.get()()

    def close(self) -> None:
        self.pool.close()


@pytest.fixture
def harness() -> Any:
    h = PlateHarness()
    yield h
    h.close()


def open_plate(path: Path | CountingStore) -> tuple[OmePlate, zl.Group]:
    group = zl.open(path)
    assert isinstance(group, zl.Group)
    plate = detect(group)
    assert isinstance(plate, OmePlate), plate
    return plate, group


def expected(root: Path, thumb: Any) -> np.ndarray:
    """What zarr-python reads of the thumbnail's level, strided the same way."""
    image = zarr.open_group(str(root / thumb.path), mode="r")
    attrs = image.attrs.asdict()
    ome = attrs.get("ome", attrs)
    level_path = ome["multiscales"][0]["datasets"][thumb.level]["path"]
    values = np.asarray(image[level_path][thumb.selection])
    return values.T if thumb.dims[0] > thumb.dims[1] else values


def check_thumbs(root: Path, mosaic: PlateMosaic) -> None:
    assert mosaic.image is not None and mosaic.covered is not None
    for (r, c), thumb in mosaic.thumbs.items():
        np.testing.assert_array_equal(thumb.values, expected(root, thumb))
        # its tile is inside its cell, in the mosaic, and holds the thumbnail's values
        y0, x0 = mosaic.cell_origin(r, c)
        y0, x0 = y0 + thumb.offset[0], x0 + thumb.offset[1]
        th, tw = thumb.tile.shape
        assert thumb.offset[0] + th <= mosaic.cell and thumb.offset[1] + tw <= mosaic.cell
        np.testing.assert_array_equal(mosaic.image[y0:y0 + th, x0:x0 + tw], thumb.tile)
        assert mosaic.covered[y0:y0 + th, x0:x0 + tw].all()
        assert set(np.unique(thumb.tile)) <= set(np.unique(thumb.values.astype("f4")))
        assert max(th, tw) == mosaic.cell  # each well fills its cell, whatever its size


@pytest.mark.parametrize("version", ["0.4", "0.5"])
def test_an_ome_zarr_py_plate_is_a_grid_of_its_wells(harness: PlateHarness, tmp_path: Path, version: str) -> None:
    root = ome_zarr_plate(tmp_path / f"plate{version}.zarr", version, ["A", "B", "C"], ["1", "2", "3", "4"],
                          ["A/1", "A/4", "B/2", "C/3", "C/4"], fields=2, shape=(2, 40, 30), axes="cyx")
    plate, group = open_plate(root)
    harness.show(plate, group)
    mosaic = harness.settle()
    assert not mosaic.busy and not mosaic.missing and mosaic.done == mosaic.total == 5
    assert set(mosaic.thumbs) == {(0, 0), (0, 3), (1, 1), (2, 2), (2, 3)}
    assert mosaic.absent == {(r, c) for r in range(3) for c in range(4)} - set(mosaic.thumbs)
    for thumb in mosaic.thumbs.values():
        assert thumb.field == "0" and thumb.selection[0] == 0 and thumb.step == (1, 1)  # channel 0, whole plane
    check_thumbs(root, mosaic)
    assert mosaic.image is not None
    assert mosaic.image.shape == (3 * mosaic.pitch, 4 * mosaic.pitch)
    assert np.isnan(mosaic.image[~mosaic.covered]).all()
    # the grid filled row by row: a snapshot per row of wells, the wells counted as they landed
    drawn = [len(m.thumbs) for m in harness.mosaics if not m.busy or m.thumbs]
    assert drawn == sorted(drawn) and 2 in drawn and 3 in drawn
    assert harness.progress[-1] == (5, 5)
    # the contrast covers every thumbnail's values; a click on a well opens its first field
    lo, hi = mosaic.levels
    assert lo < hi and mosaic.summary == summarize(np.concatenate([t.values.ravel() for t in mosaic.thumbs.values()]
                                                                  ).astype("f4"))
    assert mosaic.open_path(1, 1) == "B/2/0" and mosaic.open_path(0, 1) is None
    y0, x0 = mosaic.cell_origin(1, 1)
    assert mosaic.readout(y0 + 50, x0 + 50).startswith("B/2, field 0, level 0 of 1 (40 × 30)")
    assert "no well" in mosaic.readout(y0 + 50, x0 - 50)


def hand_plate(root: Path) -> Path:
    """A sparse 0.4 plate without ``plate.version`` (3 rows, 4 columns): wells of different sizes
    and levels, one too large for the budget, and broken ones."""
    wells = ["A/1", "A/2", "A/3", "B/1", "B/2", "B/3", "C/1", "C/4"]
    plate = {"name": "sparse", "rows": [{"name": n} for n in "ABC"],
             "columns": [{"name": n} for n in "1234"],
             "wells": [{"path": w, "rowIndex": "ABC".index(w[0]), "columnIndex": int(w[2]) - 1} for w in wells]}
    write_group(root, "0.4", {"plate": plate}, groups=["A", "B", "C"])

    def well(path: str, fields: list[str]) -> Path:
        write_group(root / path, "0.4", {"well": {"images": [{"path": f} for f in fields]}})
        return root / path

    # A/1: a three-level pyramid; the coarsest (64x48) is drawn
    hand_image(well("A/1", ["0", "1"]) / "0", "0.4", [((256, 192), (1, 1), None), ((128, 96), (2, 2), None),
                                                      ((64, 48), (4, 4), None)], "yx", chunks=(32, 32))
    hand_image(root / "A/1/1", "0.4", [((16, 16), (1, 1), None)], "yx")
    # A/2: listed, no group.  A/3: a well whose first field is missing
    well("A/3", ["0"])
    # B/1: the image's levels name arrays that do not exist
    write_group(well("B/1", ["0"]) / "0", "0.4", {"multiscales": [{
        "version": "0.4", "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
        "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]}]}]})
    # B/2: a (t, c, z, y, x) stack with anisotropic pixels: t 0, channel 0, the middle z
    hand_image(well("B/2", ["0"]) / "0", "0.4", [((2, 3, 5, 40, 20), (1, 1, 1, 0.5, 1), None),
                                               ((2, 3, 5, 20, 10), (1, 1, 1, 1, 2), None)], "tczyx",
               chunks=(1, 1, 1, 10, 10))
    # B/3: one chunk of its only level is corrupt
    hand_image(well("B/3", ["0"]) / "0", "0.4", [((32, 32), (1, 1), None)], "yx", chunks=(16, 16))
    (root / "B/3/0/0/1.1").write_bytes(b"not a chunk")
    # C/1: a single level too large for the budget (20 x 16 chunks): sampled
    hand_image(well("C/1", ["0"]) / "0", "0.4", [((1000, 800), (1, 1), None)], "yx", chunks=(50, 50))
    # C/4: a well group with no well metadata
    write_group(root / "C/4", "0.4", {})
    return root


def test_a_sparse_plate_marks_missing_and_broken_wells(harness: PlateHarness, tmp_path: Path) -> None:
    root = hand_plate(tmp_path / "sparse.zarr")
    plate, group = open_plate(root)
    assert not any("version" in p.path for p in plate.errors)
    harness.show(plate, group)
    mosaic = harness.settle()
    assert set(mosaic.thumbs) == {(0, 0), (1, 1), (2, 0)}
    reasons = {(r, c): why for r, c, why in mosaic.missing}
    assert set(reasons) == {(0, 1), (0, 2), (1, 0), (1, 2), (2, 3)}
    assert reasons[(0, 1)] == "no group at A/2"
    assert "A/3/0" in reasons[(0, 2)]
    assert reasons[(1, 0)].startswith("no level of B/1/0 can be read")
    assert "1 chunk of B/3/0 level 0 could not be read" in reasons[(1, 2)]
    assert reasons[(2, 3)] == "C/4 has no well metadata"
    assert mosaic.absent == {(1, 3), (2, 1), (2, 2), (0, 3)}
    check_thumbs(root, mosaic)
    a1, b2, c1 = mosaic.thumbs[(0, 0)], mosaic.thumbs[(1, 1)], mosaic.thumbs[(2, 0)]
    assert (a1.level, a1.levels, a1.values.shape, a1.step) == (2, 3, (64, 48), (1, 1))
    assert b2.level == 1 and b2.selection[:3] == (0, 0, 2) and b2.values.shape == (20, 10)
    assert b2.tile.shape == (96, 96)  # 20 rows of 1 µm, 10 columns of 2 µm: square
    assert a1.tile.shape == (96, 72)
    assert c1.level == 0 and c1.chunks <= WELL_CHUNK_BUDGET and c1.step[0] % 50 == 0
    # missing wells are NaN, named with their reason under the cursor; a click on one opens the well
    y0, x0 = mosaic.cell_origin(0, 1)
    assert mosaic.image is not None and np.isnan(mosaic.image[y0:y0 + mosaic.cell, x0:x0 + mosaic.cell]).all()
    assert mosaic.readout(y0 + 3, x0 + 3) == "A/2: missing: no group at A/2"
    assert mosaic.open_path(0, 1) == "A/2" and mosaic.open_path(0, 0) == "A/1/0"
    assert "3 of 8 wells drawn" in mosaic.status and "5 missing" in mosaic.status


def test_chunk_requests_are_bounded_by_the_budget(tmp_path: Path) -> None:
    root = hand_plate(tmp_path / "sparse.zarr")
    store = CountingStore(LocalStore(root))
    plate, group = open_plate(store)
    h = PlateHarness(budget=4)
    try:
        store.reset()
        h.show(plate, group)
        mosaic = h.settle()
        keys = store.chunk_keys()
        # A/1: the 2x2 chunks of its coarsest level, and never a chunk of its finer levels
        assert sorted(k for k in keys if k.startswith("A/1/")) == ["A/1/0/2/0.0", "A/1/0/2/0.1", "A/1/0/2/1.0",
                                                                  "A/1/0/2/1.1"]
        assert len([k for k in keys if k.startswith("C/1/")]) == mosaic.thumbs[(2, 0)].chunks <= 4
        assert len(keys) <= 4 * len(plate.wells)
        # a second look costs no chunk but the corrupt one: the others are in the pool's cache
        store.reset()
        h.show(plate, group)
        h.settle()
        assert store.chunk_keys() == ["B/3/0/0/1.1"]
    finally:
        h.close()


def test_cancel_stops_between_wells(tmp_path: Path) -> None:
    wells = [f"A/{c}" for c in range(1, 13)]
    root = ome_zarr_plate(tmp_path / "row.zarr", "0.4", ["A"], [str(c) for c in range(1, 13)], wells, fields=1)
    h = PlateHarness()

    def cancel_at_a3(req: Any) -> None:  # on the worker, as the third well's chunk is asked for
        if req.key.startswith("A/3/") and is_chunk_key(req.key):
            h.pool.cancel()
        return None

    store = CountingStore(LocalStore(root), fail=cancel_at_a3)
    plate, group = open_plate(store)
    try:
        store.reset()
        h.show(plate, group)
        assert len(batches(plate.wells)) == 1  # one request for the row: the cancel lands inside it
        mosaic = h.settle()
        assert not mosaic.busy and mosaic.status.startswith("Cancelled: ")
        # A/3's read was under way (its one chunk read), A/4 was never started
        assert [k.split("/")[1] for k in store.chunk_keys()] == ["1", "2", "3"]
        assert {(0, 0), (0, 1)} <= set(mosaic.thumbs) <= {(0, 0), (0, 1), (0, 2)}
        reasons = {why for _, _, why in mosaic.missing}
        assert reasons == {"not read: cancelled"} and len(mosaic.missing) == 12 - len(mosaic.thumbs)
        assert mosaic.done == len(mosaic.thumbs) and h.progress[-1][0] == mosaic.done
    finally:
        h.close()


def test_a_newer_plate_drops_the_older_ones_answers(harness: PlateHarness, tmp_path: Path) -> None:
    one = ome_zarr_plate(tmp_path / "one.zarr", "0.5", ["A", "B"], ["1"], ["A/1", "B/1"], fields=1)
    two = ome_zarr_plate(tmp_path / "two.zarr", "0.5", ["A"], ["1", "2"], ["A/2"], fields=1)
    harness.show(*open_plate(one))
    harness.show(*open_plate(two))
    mosaic = harness.settle()
    assert mosaic.plate is not None and mosaic.plate.columns == ("1", "2")
    assert set(mosaic.thumbs) == {(0, 1)} and not mosaic.missing
    check_thumbs(two, mosaic)
    harness.clear()
    assert harness.model.mosaic.plate is None


def test_batches_are_rows_of_wells() -> None:
    from zarrview.viewing.ome import PlateWell

    wells = tuple(PlateWell(f"{r}/{c}", "AB".index(r), c) for r in "BA" for c in range(30))
    got = batches(wells)
    assert [len(b) for b in got] == [24, 6, 24, 6]
    assert [w.row for w in got[0]] == [0] * 24 and got[1][-1].column == 29


def test_a_well_without_its_coarsest_level_is_drawn_from_the_next(tmp_path: Path) -> None:
    root = hand_plate(tmp_path / "sparse.zarr")
    plate, group = open_plate(root)
    shutil.rmtree(root / "A/1/0/2")  # the coarsest level is gone: the next finer one is drawn
    a1 = next(w for w in plate.wells if w.path == "A/1")
    thumb = read_well(group, a1, WELL_CHUNK_BUDGET, 64)
    assert not isinstance(thumb, str) and thumb.level == 1 and thumb.values.shape == (64, 48)
    assert thumb.step == (2, 2) and thumb.tile.shape == (64, 48)  # strided to the 64-pixel cell


def test_the_mosaic_is_drawn_with_nan_missing_and_absent_wells_told_apart(harness: PlateHarness,
                                                                          tmp_path: Path) -> None:
    root = tmp_path / "nan.zarr"
    plate = {"rows": [{"name": "A"}], "columns": [{"name": n} for n in "123"],
             "wells": [{"path": "A/1", "rowIndex": 0, "columnIndex": 0}, {"path": "A/2", "rowIndex": 0, "columnIndex": 1}]}
    write_group(root, "0.4", {"plate": plate}, groups=["A"])
    write_group(root / "A/1", "0.4", {"well": {"images": [{"path": "0"}]}})
    data = np.arange(16 * 16, dtype="f4").reshape(16, 16)
    data[:8] = np.nan
    hand_image(root / "A/1/0", "0.4", [((16, 16), (1, 1), None)], "yx", dtype="f4")
    zarr.open_array(str(root / "A/1/0/0"), mode="r+")[...] = data
    harness.show(*open_plate(root))
    pending = render(harness.mosaics[-1])
    m = harness.settle()
    drawn = render(m)
    y0, x0 = m.cell_origin(0, 0)
    assert (pending[y0 + 1, x0 + 1] == PENDING_RGBA).all()
    assert (drawn[y0 + 1, x0 + 1] == NAN_RGBA).all()          # NaN in the data: the NaN colour
    assert tuple(drawn[y0 + m.cell // 2, x0 + 1]) == (0, 0, 0, 255)                           # its lowest value
    assert drawn[y0 + m.cell - 1, x0 + m.cell - 1, 0] == 255                                  # its highest
    assert drawn[0, 0, 3] == 0                                 # a gap: transparent
    y1, x1 = m.cell_origin(0, 1)
    assert {tuple(p) for p in drawn[y1:y1 + m.cell, x1:x1 + m.cell].reshape(-1, 4)} == {MISSING_RGBA, (0, 0, 0, 0)}
    y2, x2 = m.cell_origin(0, 2)
    assert (drawn[y2:y2 + m.cell, x2:x2 + m.cell] == ABSENT_RGBA).all()
    assert m.summary is not None and m.summary.nan == 128 and m.summary.finite == 128
