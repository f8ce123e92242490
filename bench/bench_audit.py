"""How long the storage audit takes: a sharded array of about 100,000 inner chunks on local disk,
and an array of 10**9 chunks with a thousand stored, against zarr-python's ``nchunks_initialized``
on the sharded one (it counts shards, not the chunks in them). On the other it is not run: it
compares every key of the grid, 10**9 of them, with the listing (it did not finish in 11 minutes).

Usage::

    python bench/bench_audit.py [--rounds 5] [--data-dir bench/_data/audit]

Prints the median and spread of each, and the peak memory of one audit (tracemalloc).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def write(root: Path) -> dict[str, Path]:
    import zarr

    sharded, sparse = root / "sharded.zarr", root / "sparse.zarr"
    if not (sharded / "zarr.json").exists():
        a = zarr.create_array(sharded, shape=(3200, 3200), chunks=(10, 10), shards=(320, 320), dtype="u1",
                              fill_value=0)
        a[...] = (np.arange(3200 * 3200, dtype=np.uint32) % 251 + 1).astype("u1").reshape(3200, 3200)
    if not (sparse / "zarr.json").exists():
        b = zarr.create_array(sparse, shape=(1000, 1000, 1000), chunks=(1, 1, 1), dtype="u1", fill_value=0)
        b[0, :10, :100] = 1
    return {"sharded 102,400 chunks": sharded, "10**9 chunks, 1,000 stored": sparse}


def timed(fn: Callable[[], Any], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parent / "_data" / "audit")
    args = p.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    import zarr

    import zarrview.zarrlib as zl

    print("| array | zarrlib audit ms (median, min-max) | zarr-python nchunks_initialized ms | audit peak MiB |")
    print("|---|---|---|---|")
    for name, path in write(args.data_dir).items():
        ours = timed(lambda path=path: zl.open(path).audit(), args.rounds)
        theirs = timed(lambda path=path: zarr.open_array(path, mode="r").nchunks_initialized, args.rounds) \
            if "sharded" in name else []
        tracemalloc.start()
        audit = zl.open(path).audit()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"| {name} ({audit.chunks_stored:,} chunks stored) | {statistics.median(ours) * 1e3:.0f} "
              f"({min(ours) * 1e3:.0f}-{max(ours) * 1e3:.0f}) | "
              f"{f'{statistics.median(theirs) * 1e3:.0f}' if theirs else 'not run'} | "
              f"{peak / 2**20:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
