"""Read-speed benchmark: zarrlib against tensorstore and zarr-python on identical data.

Why this exists
---------------
zarrview ships its own reader, ``zarrview.zarrlib``, instead of depending on
zarr-python or tensorstore. That choice is only worth it if zarrlib is fast enough
for an interactive viewer. This script measures the reads a viewer actually makes
(a whole XY plane, an unaligned 512x512 viewport, an XZ cross-section) on a
realistic uint16 stack stored in three common layouts, and checks two targets:

* ``zarrlib / tensorstore <= 1.10`` -- within a tenth of tensorstore, on every core count;
* ``zarr-python / zarrlib >= 1.5``  -- at least 1.5x faster than zarr-python.

What is measured
----------------
Warm OS page cache, cold decoder cache. The data is written once (and reused) under
``bench/_data/``; each reader then reads every case once untimed (this read is also
the correctness check and pulls the files into the page cache), so the timed reads
do not touch the disk. No reader keeps decoded chunks between reads: zarrlib's plain
``a[...]`` has no chunk cache, tensorstore gets a context whose ``cache_pool`` has
``total_bytes_limit = 0``, and zarr-python has no chunk cache. Every timed read
therefore fetches, decompresses and assembles every chunk it touches. Arrays are
opened once per reader and layout; opening (metadata parsing) is not timed.

Readers run interleaved in one process: in each of R rounds every reader reads the
case once, in an order that rotates from round to round, so drift (thermal, other
load) hits all readers alike. We report the median time per reader and the median of
the per-round ratios. Thread pools are left at each library's defaults; the host
CPU count and those defaults are printed with the results. zarrlib runs with
``zarrview.zarrlib.tune_process()`` applied, as the zarrview app and CLI do.

Around every timed read the process's ``getrusage`` counters are taken too: voluntary
context switches (a thread went to sleep: a lock, a queue, the GIL), involuntary ones
and CPU time. They are printed per read and per chunk in a second table. On any machine,
this 2-core one included, they show whether a reader hands work between threads per
chunk (a sleep and a wake-up each) or per run of chunks; on many cores those hand-offs,
not decoding, decide whether reads get faster with more cores.

``--scaling c16.json c8.json ...`` compares runs made at different core counts (e.g. with
``taskset``) and flags any case that got slower with more cores.

Usage
-----
::

    python bench/bench_read.py                 # full (64, 2048, 2048) stack, 7 rounds
    python bench/bench_read.py --quick         # (16, 2048, 2048) smoke run
    python bench/bench_read.py --readers ts,zarr --layouts v3_sharded --cases xz
    python bench/bench_read.py --scaling c2.json c4.json c8.json c16.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO_ROOT / "bench" / "_data"

# Bump when the generator or the layouts change so stale data on disk is rewritten.
DATA_VERSION = 1
SEED = 20240601
DTYPE = np.dtype("uint16")
FULL_SHAPE = (64, 2048, 2048)
QUICK_SHAPE = (16, 2048, 2048)
SLAB_PLANES = 16  # planes generated and written at a time (= shard depth)

TARGET_ZL_OVER_TS = 1.10  # zarrlib/tensorstore must be <= this
TARGET_ZP_OVER_ZL = 1.5  # zarr-python/zarrlib must be >= this

Index = tuple[int | slice, ...]
Array = npt.NDArray[Any]
ReadFn = Callable[[Index], Array]

READER_NAMES = ("zarrlib", "tensorstore", "zarr-python", "baseline")
READER_ALIASES = {
    "baseline": "baseline",
    "zarrlib": "zarrlib",
    "zl": "zarrlib",
    "tensorstore": "tensorstore",
    "ts": "tensorstore",
    "zarr-python": "zarr-python",
    "zarr": "zarr-python",
    "zp": "zarr-python",
}


# --------------------------------------------------------------------------- layouts


@dataclass(frozen=True)
class Layout:
    """One on-disk encoding of the benchmark stack."""

    name: str
    zarr_format: int
    chunks: tuple[int, int, int]
    shards: tuple[int, int, int] | None
    codec: str  # human-readable, also part of the validity marker

    @property
    def ts_driver(self) -> str:
        return "zarr3" if self.zarr_format == 3 else "zarr"


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout("v3_chunked", 3, (1, 512, 512), None, "bytes+zstd(level=1)"),
        Layout("v3_sharded", 3, (1, 256, 256), (16, 1024, 1024), "sharding(bytes+zstd(level=1))"),
        Layout("v2_blosc", 2, (1, 512, 512), None, "blosc(zstd,clevel=1,shuffle=SHUFFLE)"),
    )
}


# --------------------------------------------------------------------------- data


class PlaneGenerator:
    """Deterministic microscopy-like planes: dark background, smooth bright structures,
    a gentle illumination gradient and shot-like noise. Compresses roughly 1.5x with
    plain zstd and 2x with shuffled blosc -- far from all-zero, far from random."""

    def __init__(self, shape: tuple[int, int, int], seed: int = SEED) -> None:
        self.shape = shape
        self.seed = seed
        _, ny, nx = shape
        self._y = np.arange(ny, dtype=np.float32)[:, None]
        self._x = np.arange(nx, dtype=np.float32)[None, :]

    def plane(self, z: int) -> Array:
        nz, ny, nx = self.shape
        y, x = self._y, self._x
        t = z / nz
        rng = np.random.default_rng([self.seed, z])
        structure = np.zeros((ny, nx), dtype=np.float32)
        # Separable low-frequency terms whose phase drifts with z, so XZ sections vary smoothly.
        terms = ((3, 2, 1.0), (7, 5, 0.6), (13, 17, 0.35), (29, 23, 0.2))
        for k, (fy, fx, amp) in enumerate(terms):
            cy = np.cos(2 * np.pi * (fy * y / ny + 0.7 * t * (k + 1))).astype(np.float32)
            cx = np.sin(2 * np.pi * (fx * x / nx - 0.5 * t * (k + 1))).astype(np.float32)
            structure += np.float32(amp) * cy * cx
        signal = 100.0 + 0.02 * x + 0.01 * y + 3000.0 * np.maximum(structure - 0.3, 0.0)
        signal += rng.standard_normal((ny, nx), dtype=np.float32) * np.sqrt(signal) * 0.5
        out: Array = np.clip(signal, 0, np.iinfo(DTYPE).max).astype(DTYPE)
        return out

    def slab(self, z0: int, z1: int) -> Array:
        return np.stack([self.plane(z) for z in range(z0, z1)])

    def expected(self, index: Index) -> Array:
        """The exact array any correct reader must return for ``index``."""
        zsel = index[0]
        zs = range(*zsel.indices(self.shape[0])) if isinstance(zsel, slice) else [zsel]
        planes = [self.plane(z)[index[1:]] for z in zs]
        return np.stack(planes) if isinstance(zsel, slice) else planes[0]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def marker_for(layout: Layout, shape: tuple[int, int, int]) -> dict[str, Any]:
    return {
        "data_version": DATA_VERSION,
        "seed": SEED,
        "shape": list(shape),
        "dtype": DTYPE.str,
        "layout": asdict(layout),
    }


MARKER_FILE = "bench_complete.json"


def dataset_is_valid(path: Path, layout: Layout, shape: tuple[int, int, int]) -> bool:
    """A data set is reused only if it was written completely with the same parameters."""
    import zarr

    marker = path / MARKER_FILE
    if not marker.is_file():
        return False
    try:
        if json.loads(marker.read_text()) != json.loads(json.dumps(marker_for(layout, shape))):
            return False
        arr = zarr.open_array(str(path), mode="r")
    except Exception:
        return False
    return (
        tuple(arr.shape) == shape
        and arr.dtype == DTYPE
        and tuple(arr.chunks) == layout.chunks
        and arr.metadata.zarr_format == layout.zarr_format
        and (tuple(arr.shards) if arr.shards else None) == layout.shards
    )


def create_array(path: Path, layout: Layout, shape: tuple[int, int, int]) -> Any:
    import numcodecs
    import zarr
    from zarr.codecs import BytesCodec, ZstdCodec

    common: dict[str, Any] = {"shape": shape, "dtype": DTYPE, "fill_value": 0, "chunks": layout.chunks}
    if layout.zarr_format == 3:
        return zarr.create_array(
            str(path),
            zarr_format=3,
            shards=layout.shards,
            serializer=BytesCodec(),
            compressors=ZstdCodec(level=1),
            filters=None,
            **common,
        )
    return zarr.create_array(
        str(path),
        zarr_format=2,
        compressors=numcodecs.Blosc(cname="zstd", clevel=1, shuffle=numcodecs.Blosc.SHUFFLE),
        filters=None,
        **common,
    )


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ensure_data(
    data_dir: Path, layouts: Sequence[Layout], shape: tuple[int, int, int], gen: PlaneGenerator, rewrite: bool
) -> dict[str, Path]:
    """Write missing/stale layouts; all pending layouts are filled from one generated slab at a time."""
    paths = {layout.name: data_dir / layout.name for layout in layouts}
    todo = [lay for lay in layouts if rewrite or not dataset_is_valid(paths[lay.name], lay, shape)]
    for layout in layouts:
        if layout not in todo:
            log(f"data: reusing {paths[layout.name]}")
    if not todo:
        return paths

    data_dir.mkdir(parents=True, exist_ok=True)
    partial: dict[str, Path] = {}
    arrays: dict[str, Any] = {}
    for layout in todo:
        tmp = data_dir / f"{layout.name}.partial"
        for stale in (tmp, paths[layout.name]):
            if stale.exists():
                shutil.rmtree(stale)
        partial[layout.name] = tmp
        arrays[layout.name] = create_array(tmp, layout, shape)

    nz = shape[0]
    raw_mib = np.prod(shape) * DTYPE.itemsize / 2**20
    log(f"data: writing {', '.join(lay.name for lay in todo)} ({shape}, {raw_mib:.0f} MiB each) to {data_dir}")
    t_start = time.perf_counter()
    for z0 in range(0, nz, SLAB_PLANES):
        z1 = min(z0 + SLAB_PLANES, nz)
        t0 = time.perf_counter()
        slab = gen.slab(z0, z1)
        t_gen = time.perf_counter() - t0
        for layout in todo:
            arrays[layout.name][z0:z1] = slab
        log(
            f"data:   planes {z0:3d}-{z1 - 1:3d} done "
            f"(generate {t_gen:.1f}s, write {time.perf_counter() - t0 - t_gen:.1f}s, "
            f"total {time.perf_counter() - t_start:.0f}s)"
        )
    for layout in todo:
        tmp = partial[layout.name]
        (tmp / MARKER_FILE).write_text(json.dumps(marker_for(layout, shape), indent=2) + "\n")
        tmp.rename(paths[layout.name])
        size = du(paths[layout.name])
        log(f"data:   {layout.name}: {size / 2**20:.0f} MiB on disk, ratio {raw_mib * 2**20 / size:.2f}x")
    return paths


# --------------------------------------------------------------------------- readers


def import_zarrlib() -> Any:
    """Import ``zarrview.zarrlib`` from the installed package or, failing that, this checkout."""
    try:
        import zarrview.zarrlib as zl
    except ImportError:
        if str(REPO_ROOT) in sys.path:
            raise
        sys.path.insert(0, str(REPO_ROOT))
        import zarrview.zarrlib as zl
    if not callable(getattr(zl, "open", None)):
        raise ImportError(f"{zl.__name__} has no open()")
    return zl


def import_baseline(checkout: Path) -> Any:
    """zarrlib of another checkout (``checkout/zarrview/zarrlib``), imported under the name
    ``zarrlib_baseline`` beside this one, so a change is timed against its parent in the same
    process and rounds (zarrlib imports only relative to itself, so one copy does not see the other)."""
    import importlib.util

    if "zarrlib_baseline" in sys.modules:
        return sys.modules["zarrlib_baseline"]
    root = checkout / "zarrview" / "zarrlib"
    spec = importlib.util.spec_from_file_location("zarrlib_baseline", root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    if spec is None or spec.loader is None:
        raise ImportError(f"no zarrlib under {checkout}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["zarrlib_baseline"] = module
    spec.loader.exec_module(module)
    return module


def open_zarrlib(path: Path, zl: Any = None) -> ReadFn:
    zl = zl or import_zarrlib()
    tune = getattr(zl, "tune_process", None)  # absent in older zarrlib
    if tune is not None:
        tune()  # what the app and the CLI do at start
    arr = zl.open(str(path))

    def read(index: Index) -> Array:
        # Plain indexing: no decoded-chunk cache is involved.
        return np.asarray(arr[index])

    return read


def tensorstore_context() -> Any:
    import tensorstore as ts

    ctx = ts.Context({"cache_pool": {"total_bytes_limit": 0}})
    limit = ctx["cache_pool"].to_json(include_defaults=True)["total_bytes_limit"]
    if limit != 0:
        raise RuntimeError(f"tensorstore cache_pool limit is {limit}, expected 0")
    return ctx


def open_tensorstore(path: Path, layout: Layout, ctx: Any) -> ReadFn:
    import tensorstore as ts

    spec = {"driver": layout.ts_driver, "kvstore": {"driver": "file", "path": str(path)}}
    arr = ts.open(spec, read=True, context=ctx).result()

    def read(index: Index) -> Array:
        return np.asarray(arr[index].read().result())

    return read


def open_zarr_python(path: Path) -> ReadFn:
    import zarr

    arr = zarr.open_array(str(path), mode="r")

    def read(index: Index) -> Array:
        return np.asarray(arr[index])

    return read


def open_readers(readers: Sequence[str], path: Path, layout: Layout, ts_ctx: Any,
                 baseline: Path | None = None) -> dict[str, ReadFn]:
    out: dict[str, ReadFn] = {}
    for name in readers:
        if name == "zarrlib":
            out[name] = open_zarrlib(path)
        elif name == "baseline":
            assert baseline is not None
            out[name] = open_zarrlib(path, import_baseline(baseline))
        elif name == "tensorstore":
            out[name] = open_tensorstore(path, layout, ts_ctx)
        elif name == "zarr-python":
            out[name] = open_zarr_python(path)
        else:  # pragma: no cover - parse_readers rejects these
            raise ValueError(name)
    return out


# --------------------------------------------------------------------------- cases


def make_cases(shape: tuple[int, int, int]) -> dict[str, Index]:
    z = shape[0] // 2  # 32 for the full stack, 8 for --quick
    return {
        "xy_plane": (z, slice(None), slice(None)),
        "viewport": (z, slice(700, 1212), slice(900, 1412)),  # 512x512, not chunk-aligned
        "xz": (slice(None), 1000, slice(None)),
    }


def chunks_touched(layout: Layout, shape: tuple[int, int, int], index: Index) -> int:
    """Read chunks (inner chunks when sharded) a selection touches, from numpy indices alone."""
    n = 1
    for sel, size, chunk in zip(index, shape, layout.chunks):
        picked = np.arange(size)[sel]
        n *= len(np.unique(np.atleast_1d(picked) // chunk))
    return n


def fmt_index(index: Index) -> str:
    def one(s: int | slice) -> str:
        if isinstance(s, int):
            return str(s)
        return f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}"

    return "[" + ", ".join(one(s) for s in index) + "]"


# --------------------------------------------------------------------------- measurement


class MismatchError(RuntimeError):
    pass


def describe_difference(got: Array, want: Array) -> str:
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"dtype {got.dtype} shape {got.shape} vs dtype {want.dtype} shape {want.shape}"
    bad = np.argwhere(got != want)
    first = tuple(int(i) for i in bad[0])
    return f"{len(bad)} of {got.size} elements differ; first at {first}: {got[first]} vs {want[first]}"


def same(a: Array, b: Array) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))


def check_results(results: dict[str, Array], want: Array, where: str) -> None:
    """All readers must return identical arrays, equal to what the generator wrote."""
    names = list(results)
    first = names[0]
    for name in names[1:]:
        if not same(results[first], results[name]):
            raise MismatchError(f"{where}: {first} vs {name}: {describe_difference(results[first], results[name])}")
    for name in names:
        if not same(results[name], want):
            agreed = f"all readers ({', '.join(names)}) agree, but " if len(names) > 1 else ""
            raise MismatchError(
                f"{where}: {agreed}{name} vs the generated reference: {describe_difference(results[name], want)}"
                + (" -- stale data? rerun with --rewrite" if agreed else "")
            )


@dataclass
class CaseResult:
    layout: str
    case: str
    index: str
    times: dict[str, list[float]] = field(default_factory=dict)  # seconds, one per round
    orders: list[list[str]] = field(default_factory=list)
    chunks: int = 0  # read chunks per read (inner chunks when sharded)
    #: per reader, one [voluntary, involuntary context switches, CPU seconds]
    #: per round, the whole process's counters around that reader's read
    usage: dict[str, list[list[float]]] = field(default_factory=dict)

    def median_usage(self, reader: str, i: int) -> float | None:
        us = self.usage.get(reader)
        return statistics.median(u[i] if i < len(u) else 0 for u in us) if us else None

    def median_ms(self, reader: str) -> float | None:
        ts = self.times.get(reader)
        return statistics.median(ts) * 1e3 if ts else None

    def median_ratio(self, num: str, den: str) -> float | None:
        if num not in self.times or den not in self.times:
            return None
        return statistics.median(a / b for a, b in zip(self.times[num], self.times[den], strict=True))


def timed(fn: ReadFn, index: Index) -> tuple[float, list[float]]:
    """Seconds of one read, and [voluntary, involuntary context switches, CPU seconds] of the
    whole process meanwhile (every thread, those of idle readers too: they should be asleep)."""
    gc.collect()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    out = fn(index)
    elapsed = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    del out
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return elapsed, [r1.ru_nvcsw - r0.ru_nvcsw, r1.ru_nivcsw - r0.ru_nivcsw, cpu]


def run_case(
    layout: Layout, case: str, index: Index, readers: dict[str, ReadFn], want: Array, rounds: int, chunks: int
) -> CaseResult:
    where = f"{layout.name} {case} {fmt_index(index)}"
    # Untimed first read per reader: correctness check + OS page-cache warm-up.
    results = {name: fn(index) for name, fn in readers.items()}
    check_results(results, want, where)
    del results
    names = list(readers)

    res = CaseResult(layout.name, case, fmt_index(index), {n: [] for n in names}, chunks=chunks,
                     usage={n: [] for n in names})
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        res.orders.append(order)
        for name in order:
            elapsed, usage = timed(readers[name], index)
            res.times[name].append(elapsed)
            res.usage[name].append(usage)
    summary = ", ".join(
        f"{n} {res.median_ms(n):.1f} ms ({res.median_usage(n, 0):.0f} voluntary switches)" for n in names
    )
    log(f"bench: {where}: {summary}")
    return res


# --------------------------------------------------------------------------- report


def fmt_ms(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


def fmt_ratio(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def verdict(v: float | None, ok: Callable[[float], bool]) -> str:
    return "—" if v is None else ("PASS" if ok(v) else "FAIL")


def markdown_table(results: Sequence[CaseResult]) -> tuple[str, int, int]:
    head = (
        "| layout | case | zarrlib ms | tensorstore ms | zarr-python ms "
        "| zarrlib/ts (median ratio) | zarr-python/zarrlib (median ratio) "
        f"| zarrlib/ts <= {TARGET_ZL_OVER_TS:.2f} | zarr-python/zarrlib >= {TARGET_ZP_OVER_ZL:.1f} |"
    )
    lines = [head, "|" + "---|" * 9]
    passed = checked = 0
    for r in results:
        zl_ts = r.median_ratio("zarrlib", "tensorstore")
        zp_zl = r.median_ratio("zarr-python", "zarrlib")
        v1 = verdict(zl_ts, lambda v: v <= TARGET_ZL_OVER_TS)
        v2 = verdict(zp_zl, lambda v: v >= TARGET_ZP_OVER_ZL)
        for v in (v1, v2):
            if v != "—":
                checked += 1
                passed += v == "PASS"
        lines.append(
            f"| {r.layout} | {r.case} | {fmt_ms(r.median_ms('zarrlib'))} | {fmt_ms(r.median_ms('tensorstore'))} "
            f"| {fmt_ms(r.median_ms('zarr-python'))} | {fmt_ratio(zl_ts)} | {fmt_ratio(zp_zl)} | {v1} | {v2} |"
        )
    return "\n".join(lines), passed, checked


def usage_table(results: Sequence[CaseResult], readers: Sequence[str]) -> str:
    """Context switches and CPU time per read (medians of rounds), and switches per chunk."""
    head = "| layout | case | chunks | " + " | ".join(
        f"{r} vol. switches/read | {r} per chunk | {r} invol./read | {r} CPU ms" for r in readers
    ) + " |"
    lines = [head, "|" + "---|" * (3 + 4 * len(readers))]
    for res in results:
        cells = [res.layout, res.case, str(res.chunks)]
        for r in readers:
            vol, invol, cpu = (res.median_usage(r, i) for i in range(3))
            if vol is None or invol is None or cpu is None:
                cells += ["—"] * 4
                continue
            cells += [f"{vol:.0f}", f"{vol / max(1, res.chunks):.2f}", f"{invol:.0f}", f"{cpu * 1e3:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scaling_report(paths: Sequence[Path], reader: str = "zarrlib") -> tuple[str, list[str]]:
    """A table of one reader's median ms per case across runs at different core counts (the
    runs' JSON files), with zarrlib/tensorstore, and the cases that got slower with more cores."""
    runs = []
    for path in paths:
        doc = json.loads(path.read_text())
        cores = doc["environment"].get("usable_cpus") or doc["environment"].get("cpu_count")
        by_case = {(r["layout"], r["case"]): r for r in doc["results"]}
        runs.append((int(cores), path.name, by_case))
    runs.sort(key=lambda run: run[0])
    cases = list(dict.fromkeys(k for _, _, by_case in runs for k in by_case))
    head = "| layout | case | " + " | ".join(f"{c} cores: {reader} ms (/ts)" for c, _, _ in runs) + " |"
    lines = [head, "|" + "---|" * (2 + len(runs))]
    slower: list[str] = []
    for key in cases:
        cells, prev = [], None
        for cores, _name, by_case in runs:
            r = by_case.get(key)
            times = r["times"].get(reader) if r else None
            if not times:
                cells.append("—")
                continue
            ms = statistics.median(times) * 1e3
            ts = r["times"].get("tensorstore")
            ratio = statistics.median(a / b for a, b in zip(times, ts)) if ts else None
            cells.append(f"{ms:.1f}" + (f" ({ratio:.2f})" if ratio is not None else ""))
            if prev is not None and ms > prev[1]:
                slower.append(f"{key[0]} {key[1]}: {ms:.1f} ms at {cores} cores > {prev[1]:.1f} ms at {prev[0]}")
            prev = (cores, ms)
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    return "\n".join(lines), slower


def environment(readers: Sequence[str]) -> dict[str, Any]:
    import numcodecs
    import zarr

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "numpy": np.__version__,
        "numcodecs": numcodecs.__version__,
        "numcodecs_blosc_use_threads": numcodecs.blosc.use_threads,
        "numcodecs_blosc_nthreads": numcodecs.blosc.get_nthreads(),
        "zarr": zarr.__version__,
        "zarr_async_concurrency": zarr.config.get("async.concurrency"),
        "zarr_threading_max_workers": zarr.config.get("threading.max_workers"),
        "readers": list(readers),
    }
    try:
        from importlib.metadata import version

        env["tensorstore"] = version("tensorstore")
    except Exception:
        env["tensorstore"] = "?"
    if "zarrlib" in readers:
        # Read-only peek, after the run, at the decode pool zarrlib created for itself.
        module = sys.modules.get("zarrview.zarrlib.decode_pool") or sys.modules.get("zarrview.zarrlib.reader")
        pool = getattr(module, "_pool", None)
        env["zarrlib_decode_workers"] = getattr(pool, "_max_workers", None)
        env["zarrlib_read_workers_max"] = getattr(module, "MAX_READ_WORKERS", None)
        # how the workers of one read are chosen: a cap from the chunk size, and a
        # floor of decoded bytes per worker (absent in older readers)
        env["zarrlib_workers_at_ref_chunk"] = [getattr(module, "WORKERS_AT_REF", None),
                                               getattr(module, "REF_CHUNK_BYTES", None)]
        env["zarrlib_min_bytes_per_worker"] = getattr(module, "MIN_BYTES_PER_WORKER", None)
    if "tensorstore" in readers:
        import tensorstore as ts

        ctx = ts.Context()
        env["tensorstore_data_copy_concurrency"] = ctx["data_copy_concurrency"].to_json(include_defaults=True)
        env["tensorstore_file_io_concurrency"] = ctx["file_io_concurrency"].to_json(include_defaults=True)
    return env


# --------------------------------------------------------------------------- CLI


def parse_list(value: str, allowed: Sequence[str], what: str, aliases: dict[str, str] | None = None) -> list[str]:
    out: list[str] = []
    for item in (v.strip() for v in value.split(",") if v.strip()):
        name = (aliases or {}).get(item, item)
        if name not in allowed:
            raise argparse.ArgumentTypeError(f"unknown {what} {item!r}; choose from {', '.join(allowed)}")
        if name not in out:
            out.append(name)
    if not out:
        raise argparse.ArgumentTypeError(f"no {what} selected")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    case_names = list(make_cases(FULL_SHAPE))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rounds", type=int, default=7, help="timed rounds per case (default 7)")
    p.add_argument("--quick", action="store_true", help=f"use a {QUICK_SHAPE} stack instead of {FULL_SHAPE}")
    p.add_argument("--layouts", default=",".join(LAYOUTS), help="comma list of: " + ", ".join(LAYOUTS))
    p.add_argument("--cases", default=",".join(case_names), help="comma list of: " + ", ".join(case_names))
    p.add_argument(
        "--readers",
        default="zarrlib,tensorstore,zarr-python",
        help="comma list of: zarrlib (zl), tensorstore (ts), zarr-python (zarr, zp)",
    )
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help=f"default {DEFAULT_DATA_DIR}")
    p.add_argument("--rewrite", action="store_true", help="regenerate the data even if it is valid")
    p.add_argument("--json", type=Path, help="also write raw per-round timings and environment here")
    p.add_argument("--strict", action="store_true", help="exit with status 1 if any target FAILs")
    p.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                   help="also time the zarrlib of another checkout (e.g. `git worktree add /tmp/base main`), "
                        "as reader 'baseline', and print zarrlib/baseline per case")
    p.add_argument("--scaling", type=Path, nargs="+", metavar="JSON",
                   help="compare --json files of runs at different core counts; reads nothing")
    args = p.parse_args(argv)

    if args.scaling:
        table, slower = scaling_report(args.scaling)
        print(table)
        print()
        print("Slower with more cores: " + ("; ".join(slower) if slower else "none"))
        return 1 if args.strict and slower else 0

    try:
        layouts = [LAYOUTS[n] for n in parse_list(args.layouts, list(LAYOUTS), "layout")]
        cases = parse_list(args.cases, case_names, "case")
        readers = parse_list(args.readers, READER_NAMES, "reader", READER_ALIASES)
        if args.baseline is not None and "baseline" not in readers:
            readers.append("baseline")
        if "baseline" in readers and args.baseline is None:
            raise argparse.ArgumentTypeError("reader 'baseline' needs --baseline CHECKOUT")
    except argparse.ArgumentTypeError as exc:
        p.error(str(exc))
    if args.rounds < 1:
        p.error("--rounds must be >= 1")

    if "zarrlib" in readers:
        try:
            import_zarrlib()
        except ImportError as exc:
            p.error(f"zarrlib is not usable yet ({exc}); run without it, e.g. --readers ts,zarr")

    shape = QUICK_SHAPE if args.quick else FULL_SHAPE
    gen = PlaneGenerator(shape)
    data_dir = args.data_dir / ("quick" if args.quick else "full")
    paths = ensure_data(data_dir, layouts, shape, gen, args.rewrite)

    ts_ctx = tensorstore_context() if "tensorstore" in readers else None
    all_cases = make_cases(shape)
    expected: dict[str, Array] = {}
    for case in cases:
        log(f"bench: computing reference data for {case} {fmt_index(all_cases[case])}")
        expected[case] = gen.expected(all_cases[case])

    results: list[CaseResult] = []
    try:
        for layout in layouts:
            fns = open_readers(readers, paths[layout.name], layout, ts_ctx, args.baseline)
            for case in cases:
                chunks = chunks_touched(layout, shape, all_cases[case])
                results.append(run_case(layout, case, all_cases[case], fns, expected[case], args.rounds, chunks))
            del fns
    except MismatchError as exc:
        log("")
        log("!" * 78)
        log(f"ABORT: readers do not return identical data -- {exc}")
        log("No timings are reported.")
        log("!" * 78)
        return 2

    env = environment(readers)
    table, passed, checked = markdown_table(results)
    print()
    print(
        f"Stack {shape} {DTYPE}, {args.rounds} rounds, readers: {', '.join(readers)}. "
        "Warm OS page cache, cold decoder cache (no chunk cache in any reader); median of rounds."
    )
    print(
        f"Host: {env['cpu_count']} CPUs (usable {env['usable_cpus']}); library thread pools at their defaults "
        f"(zarr async.concurrency={env['zarr_async_concurrency']}, blosc nthreads={env['numcodecs_blosc_nthreads']}"
        + (f", zarrlib decode workers={env['zarrlib_decode_workers']}" if "zarrlib_decode_workers" in env else "")
        + (f" (at most {env['zarrlib_read_workers_max']} per read" if env.get("zarrlib_read_workers_max") else "")
        + (f"; {env['zarrlib_workers_at_ref_chunk'][0]} for {env['zarrlib_workers_at_ref_chunk'][1] >> 10} KiB chunks, "
           f"growing with the square root of the chunk size, and at least "
           f"{env['zarrlib_min_bytes_per_worker'] >> 10} KiB of chunks per worker"
           if env.get("zarrlib_min_bytes_per_worker") else "")
        + (")" if env.get("zarrlib_read_workers_max") else "")
        + (
            f", tensorstore data_copy_concurrency={env['tensorstore_data_copy_concurrency']['limit']}"
            if "tensorstore_data_copy_concurrency" in env
            else ""
        )
        + ")."
    )
    print(
        f"Versions: python {env['python']}, numpy {env['numpy']}, numcodecs {env['numcodecs']}, "
        f"zarr {env['zarr']}, tensorstore {env['tensorstore']}."
    )
    print()
    print(table)
    print()
    print(f"Targets met: {passed}/{checked}" + ("" if checked else " (need zarrlib plus another reader)"))
    if "baseline" in readers:
        print()
        print(f"Against the baseline ({args.baseline}), median of per-round ratios:")
        print()
        print("| layout | case | zarrlib ms | baseline ms | zarrlib/baseline |")
        print("|---|---|---|---|---|")
        for r in results:
            print(f"| {r.layout} | {r.case} | {fmt_ms(r.median_ms('zarrlib'))} | {fmt_ms(r.median_ms('baseline'))} "
                  f"| {fmt_ratio(r.median_ratio('zarrlib', 'baseline'))} |")
    print()
    print("Context switches and CPU time of the whole process during each reader's read (median of rounds):")
    print()
    print(usage_table(results, readers))

    if args.json:
        payload = {
            "environment": env,
            "shape": list(shape),
            "rounds": args.rounds,
            "targets": {"zarrlib/tensorstore_max": TARGET_ZL_OVER_TS, "zarr-python/zarrlib_min": TARGET_ZP_OVER_ZL},
            "results": [asdict(r) for r in results],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        log(f"bench: raw timings written to {args.json}")

    return 1 if args.strict and passed < checked else 0


if __name__ == "__main__":
    sys.exit(main())
