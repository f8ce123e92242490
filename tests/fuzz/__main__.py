"""``python -m tests.fuzz``: a long fuzzing campaign, or the replay of one saved case.

    python -m tests.fuzz --count 20000 --seed 7 --jobs 2 --out /tmp/fuzz
    python -m tests.fuzz --replay /tmp/fuzz/defects/001-other_exception/case.json

Prints the number of cases per category and every distinct defect with the command that
replays it; exits 1 if any case was bad (anything but ``ok`` and ``zarr_error``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .campaign import GiB, Campaign, Options, generated, summary, temp_out


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=2000, help="cases to generate (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed: the same seed gives the same cases")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--out", type=Path, help="where seeds, work folders and defects go (default: a new temp folder)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per case before it counts as a hang")
    p.add_argument("--mem-gib", type=float, default=6.0, help="address-space limit of each worker, GiB")
    p.add_argument("--read-gib", type=float, default=1.0, help="zarrlib's read_bytes bound inside the workers, GiB")
    p.add_argument("--minutes", type=float, help="stop starting new cases after this many minutes")
    p.add_argument("--replay", type=Path, help="run one saved case.json and print every finding in full")
    return p.parse_args(argv)


def until(cases: Iterable[dict[str, Any]], deadline: float) -> Iterator[dict[str, Any]]:
    for case in cases:
        if time.monotonic() > deadline:
            return
        yield case


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    out = args.out or temp_out()
    out.mkdir(parents=True, exist_ok=True)
    opt = Options(timeout=args.timeout, as_bytes=int(args.mem_gib * GiB), read_bytes=int(args.read_gib * GiB),
                  jobs=1 if args.replay else args.jobs)
    print(f"building seed stores with zarr-python in {out / 'seeds'}", flush=True)
    campaign = Campaign(out, opt, keep_results=bool(args.replay), log=lambda s: print(s, flush=True))
    if args.replay:
        case = json.loads(args.replay.read_text())
        case = case.get("case", case)  # an entry of slowest.json
        report = campaign.run([case])
        _, result = report.results[0]
        print(json.dumps(case, ensure_ascii=False)[:2000])
        for f in result["findings"]:
            print(f"\n[{f['category']}] {f['type']} at {f['where']} (step {f['step']})\n{f['message']}\n{f['traceback']}")
        print(f"\n{report.cases} case: {dict(report.counts)}; the mutated store is kept in {out}/defects when bad")
        return 1 if report.bad else 0
    print(f"running {args.count} cases, seed {args.seed}, {args.jobs} jobs, {args.timeout:.0f} s per case, "
          f"{args.mem_gib:g} GiB address space per worker", flush=True)
    cases = generated(campaign.seeds, args.count, args.seed)
    if args.minutes:
        cases = until(cases, time.monotonic() + args.minutes * 60)
    report = campaign.run(cases)
    print("\n".join(summary(report, out)))
    slow = [{"seconds": t, "rss_peak": rss, "case": case} for t, rss, case in report.heaviest + report.hungriest]
    (out / "slowest.json").write_text(json.dumps(slow, indent=1, ensure_ascii=False))  # replayable: --replay takes "case"
    return 1 if report.bad else 0


if __name__ == "__main__":
    sys.exit(main())
