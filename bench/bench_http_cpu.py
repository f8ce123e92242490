"""Where the CPU of an HTTP read goes: per thread, zarrlib against tensorstore, same server.

Why this exists
---------------
On a machine with few cores shared with the web server, a loopback read is CPU-bound: its
wall time cannot drop below the CPU it costs (reader threads plus server) divided by the
cores. ``bench_http.py`` gives the wall-time ratio; this script says what it is made of, so a
gap can be put on its cause (decoding, the HTTP client, the server) and its floor computed:
``(reader CPU + server CPU) / cores`` for each reader, and the ratio of the two floors -- the
best zarrlib/tensorstore wall ratio that perfect overlap of fetching and decoding could give.

Method: the data, layouts and nginx server of ``bench_http.py``; each reader opens the array
once, reads it a few times untimed, then reads it ``--reads`` times in a row while the CPU of
every thread of this process (``/proc/self/task/*/stat``) and of the nginx processes is
sampled before and after. Reported per read, in ms, medians over ``--repeats`` such blocks.
Linux only (``/proc``).

Usage::

    python bench/bench_http_cpu.py                      # all layouts, the XY plane
    python bench/bench_http_cpu.py --case viewport --layouts v3_chunked
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_http as bh  # noqa: E402
import bench_read as br  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
CASES = {"xy_plane": (32, slice(None), slice(None)), "viewport": (32, slice(700, 1212), slice(900, 1412))}


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process, by 'tid:name'."""
    out: dict[str, float] = {}
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[f"{task.name}:{name}"] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def nginx_cpu() -> float:
    total = 0.0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (proc / "comm").read_text().strip() != "nginx":
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def kind(thread: str, names: dict[int | None, str]) -> str:
    """Python 3.11 does not give the kernel its threads' names: ``names`` (from ``threading``) does."""
    tid, comm = thread.split(":", 1)
    name = names.get(int(tid), comm)
    if int(tid) == os.getpid():
        return "main"
    if name.startswith("zarrlib-decode") or comm.startswith("ts_pool"):
        return "decode"
    return "io"  # fsspec's event loop; tensorstore's curl threads


def measure(read: Callable[[], object], reads: int) -> dict[str, float]:
    """CPU ms per read by kind of thread, the server's, and the wall time."""
    t0, n0, w0 = thread_cpu(), nginx_cpu(), time.perf_counter()
    for _ in range(reads):
        read()
    t1, n1, w1 = thread_cpu(), nginx_cpu(), time.perf_counter()
    per: dict[str, float] = {"main": 0.0, "io": 0.0, "decode": 0.0}
    names = {t.native_id: t.name for t in threading.enumerate()}
    for thread, cpu in t1.items():
        per[kind(thread, names)] += (cpu - t0.get(thread, 0.0)) * 1e3 / reads
    per["server"] = (n1 - n0) * 1e3 / reads
    per["wall"] = (w1 - w0) * 1e3 / reads
    return per


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layouts", default=",".join(br.LAYOUTS))
    p.add_argument("--case", default="xy_plane", choices=list(CASES))
    p.add_argument("--reads", type=int, default=40)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parent / "_data")
    args = p.parse_args()
    nginx = bh.find_nginx()
    if nginx is None or not Path("/proc/self/task").is_dir():
        print("needs Linux and nginx", file=sys.stderr)
        return 2
    layouts = [br.LAYOUTS[n] for n in args.layouts.split(",")]
    shape = br.FULL_SHAPE
    paths = br.ensure_data(args.data_dir / "full", layouts, shape, br.PlaneGenerator(shape), rewrite=False)
    cores = len(os.sched_getaffinity(0))
    index = CASES[args.case]
    cols = ["wall", "main", "io", "decode", "server"]
    print(f"{args.case}: CPU ms per read, medians of {args.repeats} blocks of {args.reads} reads, {cores} cores\n")
    print("| layout | reader | " + " | ".join(cols) + " | total CPU | floor = total / cores |")
    print("|---|---|" + "---|" * (len(cols) + 2))
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(bh.nginx_server(paths[layouts[0].name].parent, nginx))
        for layout in layouts:
            url = f"{server.url}/{layout.name}"
            readers = {"zarrlib": bh.open_zarrlib(url, None),
                       "tensorstore": bh.open_tensorstore(url, layout, bh.tensorstore_context())}
            blocks: dict[str, list[dict[str, float]]] = {name: [] for name in readers}
            for read in readers.values():
                for _ in range(3):
                    read(index)
            for _ in range(args.repeats):
                for name, read in readers.items():
                    blocks[name].append(measure(lambda read=read: read(index), args.reads))  # type: ignore[misc]
            floors = {}
            for name in readers:
                med = {c: statistics.median(b[c] for b in blocks[name]) for c in cols}
                total = sum(med[c] for c in cols if c != "wall")
                floors[name] = total / cores
                print(f"| {layout.name} | {name} | " + " | ".join(f"{med[c]:.1f}" for c in cols)
                      + f" | {total:.1f} | {floors[name]:.1f} |")
            print(f"| {layout.name} | floor ratio | | | | | | | {floors['zarrlib'] / floors['tensorstore']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
