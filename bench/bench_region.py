"""First pixels of a zoomed region of a huge array over loopback HTTP, and its chunk requests.

Why this exists
---------------
``zarrview --region`` opens a 65536x65536 array already zoomed into a small region. The
window must then read only the chunks that region needs (not a preview of the whole plane)
and show them about as fast as a plain read of that region. This script measures that in a
real ``MainWindow`` (offscreen Qt) against a loopback HTTP server and checks two targets:

* the window makes **at most 48 chunk GETs** (12 chunks intersect the region; the rest is
  the ring of neighbouring chunks the app prefetches once the region is shown);
* the **first pixels** of the region are painted **at most 15 ms after a plain zarrlib read**
  of it would have finished (``zl.open(url)[9000:9512, 9000:9768]``, medians).

What is measured
----------------
Data: a 65536x65536 uint8 Zarr v3 array, chunks 256x256, zstd (level 1), written once with
zarr-python to ``bench/_data/region/big.zarr``; only rows 8960:9984 x columns 8960:10240
(a smooth pattern) are stored, the rest is the fill value, so it is 20 chunk files on disk.
Server: ``tests/http_server.py`` (a ``ThreadingHTTPServer`` on 127.0.0.1, in this process),
whose log gives every request; chunk GETs are the GETs whose path contains ``/c/``.

Each round, in an order that rotates from round to round, every array opened afresh
(opening is not timed):

1. **Window.** A new ``MainWindow`` (1280x820, so a new decoded-chunk cache), then
   ``data.pending_region = (9000, 9512, 9000, 9768)`` and ``data.set_array(zl.open(url))``,
   timed until the scene has a full-resolution tile and is not busy ("detail loaded") and
   until the next paint of the image's viewport has been handled ("first pixels"). Chunk GETs
   are counted at first pixels and again once the app's prefetch has run and the reader is
   quiet ("settled"); the window is then closed.
2. **zarrlib**: ``zl.open(url)[9000:9512, 9000:9768]``.
3. **zarr-python**: ``zarr.open_array(url, mode="r")[...]`` (fsspec's HTTP store).
4. **tensorstore** (if installed): ``ts.open({"driver": "zarr3", "kvstore": {"driver":
   "http", ...}})``, ``[...].read().result()``, cache pool 0.

Every result (the window's detail tile too) is checked against the data written (exit 2 if
one differs). An untimed round first warms imports, the page cache and the connections.

Usage
-----
::

    python bench/bench_region.py                 # 7 rounds
    python bench/bench_region.py --rounds 21 --json out.json --strict
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_gui.py, also when imported from elsewhere
sys.path.insert(0, str(HERE.parent / "tests"))  # http_server.py
import bench_gui as bg  # noqa: E402  (also puts the checkout on sys.path if zarrview is not installed)
import PySide6  # noqa: E402
from http_server import ServerState, serve  # noqa: E402
from PySide6.QtCore import QCoreApplication, QEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import zarrview.zarrlib as zl  # noqa: E402
from zarrview.app.data_view import PREFETCH_DELAY_MS  # noqa: E402

DEFAULT_DATA_DIR = HERE / "_data" / "region"
ARRAY_NAME = "big.zarr"
MARKER_FILE = "bench_complete.json"
SHAPE = (65536, 65536)
CHUNKS = (256, 256)
WRITTEN = (8960, 9984, 8960, 10240)  # r0, r1, c0, c1 of the stored chunks
REGION = (9000, 9512, 9000, 9768)  # r0, r1, c0, c1 shown and read
INDEX = (slice(REGION[0], REGION[1]), slice(REGION[2], REGION[3]))

TARGET_CHUNK_GETS = 48
TARGET_SLACK_MS = 15.0
READERS = ("window", "zarrlib", "zarr-python", "tensorstore")

log = bg.log
BenchError = bg.BenchError


class Mismatch(bg.BenchError):
    pass


# --------------------------------------------------------------------------- data


def pattern() -> np.ndarray:
    """What is stored at ``WRITTEN``: smooth, so zstd compresses it and a wrong tile shows."""
    yy, xx = np.mgrid[0 : WRITTEN[1] - WRITTEN[0], 0 : WRITTEN[3] - WRITTEN[2]]
    return ((np.sin(yy / 40) + np.cos(xx / 60)) * 60 + 128).astype("u1")


def expected() -> np.ndarray:
    return pattern()[REGION[0] - WRITTEN[0] : REGION[1] - WRITTEN[0], REGION[2] - WRITTEN[2] : REGION[3] - WRITTEN[2]]


def ensure_data(data_dir: Path, rewrite: bool) -> Path:
    """The array under ``data_dir``, written with zarr-python unless a matching marker says it is there."""
    marker = data_dir / MARKER_FILE
    want = {"shape": SHAPE, "chunks": CHUNKS, "written": WRITTEN, "dtype": "uint8", "codec": "zstd(level 1)"}
    want = json.loads(json.dumps(want))
    if not rewrite and marker.is_file():
        try:
            if json.loads(marker.read_text()) == want:
                return data_dir / ARRAY_NAME
        except ValueError:
            pass
    import zarr
    from zarr.codecs import ZstdCodec

    log(f"writing {data_dir / ARRAY_NAME}")
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    a = zarr.create_array(data_dir / ARRAY_NAME, shape=SHAPE, chunks=CHUNKS, dtype="u1", fill_value=0,
                          compressors=ZstdCodec(level=1), zarr_format=3)
    a[WRITTEN[0] : WRITTEN[1], WRITTEN[2] : WRITTEN[3]] = pattern()
    marker.write_text(json.dumps(want, indent=2) + "\n")
    return data_dir / ARRAY_NAME


# --------------------------------------------------------------------------- one measurement each


class DetailProbe(bg.FrameProbe):
    """``FrameProbe`` whose "loaded" is: the scene holds a full-resolution tile and is not busy."""

    def _loaded(self) -> None:
        scene = self.w.data.scene
        if self._armed and self.loaded_at is None and scene.detail is not None and not scene.busy:
            self.loaded_at = time.perf_counter()


def chunk_gets(reqs: Sequence[tuple[str, str, str | None]]) -> int:
    return sum(1 for method, path, _ in reqs if method == "GET" and "/c/" in path)


def check(name: str, got: Any) -> None:
    got = np.asarray(got)
    if got.shape != expected().shape or not np.array_equal(got, expected()):
        raise Mismatch(f"{name}: the region read differs from the data written")


def measure_window(app: QApplication, url: str, state: ServerState) -> dict[str, float]:
    arr = zl.open(url)
    w = bg.new_window()
    probe = DetailProbe(w)
    try:
        bg.idle(bg.SETTLE_S)  # the new window's own first paints
        state.clear()
        w.data.pending_region = REGION
        probe.arm()
        t0 = time.perf_counter()
        w.data.set_array(arr)
        probe.wait_painted()
        first = state.requests()
        bg.idle(PREFETCH_DELAY_MS / 1000 + 0.1)  # the prefetch runs once the frame is painted
        bg.run_until(lambda: bg.reader_quiet(w))
        bg.idle(0.1)
        settled = state.requests()
        detail = w.data.scene.detail
        if detail is None or not detail.full_resolution or not detail.covers(*REGION):
            raise Mismatch(f"window: the detail tile does not cover the region {REGION}")
        r0, c0 = REGION[0] - detail.r0, REGION[2] - detail.c0
        check("window", detail.values[r0 : r0 + REGION[1] - REGION[0], c0 : c0 + REGION[3] - REGION[2]])
        assert probe.loaded_at is not None and probe.painted_at is not None
        return {"loaded_ms": (probe.loaded_at - t0) * 1000, "ms": (probe.painted_at - t0) * 1000,
                "chunk_gets": chunk_gets(first), "requests": len(first),
                "settled_chunk_gets": chunk_gets(settled), "settled_requests": len(settled)}
    finally:
        probe.deleteLater()
        bg.close_window(app, w)


def timed_read(name: str, read: Callable[[], Any], state: ServerState) -> dict[str, float]:
    state.clear()
    t0 = time.perf_counter()
    out = read()
    ms = (time.perf_counter() - t0) * 1000
    reqs = state.requests()
    check(name, out)
    return {"ms": ms, "chunk_gets": chunk_gets(reqs), "requests": len(reqs)}


def measure_zarrlib(url: str, state: ServerState) -> dict[str, float]:
    arr = zl.open(url)
    return timed_read("zarrlib", lambda: arr[INDEX], state)


def measure_zarr_python(url: str, state: ServerState) -> dict[str, float]:
    import zarr

    arr = zarr.open_array(url, mode="r")
    return timed_read("zarr-python", lambda: arr[INDEX], state)


def measure_tensorstore(url: str, state: ServerState) -> dict[str, float]:
    import tensorstore as ts

    ctx = ts.Context({"cache_pool": {"total_bytes_limit": 0}})  # no decoded-chunk cache
    spec = {"driver": "zarr3", "kvstore": {"driver": "http", "base_url": url.rstrip("/") + "/"}}
    arr = ts.open(spec, read=True, context=ctx).result()
    return timed_read("tensorstore", lambda: arr[INDEX].read().result(), state)


def run_round(app: QApplication, url: str, state: ServerState, readers: Sequence[str]) -> dict[str, dict[str, float]]:
    out = {}
    for name in readers:
        if name == "window":
            out[name] = measure_window(app, url, state)
        elif name == "zarrlib":
            out[name] = measure_zarrlib(url, state)
        elif name == "zarr-python":
            out[name] = measure_zarr_python(url, state)
        else:
            out[name] = measure_tensorstore(url, state)
    return out


# --------------------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), model)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = {"python": platform.python_version(), "PySide6": PySide6.__version__}
    for mod in ("zarr", "fsspec", "tensorstore"):
        try:
            versions[mod] = metadata.version(mod)
        except metadata.PackageNotFoundError:
            versions[mod] = None
    return {"cpu": model, "cores": usable, **versions, "qpa": os.environ.get("QT_QPA_PLATFORM")}


def median(rounds: Sequence[dict[str, dict[str, float]]], reader: str, key: str = "ms") -> float:
    return statistics.median(r[reader][key] for r in rounds)


def counts(rounds: Sequence[dict[str, dict[str, float]]], reader: str, key: str) -> str:
    lo, hi = min(r[reader][key] for r in rounds), max(r[reader][key] for r in rounds)
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def ratio(rounds: Sequence[dict[str, dict[str, float]]], a: str, b: str, key_a: str = "ms") -> float:
    """The median of the per-round ratios a / b."""
    return statistics.median(r[a][key_a] / r[b]["ms"] for r in rounds)


def report(rounds: list[dict[str, dict[str, float]]], readers: Sequence[str], info: dict[str, Any]) -> int:
    """Print the tables; return how many targets failed."""
    print(f"## zarrview region benchmark: first pixels of {REGION[1] - REGION[0]}x{REGION[3] - REGION[2]} "
          f"of {SHAPE[0]}x{SHAPE[1]} over loopback HTTP\n")
    print(f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, PySide6 {info['PySide6']}, "
          f"zarr {info['zarr']}, fsspec {info['fsspec']}, tensorstore {info['tensorstore'] or 'not installed'}, "
          f"QT_QPA_PLATFORM={info['qpa']}; server tests/http_server.py in this process; {len(rounds)} rounds\n")
    rows = [("window: set_array → detail loaded", "window", "loaded_ms", "chunk_gets", "requests"),
            ("window: set_array → first pixels painted", "window", "ms", "chunk_gets", "requests"),
            ("window: settled (after the prefetch ring)", "window", None, "settled_chunk_gets", "settled_requests")]
    rows += [(f"{name} read" + (" `zl.open(url)[region]`" if name == "zarrlib" else ""), name, "ms",
              "chunk_gets", "requests") for name in readers if name != "window"]
    print("| measurement | median ms | min ms | max ms | chunk GETs | all requests |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, reader, key, gets, reqs in rows:
        if reader not in readers:
            continue
        times = ("-", "-", "-") if key is None else tuple(
            f"{f(r[reader][key] for r in rounds):.1f}" for f in (statistics.median, min, max))
        print(f"| {label} | {' | '.join(times)} | {counts(rounds, reader, gets)} | {counts(rounds, reader, reqs)} |")
    print("\nRatios (median of per-round ratios):\n")
    for label, a, b in (("window first pixels / zarrlib read", "window", "zarrlib"),
                        ("zarrlib / tensorstore", "zarrlib", "tensorstore"),
                        ("zarr-python / zarrlib", "zarr-python", "zarrlib")):
        if a in readers and b in readers:
            print(f"- {label}: {ratio(rounds, a, b):.2f}")
    failed = 0
    print()
    if "window" in readers:
        worst = max(r["window"]["settled_chunk_gets"] for r in rounds)
        ok = worst <= TARGET_CHUNK_GETS
        failed += not ok
        print(f"- window chunk GETs ≤ {TARGET_CHUNK_GETS} (settled, worst round): {worst} "
              f"{'PASS' if ok else 'FAIL'}")
    if "window" in readers and "zarrlib" in readers:
        first, limit = median(rounds, "window"), median(rounds, "zarrlib") + TARGET_SLACK_MS
        ok = first <= limit
        failed += not ok
        print(f"- first pixels ≤ zarrlib read + {TARGET_SLACK_MS:g} ms: {first:.1f} ≤ {limit:.1f} "
              f"{'PASS' if ok else 'FAIL'}")
    print(f"\n{failed} target(s) failed.")
    return failed


# --------------------------------------------------------------------------- main


def close_http_clients() -> None:
    """Drop fsspec's cached HTTP filesystems (zarrlib's and zarr-python's), which closes their sessions."""
    from fsspec.implementations.http import HTTPFileSystem

    HTTPFileSystem.clear_instance_cache()
    gc.collect()


def have_tensorstore() -> bool:
    return importlib.util.find_spec("tensorstore") is not None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="where the array is written")
    p.add_argument("--rewrite", action="store_true", help="write the array again")
    p.add_argument("--json", type=Path, help="write the raw rounds here")
    p.add_argument("--strict", action="store_true", help="exit with code 1 if a target fails")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    readers = [r for r in READERS if r != "tensorstore" or have_tensorstore()]
    if "tensorstore" not in readers:
        log("tensorstore is not installed: leaving it out")
    tune = getattr(zl, "tune_process", None)
    if tune is not None:
        tune()  # as the app does at start
    path = ensure_data(args.data_dir, args.rewrite)
    rounds: list[dict[str, dict[str, float]]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="zarrview-bench-") as settings, serve(path.parent) as (base, state):
            app = bg.make_app(settings)
            url = f"{base}/{path.name}"
            log(f"serving {path.parent} at {base}; untimed warm-up round")
            run_round(app, url, state, readers)
            for i in range(args.rounds):
                order = readers[i % len(readers):] + readers[: i % len(readers)]
                rounds.append(run_round(app, url, state, order))
                log(f"round {i + 1}/{args.rounds}: " + ", ".join(f"{k} {rounds[-1][k]['ms']:.1f} ms" for k in readers))
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)  # the last window goes
            close_http_clients()  # their keep-alive connections hold server threads
    except Mismatch as e:
        log(f"error: {e}")
        return 2
    info = machine()
    failed = report(rounds, readers, info)
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "region": REGION, "rounds": rounds}, indent=1) + "\n")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
