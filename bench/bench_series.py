"""Time series at a point: zarrview's series model against xarray on the same store.

Why this exists
---------------
Clicking a pixel of a (1000, 721, 1440) float32 field chunked (50, 181, 360) should plot its
time series after reading only the 20 chunks on that line; the time from the click to the plot
is reported next to what xarray takes for
``ds.t2m[:, i, j].values`` on the same store. Where the line crosses more chunks than one block
(the same field chunked (1, 721, 1440): 1000 chunks), the plot must fill in progressively, so
the time to the first values matters as much as the time to the whole line.

What is measured
----------------
Data: a t2m-like field (a latitude gradient, a seasonal and a daily cycle, weather-like noise;
zstd compresses it little, as it does real float32 temperatures), written once with zarr-python
in slabs of 50 time steps (about 200 MiB of memory) as two Zarr v3 stores with coordinate
variables ``time``, ``lat`` and ``lon`` (``dimension_names``, so xarray reads them):
``chunks50.zarr`` chunked (50, 181, 360) and ``chunks1.zarr`` chunked (1, 721, 1440), 4.1 GB
each before compression, under ``--data-dir`` (or ``$ZARRVIEW_BENCH_DATA``, else
``bench/_data/series``).

Warm OS page cache, cold decoded-chunk cache: one untimed round first (also the correctness
check: our values must equal xarray's), then ``--rounds`` rounds, the readers interleaved.
Our series model runs on a worker pool with the window's default decoded-chunk cache
(``DEFAULT_CACHE_BYTES``), emptied before each of our runs (the first click);
``zarrview, next pixel`` times a click on the pixel diagonally next to the one before, whose
line crosses the same chunks: answered from that cache where the line's chunks fit in half of
it (the (50, 181, 360) layout), read again where they do not. Ours is timed from
``SeriesModel.request`` to the published series that is complete, through the same queue a GUI
thread would drain (``first`` is the first published series holding values); xarray is timed
around ``ds.t2m[:, i, j].values`` on a dataset opened beforehand, once with xarray's default
dask chunks (``xr.open_zarr``) and once without dask (``chunks=None``). Chunk reads are counted
in a separate run through ``tests/store_wrappers.CountingStore``.

Usage: ``python bench/bench_series.py [--rounds 5] [--data-dir DIR] [--point 300,700] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import warnings
import os
import platform
import queue
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]
SHAPE = (1000, 721, 1440)
LAYOUTS = {"chunks50": (50, 181, 360), "chunks1": (1, 721, 1440)}
SLAB = 50


def field(t0: int, t1: int, rng: np.random.Generator) -> np.ndarray:
    """Time steps ``t0:t1`` of a t2m-like field in kelvin (6-hourly)."""
    lat = np.linspace(90, -90, SHAPE[1], dtype="f4")[:, None]
    lon = np.linspace(0, 357.75, SHAPE[2], dtype="f4")[None, :]
    base = 288 - 40 * np.sin(np.radians(lat)) ** 2 + 3 * np.cos(np.radians(lon) * 3) * np.cos(np.radians(lat))
    out = np.empty((t1 - t0, SHAPE[1], SHAPE[2]), dtype="f4")
    for k, t in enumerate(range(t0, t1)):
        season = 12 * np.sin(2 * np.pi * t / 1460) * np.sin(np.radians(lat))
        day = 4 * np.cos(2 * np.pi * t / 4 + np.radians(lon))
        out[k] = base + season + day + rng.normal(0, 0.7, (SHAPE[1], SHAPE[2])).astype("f4")
    return out


def ensure_data(root: Path, names: list[str]) -> dict[str, Path]:
    """The stores of ``names``, written where missing."""
    import zarr

    paths = {name: root / f"{name}.zarr" for name in names}
    for name, path in paths.items():
        chunks = LAYOUTS[name]
        marker = path / ".complete"
        if marker.exists():
            continue
        log(f"writing {path} (chunks {chunks}) ...")
        start = time.perf_counter()
        g = zarr.open_group(path, mode="w", zarr_format=3)
        t = g.create_array("time", shape=(SHAPE[0],), chunks=(SHAPE[0],), dtype="f8", dimension_names=["time"])
        t[...] = np.arange(SHAPE[0]) * 6.0
        t.attrs.update({"units": "hours since 2000-01-01", "calendar": "proleptic_gregorian", "standard_name": "time"})
        la = g.create_array("lat", shape=(SHAPE[1],), chunks=(SHAPE[1],), dtype="f8", dimension_names=["lat"])
        la[...] = np.linspace(90, -90, SHAPE[1])
        la.attrs.update({"units": "degrees_north", "standard_name": "latitude"})
        lo = g.create_array("lon", shape=(SHAPE[2],), chunks=(SHAPE[2],), dtype="f8", dimension_names=["lon"])
        lo[...] = np.linspace(0, 357.75, SHAPE[2])
        lo.attrs.update({"units": "degrees_east", "standard_name": "longitude"})
        a = g.create_array("t2m", shape=SHAPE, chunks=chunks, dtype="f4", fill_value=np.nan,
                           dimension_names=["time", "lat", "lon"])
        a.attrs.update({"units": "K", "long_name": "2 metre temperature"})
        rng = np.random.default_rng(14)
        for t0 in range(0, SHAPE[0], SLAB):
            a[t0:t0 + SLAB] = field(t0, min(SHAPE[0], t0 + SLAB), rng)
        marker.write_text("ok")
        log(f"  {time.perf_counter() - start:.0f} s")
    return paths


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Ours:
    """The series model as the window drives it, its answers drained as a GUI thread would."""

    def __init__(self) -> None:
        from zarrview.scheduling import Driver, WorkerPool
        from zarrview.viewing.line.series import Series, SeriesModel

        self.pool = WorkerPool()  # the window's pool: its threads and its cache size
        self.inbox: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.published: list[tuple[float, Series]] = []
        self.model = SeriesModel()
        self.driver = Driver(self.model, self.pool, lambda s: self.published.append((time.perf_counter(), s)),
                             post=self.inbox.put, name="series")

    def run(self, arr: Any, point: tuple[int, int, int], clear: bool = True) -> tuple[float, float, np.ndarray, int]:
        """(seconds to the first values, seconds to the whole line, the line, chunks on it)."""
        from zarrview.viewing.line.series import PointQuery

        if clear:
            self.pool.cache.clear()
        self.published.clear()
        start = time.perf_counter()
        self.driver.show(PointQuery(arr, point, 0))
        while self.model.series.busy:
            self.inbox.get(timeout=600)()
        end = time.perf_counter()
        s = self.model.series
        assert s.message is None and not s.notes, (s.message, s.notes)
        first = next(t for t, p in self.published if p.done > 0)
        return first - start, end - start, np.array(s.y), s.total

    def close(self) -> None:
        self.pool.close()


def chunk_reads(path: Path, point: tuple[int, int, int]) -> int:
    import zarrview.zarrlib as zl
    from store_wrappers import CountingStore
    from zarrview.zarrlib.storage import LocalStore

    store = CountingStore(LocalStore(path))
    arr = zl.open(store)["t2m"]
    ours = Ours()
    try:
        store.reset()
        ours.run(arr, point)
        return store.chunk_reads()
    finally:
        ours.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--data-dir", type=Path,
                   default=Path(os.environ.get("ZARRVIEW_BENCH_DATA", REPO / "bench" / "_data" / "series")))
    p.add_argument("--point", default="300,700", help="lat,lon indices of the clicked pixel")
    p.add_argument("--layouts", default=",".join(LAYOUTS),
                   help=f"comma-separated subset of {','.join(LAYOUTS)} (only these are written)")
    p.add_argument("--json", type=Path)
    args = p.parse_args()

    import xarray as xr

    import zarrview.zarrlib as zl

    zl.tune_process()
    warnings.filterwarnings("ignore", message="Object at .complete is not recognized")
    i, j = (int(v) for v in args.point.split(","))
    point = (0, i, j)
    names = [n.strip() for n in args.layouts.split(",") if n.strip()]
    unknown = [n for n in names if n not in LAYOUTS]
    if unknown or not names:
        p.error(f"unknown layout(s) {unknown}; choose from {', '.join(LAYOUTS)}")
    paths = ensure_data(args.data_dir, names)
    rows: dict[str, dict[str, Any]] = {}
    for name, path in paths.items():
        arr = zl.open(path)["t2m"]
        dask_ds = xr.open_zarr(path, consolidated=False)
        plain_ds = xr.open_zarr(path, consolidated=False, chunks=None)
        ours = Ours()
        readers: dict[str, Callable[[], tuple[float, float, np.ndarray]]] = {
            "zarrview": lambda ours=ours, arr=arr: ours.run(arr, point)[:3],
            "zarrview, next pixel": lambda ours=ours, arr=arr: _next_pixel(ours, arr, point),
            "xarray (dask)": lambda ds=dask_ds: _xarray(ds, i, j),
            "xarray (chunks=None)": lambda ds=plain_ds: _xarray(ds, i, j),
        }
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in readers}
        try:
            log(f"{name}: warm-up round")
            lines = {k: fn()[2] for k, fn in readers.items()}
            np.testing.assert_array_equal(lines.pop("zarrview, next pixel"), plain_ds.t2m[:, i + 1, j + 1].values)
            for k, line in lines.items():
                np.testing.assert_array_equal(lines["zarrview"], line, err_msg=k)
            for r in range(args.rounds):
                order = list(readers)[r % len(readers):] + list(readers)[:r % len(readers)]
                for k in order:
                    first, full, _ = readers[k]()
                    times[k].append((first, full))
                log(f"{name}: round {r + 1} of {args.rounds}")
        finally:
            ours.close()
        total = ours.model.series.total
        rows[name] = {"chunks": LAYOUTS[name], "line_chunks": total, "chunk_reads": chunk_reads(path, point),
                      "times": times}
    print_table(rows, args, point)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0 if all(r["chunk_reads"] == r["line_chunks"] for r in rows.values()) else 1


def _next_pixel(ours: Ours, arr: Any, point: tuple[int, int, int]) -> tuple[float, float, np.ndarray]:
    """A click, then one on the pixel diagonally next to it: the time of the second."""
    ours.run(arr, point)
    first, full, line, _ = ours.run(arr, (0, point[1] + 1, point[2] + 1), clear=False)
    return first, full, line


def _xarray(ds: Any, i: int, j: int) -> tuple[float, float, np.ndarray]:
    start = time.perf_counter()
    values = ds.t2m[:, i, j].values
    t = time.perf_counter() - start
    return t, t, values


def print_table(rows: dict[str, dict[str, Any]], args: argparse.Namespace, point: tuple[int, int, int]) -> None:
    import xarray as xr
    import zarr

    print(f"# bench_series: t2m{list(SHAPE)} float32, the line [:, {point[1]}, {point[2]}], "
          f"{args.rounds} rounds, medians, warm page cache")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}, xarray {xr.__version__}, zarr {zarr.__version__}")
    print("| chunks | chunks on the line | chunk reads (ours) | reader | first values ms | whole line ms "
          "| reader / zarrview |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for row in rows.values():
        times = row["times"]
        ours_full = [f for _, f in times["zarrview"]]
        for k, ts in times.items():
            first = statistics.median(a for a, _ in ts) * 1000
            full = statistics.median(b for _, b in ts) * 1000
            ratio = statistics.median(b / o for (_, b), o in zip(ts, ours_full))
            shown_first = f"{first:.0f}" if k.startswith("zarrview") else "-"
            shown_ratio = f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"
            print(f"| {tuple(row['chunks'])} | {row['line_chunks']} | {row['chunk_reads']} | {k} | {shown_first} "
                  f"| {full:.0f} | {shown_ratio} |")


if __name__ == "__main__":
    sys.exit(main())
