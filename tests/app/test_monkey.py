"""The monkey in CI: a fixed seed, a bounded number of random actions on a real window over good
and hostile stores, and the window healthy after every one; and the instruments it trusts, each
shown to catch what it is there to catch."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
import zarr

pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, QTimer, Signal  # noqa: E402

from monkey.actions import REGISTRY  # noqa: E402
from monkey.health import (GuiThreadIO, Heartbeat, Problems, Watch, check_answers, check_sentences,  # noqa: E402
                           pump)
from monkey.run import Monkey  # noqa: E402
from test_app import _settle, window  # noqa: E402, F401  (the window fixture)
from zarrview.app.window import MainWindow  # noqa: E402
from zarrview.scheduling import Context, Job, Lane, WorkerPool  # noqa: E402

SEED = 20261126
ACTIONS = 500
#: single slider steps, each waited for and every 50th held to the values written, the memory
#: taken every 50 once warmed up (``python -m tests.monkey`` runs as many as asked)
SLIDER_STEPS = 200
#: the hard bound in CI, on a loaded shared machine: ten times the longest steps on a quiet one
#: (a few tenths of a second: selecting an array whose first plane gets a 256-colour map, which
#: the gradient editor builds on the GUI thread). The strict 50 ms is counted and reported
#: (``python -m tests.monkey`` prints how many steps went over it), and reads on the GUI thread
#: are problems of their own, whatever their time
CI_STALL_S = 4.0
#: actions rare by weight or by circumstance that a run of ``ACTIONS`` need not reach
RARE = {"scroll the table", "complex or colour mode", "channels", "show as table", "series at a point",
        "image axes", "swap axes", "export", "pick a level"}


@pytest.mark.timeout(1200)  # about two minutes on a quiet 2-core machine: ten times that, as for any test
def test_a_seeded_monkey_keeps_the_window_healthy(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkey = Monkey(tmp_path, SEED)
    try:
        monkey.run(actions=ACTIONS // 2)
        monkey.checkpoint()
        monkey.run(actions=ACTIONS // 2)
        monkey.checkpoint()
        monkey.slider_phase(SLIDER_STEPS, warm_up=50, block=50)
    finally:
        monkey.close()
    f = monkey.figures
    print(f.report())
    assert monkey.problems.items == []
    assert f.actions == ACTIONS
    assert set(REGISTRY) - RARE <= set(f.done), f"never done: {set(REGISTRY) - RARE - set(f.done)}"
    assert f.worst_stall < CI_STALL_S, f"the GUI thread stalled {f.worst_stall * 1000:.0f} ms at {f.worst_stall_step}"
    # the parts built on first use (a plate view, the series dock) are there by the first
    # checkpoint; from then on, the same window with no store open holds the same widgets
    (_, widgets_mid), (_, widgets_end) = f.qt_counts[-2], f.qt_counts[-1]
    assert widgets_end == widgets_mid
    assert f.threads_left == []
    assert f.slider_steps == SLIDER_STEPS


# -- the instruments catch what they are for -------------------------------------------------------
class _Raiser(QObject):
    fire = Signal()


def test_an_exception_in_a_slot_is_a_problem(qapp) -> None:  # type: ignore[no-untyped-def]
    problems = Problems()
    watch = Watch(problems)
    try:
        raiser = _Raiser()
        raiser.fire.connect(lambda: 1 / 0)
        raiser.fire.emit()
        threading.Thread(target=lambda: [][1]).start()
        time.sleep(0.1)
    finally:
        watch.close()
    assert len(problems.items) == 2, problems.items
    assert "ZeroDivisionError" in problems.items[0] and "IndexError" in problems.items[1]


def test_a_job_never_answered_is_a_problem() -> None:
    pool = WorkerPool(threads=1)
    release = threading.Event()
    lane: Lane[None] = Lane(pool, lambda fn: fn(), "stuck")

    def work(_ctx: Context) -> None:
        release.wait(10)

    lane.submit(Job(work), lambda _a: None)
    problems = Problems()
    check_answers(pool, problems, timeout=0.3)
    release.set()
    assert len(problems.items) == 1 and "{'stuck': 1}" in problems.items[0]
    check_answers(pool, problems := Problems(), timeout=5)
    assert problems.items == []
    pool.close()


def test_a_type_name_where_a_sentence_belongs_is_a_problem() -> None:
    problems = Problems()
    check_sentences({"status bar": "Cannot open /a: the chunk key /a/c/0 is missing",
                     "message": "KeyError: 'c/0'", "box": "Traceback (most recent call last)"}, problems)
    assert [p.split(" shows")[0] for p in problems.items] == ["[setup] message", "[setup] box"]


def test_the_heartbeat_measures_a_blocked_gui_thread(qapp) -> None:  # type: ignore[no-untyped-def]
    beat = Heartbeat()
    pump(0.05)
    beat.restart()
    QTimer.singleShot(0, lambda: time.sleep(0.2))
    pump(0.3)
    assert 0.2 <= beat.stall() < 0.6
    beat.restart()
    pump(0.1)
    assert beat.stall() < 0.2
    beat.timer.stop()
    assert np.isfinite(beat.stall())


def test_files_read_on_the_gui_thread_are_a_problem(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    problems = Problems()
    io = GuiThreadIO(tmp_path, problems)
    try:
        (tmp_path / "a").read_text()
        list((tmp_path).iterdir())
        worker = threading.Thread(target=(tmp_path / "a").read_text)  # a worker may read
        worker.start()
        worker.join()
        (tmp_path.parent / "elsewhere").exists()
    finally:
        io.close()
    (tmp_path / "a").read_text()  # no longer watched
    assert [p.split(" of ")[0] for p in problems.items] == ["[setup] open", "[setup] os.listdir"], problems.items


def test_opening_a_store_reads_nothing_on_the_gui_thread(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Which store a location names (its folder resolved, its .zmetadata read for a Parquet
    reference set) is found on a worker, as is the opening itself; the same store dropped again
    is recognised as open."""
    folder = tmp_path / "data" / "c.zarr"
    g = zarr.open_group(folder, mode="w", zarr_format=2)
    g.create_array("a", shape=(4, 4), chunks=(2, 2), dtype="i2")[...] = np.arange(16).reshape(4, 4)
    zarr.consolidate_metadata(folder)
    problems = Problems()
    io = GuiThreadIO(tmp_path / "data", problems)
    try:
        window.open_location(str(folder))
        _settle(qtbot, window)
        window.open_location(str(folder) + "/")
        _settle(qtbot, window)
    finally:
        io.close()
    assert problems.items == []
    assert window.model.rowCount() == 1 and "open already" in window.status_label.text()
