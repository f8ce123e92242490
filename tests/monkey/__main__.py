"""``python -m tests.monkey --minutes N [--seed S] [--slider-steps K]``: random actions for N
minutes, then K single slider steps on one volume, then the figures; exits 1 if the window
was unhealthy at any step."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.monkey", description=__doc__)
    parser.add_argument("--minutes", type=float, default=2.0, help="minutes of random actions")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--slider-steps", type=int, default=10_000, help="single slider steps on one volume")
    parser.add_argument("--screenshot", help="save the window as a PNG here before it closes")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from .run import Monkey

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory(prefix="zarrview-monkey-") as folder:
        monkey = Monkey(Path(folder), args.seed)
        try:
            for _ in range(3):  # thirds, with a count of Qt objects after each: a leak grows
                monkey.run(seconds=args.minutes * 20)
                monkey.checkpoint()
            if args.slider_steps:
                monkey.slider_phase(args.slider_steps)
            if args.screenshot:
                monkey.window.grab().save(args.screenshot)
        finally:
            monkey.close()
    print(monkey.figures.report())
    for warning in monkey.problems.warnings[:20]:
        print("Qt warning:", warning)
    for problem in monkey.problems.items:
        print("PROBLEM:", problem)
    del app
    return 1 if monkey.problems.items else 0


if __name__ == "__main__":
    sys.exit(main())
