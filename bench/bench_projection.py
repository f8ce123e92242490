"""Maximum intensity projection: zarrview against dask.array and xarray on the same stack.

What is measured
----------------
The maximum over the first dimension of a (512, 2048, 2048) uint16 stack chunked (16, 512, 512)
(``--quick``: (128, 1024, 1024), chunked (16, 256, 256)), written once by zarr-python (its default
zstd codec) under ``bench/_data/`` and reused. Three readers:

* ``zarrview``: ``viewing.projection.reduce.project``, slab by slab of whole chunks through zarrlib;
* ``dask``: ``dask.array.from_zarr(path).max(axis=0)`` on the threads scheduler (zarr-python reads);
* ``xarray``: ``xarray.open_zarr(path)["v"].max("z")`` (dask chunks from the store, threads scheduler).

Each run is a fresh process (imports and opening are not timed): the time of the projection, the
CPU time it took (all threads; on a machine shared with other work, what a reader costs whatever
share of the cores it got), and the peak resident memory it added (the process's VmHWM, reset
just before the projection, minus the resident size then).
The OS page cache is warm: one untimed run first reads every file. Rounds rotate the order of the
readers, so load from other work hits them alike; medians are printed, with each reader's ratio
to zarrview and whether the three planes agree.

Usage::

    python bench/bench_projection.py            # the full stack, 3 rounds
    python bench/bench_projection.py --quick    # smaller, for a 2-core machine
    python bench/bench_projection.py --rounds 5 --readers zarrview,dask
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "_data"
READERS = ("zarrview", "dask", "xarray")
FULL = ((512, 2048, 2048), (16, 512, 512))
QUICK = ((128, 1024, 1024), (16, 256, 256))


def ensure_data(shape: tuple[int, ...], chunks: tuple[int, ...]) -> Path:
    """The stack as a Zarr v3 group holding ``v`` (dims z, y, x), written by zarr-python once."""
    import zarr

    path = DATA / f"projection_{'x'.join(map(str, shape))}_{'x'.join(map(str, chunks))}.zarr"
    done = path / "complete"
    if done.exists():
        return path
    rng = np.random.default_rng(0)
    group = zarr.open_group(path, mode="w")
    v = group.create_array("v", shape=shape, chunks=chunks, dtype="u2", dimension_names=("z", "y", "x"))
    yy, xx = np.mgrid[: shape[1], : shape[2]]
    base = (2000 + 1500 * np.sin(yy / 97.0) * np.cos(xx / 61.0)).astype(np.float32)
    for z0 in range(0, shape[0], chunks[0]):  # a smooth field with noise: compresses as microscopy does
        n = min(chunks[0], shape[0] - z0)
        noise = rng.normal(0, 300, (n, *shape[1:])).astype(np.float32)
        v[z0:z0 + n] = np.clip(base + noise + 40 * z0, 0, 65535).astype("u2")
    done.write_text("ok")
    return path


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def reset_peak() -> None:
    """The peak resident size from now on (Linux 4.0+): not the parent's, whose size a forked child
    starts its ``ru_maxrss`` from, nor what importing and opening took."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss() -> int:
    """VmHWM: the peak resident size of this process image (since ``reset_peak``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cpu_seconds() -> float:
    """User and system time of every thread of this process: what a reader costs, whatever
    share of the cores other work on a shared machine leaves it."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def child(reader: str, path: Path, out: Path | None) -> None:
    """One projection in this process; prints seconds and the peak memory it added, as JSON."""
    if reader == "zarrview":
        from zarrview import zarrlib as zl
        from zarrview.viewing.projection.reduce import project
        from zarrview.viewing.projection.spec import ReduceText, projection

        zl.tune_process()  # as the app and the CLI do
        arr = zl.open(f"{path}::/v")
        assert isinstance(arr, zl.Array)
        p = projection(arr, (0, slice(None), slice(None)), ReduceText("max", "z"))

        def run() -> np.ndarray:
            return project(p)
    elif reader == "dask":
        import dask
        import dask.array as da

        stack = da.from_zarr(str(path / "v"))

        def run() -> np.ndarray:
            with dask.config.set(scheduler="threads"):
                return np.asarray(stack.max(axis=0).compute())
    else:
        import dask
        import xarray as xr

        ds = xr.open_zarr(path, consolidated=False)

        def run() -> np.ndarray:
            with dask.config.set(scheduler="threads"):
                return np.asarray(ds["v"].max("z").compute().values)
    before = rss()
    reset_peak()
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    plane = run()
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu0
    peak = peak_rss()
    if out is not None:
        np.save(out, plane)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "added_bytes": max(0, peak - before)}))


def spawn(reader: str, path: Path, out: Path | None = None) -> dict[str, float]:
    args = [sys.executable, __file__, "--child", reader, "--path", str(path)] + (["--out", str(out)] if out else [])
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--readers", default=",".join(READERS))
    ap.add_argument("--child")
    ap.add_argument("--path")
    ap.add_argument("--out")
    ns = ap.parse_args()
    if ns.child:
        child(ns.child, Path(ns.path), Path(ns.out) if ns.out else None)
        return
    shape, chunks = QUICK if ns.quick else FULL
    readers = [r for r in ns.readers.split(",") if r in READERS]
    path = ensure_data(shape, chunks)
    plane_mib = shape[1] * shape[2] * 2 / 2**20
    slab_mib = chunks[0] * shape[1] * shape[2] * 2 / 2**20
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; stack {shape} uint16 chunked "
          f"{chunks}; one plane {plane_mib:.0f} MiB, one slab {slab_mib:.0f} MiB")
    planes = {}
    for reader in readers:  # warm the page cache and keep each reader's plane for the comparison
        out = DATA / f"_projection_{reader}.npy"
        spawn(reader, path, out)
        planes[reader] = np.load(out)
        out.unlink()
    first = planes[readers[0]]
    agree = all(np.array_equal(first, plane) for plane in planes.values())
    times: dict[str, list[float]] = {r: [] for r in readers}
    mems: dict[str, list[float]] = {r: [] for r in readers}
    cpus: dict[str, list[float]] = {r: [] for r in readers}
    for rnd in range(ns.rounds):
        order = readers[rnd % len(readers):] + readers[: rnd % len(readers)]
        for reader in order:
            got = spawn(reader, path)
            times[reader].append(got["seconds"])
            cpus[reader].append(got["cpu_seconds"])
            mems[reader].append(got["added_bytes"] / 2**20)
    base = statistics.median(times[readers[0]])
    print(f"planes agree: {agree}")
    print("| reader | median s | runs (s) | / zarrview | CPU s (median) | peak added MiB (median) |")
    print("|---|---|---|---|---|---|")
    for reader in readers:
        med = statistics.median(times[reader])
        runs = ", ".join(f"{t:.2f}" for t in times[reader])
        print(f"| {reader} | {med:.2f} | {runs} | {med / base:.2f} | {statistics.median(cpus[reader]):.2f} "
              f"| {statistics.median(mems[reader]):.0f} |")


if __name__ == "__main__":
    main()
