"""Cyclic garbage is collected on the GUI thread only (see zarrview/app/gui_gc.py for why)."""

from __future__ import annotations

import gc
import sys
import threading

import pytest

pytest.importorskip("PySide6")

from zarrview.app.gui_gc import INTERVAL_MS, collect_garbage_on_gui_thread  # noqa: E402


class _Cycle:
    """Garbage only the cycle collector can free; records the thread that freed it."""

    freed_on: list[str] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.freed_on.append(threading.current_thread().name)


def test_cycles_are_freed_on_the_gui_thread_not_by_a_worker(qtbot) -> None:  # type: ignore[no-untyped-def]
    collector = collect_garbage_on_gui_thread()
    assert not gc.isenabled()
    _Cycle.freed_on.clear()
    _Cycle()  # unreachable at once

    def churn() -> None:  # far past the youngest generation's threshold: a collection would run here
        kept = [[i] for i in range(5 * max(collector.thresholds[0], 1))]
        assert kept

    worker = threading.Thread(target=churn, name="worker")
    worker.start()
    worker.join()
    assert _Cycle.freed_on == []  # the worker never collected
    gui = threading.current_thread().name
    kept = [[i] for i in range(5 * max(collector.thresholds[0], 1))]  # the GUI thread allocates too
    qtbot.waitUntil(lambda: _Cycle.freed_on == [gui], timeout=20 * INTERVAL_MS)
    assert kept


def _past_every_threshold(thresholds: tuple[int, ...]) -> list[list[int]]:
    """Counts as after a burst of allocation: every generation past its threshold."""
    t0, t1, t2 = thresholds[:3]
    for _ in range(t2 + 1):
        gc.collect(1)
    for _ in range(t1 + 1):
        gc.collect(0)
    return [[i] for i in range(2 * t0 + 1)]


def test_a_full_collection_waits_until_a_quarter_of_the_long_lived_objects_are_new(qtbot) -> None:  # type: ignore[no-untyped-def]
    collector = collect_garbage_on_gui_thread()
    started: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(record)
    try:
        collector.long_lived, collector.pending = 10**9, 0  # a process holding very many objects
        kept = _past_every_threshold(collector.thresholds)
        assert gc.get_count()[2] > collector.thresholds[2]
        started.clear()
        collector.collect()
        assert started == [1]  # Python's rule: the middle generation, not a walk over every object
        assert collector.pending >= len(kept)  # the survivors now count towards the next full pass
        collector.long_lived = 4 * collector.pending - 1
        kept += _past_every_threshold(collector.thresholds)
        started.clear()
        switch = sys.getswitchinterval()
        sys.setswitchinterval(30.0)  # no other thread (a collection there promotes objects) runs until the count
        try:
            collector.collect()
            oldest = len(gc.get_objects(generation=2))
        finally:
            sys.setswitchinterval(switch)
        assert started == [2]
        assert collector.pending == 0
        assert collector.long_lived == oldest >= len(kept)
    finally:
        gc.callbacks.remove(record)
