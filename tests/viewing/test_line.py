"""Long 1-D arrays as a min/max envelope at screen resolution, checked against numpy on the
values zarr-python wrote; memory measured in a separate process."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from zarrview.scheduling import Driver, WorkerPool
from zarrview.viewing.line.array import LineModel, LinePlot

N = 20_000_000


@pytest.fixture(scope="module")
def long_series(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    root = tmp_path_factory.mktemp("line") / "long.zarr"
    rng = np.random.default_rng(4)
    data = (np.sin(np.arange(N, dtype="f4") / 50_000) * 100 + rng.normal(0, 1, N).astype("f4")).astype("f4")
    data[1_234_567:1_234_600] = np.nan
    data[7_000_000] = 1e6
    zarr.create_array(root, shape=(N,), chunks=(500_000,), dtype="f4")[...] = data
    return root, data


class LineHarness:
    def __init__(self, budget: int = 1024) -> None:
        self.pool = WorkerPool()
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.plots: list[LinePlot] = []
        self.model = LineModel(budget=budget)
        self.driver = Driver(self.model, self.pool, self.plots.append, post=self.inbox.put, name="line")

    def show(self, arr: Any) -> None:
        self.driver.show(self.model.show(arr))

    def set_range(self, x0: float, x1: float, columns: int) -> None:
        self.driver.show(self.model.range_of(x0, x1, columns))

    def settle(self) -> LinePlot:
        while True:
            assert self.pool.wait_until_idle(60)
            if self.inbox.empty():
                return self.model.plot
            while not self.inbox.empty():
                self.inbox.get()()

    def close(self) -> None:
        self.pool.close()


def _expected(data: np.ndarray, x0: int, x1: int, columns: int) -> tuple[np.ndarray, np.ndarray]:
    edges = np.unique(np.linspace(x0, x1, columns + 1).round().astype(np.int64))
    lo = np.array([np.nanmin(data[a:b]) if not np.isnan(data[a:b]).all() else np.nan for a, b in zip(edges, edges[1:])])
    hi = np.array([np.nanmax(data[a:b]) if not np.isnan(data[a:b]).all() else np.nan for a, b in zip(edges, edges[1:])])
    return lo, hi


def test_a_long_series_is_an_exact_envelope(long_series: tuple[Path, np.ndarray]) -> None:
    root, data = long_series
    h = LineHarness()
    try:
        h.model.columns = 1000
        h.show(zl.open(root))
        plot = h.settle()
        assert plot.envelope and plot.y is not None and plot.x is not None and not plot.busy
        lo, hi = _expected(data, 0, N, 1000)
        np.testing.assert_array_equal(plot.y[0::2], lo)
        np.testing.assert_array_equal(plot.y[1::2], hi)
        assert np.nanmax(plot.y) == 1e6  # a single spike survives the reduction
        assert "every chunk" in plot.status
        # zoomed in to a few thousand elements: the exact values
        h.set_range(1_234_000.0, 1_235_500.7, 1000)
        plot = h.settle()
        assert not plot.envelope and plot.x0 == 1_234_000 and plot.x1 == 1_235_501
        np.testing.assert_array_equal(plot.y, data[1_234_000:1_235_501])
    finally:
        h.close()


def test_too_many_chunks_are_sampled_and_say_so(long_series: tuple[Path, np.ndarray]) -> None:
    root, data = long_series
    h = LineHarness(budget=8)
    try:
        h.model.columns = 500
        h.show(zl.open(root))
        plot = h.settle()
        assert plot.envelope and "one chunk in 5 (sampled)" in plot.status
        assert plot.y is not None and np.isfinite(plot.y).sum() > 0
        assert np.nanmin(plot.y) >= data[np.isfinite(data)].min() and np.nanmax(plot.y) <= np.nanmax(data)
    finally:
        h.close()


def test_dates_plot_as_dates(tmp_path: Path) -> None:
    times = np.arange("2020-01-01", "2020-03-01", dtype="datetime64[D]").astype("datetime64[s]")
    zarr.create_array(tmp_path / "t", shape=times.shape, chunks=(16,), dtype=times.dtype)[...] = times
    h = LineHarness()
    try:
        h.show(zl.open(tmp_path / "t"))
        plot = h.settle()
        assert plot.dates and not plot.envelope
        np.testing.assert_array_equal(plot.y, times.astype("int64").astype("f8"))
    finally:
        h.close()


MEASURE = """
import json, resource, sys, queue
sys.path.insert(0, sys.argv[2])
import zarrview.zarrlib as zl
from zarrview.scheduling import Driver, WorkerPool
from zarrview.viewing.line.array import LineModel
s = WorkerPool(cache_bytes=0)
inbox = queue.SimpleQueue()
plots = []
m = LineModel()
Driver(m, s, plots.append, post=inbox.put).show(m.show(zl.open(sys.argv[1])))
s.wait_until_idle(120)
while not inbox.empty():
    inbox.get()()
def peak_mb():
    # VmHWM is this program's own peak: ru_maxrss also counts the parent's pages before exec
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"envelope": plots[-1].envelope, "maxrss_mb": peak_mb()}))
"""


def test_memory_stays_bounded(long_series: tuple[Path, np.ndarray]) -> None:
    root, _ = long_series
    repo = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", MEASURE, str(root), repo], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["envelope"] and got["maxrss_mb"] < 500, got
