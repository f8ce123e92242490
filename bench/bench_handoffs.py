"""GIL releases per chunk of zarrlib's reads: the hand-offs that decide how reads scale with cores.

Why this exists
---------------
On a many-core machine a read's worker threads queue for the GIL, and every time one lets go
of it (a system call, a decode, a large numpy copy) and wants it back, it sleeps and must be
woken: measured on 16 cores, about one voluntary context switch per release (issue 15). That
count does not depend on the machine, so it can be taken on any one, this 2-core one included,
where the context switches themselves are rare (two workers seldom collide).

How
---
Each read runs in a child Python under gdb, which counts calls of ``PyEval_SaveThread`` (what
every ``Py_BEGIN_ALLOW_THREADS`` calls: ``os`` calls, ctypes calls, numpy's long loops) between
two ``os.getppid()`` markers around ``--reads`` timed reads of bench_read.py's data. With
``--who`` it also prints the C functions that let go, most frequent first. Each case is run
in each of ``MODES``: zstd chunks decoded one libzstd call each (``ZARRVIEW_NO_BATCH=1``, the
reader before ``batch.py``), the default reader, and zarrlib's held-GIL file calls
(``storage/held_io.py``: ``ZARRVIEW_HELD_IO=fd``, size and close held; ``=1``, open, size, small
reads and close held).

Usage: ``python bench/bench_handoffs.py [--reads 10] [--layouts ...] [--cases ...] [--modes ...] [--who]``
(needs ``gdb``; the data is bench_read.py's, written by it when missing).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_read as br  # noqa: E402

GDB_SCRIPT = r'''
import collections, gdb
gdb.execute("set pagination off")
gdb.execute("set breakpoint pending on")
state = {"on": False, "n": 0, "who": collections.Counter()}
WHO = %(who)s
class Count(gdb.Breakpoint):
    def stop(self):
        if state["on"]:
            state["n"] += 1
            if WHO:
                f, names = gdb.newest_frame().older(), []
                while f is not None and len(names) < 2:
                    names.append(f.name() or "?")
                    f = f.older()
                state["who"][" < ".join(names)] += 1
        return False
class Toggle(gdb.Breakpoint):
    def stop(self):
        if state["on"]:
            print("HANDOFFS", state["n"])
            for k, v in state["who"].most_common(8):
                print("WHO", v, k)
        state["on"] = not state["on"]
        state["n"] = 0
        state["who"].clear()
        return False
Count("PyEval_SaveThread")
Toggle("getppid")
gdb.execute("run")
'''

CHILD = r'''
import os, sys
import zarrview.zarrlib as zl
zl.tune_process()
a = zl.open(sys.argv[1])
sel = eval(sys.argv[2], {"slice": slice})
a[sel]; a[sel]  # metadata, shard indexes, page cache, thread pool: not counted
os.getppid()
for _ in range(int(sys.argv[3])):
    a[sel]
os.getppid()
'''


#: reader settings compared: environment variables per mode
MODES: dict[str, dict[str, str]] = {
    "nobatch": {"ZARRVIEW_NO_BATCH": "1", "ZARRVIEW_NO_URING": "1"},  # zstd chunks decoded one call each
    "nouring": {"ZARRVIEW_NO_URING": "1"},  # chunk files read one by one through os (before file_groups.py)
    "default": {},
    "fd": {"ZARRVIEW_HELD_IO": "fd"},
    "held": {"ZARRVIEW_HELD_IO": "1"},
}


def count(path: Path, index: br.Index, reads: int, mode: str, who: bool, tmp: Path) -> tuple[int, list[str]]:
    """GIL releases over ``reads`` reads, and (with ``who``) the lines naming who let go."""
    script = tmp / "count.py"
    script.write_text(GDB_SCRIPT % {"who": who})
    child = tmp / "child.py"
    child.write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if k not in ("ZARRVIEW_HELD_IO", "ZARRVIEW_NO_BATCH", "ZARRVIEW_NO_URING")}
    env.update(MODES[mode])
    env["PYTHONPATH"] = os.pathsep.join([str(br.REPO_ROOT), env.get("PYTHONPATH", "")])
    out = subprocess.run(["gdb", "-q", "-batch", "-x", str(script), "--args", sys.executable, str(child), str(path),
                          repr(index), str(reads)], capture_output=True, text=True, env=env, timeout=1800)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith(("HANDOFFS", "WHO"))]
    if not lines or not lines[0].startswith("HANDOFFS"):
        raise RuntimeError(f"gdb gave no count:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return int(lines[0].split()[1]), lines[1:]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reads", type=int, default=10)
    p.add_argument("--layouts", default=",".join(br.LAYOUTS))
    p.add_argument("--cases", default="xz,xy_plane,viewport")
    p.add_argument("--who", action="store_true", help="also print which C functions let go of the GIL")
    p.add_argument("--modes", default=",".join(MODES), help=f"any of {', '.join(MODES)}")
    args = p.parse_args()
    modes = args.modes.split(",")
    layouts = [br.LAYOUTS[n] for n in args.layouts.split(",")]
    shape = br.FULL_SHAPE
    paths = br.ensure_data(br.DEFAULT_DATA_DIR / "full", layouts, shape, br.PlaneGenerator(shape), False)
    cases = br.make_cases(shape)
    print(f"GIL releases per read and per chunk, zarrlib, {args.reads} reads each; python {sys.version.split()[0]}, "
          f"{len(os.sched_getaffinity(0))} cores")
    print("| layout | case | chunks | " + " | ".join(f"{m}: per read | per chunk" for m in modes) + " |")
    print("|---|---|---|" + "---|---|" * len(modes))
    with tempfile.TemporaryDirectory() as d:
        for layout in layouts:
            for case in args.cases.split(","):
                index = cases[case]
                chunks = br.chunks_touched(layout, shape, index)
                cells = [layout.name, case, str(chunks)]
                whos: list[str] = []
                for mode in modes:
                    n, who = count(paths[layout.name], index, args.reads, mode, args.who, Path(d))
                    cells += [f"{n / args.reads:.0f}", f"{n / args.reads / chunks:.2f}"]
                    whos += [f"  {mode}: {w}" for w in who]
                print("| " + " | ".join(cells) + " |", flush=True)
                for w in whos:
                    print(w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
