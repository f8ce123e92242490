"""Cyclic garbage is collected on the GUI thread only (see zarrview/app/gui_gc.py for why)."""

from __future__ import annotations

import gc
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
