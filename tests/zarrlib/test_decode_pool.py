"""The decode pool's promises: every unit is worked exactly once whatever the worker count,
the first error stops the others and is raised, progress rises to the total, and the
GIL-holding copy of small parts writes exactly what numpy's assignment writes."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from zarrview.zarrlib import tune_process
from zarrview.zarrlib.decode import SMALL_COPY, put
from zarrview.zarrlib.decode_pool import Reporter, guided_blocks, run_blocks


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 5, 97])
def test_every_unit_is_worked_once(workers: int, n: int) -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def work(block: list[int]) -> None:
        with lock:
            seen.extend(block)

    with ThreadPoolExecutor(workers) as pool:
        run_blocks(list(range(n)), work, pool)
    assert sorted(seen) == list(range(n))


def test_first_error_is_raised_and_stops_the_rest() -> None:
    done: list[int] = []

    def work(block: list[int]) -> None:
        if 0 in block:
            raise ValueError("bad unit")
        done.extend(block)

    with ThreadPoolExecutor(1) as one, pytest.raises(ValueError, match="bad unit"):
        run_blocks(list(range(100)), work, one)
    assert done == []  # one worker: the failing first block stops the read
    with ThreadPoolExecutor(4) as pool, pytest.raises(ValueError, match="bad unit"):
        run_blocks(list(range(100)), work, pool)


def test_reporter_rises_to_the_total_from_many_threads() -> None:
    seen: list[tuple[int, int]] = []
    rep = Reporter(400, lambda d, t: seen.append((d, t)))
    threads = [threading.Thread(target=lambda: [rep.add(1) for _ in range(100)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [d for d, _ in seen] == list(range(1, 401)) and {t for _, t in seen} == {400}


DTYPES = ["<u2", ">u2", "<f8", "?", "<M8[s]", "U3", [("a", "<i4"), ("b", "u1")], "O"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", ["row", "block", "large", "strided"])
def test_put_writes_what_numpy_assignment_writes(dtype: object, case: str) -> None:
    rng = np.random.default_rng(0)
    dt = np.dtype(dtype)  # type: ignore[call-overload]
    side = 300 if case == "large" else 16
    raw = rng.integers(0, 200, size=(2, side, side))
    chunk = raw.astype(str).astype(dt) if dt.kind in "UO" else raw.astype(dt) if dt.names is None else \
        np.array([tuple(int(v) % 100 for _ in dt.names) for v in raw.ravel()], dt).reshape(raw.shape)
    inner, out_index = {
        "row": ((slice(1, 2), slice(3, 4), slice(None)), (slice(0, 1), slice(2, 3), slice(None))),
        "block": ((slice(0, 1), slice(None), slice(None)), (slice(1, 2), slice(None), slice(None))),
        "large": ((slice(0, 2), slice(None), slice(None)), (slice(0, 2), slice(None), slice(None))),
        "strided": ((slice(0, 1), slice(2, 9), slice(1, 7)), (slice(0, 1), slice(0, 7), slice(4, 10))),
    }[case]
    if case == "large":
        assert chunk[inner].nbytes > SMALL_COPY or dt.itemsize < 2  # the numpy path is taken too
    want = np.zeros((2, side, side), dt) if dt.kind != "O" else np.full((2, side, side), None, dt)
    got = want.copy()
    want[out_index] = chunk[inner]
    put(got, out_index, chunk, inner)
    np.testing.assert_array_equal(got, want)


def test_tune_process_is_idempotent() -> None:
    first = tune_process()
    assert tune_process() is first


BLOSC_THREADS = """
import os, sys
from concurrent.futures import ThreadPoolExecutor
import numcodecs.blosc as nb
nb.set_nthreads(4)
import zarrview.zarrlib as zl
if sys.argv[2] == "tuned":
    zl.tune_process()
elif sys.argv[2] == "chosen":
    nb.use_threads = True
    zl.tune_process()
a = zl.open(sys.argv[1])
before = len(os.listdir("/proc/self/task"))
with ThreadPoolExecutor(1) as one:  # one worker: the calling (main) thread decodes every chunk
    got = a.reader.read(..., executor=one)
print(len(os.listdir("/proc/self/task")) - before, int(got.sum()))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads counted in /proc")
def test_tuned_blosc_starts_no_threads_of_its_own(tmp_path: Path) -> None:
    """A tuned process's main thread decodes blosc chunks itself (the decode pool is the only
    parallelism); without tuning, or where the program chose, numcodecs lets blosc start its own."""
    zarr = pytest.importorskip("zarr")
    numcodecs = pytest.importorskip("numcodecs")
    data = (np.arange(4 * 512 * 512, dtype="u2") % 1000).reshape(4, 512, 512)
    z = zarr.open_array(str(tmp_path / "b.zarr"), mode="w", shape=data.shape, chunks=(1, 512, 512), dtype="u2",
                        zarr_format=2, compressor=numcodecs.Blosc("zstd", 1, 1))
    z[...] = data
    (tmp_path / "t.py").write_text(BLOSC_THREADS)
    started = {}
    for mode in ("tuned", "plain", "chosen"):
        out = subprocess.run([sys.executable, str(tmp_path / "t.py"), str(tmp_path / "b.zarr"), mode],
                             capture_output=True, text=True, check=True).stdout.split()
        started[mode] = int(out[0])
        assert int(out[1]) == int(data.sum())
    assert started["tuned"] == 0
    assert started["plain"] > 0 and started["chosen"] > 0


@pytest.mark.parametrize("n, workers", [(1, 2), (7, 2), (512, 2), (256, 2), (512, 16), (16, 4), (1000, 3)])
def test_guided_blocks_shrink_to_single_units(n: int, workers: int) -> None:
    """Blocks cover the units in order, each at most a 1/(2 x workers) share of those left, so
    the last ones are single units and workers finish within about one unit of each other."""
    units = list(range(n))
    blocks = guided_blocks(units, workers)
    assert [u for b in blocks for u in b] == units
    left = n
    for b in blocks:
        assert 1 <= len(b) <= max(1, left // (2 * workers))
        left -= len(b)
    assert len(blocks[-1]) == 1
    assert len(blocks) <= 2 * workers * (1 + math.log(max(n, 2))) + 1  # few claims: large blocks first
