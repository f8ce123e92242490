"""First pixels of a remote OME-Zarr image: requests, round trips and time, over loopback HTTP.

Why this exists
---------------
A remote 16384x16384 OME image should show its first pixels after one round trip
for the metadata documents it needs and one for the coarsest level's chunks. Over a real
network each round trip costs tens of milliseconds, so how many happen one after another
decides the wait, more than decoding does. This script serves a 4-level OME-Zarr 0.5 pyramid
from ``tests/http_server.py`` with a fixed delay before every answer (``--latency-ms``, 20 by
default) and counts the requests and the round trips a first view takes.

What is measured
----------------
Data: a (1, 16384, 16384) uint16 image, levels 16384², 8192², 4096², 2048² (chunks 512²,
zstd), written once under ``bench/_data/ome16k/img.zarr``; only the coarsest level is stored
(the others read as the fill value), so the data is small on disk. Each round, afresh:

1. **zarrview, headless**: ``zl.open(url)``, ``ome.detect(group)``, ``image_state``, and a
   ``ViewController`` showing the whole image in an 800-pixel view, until its first tile lands.
2. **zarrview, window**: ``MainWindow.open_location(url)`` until the image's first tile is
   painted (offscreen Qt).
3. **ome-zarr-py** (the oracle): ``Reader(parse_url(url))`` and the coarsest level's array
   computed (dask).
Round trips are the time divided by the latency, rounded: with 20 ms per answer, decoding and
parsing on this machine add a few milliseconds, well under one round trip.

Usage: ``python bench/bench_ome.py [--rounds 5] [--latency-ms 20] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]
DATA = REPO / "bench" / "_data" / "ome16k" / "img.zarr"
#: the same image with consolidated metadata in its zarr.json (zarr-python's): one metadata round trip
CONSOLIDATED = DATA.parent / "img_consolidated.zarr"
N, CHUNK, LEVELS = 16384, 512, 4


def ensure_data() -> None:
    import zarr

    marker = DATA / ".complete"
    if marker.exists() and CONSOLIDATED.exists():
        return
    g = zarr.open_group(DATA, mode="w", zarr_format=3)
    datasets = []
    for k in range(LEVELS):
        f = 2**k
        datasets.append({"path": str(k), "coordinateTransformations": [{"type": "scale", "scale": [1.0, f, f]}]})
        g.create_array(str(k), shape=(1, N // f, N // f), chunks=(1, CHUNK, CHUNK), dtype="u2", fill_value=0,
                       dimension_names=["c", "y", "x"])
    axes = [{"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"}]
    g.attrs.update({"ome": {"version": "0.5", "multiscales": [{"name": "bench", "axes": axes, "datasets": datasets}]}})
    yy, xx = np.mgrid[0 : N // 8, 0 : N // 8]
    g[str(LEVELS - 1)][0] = ((np.sin(yy / 90) + np.cos(xx / 70)) * 15000 + 32000).astype("u2")
    import shutil

    shutil.rmtree(CONSOLIDATED, ignore_errors=True)
    shutil.copytree(DATA, CONSOLIDATED)
    zarr.consolidate_metadata(str(CONSOLIDATED))
    marker.write_text("ok")


def _counts(log: Any) -> tuple[int, int]:
    gets = [r[1] for r in log.requests("GET")]
    chunks = sum("/c/" in p for p in gets)
    return len(gets) - chunks, chunks


def headless(url: str) -> float:
    import zarrview.zarrlib as zl
    from zarrview.scheduling import Driver, WorkerPool
    from zarrview.viewing import ViewController
    from zarrview.viewing.ome import OmeImage, detect
    from zarrview.viewing.ome.view import image_state

    t0 = time.perf_counter()
    image = detect(zl.open(url), labels=False)  # type: ignore[arg-type]
    assert isinstance(image, OmeImage)
    state = image_state(image)
    assert state is not None
    pool = WorkerPool(cache_bytes=0)
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    ctl = ViewController()
    driver = Driver(ctl, pool, lambda s: None, post=inbox.put)
    driver.show(state.with_(region=(0, N, 0, N), screen_scale=(800 / N, 800 / N)))
    while ctl.scene.detail is None:
        inbox.get(timeout=60)()
    elapsed = time.perf_counter() - t0
    assert ctl.scene.detail.level == LEVELS - 1, ctl.scene.detail.level
    pool.close()
    return elapsed


def window(url: str) -> float:
    from bench_gui import close_window, new_window, run_until
    from PySide6.QtWidgets import QApplication

    w = new_window()
    t0 = time.perf_counter()
    w.open_location(url)
    run_until(lambda: w.data.scene.detail is not None and not w.data.scene.busy, timeout=60, poll_ms=1)
    QApplication.processEvents()  # the paint that follows
    elapsed = time.perf_counter() - t0
    close_window(QApplication.instance(), w)  # type: ignore[arg-type]
    return elapsed


def ome_zarr_py(url: str) -> float | None:
    try:
        from ome_zarr.io import parse_url
        from ome_zarr.reader import Reader
    except ImportError:
        return None
    t0 = time.perf_counter()
    nodes = list(Reader(parse_url(url))())
    np.asarray(nodes[0].data[-1][0].compute())
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    ensure_data()
    from bench_gui import make_app
    from http_server import Faults, serve

    import tempfile

    app = make_app(tempfile.mkdtemp(prefix="bench-ome-"))  # noqa: F841 - kept alive for the window rounds
    from zarrview.app.bridge import init_bridge

    init_bridge()
    latency = args.latency_ms / 1000
    rows: dict[str, list[float]] = {}
    requests: dict[str, tuple[int, int]] = {}
    runs = (("headless", headless, DATA), ("window", window, DATA), ("ome-zarr-py", ome_zarr_py, DATA),
            ("headless, consolidated", headless, CONSOLIDATED), ("window, consolidated", window, CONSOLIDATED))
    with serve(DATA.parent, Faults(delay=latency)) as (base, log):
        for rnd in range(args.rounds + 1):  # round 0 warms imports and connections, untimed
            for name, fn, store in runs:
                log.clear()
                t = fn(f"{base}/{store.name}")
                if t is None:
                    continue
                if rnd:
                    rows.setdefault(name, []).append(t)
                requests[name] = _counts(log)
    print(f"# bench_ome: first pixels of a remote 4-level 16384² OME-Zarr image, {args.latency_ms:g} ms per answer")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print("| reader | median ms | round trips (ms / latency) | metadata GETs | chunk GETs |")
    print("|---|---:|---:|---:|---:|")
    for name, times in rows.items():
        if times:
            med = statistics.median(times)
            meta, chunks = requests[name]
            print(f"| {name} | {med * 1000:.0f} | {med / latency:.1f} | {meta} | {chunks} |")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "requests": requests, "latency": latency}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
