"""Hierarchies of 100,000 nodes and arrays of any size, against their targets.

Why this exists
---------------
A consolidated hierarchy of 100 groups x 1,000 arrays took 14-30 s to print with
``zarrview tree`` and 34-37 s (and 3 GB) before the window answered. This script measures the
command line, the library and the window on the issue's stores, each number beside its target.

What is measured
----------------
Data, written once by ``tests/large_hierarchy.py`` under ``bench/_data/tree`` (about 2.6 GB of
small files; ``--data-dir`` elsewhere): ``consolidated.zarr`` (100 x 1,000 arrays, 100,100
nodes, a 90 MB root ``zarr.json`` as zarr-python writes it), ``plain.zarr`` (the same without
consolidated metadata), ``wide.zarr`` (one group of 100,000 children, not consolidated) and
``huge.zarr`` (a (100000, 100000, 100000) float32 array, nothing stored).

Every measurement runs in a fresh child process (``--probe NAME``) that prints its timings;
the parent takes the child's peak resident memory from ``os.wait4``. Medians of ``--runs``
(warm OS page cache: one untimed run first). The command line is timed from outside, as a
user waits for it. The library: ``zl.open`` of the root, ``root.members()``, the 1,000 members
of ``/g050``; paged listing (``Group.iter_member_names(1000)``) of the wide group from disk and
from moto's S3 server on loopback (time to the first page, to the last). The window (offscreen,
``bench_gui``'s helpers): from ``open_location`` to the first rows under the store, expanding
``/g050`` until its 1,000 rows are in the model, typing ``a0500`` into the filter a key at a time
(each until the filter is idle: the first, which makes the filter's index, and the median of the
rest), and the first rows of the wide group.

Usage: ``python bench/bench_tree.py [--runs 5] [--skip window,s3] [--data-dir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "bench")]
STORES = {"consolidated.zarr": dict(consolidated=True), "plain.zarr": dict(consolidated=False)}
NODE = "/g050/a0500"
MARK = ".written-v1"  # bumped when the generator changes what it writes


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data


def ensure_data(root: Path) -> dict[str, Path]:
    from large_hierarchy import write_hierarchy, write_huge_array, write_wide_group

    makers: dict[str, Callable[[Path], Any]] = {
        "consolidated.zarr": lambda p: write_hierarchy(p, 100, 1000, consolidated=True),
        "plain.zarr": lambda p: write_hierarchy(p, 100, 1000, consolidated=False),
        "wide.zarr": lambda p: write_wide_group(p, 100_000),
        "huge.zarr": write_huge_array,
    }
    out = {}
    for name, make in makers.items():
        path = root / name
        if not (path / MARK).exists():
            shutil.rmtree(path, ignore_errors=True)
            log(f"writing {path} …")
            start = time.perf_counter()
            make(path)
            (path / MARK).write_text("")
            log(f"  {time.perf_counter() - start:.1f} s")
        out[name.split(".")[0]] = path
    return out


# --------------------------------------------------------------------------- probes (children)


def probe_library(data: Path) -> dict[str, float]:
    import zarrview.zarrlib as zl

    t0 = time.perf_counter()
    root = zl.open(data)
    t1 = time.perf_counter()
    groups = root.members()
    t2 = time.perf_counter()
    arrays = next(g for g in groups if g.name == "g050").members()
    t3 = time.perf_counter()
    assert len(groups) == 100 and len(arrays) == 1000
    return {"open": t1 - t0, "root members": t2 - t1, "1000 members": t3 - t2}


def probe_pages(location: str, **options: Any) -> dict[str, float]:
    import zarrview.zarrlib as zl

    t0 = time.perf_counter()
    group = zl.open(location, **options)
    pages = group.iter_member_names(1000)
    first = next(pages)
    t1 = time.perf_counter()
    nodes = group.load_members(first)
    t2 = time.perf_counter()
    count = len(first) + sum(len(p) for p in pages)
    t3 = time.perf_counter()
    assert count == 100_000 and len(nodes) == 1000, (count, len(nodes))
    return {"first page": t1 - t0, "its nodes": t2 - t1, "all pages": t3 - t0}


def probe_window(stores: dict[str, Path]) -> dict[str, float]:
    import tempfile

    from bench_gui import make_app, new_window, run_until

    app = make_app(tempfile.mkdtemp())
    w = new_window()
    model = w.model

    def children(index: Any) -> list[str]:
        return [str(model.index(r, 0, index).data()) for r in range(model.rowCount(index))]

    def shown(index: Any, count: int) -> bool:
        names = children(index)
        return len(names) >= count and not any(n.startswith("Loading") for n in names)

    out: dict[str, float] = {}
    t0 = time.perf_counter()
    w.open_location(str(stores["consolidated"]))
    run_until(lambda: model.rowCount() > 0 and shown(model.index(0, 0), 100), poll_ms=1)
    out["first rows"] = time.perf_counter() - t0
    top = model.index(0, 0)
    g050 = next(model.index(r, 0, top) for r in range(model.rowCount(top)) if model.index(r, 0, top).data() == "g050")
    # the window finishes opening first (its metadata tabs, the filter's index on a worker), as it
    # has by the time a person clicks: a fifth of a second
    run_until(w.is_settled, poll_ms=1)
    idle = time.perf_counter() + 0.2
    run_until(lambda: time.perf_counter() > idle, poll_ms=10)
    t0 = time.perf_counter()
    w.tree.expand(w.proxy.mapFromSource(g050))
    run_until(lambda: shown(g050, 1000), poll_ms=1)
    out["expand 1000"] = time.perf_counter() - t0
    typed = []
    for text in ("a", "a0", "a05", "a050", "a0500"):  # one keystroke at a time, each waited for
        t0 = time.perf_counter()
        w.filter.setText(text)
        run_until(lambda: not w.tree_filter.searching and w.is_settled(), poll_ms=1)
        typed.append(time.perf_counter() - t0)
    out["filter first key"] = typed[0]
    out["filter keystroke"] = statistics.median(typed[1:])
    w.filter.setText("")
    run_until(w.is_settled)
    t0 = time.perf_counter()
    w.open_location(str(stores["wide"]))
    run_until(lambda: model.rowCount() > 1 and shown(model.index(1, 0), 1000), poll_ms=1)
    out["wide: first rows"] = time.perf_counter() - t0
    w.close()
    app.processEvents()
    return out


def child_main(name: str, arg: str) -> int:
    if name == "library":
        result = probe_library(Path(arg))
    elif name == "pages":
        location, options = json.loads(arg)
        result = probe_pages(location, **options)
    elif name == "window":
        result = probe_window({k: Path(v) for k, v in json.loads(arg).items()})
    else:
        raise SystemExit(f"unknown probe {name}")
    print(json.dumps(result))
    return 0


# --------------------------------------------------------------------------- the parent


#: run a module as ``python -m`` would, then print the process's peak resident memory (VmHWM:
#: per address space, so unlike ``ru_maxrss`` it does not start from the forking parent's)
PEAK = ("import atexit, runpy, sys\n"
        "def peak():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM'):\n"
        "            sys.stderr.write('\\nVMHWM ' + line.split()[1] + '\\n')\n"
        "atexit.register(peak)\n"
        "sys.argv = sys.argv[1:]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__') if sys.argv[0].endswith('.py') else "
        "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n")


def run_child(argv: list[str], stdout: int | None = subprocess.PIPE) -> tuple[float, float, str]:
    """(wall seconds, peak resident MB, stdout) of ``python -c PEAK argv…``."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PEAK, *argv], stdout=stdout, stderr=subprocess.PIPE,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - start
    err = proc.stderr.decode(errors="replace")
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv[:3])} … failed ({proc.returncode}): {err.strip()[-2000:]}")
    peaks = [line.split()[1] for line in err.splitlines() if line.startswith("VMHWM ")]
    return wall, int(peaks[-1]) / 1024 if peaks else float("nan"), proc.stdout.decode() if proc.stdout else ""


def measure(argv: list[str], runs: int, parse: bool, warm_up: bool = True) -> dict[str, tuple[float, float, float]] | None:
    """name -> (median, min, max) seconds over ``runs`` (after one untimed run), with ``rss``
    (median MB) and ``wall`` for the whole child; None where the probe fails."""
    samples: dict[str, list[float]] = {}
    try:
        for i in range(runs + warm_up):
            wall, rss, out = run_child(argv, subprocess.PIPE if parse else subprocess.DEVNULL)
            if warm_up and i == 0:
                continue
            for key, value in ({**json.loads(out), "wall": wall} if parse else {"wall": wall}).items():
                samples.setdefault(key, []).append(value)
            samples.setdefault("rss", []).append(rss)
    except Exception as e:  # noqa: BLE001 - a probe that cannot run is reported, not fatal
        log(f"  failed: {e}")
        return None
    return {k: (statistics.median(v), min(v), max(v)) for k, v in samples.items()}


def s3_location(wide: Path) -> tuple[Any, str] | None:
    """A moto S3 server holding ``wide`` (put straight into its store), or None without moto."""
    try:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        from cloud_servers import moto_s3
    except ImportError:
        return None
    import logging

    import boto3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line a request otherwise
    server = moto_s3()
    endpoint = server.__enter__()
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="bench")
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]
    for path in wide.rglob("zarr.json"):
        backend.put_object("bench", f"wide.zarr/{path.relative_to(wide).as_posix()}", path.read_bytes())
    return server, endpoint


ROWS = [  # (section, probe key, measurement key, label, target seconds or None, target text)
    ("cli tree", "cli tree", "wall", "zarrview tree (100,100 lines)", 2.0, "< 2 s"),
    ("cli info", "cli info", "wall", f"zarrview info ::{NODE}", 1.0, "< 1 s"),
    ("cli huge", "cli huge", "wall", "zarrview info of the (1e5)^3 array", 1.0, "at once"),
    ("library", "library", "open", "zl.open (consolidated root)", None, "—"),
    ("library", "library", "root members", "root.members() (100 groups)", None, "—"),
    ("library", "library", "1000 members", "/g050 .members() (1,000)", 0.05, "< 50 ms"),
    ("plain", "plain", "open", "zl.open (no consolidated metadata)", None, "—"),
    ("plain", "plain", "root members", "root.members() (listed)", None, "—"),
    ("plain", "plain", "1000 members", "/g050 .members() (listed)", None, "—"),
    ("pages", "pages", "first page", "100,000 children, local: first page", 1.0, "at once"),
    ("pages", "pages", "its nodes", "… its 1,000 nodes", None, "—"),
    ("pages", "pages", "all pages", "… all pages", None, "—"),
    ("s3", "s3", "first page", "100,000 children, S3: first page", 1.0, "at once"),
    ("s3", "s3", "its nodes", "… its 1,000 nodes", None, "—"),
    ("s3", "s3", "all pages", "… all pages", None, "—"),
    ("window", "window", "first rows", "window: open → first rows", 1.0, "< 1 s"),
    ("window", "window", "expand 1000", "window: expand /g050 (1,000 rows)", 0.05, "< 50 ms"),
    ("window", "window", "filter first key", "window: filter, first keystroke (index made)", None, "—"),
    ("window", "window", "filter keystroke", "window: filter, next keystrokes (median)", 0.1, "< 100 ms"),
    ("window", "window", "wide: first rows", "window: wide group, first rows", 1.0, "at once"),
]
RSS_TARGETS = {"window": (500, "< 500 MB")}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        return child_main(sys.argv[2], sys.argv[3])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--skip", default="", help="comma-separated sections to leave out (cli,library,pages,s3,window)")
    p.add_argument("--data-dir", type=Path, default=REPO / "bench" / "_data" / "tree")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    stores = ensure_data(args.data_dir)
    me = [str(Path(__file__).resolve()), "--probe"]
    zv = ["zarrview"]
    plans: dict[str, list[str]] = {
        "cli tree": zv + ["tree", str(stores["consolidated"])],
        "cli info": zv + ["info", f"{stores['consolidated']}::{NODE}"],
        "cli huge": zv + ["info", str(stores["huge"])],
        "library": me + ["library", str(stores["consolidated"])],
        "plain": me + ["library", str(stores["plain"])],
        "pages": me + ["pages", json.dumps([str(stores["wide"]), {}])],
        "window": me + ["window", json.dumps({k: str(v) for k, v in stores.items()})],
    }
    results: dict[str, Any] = {}
    server = None
    for name, argv in plans.items():
        if name.split()[0] in skip:
            continue
        log(f"{name} …")
        results[name] = measure(argv, max(1, args.runs if name != "window" else min(args.runs, 3)),
                                parse=not name.startswith("cli"))
    if "s3" not in skip:
        log("s3 (moto on loopback) …")
        found = s3_location(stores["wide"])
        if found is not None:
            server, endpoint = found
            results["s3"] = measure(me + ["pages", json.dumps(["s3://bench/wide.zarr", {"endpoint_url": endpoint}])],
                                    max(1, min(args.runs, 2)), parse=True, warm_up=False)
            server.__exit__(None, None, None)
    print_table(results, args.runs)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def print_table(results: dict[str, Any], runs: int) -> None:
    import platform

    print(f"\nzarrview large hierarchies — {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; medians of {runs} runs (min–max), warm page cache\n")
    print("| measurement | median | min–max | peak RSS | target | |")
    print("|---|---:|---:|---:|---|---|")
    for section, probe, key, label, target, text in ROWS:
        found = results.get(probe)
        if section.split()[0] not in {p.split()[0] for p in results} and found is None:
            continue
        if found is None or key not in found:
            print(f"| {label} | n/a | | | {text} | probe failed |")
            continue
        med, lo, hi = found[key]
        rss = found["rss"][0]
        verdict = "" if target is None else ("met" if med < target else "**missed**")
        rss_target, rss_text = RSS_TARGETS.get(probe, (None, ""))
        if rss_target is not None and key == "first rows":
            verdict += f"; RSS {rss_text}: {'met' if rss < rss_target else '**missed**'}"
        print(f"| {label} | {_fmt(med)} | {_fmt(lo)}–{_fmt(hi)} | {rss:.0f} MB | {text} | {verdict} |")


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


if __name__ == "__main__":
    sys.exit(main())
