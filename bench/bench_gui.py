"""Offscreen GUI benchmark: how quickly the zarrview window shows a 2048x2048 plane.

Why this exists
---------------
``bench_read.py`` shows that ``zarrview.zarrlib`` reads a plane fast. A user, though,
feels the whole path: the slider moves, the request crosses to the reader thread, chunks
are decoded (or taken from the decoded-chunk cache), the result is posted back to the
GUI thread, pyqtgraph converts it and the window repaints -- and while all that happens
the event loop must keep running, or the slider itself stutters. This script measures
that path in a real ``MainWindow`` (1280x820, offscreen Qt) and checks three targets:

* a step to a plane whose chunks are cached shows new data in under 16 ms (one frame);
* a step to a plane with cold chunks costs at most 15 ms more than a plain zarrlib read
  of the same plane (``zl.open(path)[z, :, :]``, no cache);
* the GUI event loop never stalls for more than 16 ms while planes load.

First pixels of a zoomed region of a 65536x65536 array over loopback HTTP: ``bench_region.py``.

What is measured
----------------
Data: the (64, 2048, 2048) uint16 stack that ``bench_read.py`` writes to
``bench/_data/full/{v3_chunked,v3_sharded,v2_blosc}`` (written here through its own
``ensure_data`` if missing or stale). All numbers are for a warm OS page cache: every
plane used is read once, untimed, before anything is timed.

1. **Open -> first pixels.** After ``QApplication``, ``init_bridge()`` and
   ``MainWindow(WorkerPool()).show()``: from ``open_location(path)`` until the image item holds an
   image and ``is_settled()``. Measured in fresh processes (a child run of this script
   prints its own ``time.monotonic()`` stamps, so process start -> first pixels is
   reported as well) and in this, already warm, process.
2. **Slider steps.** ``w.data.set_index(0, z)`` is timed until ``w.data.loaded`` fires
   with the view model's scene no longer busy (the newest request answered) and a new image in the image item
   ("loaded"), and until the window's next repaint has been handled ("painted"). Each
   step starts from a quiet app: nothing read or prefetched, then 50 ms of idle loop.
   *Cold*: planes never shown before, with the pool's chunk cache (``w.pool.cache``)
   cleared before each step. *Cached*: back and forth between two planes already shown.
   *Next plane* (information only): z -> z + 1 after clearing the cache once, so only the
   app's own prefetching of neighbouring planes can have warmed it (how many planes it
   warmed meanwhile goes to stderr).
3. **Event-loop stalls.** A 10 ms ``Qt.PreciseTimer`` stamps every tick. For each step,
   the gaps between ticks from just before ``set_index`` until 40 ms after "painted" are
   kept; a stall is a gap minus 10 ms. Reported: the largest and the 99th percentile.

The primary verdicts use "loaded", as specified; "painted" and the next-plane rows are
printed with verdicts in parentheses. If the installed PySide6 loses references to
``None``/``True`` (6.12.0 on CPython 3.11 does), ``RefcountGuard`` keeps the process
alive and the report says so.

Results go to stdout as one markdown table per layout; progress goes to stderr.

Usage
-----
::

    python bench/bench_gui.py                          # all layouts, 20 steps each
    python bench/bench_gui.py --layouts v3_sharded --steps 40 --launches 0
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import itertools
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pyqtgraph
import PySide6
from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QEventLoop,
    QObject,
    QSettings,
    Qt,
    QTimer,
    QtMsgType,
    Signal,
    SignalInstance,
    qInstallMessageHandler,
    qVersion,
)
from PySide6.QtWidgets import QApplication

try:
    import zarrview  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import zarrview.zarrlib as zl
from zarrview.app.bridge import init_bridge
from zarrview.app.gui_gc import collect_garbage_on_gui_thread
from zarrview.app.window import MainWindow
from zarrview.scheduling import WorkerPool
from zarrview.zarrlib.decode_pool import cpus

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_READ = Path(__file__).resolve().parent / "bench_read.py"
DEFAULT_DATA_DIR = REPO_ROOT / "bench" / "_data"
LAYOUT_NAMES = ("v3_chunked", "v3_sharded", "v2_blosc")

WINDOW_SIZE = (1280, 820)
TICK_MS = 10  # stall-probe timer interval
TAIL_S = 0.040  # the event loop keeps running (and being probed) this long after each paint
SETTLE_S = 0.050  # idle event loop before each step, so the probe has a tick right before it
TIMEOUT_S = 60.0
WAIT_POLL_MS = 200  # fallback poll while a step is timed (the probe's signal ends the wait)
SEED = 20240601

TARGET_CACHED_MS = 16.0  # cached step must be under one 60 Hz frame
TARGET_COLD_SLACK_MS = 15.0  # cold step may exceed the plain read by this much
TARGET_STALL_MS = 16.0  # no event-loop stall may exceed this

CHILD_FLAG = "--launch-child"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class BenchError(RuntimeError):
    pass


# --------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    if not values:
        return math.nan
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


@dataclass
class Series:
    """Timings (or stalls) in milliseconds."""

    values: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    def pct(self, q: float) -> float:
        return percentile(self.values, q)

    @property
    def max(self) -> float:
        return max(self.values) if self.values else math.nan


# --------------------------------------------------------------------------- data


def load_bench_read() -> ModuleType:
    """``bench_read.py`` as a module: it owns the data generator and the on-disk layouts."""
    spec = importlib.util.spec_from_file_location("bench_read", BENCH_READ)
    if spec is None or spec.loader is None:
        raise BenchError(f"cannot load {BENCH_READ}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def ensure_data(data_dir: Path, layouts: Sequence[str]) -> dict[str, Path]:
    """The full benchmark stack per layout, written by ``bench_read.ensure_data`` if needed."""
    br = load_bench_read()
    shape = br.FULL_SHAPE
    return dict(
        br.ensure_data(data_dir / "full", [br.LAYOUTS[n] for n in layouts], shape, br.PlaneGenerator(shape), False)
    )


# --------------------------------------------------------------------------- Qt set-up


class _LeakCheck(QObject):
    sig = Signal()


class RefcountGuard:
    """Keeps ``None`` and ``True`` alive in a PySide6 that loses references to them.

    PySide6 6.12.0 on CPython 3.11 (where these singletons are not yet immortal) returns
    ``None`` from every void method (``setText``, ``QTimer.start``...) and ``True`` from
    every ``Signal.emit()`` without the reference it owes. Each call leaves the singleton
    with one reference less; when the count reaches zero the interpreter aborts with
    "none_dealloc: deallocating None" (or "bool_dealloc"). zarrview makes hundreds of
    such calls per slider step, so without this guard the benchmark -- like the app --
    dies after a few dozen steps.

    The guard raises the reference count of a leaking singleton whenever it runs low, and
    never gives those references back: a list holding them would release them all at
    interpreter exit and trigger the very abort it prevents. It changes no timing and no
    app code, and only ever acts on CPython, whose object header starts with the count.
    """

    LOW = 200_000
    CHUNK = 1_000_000

    def __init__(self) -> None:
        self.leaking: list[str] = []
        self.added = 0

    def check(self) -> None:
        probe = _LeakCheck()
        timer = QTimer()
        before = {"None": sys.getrefcount(None), "True": sys.getrefcount(True)}
        for _ in range(100):  # a leak shows as -100, far beyond other threads' noise
            probe.sig.emit()
            timer.stop()
        after = {"None": sys.getrefcount(None), "True": sys.getrefcount(True)}
        self.leaking = [name for name in before if after[name] < before[name]]
        self.top_up()

    def top_up(self) -> None:
        if sys.implementation.name != "cpython":
            return
        for name in self.leaking:
            obj = {"None": None, "True": True}[name]
            if sys.getrefcount(obj) < self.LOW:
                ctypes.c_ssize_t.from_address(id(obj)).value += self.CHUNK  # ob_refcnt
                self.added += self.CHUNK


GUARD = RefcountGuard()


def make_app(settings_dir: str) -> QApplication:
    """An offscreen QApplication whose QSettings live in ``settings_dir``, not the user's."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    def quiet(_kind: QtMsgType, _ctx: Any, msg: str) -> None:
        if "propagateSizeHints" not in msg:  # the offscreen plugin says this for every window
            print(msg, file=sys.stderr)

    qInstallMessageHandler(quiet)
    QCoreApplication.setOrganizationName("zarrview-bench")
    QCoreApplication.setApplicationName("zarrview-bench")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    init_bridge()
    # the process as the app runs it (``app/main.py``): the allocator keeps freed planes for the
    # next (otherwise a cached step may fault 300 pages back in, ~1.5 ms), and cyclic garbage is
    # collected on the GUI thread
    zl.tune_process()
    collect_garbage_on_gui_thread()
    GUARD.check()
    if GUARD.leaking:
        log(f"warning: PySide6 {PySide6.__version__} on Python {platform.python_version()} loses references to "
            f"{' and '.join(GUARD.leaking)}; holding extra ones so the benchmark survives (see RefcountGuard)")
    return app


def new_window() -> MainWindow:
    w = MainWindow(WorkerPool())
    w.resize(*WINDOW_SIZE)
    w.show()
    return w


def close_window(app: QApplication, w: MainWindow) -> None:
    w.close()  # also closes the window's worker pool
    w.deleteLater()
    app.processEvents()


def run_until(done: Callable[[], bool], timeout: float = TIMEOUT_S, poll_ms: int = 1,
              wake: SignalInstance | None = None) -> None:
    """Run the event loop until ``done()``, checked whenever ``wake`` fires and every ``poll_ms``.

    Measurements never depend on ``poll_ms``: they are stamped in slots as things happen.
    It only bounds how late the loop returns, and how much the harness itself runs on the
    GUI thread while something is being timed (so pass ``wake`` and a long poll then).
    """
    GUARD.top_up()
    if done():
        return
    loop = QEventLoop()

    def check() -> None:
        if done():
            loop.quit()

    poll = QTimer()
    poll.setTimerType(Qt.TimerType.PreciseTimer)
    poll.setInterval(poll_ms)
    poll.timeout.connect(check)
    if wake is not None:
        wake.connect(check)
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(loop.quit)
    deadline.start(int(timeout * 1000))
    poll.start()
    try:
        while not done() and deadline.isActive():
            loop.exec()
    finally:
        poll.stop()
        deadline.stop()
        if wake is not None:
            wake.disconnect(check)
    if not done():
        raise BenchError(f"timed out after {timeout:.0f} s")


def idle(seconds: float) -> None:
    """Run the event loop for ``seconds``, with no harness code on the GUI thread meanwhile."""
    loop = QEventLoop()
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    timer.start(max(1, round(seconds * 1000)))
    loop.exec()


class FrameProbe(QObject):
    painted = Signal()

    """Stamps, on the GUI thread, when the data view has new data and when it was painted.

    "loaded": ``w.data.loaded`` fired, the newest generation is shown and the image item
    holds a different array than when armed. "painted": the first paint of the graphics
    view's viewport after that has been handled (a zero-timer queued from the paint event
    runs once the repaint and the flush to the backing store are done).
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.w = window
        self.item = window.data.image.getImageItem()
        self.loaded_at: float | None = None
        self.paint_started_at: float | None = None
        self.painted_at: float | None = None
        self._previous: object = None
        self._armed = False
        window.data.image.ui.graphicsView.viewport().installEventFilter(self)
        window.data.loaded.connect(self._loaded)

    def arm(self) -> None:
        self._previous = self.item.image
        self.loaded_at = self.paint_started_at = self.painted_at = None
        self._armed = True

    def mark_loaded(self) -> None:
        """For callers that detect "loaded" themselves (opening has no single signal)."""
        if self.loaded_at is None:
            self.loaded_at = time.perf_counter()

    def _loaded(self) -> None:
        data = self.w.data
        if (self._armed and self.loaded_at is None and not data.scene.busy
                and self.item.image is not None and self.item.image is not self._previous):
            self.loaded_at = time.perf_counter()

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if (self._armed and event.type() == QEvent.Type.Paint and self.loaded_at is not None
                and self.paint_started_at is None):
            self.paint_started_at = time.perf_counter()
            QTimer.singleShot(0, self._painted)
        return False

    def _painted(self) -> None:
        if self._armed and self.painted_at is None:
            self.painted_at = time.perf_counter()
            self._armed = False
            self.painted.emit()

    def wait_painted(self, timeout: float = TIMEOUT_S) -> None:
        run_until(lambda: self.painted_at is not None, timeout, poll_ms=WAIT_POLL_MS, wake=self.painted)


class TickProbe:
    """A 10 ms precise timer whose ticks show how long the event loop was blocked."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))

    def start(self) -> None:
        self.ticks.clear()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def stalls(self, start: float, end: float) -> list[float]:
        """Tick gaps minus the interval (ms), from the last tick before ``start`` to ``end``."""
        before = [t for t in self.ticks if t <= start]
        window = ([before[-1]] if before else []) + [t for t in self.ticks if start < t <= end]
        return [max(0.0, (b - a) * 1000 - TICK_MS) for a, b in itertools.pairwise(window)]


# --------------------------------------------------------------------------- measurements


@dataclass
class FirstPixels:
    """``perf_counter`` stamps: ``open_location`` called, first pixels, first paint after them."""

    t0: float
    loaded: float
    painted: float | None

    @property
    def loaded_ms(self) -> float:
        return (self.loaded - self.t0) * 1000

    @property
    def painted_ms(self) -> float | None:
        return None if self.painted is None else (self.painted - self.t0) * 1000


def open_and_wait(w: MainWindow, path: Path) -> FirstPixels:
    """``open_location`` until the image item has an image and the window is settled."""
    probe = FrameProbe(w)
    item = w.data.image.getImageItem()
    probe.arm()
    t0 = time.perf_counter()
    w.open_location(str(path))
    run_until(lambda: item.image is not None and w.is_settled())
    t1 = time.perf_counter()
    probe.mark_loaded()
    with contextlib.suppress(BenchError):  # no paint after all: report pixels only
        probe.wait_painted(timeout=2.0)
    probe.deleteLater()
    return FirstPixels(t0, t1, probe.painted_at)


def child_main(path: str) -> int:
    """In a fresh process: print ``time.monotonic()`` stamps of start-up and first pixels as JSON."""
    to_mono = time.monotonic() - time.perf_counter()
    stamps: dict[str, float] = {"imported": time.monotonic()}
    with tempfile.TemporaryDirectory(prefix="zarrview-bench-") as settings:
        app = make_app(settings)
        stamps["app"] = time.monotonic()
        w = new_window()
        stamps["shown"] = time.monotonic()
        first = open_and_wait(w, Path(path))
        stamps["open"] = first.t0 + to_mono
        stamps["first_pixels"] = first.loaded + to_mono
        print(json.dumps({"stamps": stamps, "open_to_loaded_ms": first.loaded_ms,
                          "open_to_painted_ms": first.painted_ms}), flush=True)
        close_window(app, w)
    return 0


@dataclass
class LaunchResult:
    process_to_imported: Series = field(default_factory=Series)
    process_to_shown: Series = field(default_factory=Series)
    process_to_pixels: Series = field(default_factory=Series)
    open_to_pixels: Series = field(default_factory=Series)
    open_to_painted: Series = field(default_factory=Series)


def measure_launches(path: Path, runs: int) -> LaunchResult:
    out = LaunchResult()
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    for _ in range(runs):
        t_spawn = time.monotonic()
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), CHILD_FLAG, str(path)],
                              check=False, capture_output=True, text=True, env=env, cwd=REPO_ROOT,
                              timeout=TIMEOUT_S * 2)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            raise BenchError(f"launch child failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        report = json.loads(lines[-1])
        stamps = report["stamps"]
        out.process_to_imported.values.append((stamps["imported"] - t_spawn) * 1000)
        out.process_to_shown.values.append((stamps["shown"] - t_spawn) * 1000)
        out.process_to_pixels.values.append((stamps["first_pixels"] - t_spawn) * 1000)
        out.open_to_pixels.values.append(report["open_to_loaded_ms"])
        if report["open_to_painted_ms"] is not None:
            out.open_to_painted.values.append(report["open_to_painted_ms"])
    return out


def plain_reads(arr: zl.Array, planes: Sequence[int]) -> tuple[Series, Series]:
    """``arr[z, :, :]`` per plane, no chunk cache (after one untimed pass that warms the page
    cache): back to back, and each after the idle time a step starts after (``TAIL_S +
    SETTLE_S``). The second is the cold step's baseline: on the 2-core VM a read after 90 ms of
    idle takes about twice as long as one right after another (threads and caches gone cold)."""
    for z in planes:
        arr[z, :, :]
    hot, idle_first = Series(), Series()
    for z in planes:
        t0 = time.perf_counter()
        arr[z, :, :]
        hot.values.append((time.perf_counter() - t0) * 1000)
    for z in planes:
        time.sleep(TAIL_S + SETTLE_S)
        t0 = time.perf_counter()
        arr[z, :, :]
        idle_first.values.append((time.perf_counter() - t0) * 1000)
    return hot, idle_first


@dataclass
class StepResult:
    loaded: Series = field(default_factory=Series)
    painted: Series = field(default_factory=Series)
    paint: Series = field(default_factory=Series)  # paint event arrives -> handled
    stalls: Series = field(default_factory=Series)


def reader_quiet(w: MainWindow) -> bool:
    """Nothing opening, read or prefetched: every lane of the window, the image's prefetch lane
    included, runs on ``w.pool``, so an idle pool means no job is queued or running."""
    return w.is_settled() and w.pool.idle()


def run_steps(w: MainWindow, probe: FrameProbe, ticks: TickProbe, planes: Sequence[int], clear_cache: bool) -> StepResult:
    """Step the first dimension through ``planes``, each from a quiet reader and event loop."""
    out = StepResult()
    ticks.start()
    for z in planes:
        run_until(lambda: reader_quiet(w))
        if clear_cache:
            w.pool.cache.clear()
        idle(SETTLE_S)
        probe.arm()
        t0 = time.perf_counter()
        w.data.set_index(0, z)
        probe.wait_painted()
        idle(TAIL_S)
        assert probe.loaded_at is not None and probe.paint_started_at is not None and probe.painted_at is not None
        out.loaded.values.append((probe.loaded_at - t0) * 1000)
        out.painted.values.append((probe.painted_at - t0) * 1000)
        out.paint.values.append((probe.painted_at - probe.paint_started_at) * 1000)
        out.stalls.values.extend(ticks.stalls(t0, probe.painted_at + TAIL_S))
        shown = w.data.plane.sliders[0][1].value()
        if shown != z or w.data.plane_selection()[0] != z:
            raise BenchError(f"the view is at plane {shown}, expected {z}")
    ticks.stop()
    return out


def bounce(start: int, count: int, n: int) -> list[int]:
    """``count`` planes after ``start``, one apart, turning back at the ends of ``range(n)``."""
    period = 2 * (n - 1)
    out = []
    for i in range(1, count + 1):
        k = (start + i) % period
        out.append(k if k < n else period - k)
    return out


@dataclass
class LayoutResult:
    name: str
    description: str
    launches: LaunchResult | None
    warm_first: FirstPixels
    plain: Series
    plain_idle: Series
    cold: StepResult
    cached: StepResult
    adjacent: StepResult


def describe(a: zl.Array) -> str:
    per_plane = len(a.reader.chunk_coords((0, slice(None), slice(None))))
    shards = f", shards {a.shards}" if a.shards else ""
    return f"`{a.shape}` {a.dtype}, chunks {a.chunks}{shards}, {per_plane} chunks per plane, codecs {a.codecs}"


def bench_layout(app: QApplication, name: str, path: Path, steps: int, launches: int) -> LayoutResult:
    arr = zl.open(str(path))
    if not isinstance(arr, zl.Array) or arr.ndim != 3:
        raise BenchError(f"{path} is not a 3-D array")
    nz = arr.shape[0]
    fresh = random.Random(SEED).sample(range(1, nz), min(steps + 2, nz - 1))  # plane 0 is shown on open
    cold_planes = [fresh[i % len(fresh)] for i in range(steps)]
    a, b = fresh[-2], fresh[-1]
    cached_planes = [(a, b)[i % 2] for i in range(steps)]

    log(f"{name}: plain reads of {len(set(cold_planes))} planes")
    plain, plain_idle = plain_reads(arr, cold_planes)

    launch = None
    if launches:
        log(f"{name}: {launches} fresh-process launch(es)")
        launch = measure_launches(path, launches)

    log(f"{name}: open in this process")
    w = new_window()
    try:
        warm_first = open_and_wait(w, path)
        shown = w.data.array
        if shown is None or tuple(shown.shape) != tuple(arr.shape) or w.data.plane_selection()[0] != 0:
            raise BenchError(f"{path} did not open as the expected array at plane 0")
        probe = FrameProbe(w)
        ticks = TickProbe()
        log(f"{name}: {steps} cold steps")
        cold = run_steps(w, probe, ticks, cold_planes, clear_cache=True)
        log(f"{name}: {steps} cached steps between planes {a} and {b}")
        for z in (a, b):  # show both once so their chunks are in the cache
            probe.arm()
            w.data.set_index(0, z)
            probe.wait_painted()
        cached = run_steps(w, probe, ticks, cached_planes, clear_cache=False)
        log(f"{name}: {steps} steps to the next plane, cache cleared first (only the app's prefetch warms it)")
        run_until(lambda: reader_quiet(w))
        w.pool.cache.clear()
        probe.arm()
        w.data.request_plane()  # the current plane again, which also prefetches its neighbours
        probe.wait_painted()
        warmed = w.data.driver.prefetch.warmed
        adjacent = run_steps(w, probe, ticks, bounce(cached_planes[-1], steps, nz), clear_cache=False)
        log(f"{name}: the app prefetched {w.data.driver.prefetch.warmed - warmed} plane(s) during those steps")
    finally:
        close_window(app, w)
    return LayoutResult(name, describe(arr), launch, warm_first, plain, plain_idle, cold, cached, adjacent)


# --------------------------------------------------------------------------- report


def fmt(v: float | None) -> str:
    return "-" if v is None or math.isnan(v) else f"{v:.1f}"


def verdict(ok: bool, primary: bool = True) -> str:
    word = "PASS" if ok else "FAIL"
    return word if primary else f"({word})"


def markdown_table(r: LayoutResult) -> tuple[str, int]:
    """The table for one layout, and how many primary targets failed."""
    header = ["measurement", "n", "median ms", "p90 ms", "p99 ms", "max ms", "target", "verdict"]
    rows: list[list[str]] = []

    def row(label: str, s: Series, target: str = "", result: str = "") -> None:
        rows.append([label, str(len(s.values)), fmt(s.median), fmt(s.pct(90)), fmt(s.pct(99)), fmt(s.max), target, result])

    if r.launches is not None:
        row("process start → imports done (fresh process)", r.launches.process_to_imported)
        row("process start → window shown (fresh process)", r.launches.process_to_shown)
        row("process start → first pixels (fresh process)", r.launches.process_to_pixels)
        row("open → first pixels (fresh process)", r.launches.open_to_pixels)
        row("open → first paint (fresh process)", r.launches.open_to_painted)
    row("open → first pixels (this process)", Series([r.warm_first.loaded_ms]))
    painted = r.warm_first.painted_ms
    row("open → first paint (this process)", Series([painted] if painted is not None else []))
    row("plain read `zl.open(p)[z, :, :]`, back to back", r.plain)
    idle_ms = round((TAIL_S + SETTLE_S) * 1000)
    row(f"plain read after {idle_ms} ms idle, as a step starts", r.plain_idle)
    cold_limit = r.plain_idle.median + TARGET_COLD_SLACK_MS
    failed = 0
    checks = [
        ("cold step → loaded", r.cold.loaded, cold_limit, f"< {cold_limit:.1f}", False),
        ("cold step → painted", r.cold.painted, cold_limit, f"< {cold_limit:.1f} (plain + {TARGET_COLD_SLACK_MS:g})", True),
        ("cached step → loaded", r.cached.loaded, TARGET_CACHED_MS, f"< {TARGET_CACHED_MS:g}", False),
        ("cached step → painted", r.cached.painted, TARGET_CACHED_MS, f"< {TARGET_CACHED_MS:g}", True),
        ("next-plane step → loaded", r.adjacent.loaded, TARGET_CACHED_MS, f"< {TARGET_CACHED_MS:g}", False),
        ("next-plane step → painted", r.adjacent.painted, TARGET_CACHED_MS, f"< {TARGET_CACHED_MS:g}", False),
    ]
    for label, s, limit, target, primary in checks:
        ok = s.median < limit
        failed += primary and not ok
        row(label, s, target, verdict(ok, primary))
    row("image view paint event → repaint done (cold steps)", r.cold.paint)
    ok = r.cold.stalls.max <= TARGET_STALL_MS
    failed += not ok
    row("event-loop stall, cold steps (tick gap - 10 ms)", r.cold.stalls, f"max ≤ {TARGET_STALL_MS:g}", verdict(ok))
    for label, series in (("cached", r.cached.stalls), ("next-plane", r.adjacent.stalls)):
        ok = series.max <= TARGET_STALL_MS
        row(f"event-loop stall, {label} steps", series, f"max ≤ {TARGET_STALL_MS:g}", verdict(ok, primary=False))

    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
    right = {1, 2, 3, 4, 5}

    def line(cells: Sequence[str]) -> str:
        padded = (c.rjust(wd) if i in right else c.ljust(wd) for i, (c, wd) in enumerate(zip(cells, widths, strict=True)))
        return "| " + " | ".join(padded) + " |"

    sep = "|" + "|".join(("-" * (wd + 1) + ":") if i in right else "-" * (wd + 2) for i, wd in enumerate(widths)) + "|"
    return "\n".join([f"### {r.name}", "", r.description, "", line(header), sep, *(line(x) for x in rows)]), failed


def environment() -> str:
    workers = len(cpus()) or 2  # the window's pool decodes on as many threads (``WorkerPool.decode``)
    return (f"Python {platform.python_version()}, PySide6 {PySide6.__version__} (Qt {qVersion()}), "
            f"pyqtgraph {pyqtgraph.__version__}, QT_QPA_PLATFORM={os.environ.get('QT_QPA_PLATFORM')}, "
            f"{os.cpu_count()} CPUs, decode pool {workers} workers, window {WINDOW_SIZE[0]}x{WINDOW_SIZE[1]}"
            + (f"\n\n**Warning:** this PySide6 loses a reference to {' and '.join(GUARD.leaking)} on every void call "
               "or `Signal.emit()`; on this Python the app aborts after a few dozen slider steps. The benchmark held "
               "extra references to survive (`RefcountGuard`)." if GUARD.leaking else ""))


# --------------------------------------------------------------------------- main


def parse_layouts(value: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in LAYOUT_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown layout(s) {unknown}; choose from {', '.join(LAYOUT_NAMES)}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == [CHILD_FLAG] and len(args_in) == 2:
        return child_main(args_in[1])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--layouts", type=parse_layouts, default=list(LAYOUT_NAMES),
                   help=f"comma-separated subset of {','.join(LAYOUT_NAMES)}")
    p.add_argument("--steps", type=int, default=20, help="slider steps of each kind (cold, cached, next plane); default 20")
    p.add_argument("--launches", type=int, default=3, help="fresh-process launches per layout (0: skip); default 3")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="bench_read.py's data directory")
    p.add_argument("--strict", action="store_true", help="exit with code 1 if a target fails")
    args = p.parse_args(args_in)
    if args.steps < 2:
        p.error("--steps must be at least 2")

    paths = ensure_data(args.data_dir, args.layouts)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="zarrview-bench-") as settings:
        app = make_app(settings)
        results = [bench_layout(app, name, paths[name], args.steps, args.launches) for name in args.layouts]
        print(f"## zarrview GUI benchmark\n\n{environment()}\n")
        for r in results:
            table, n = markdown_table(r)
            failed += n
            print(table + "\n")
    print("Targets: a cached step painted < 16 ms, a cold step painted < plain read + 15 ms, "
          "no event-loop stall > 16 ms during cold steps. Verdicts in parentheses are for information.")
    print(f"{failed} target(s) failed.")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
