"""Offscreen benchmark: how smoothly the image follows a drag of the histogram's levels.

A real ``MainWindow`` (1280x820, offscreen Qt) shows plane 0 of ``bench_read.py``'s 2048x2048
uint16 stack; a 16 ms timer then moves the upper level as a hand dragging the histogram's
region would (``--events`` moves), while a 10 ms timer probes the event loop. Reported: the
largest event-loop stall (tick gap - 10 ms), the repaints of the image view and how long each
took, and the lag from a move to the first repaint that shows its levels (or later ones).
Works on any checkout of the app (``PYTHONPATH=CHECKOUT``), so that a change can be compared.

    PYTHONPATH=. python bench/bench_drag.py [--layout v3_chunked] [--events 120]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gui import DEFAULT_DATA_DIR, TickProbe, close_window, ensure_data, idle, make_app, new_window, run_until  # noqa: E402
from PySide6.QtCore import QEvent, QObject, Qt, QTimer  # noqa: E402

MOVE_MS = 16


def shown_levels(item: Any) -> tuple[float, float] | None:
    """The levels the image item's pixels show: those it was rendered with, or pyqtgraph's own."""
    rendered = getattr(item, "rendered", None)
    if rendered is not None:
        return tuple(rendered.look_key[0])  # type: ignore[return-value]
    return None if item.levels is None else tuple(float(v) for v in item.levels)


class PaintProbe(QObject):
    """Stamps each repaint of the image view: when it began, how long it took, what it showed."""

    def __init__(self, w: Any) -> None:
        super().__init__()
        self.item = w.data.image.getImageItem()
        self.paints: list[tuple[float, float, tuple[float, float] | None]] = []
        self._started: float | None = None
        w.data.image.ui.graphicsView.viewport().installEventFilter(self)

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self._started = time.perf_counter()
            QTimer.singleShot(0, self._done)
        return False

    def _done(self) -> None:
        if self._started is not None:
            self.paints.append((self._started, time.perf_counter() - self._started, shown_levels(self.item)))
            self._started = None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--layout", default="v3_chunked")
    p.add_argument("--events", type=int, default=120)
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    args = p.parse_args()
    path = ensure_data(args.data_dir, [args.layout])[args.layout]
    with tempfile.TemporaryDirectory(prefix="zarrview-drag-") as settings:
        app = make_app(settings)
        w = new_window()
        w.open_location(str(path))
        run_until(lambda: w.data.image.getImageItem().image is not None and w.is_settled())
        idle(0.5)
        hist = w.data.image.ui.histogram.item
        lo, hi = (float(v) for v in hist.getLevels())
        probe, ticks = PaintProbe(w), TickProbe()
        moves: list[tuple[float, float]] = []

        def move() -> None:
            k = len(moves)
            if k >= args.events:
                timer.stop()
                return
            top = hi * (0.4 + 0.6 * abs(((k / 30) % 2) - 1))  # up and down, as a hand would
            moves.append((time.perf_counter(), top))
            hist.setLevels(lo, top)

        timer = QTimer()
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.timeout.connect(move)
        ticks.start()
        start = time.perf_counter()
        timer.start(MOVE_MS)
        run_until(lambda: len(moves) >= args.events and w.is_settled(), timeout=60)
        idle(0.2)
        end = time.perf_counter()
        ticks.stop()
        stalls = ticks.stalls(start, end)
        lags = []
        for t, top in moves:
            later = [pt + dur for pt, dur, lv in probe.paints if pt >= t and lv is not None and abs(lv[1] - top) < 1e-6]
            if later:
                lags.append((min(later) - t) * 1000)
        durations = [d * 1000 for _, d, _ in probe.paints]
        print(f"{args.layout}: {len(moves)} moves in {(end - start):.2f} s; {len(probe.paints)} repaints "
              f"(median {statistics.median(durations):.1f} ms, max {max(durations):.1f} ms); "
              f"{len(lags)} moves shown, lag median {statistics.median(lags):.1f} ms, "
              f"p90 {sorted(lags)[int(0.9 * (len(lags) - 1))]:.1f} ms; "
              f"largest stall {max(stalls):.1f} ms, stalls > 16 ms: {sum(s > 16 for s in stalls)}")
        close_window(app, w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
