"""A time series at a point, checked against numpy and xarray on the values zarr-python and
xarray wrote: only the chunks on the line are read, in blocks that arrive in order, and a
cancel or a new point stops the old line."""

from __future__ import annotations

import queue
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Driver, WorkerPool
from zarrview.viewing.line.series import LineAxis, PointQuery, Series, SeriesModel
from zarrview.zarrlib.storage import LocalStore

from store_wrappers import CountingStore, is_chunk_key

SHAPE = (23, 7, 10)
CHUNKS = (5, 3, 4)
DATA = np.random.default_rng(14).normal(280, 10, SHAPE).astype("f4")
POINT = (17, 4, 6)


class SeriesHarness:
    def __init__(self, block_chunks: int = 32) -> None:
        self.pool = WorkerPool()
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.published: list[Series] = []
        self.model = SeriesModel(block_chunks=block_chunks)
        self.driver = Driver(self.model, self.pool, self._got, post=self.inbox.put, name="series")
        self.finite: list[int] = []  # finite values of y each time a series was published

    def _got(self, s: Series) -> None:
        self.published.append(s)
        self.finite.append(0 if s.y is None else int(np.isfinite(s.y).sum()))

    def show(self, query: PointQuery) -> None:
        self.driver.show(query)

    def along(self, dim: int) -> None:
        query = self.model.along(dim)
        if query is not None:
            self.driver.show(query)

    def cancel(self) -> None:
        """Cancel as the view's button does: the read dropped, the values read so far kept."""
        self.driver.discard()
        stopped = self.model.cancelled()
        if stopped is not None:
            self._got(stopped)

    def drain(self) -> None:
        while True:
            try:
                self.inbox.get_nowait()()
            except queue.Empty:
                return

    def settle(self, timeout: float = 30.0) -> Series:
        while True:
            assert self.pool.wait_until_idle(timeout)
            if self.inbox.empty() and self.pool.idle():
                return self.model.series
            self.drain()

    def close(self) -> None:
        self.pool.close()


@pytest.fixture
def h() -> Iterator[SeriesHarness]:
    harness = SeriesHarness()
    yield harness
    harness.close()


@pytest.fixture(scope="module")
def arrays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("series")
    out = {}
    for name, kw in {"v2": {"zarr_format": 2}, "v3": {"zarr_format": 3},
                     "sharded": {"zarr_format": 3, "shards": (10, 6, 8)}}.items():
        zarr.create_array(root / name, shape=SHAPE, chunks=CHUNKS, dtype="f4", **kw)[...] = DATA
        out[name] = root / name
    return out


def _line(dim: int, point: tuple[int, ...] = POINT) -> tuple[int | slice, ...]:
    return tuple(slice(None) if d == dim else p for d, p in enumerate(point))


def _line_chunks(dim: int, point: tuple[int, ...] = POINT) -> set[tuple[int, ...]]:
    """Grid coordinates of the chunks the line crosses, from numpy indices."""
    along = np.unique(np.arange(SHAPE[dim]) // CHUNKS[dim])
    return {tuple(int(c) if d == dim else p // CHUNKS[d] for d, p in enumerate(point)) for c in along}


def _coords(key: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.split(r"[./]", key.removeprefix("c/")))


@pytest.mark.parametrize("fmt", ["v2", "v3", "sharded"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_every_dimension_reads_the_line_and_only_its_chunks(arrays: dict[str, Path], h: SeriesHarness,
                                                            fmt: str, dim: int) -> None:
    store = CountingStore(LocalStore(arrays[fmt]))
    arr = zl.open(store)
    store.reset()
    h.show(PointQuery(arr, POINT, dim))  # type: ignore[arg-type]
    s = h.settle()
    assert not s.busy and s.message is None and s.notes == ()
    np.testing.assert_array_equal(s.y, DATA[_line(dim)].astype("f8"))
    np.testing.assert_array_equal(s.x, np.arange(SHAPE[dim]))
    need = _line_chunks(dim)
    assert s.done == s.total == len(need)
    if fmt != "sharded":
        keys = store.chunk_keys()
        assert sorted(map(_coords, keys)) == sorted(need)  # each chunk on the line once, nothing else
    else:
        shards = {tuple(c * k // s for c, k, s in zip(coords, CHUNKS, (10, 6, 8))) for coords in need}
        index = [r for r in store.requests if r.start is not None and r.start < 0]
        data = [r for r in store.requests if r.start is not None and r.start >= 0]
        assert sorted(_coords(r.key) for r in index) == sorted(shards)
        assert {_coords(r.key) for r in data} == shards and len(shards) <= len(data) <= len(need)
        assert not [r for r in store.requests if r.start is None and is_chunk_key(r.key)]


def test_blocks_arrive_in_order_with_growing_progress(tmp_path: Path) -> None:
    data = np.arange(40 * 3, dtype="i2").reshape(40, 3)
    zarr.create_array(tmp_path / "a", shape=data.shape, chunks=(1, 3), dtype="i2")[...] = data
    h = SeriesHarness(block_chunks=4)
    try:
        h.show(PointQuery(zl.open(tmp_path / "a"), (0, 2), 0, decode=lambda v: v * 0.5 - 3))  # type: ignore[arg-type]
        s = h.settle()
        np.testing.assert_array_equal(s.y, data[:, 2] * 0.5 - 3)
        done = [p.done for p in h.published]
        assert done[0] == 0 and done[-1] == 40 and len(done) >= 40 // 4 + 2
        assert done[1:-1] == sorted(set(done[1:-1]))  # strictly rising while it fills
        assert all(p.busy for p in h.published[:-1]) and not h.published[-1].busy
        for p, finite in zip(h.published, h.finite):  # what was read so far is a prefix of the line
            assert finite == min(40, p.done)
    finally:
        h.close()


def _slow(tmp_path: Path, n: int, latency: float) -> tuple[CountingStore, np.ndarray]:
    data = np.random.default_rng(1).random((n, 4)).astype("f4")
    zarr.create_array(tmp_path / "slow", shape=data.shape, chunks=(1, 2), dtype="f4")[...] = data
    return CountingStore(LocalStore(tmp_path / "slow"), latency=latency, slow=is_chunk_key), data


def test_cancel_stops_reading_and_keeps_what_was_read(tmp_path: Path) -> None:
    store, data = _slow(tmp_path, 60, 0.01)
    h = SeriesHarness(block_chunks=4)
    try:
        h.show(PointQuery(zl.open(store), (0, 3), 0))  # type: ignore[arg-type]
        while h.model.series.done < 4:
            h.inbox.get(timeout=10)()
        h.cancel()
        at_cancel = store.chunk_reads()
        s = h.settle()
        assert store.chunk_reads() - at_cancel <= 4  # at most the block in flight finishes its chunk
        assert store.chunk_reads() < 30
        assert not s.busy and s.status.startswith("Cancelled") and s.done < 60
        read = np.isfinite(s.y)
        assert read.sum() >= 4 and read[:4].all()
        np.testing.assert_array_equal(s.y[read], data[:, 3][read])
    finally:
        h.close()


def test_a_new_point_cancels_the_old_line_and_drops_its_answers(tmp_path: Path) -> None:
    store, data = _slow(tmp_path, 60, 0.01)
    h = SeriesHarness(block_chunks=4)
    try:
        arr = zl.open(store)
        h.show(PointQuery(arr, (0, 0), 0))  # type: ignore[arg-type]
        while h.model.series.done < 4:
            h.inbox.get(timeout=10)()
        old = h.model.generation
        first_reads = store.chunk_reads()
        h.show(PointQuery(arr, (0, 3), 0))  # type: ignore[arg-type]
        new = h.model.generation
        mark = len(h.published)
        s = h.settle()
        assert all(p.generation == new for p in h.published[mark - 1:]) and new != old
        np.testing.assert_array_equal(s.y, data[:, 3])
        # the old line (chunks c/i/0) stopped: at most its block in flight was finished
        old_keys = [k for k in store.chunk_keys() if k.endswith("/0")]
        assert len(old_keys) <= first_reads + 4 < 60
    finally:
        h.close()


def test_a_corrupt_chunk_is_named_and_the_rest_stays(tmp_path: Path, h: SeriesHarness) -> None:
    zarr.create_array(tmp_path / "c", shape=SHAPE, chunks=CHUNKS, dtype="f4", compressors=None)[...] = DATA
    (tmp_path / "c" / "c" / "2" / "1" / "1").write_bytes(b"not a chunk")
    h.show(PointQuery(zl.open(tmp_path / "c"), POINT, 0))  # type: ignore[arg-type]
    s = h.settle()
    assert not s.busy and s.message is None
    assert len(s.notes) == 1 and "c/2/1/1" in s.notes[0] and "found 11" in s.notes[0]  # what is wrong
    assert "1 chunk could not be read: chunk c/2/1/1" in s.status
    want = DATA[_line(0)].astype("f8")
    want[10:15] = np.nan
    np.testing.assert_array_equal(s.y, want)


def test_bad_input_is_a_message_or_a_note(arrays: dict[str, Path], h: SeriesHarness) -> None:
    arr = zl.open(arrays["v3"])
    h.show(PointQuery(arr, (1, 99, 0), 0))  # type: ignore[arg-type]
    s = h.settle()
    assert s.message is not None and "99" in s.message and s.y is None
    h.show(PointQuery(arr, POINT, 5))  # type: ignore[arg-type]
    assert "no dimension 5" in (h.settle().message or "")
    bad_x = (LineAxis("time", np.arange(3.0)), LineAxis("lat"), LineAxis("lon"))

    def broken(v: np.ndarray) -> np.ndarray:
        raise ValueError("scale_factor is a string")

    h.show(PointQuery(arr, POINT, 0, decode=broken, axes=bad_x))  # type: ignore[arg-type]
    s = h.settle()
    np.testing.assert_array_equal(s.y, DATA[_line(0)])
    np.testing.assert_array_equal(s.x, np.arange(SHAPE[0]))
    assert any("shape (3,)" in n for n in s.notes) and any("scale_factor is a string" in n for n in s.notes)


def test_xarray_dataset_with_coordinates(tmp_path: Path, h: SeriesHarness) -> None:
    xr = pytest.importorskip("xarray")
    times = np.arange("2001-03-01", "2001-03-24", dtype="datetime64[D]").astype("datetime64[ns]")
    lat = np.linspace(50, 44, 7)
    lon = np.arange(10) * 2.5
    ds = xr.Dataset({"t2m": (("time", "lat", "lon"), DATA)}, coords={"time": times, "lat": lat, "lon": lon})
    for zf, consolidated in ((2, True), (3, False)):
        path = tmp_path / f"ds{zf}.zarr"
        ds.to_zarr(path, zarr_format=zf, consolidated=consolidated, encoding={"t2m": {"chunks": CHUNKS}})
        truth = xr.open_zarr(path, consolidated=consolidated)
        arr = zl.open(path)["t2m"]
        axes = (LineAxis("time", times), LineAxis("lat", lat, lambda v: f"{v:g} °N"),
                LineAxis("lon", lon, lambda v: f"{v:g} °E"))
        h.show(PointQuery(arr, POINT, 0, axes=axes))  # type: ignore[arg-type]
        s = h.settle()
        want = truth.t2m[:, POINT[1], POINT[2]]
        np.testing.assert_array_equal(s.y, want.values.astype("f8"))
        np.testing.assert_array_equal(s.x, want.time.values.astype("datetime64[s]").astype("i8"))
        assert s.title == f"t2m at lat={float(want.lat):g} °N, lon={float(want.lon):g} °E"
        assert s.x_format is not None and s.x_format(float(s.x[3])) == str(want.time.values[3])[:19].replace("T", " ")
        h.along(2)  # the same point along longitude
        s = h.settle()
        np.testing.assert_array_equal(s.y, truth.t2m[POINT[0], POINT[1], :].values)
        np.testing.assert_array_equal(s.x, lon)
        assert s.title.startswith(f"t2m at time={str(times[POINT[0]])[:10]}")


def test_a_neighbouring_point_is_answered_from_the_cache(arrays: dict[str, Path], h: SeriesHarness) -> None:
    store = CountingStore(LocalStore(arrays["v3"]))
    arr = zl.open(store)
    h.show(PointQuery(arr, POINT, 0))  # type: ignore[arg-type]
    h.settle()
    n = store.chunk_reads()
    h.show(PointQuery(arr, (0, 5, 7), 0))  # type: ignore[arg-type]  same chunks as POINT
    s = h.settle()
    assert store.chunk_reads() == n
    np.testing.assert_array_equal(s.y, DATA[:, 5, 7])


def test_a_line_larger_than_half_the_cache_is_not_cached(arrays: dict[str, Path]) -> None:
    store = CountingStore(LocalStore(arrays["v3"]))
    arr = zl.open(store)
    h = SeriesHarness()
    h.pool.cache.max_bytes = 2 * 5 * 3 * 4 * 4 * 5 - 1  # the line's 5 chunks of 240 bytes: not in half
    try:
        h.show(PointQuery(arr, POINT, 0))  # type: ignore[arg-type]
        h.settle()
        h.show(PointQuery(arr, (0, 5, 7), 0))  # type: ignore[arg-type]
        s = h.settle()
        assert store.chunk_reads() == 10 and len(h.pool.cache) == 0
        np.testing.assert_array_equal(s.y, DATA[:, 5, 7])
    finally:
        h.close()
