"""A campaign: generate cases with hypothesis, run them on a pool of workers, keep the defects.

Hypothesis only generates here (no shrinking, no database): with a fixed seed the sequence of
cases is the same on every machine, and each case is saved as plain JSON, so a defect is
reproduced from its own file. Bad results are deduplicated into distinct defects by
category, exception type and innermost zarrview frame; the first case of each is kept, with
its mutated store, under ``<out>/defects``.
"""

from __future__ import annotations

import hashlib
import json
import queue
import shutil
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .apply import build, location, protection, tree_digest
from .runner import GOOD, SEVERITY, Worker, category_of
from .seeds import Seed, build_seeds
from .slots import Slots, Ticker

GiB = 1 << 30


@dataclass
class Options:
    timeout: float = 20.0  # seconds of wall clock per case
    as_bytes: int = 6 * GiB  # each worker's address-space limit
    read_bytes: int = GiB  # zarrlib's bound on one read's result inside the workers
    jobs: int = 2
    selftest: bool = False  # honour the ``inject`` field of cases (the suite's own checks)


@dataclass
class Defect:
    category: str
    type: str
    where: str
    message: str
    step: str
    case: dict[str, Any]
    traceback: str
    count: int = 0
    dir: str = ""


@dataclass
class Report:
    counts: Counter[str] = field(default_factory=Counter)
    defects: dict[tuple[str, str, str], Defect] = field(default_factory=dict)
    cases: int = 0
    seconds: float = 0.0
    rss_peak: int = 0
    results: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)  # kept when asked
    heaviest: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)  # (seconds, rss, case), top 5
    hungriest: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)  # the same, by peak RSS

    @property
    def bad(self) -> int:
        return sum(n for cat, n in self.counts.items() if cat not in GOOD)


class Campaign:
    def __init__(self, out: Path, options: Options, seeds: dict[str, Seed] | None = None,
                 keep_results: bool = False, log: Callable[[str], None] = print) -> None:
        self.out = out
        self.opt = options
        self.seeds = seeds if seeds is not None else build_seeds(out / "seeds")
        self.report = Report()
        self.keep = keep_results
        self.log = log
        self._lock = threading.Lock()

    # -- one case --------------------------------------------------------------------------------
    def run_case(self, worker: Worker, case: dict[str, Any], work: Path) -> dict[str, Any]:
        seed = self.seeds[case["seed"]]
        store = work / "store"
        try:
            build(seed, case, store)
            store = location(case, store)
            damaged, clean = protection(seed, case)
            check = {p: str(Path(seed.dir) / seed.arrays[p].expected) for p in damaged | clean}
            before = tree_digest(store)
        except Exception as e:  # noqa: BLE001 - a harness bug must show, not stop the campaign
            return {"findings": [{"category": "harness_error", "step": "build", "type": type(e).__name__,
                                  "where": "tests/fuzz", "message": str(e)[:300], "traceback": traceback.format_exc()}],
                    "zarr_errors": 0, "seconds": 0.0}
        msg = {"store": str(store), "check": check, "keys": sorted({op["key"] for op in case["ops"] if "key" in op})}
        if "inject" in case:
            msg["inject"] = case["inject"]
        result = worker.run(msg, self.opt.timeout)
        if tree_digest(store) != before:
            result["findings"].append({"category": "store_modified", "step": "after", "type": "", "where": "",
                                       "message": "the store's files changed during the case", "traceback": ""})
        return result

    def record(self, case: dict[str, Any], result: dict[str, Any]) -> str:
        cat = category_of(result)
        new: list[Defect] = []
        with self._lock:
            self.report.cases += 1
            self.report.counts[cat] += 1
            self.report.rss_peak = max(self.report.rss_peak, result.get("rss_peak", 0))
            if self.keep:
                self.report.results.append((case, result))
            entry = (result.get("seconds", 0.0), result.get("rss_peak", 0), case)
            for top, key in ((self.report.heaviest, 0), (self.report.hungriest, 1)):
                top.append(entry)
                top.sort(key=lambda h: -h[key])  # type: ignore[operator]
                del top[5 if key == 0 else 3:]
            for f in result["findings"]:
                if f["category"] in GOOD:
                    continue
                sig = (f["category"], f["type"], f["where"])
                if sig not in self.report.defects:
                    d = Defect(f["category"], f["type"], f["where"], f["message"], f["step"], case, f["traceback"])
                    self.report.defects[sig] = d
                    new.append(d)
                self.report.defects[sig].count += 1
            number = len(self.report.defects)
        for i, d in enumerate(new):
            self.save(d, number - len(new) + i + 1)
        return cat

    def save(self, d: Defect, number: int) -> None:
        """A reproducer: the case as JSON, its mutated store, and what went wrong."""
        where = self.out / "defects" / f"{number:03d}-{d.category}"
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        (where / "case.json").write_text(json.dumps(d.case, indent=1, ensure_ascii=False))
        (where / "finding.txt").write_text(f"{d.category} {d.type} at {d.where} (step {d.step})\n{d.message}\n\n"
                                           f"{d.traceback}")
        try:
            build(self.seeds[d.case["seed"]], d.case, where / "store")
        except Exception as e:  # noqa: BLE001
            (where / "store-error.txt").write_text(str(e))
        d.dir = str(where)

    # -- many cases ----------------------------------------------------------------------------
    def run(self, cases: Iterable[dict[str, Any]], progress_every: float = 30.0) -> Report:
        tick = Ticker(progress_every, lambda s: self.log(f"  {self.report.cases} cases, {s:.0f} s, "
                                                         f"{dict(self.report.counts)}"))

        def slot(i: int, take: Callable[[], dict[str, Any] | None]) -> None:
            work = self.out / "work" / f"slot-{i}"
            work.mkdir(parents=True, exist_ok=True)
            worker = Worker(work / "worker.log", self.opt.as_bytes, self.opt.read_bytes, self.opt.selftest)
            try:
                while (case := take()) is not None:
                    self.record(case, self.run_case(worker, case, work))
                    tick()
            finally:
                worker.stop()
                shutil.rmtree(work / "store", ignore_errors=True)
                (work / "store.zip").unlink(missing_ok=True)

        Slots(self.opt.jobs, slot).run(cases)
        self.report.seconds = time.monotonic() - tick.start
        return self.report


def generated(seeds: dict[str, Seed], count: int, seed: int) -> Iterable[dict[str, Any]]:
    """``count`` cases from the strategies, the same sequence for the same seed. Hypothesis runs
    in a thread that hands each case over as it is drawn, so running overlaps generating."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from .mutate import cases

    out: queue.Queue[dict[str, Any] | None | BaseException] = queue.Queue(maxsize=64)
    seen: set[str] = set()

    class Enough(BaseException):
        """Stops hypothesis at once (an Exception would be replayed as a failure)."""

    @hseed(seed)
    @settings(max_examples=count * 20, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(cases(seeds))
    def draw(case: dict[str, Any]) -> None:
        digest = hashlib.blake2b(json.dumps(case, sort_keys=True).encode(), digest_size=16).hexdigest()
        if digest in seen:  # hypothesis explores near its earlier examples: a quarter repeat exactly
            return
        seen.add(digest)
        out.put(case)
        if len(seen) >= count:
            raise Enough

    def produce() -> None:
        try:
            draw()
            out.put(None)
        except Enough:
            out.put(None)
        except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
            out.put(e)

    threading.Thread(target=produce, daemon=True).start()
    while (item := out.get()) is not None:
        if isinstance(item, BaseException):
            raise item
        yield item


def temp_out() -> Path:
    return Path(tempfile.mkdtemp(prefix="zarrview-fuzz-"))


def summary(report: Report, out: Path) -> list[str]:
    """The campaign's printed report: counts per category and one line per distinct defect."""
    rate = report.cases / report.seconds if report.seconds else 0.0
    lines = [f"{report.cases} cases in {report.seconds:.1f} s ({rate:.1f} cases/s); peak worker RSS "
             f"{report.rss_peak / GiB:.2f} GiB; output in {out}", "categories:"]
    for cat in SEVERITY:
        if report.counts.get(cat):
            lines.append(f"  {cat:<18} {report.counts[cat]:>7}{'' if cat in GOOD else '   BAD'}")
    for title, top in (("slowest cases:", report.heaviest), ("largest peak RSS:", report.hungriest)):
        lines.append(title)
        for seconds, rss, case in top:
            lines.append(f"  {seconds:6.2f} s {rss / GiB:5.2f} GiB  {json.dumps(case, ensure_ascii=False)[:150]}")
    ordered = sorted(report.defects.values(), key=lambda d: (SEVERITY.index(d.category), d.where))
    lines.append(f"distinct defects: {len(ordered)}")
    for d in ordered:
        lines.append(f"  [{d.category}] {d.type} at {d.where} (step {d.step}, {d.count} cases): {d.message[:160]}")
        lines.append(f"      replay: python -m tests.fuzz --replay {d.dir}/case.json")
    return lines
