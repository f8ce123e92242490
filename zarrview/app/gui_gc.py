"""Cyclic garbage is collected on the GUI thread, never on a worker thread.

Python's cycle collector runs in whichever thread happens to allocate when a generation fills
up: a worker of the shared pool, fsspec's I/O thread, a decode worker. A window, dialog or view
caught in a reference cycle (signal connections to lambdas that capture ``self`` make these
common) is then destroyed from that thread. Qt cannot stop an object's timers from another
thread, so they stay registered and the next one to fire calls into freed memory: the
intermittent segfault in ``QTimerInfoList::activateTimers`` seen in the app tests. Automatic
collection is therefore switched off and a timer on the GUI thread collects instead, by the
generation thresholds Python itself would have used.

Python also holds back a full collection until the objects that survived into the oldest
generation since the last one are a quarter of those that one kept: a full pass walks every
object, 35 ms for the app's own 84,000 on a 2-core EPYC and ten times that in a long-lived
process. ``gc.collect(2)`` skips that rule, so the collector keeps it itself.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

INTERVAL_MS = 250

_collector: GuiThreadCollector | None = None


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.long_lived = 0  # objects the last full collection kept
        self.pending = 0  # objects moved into the oldest generation since
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.collect)
        self.timer.start()
        gc.disable()

    def collect(self) -> int:
        """Collect the oldest generation whose count is past its threshold; objects found.
        Automatic collection switched back on by a library (dask's ``disable_gc`` restores the
        state it found, which may be from before this collector) is switched off again."""
        if gc.isenabled():
            gc.disable()
        counts = gc.get_count()
        generation = -1
        for gen, (count, limit) in enumerate(zip(counts, self.thresholds)):
            if limit and count > limit:
                generation = gen
            else:
                break
        if generation == 2 and self.pending * 4 <= self.long_lived:
            generation = 1
        if generation < 0:
            return 0
        if generation < 2:
            return self._young(generation)
        found = gc.collect(2)
        self.long_lived = len(gc.get_objects(generation=2))
        self.pending = 0
        return found

    def _young(self, generation: int) -> int:
        """Collect a young generation; what survives the middle one moves to the oldest."""
        if generation == 0:
            return gc.collect(0)
        young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
        found = gc.collect(1)
        self.pending += max(young - found, 0)
        return found


def installed() -> GuiThreadCollector | None:
    return _collector


def collect_garbage_on_gui_thread() -> GuiThreadCollector:
    """Install the collector (once, on the GUI thread, after the QApplication exists)."""
    global _collector
    app = QCoreApplication.instance()
    assert app is not None, "create the QApplication first"
    if _collector is None:
        _collector = GuiThreadCollector(app)
    gc.disable()
    return _collector
