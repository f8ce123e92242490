"""The monkey: a seeded run of random actions on a real window, a health check after each, and
the figures of the run (actions per second, the longest stall, memory over many slider steps,
Qt objects and threads left behind).
"""

from __future__ import annotations

import gc
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings
from PySide6.QtWidgets import QAbstractSlider, QApplication

from zarrview.app.bridge import init_bridge
from zarrview.app.gui_gc import collect_garbage_on_gui_thread
from zarrview.app.window import MainWindow
from zarrview.scheduling import WorkerPool

from . import corpus as corpus_module
from .actions import REGISTRY, Hand, pick, shown_sliders
from .health import (GuiThreadIO, Heartbeat, Problems, Watch, check_answers, check_sentences, close_message_boxes, pump,
                     wait_until)

#: the GUI thread may not stop answering for longer than this (a person feels 50 ms as a hitch)
STRICT_STALL_S = 0.050
#: how long one step may take to settle before the window counts as hung
SETTLE_TIMEOUT_S = 30.0


@dataclass
class Figures:
    seed: int
    actions: int = 0
    skipped: int = 0
    seconds: float = 0.0
    done: Counter[str] = field(default_factory=Counter)
    worst_stall: float = 0.0
    worst_stall_step: str = ""
    stalls_over_strict: int = 0
    exports_written: int = 0
    exports_refused: int = 0
    slider_steps: int = 0
    slider_seconds: float = 0.0
    #: RSS (bytes) after every block of slider steps, from the end of the warm-up on
    slider_rss: list[int] = field(default_factory=list)
    #: (QObjects under the window, widgets alive) with no store open: at the start and at each
    #: ``checkpoint``; what lazily built parts (a plate view, the series dock) add shows once,
    #: a leak grows from one checkpoint to the next
    qt_counts: list[tuple[int, int]] = field(default_factory=list)
    stall_by_action: dict[str, float] = field(default_factory=dict)
    threads_left: list[str] = field(default_factory=list)
    answers_dropped: int = 0

    @property
    def rss_growth(self) -> int:
        return max(self.slider_rss) - self.slider_rss[0] if self.slider_rss else 0

    def report(self) -> str:
        rate = self.actions / self.seconds if self.seconds else 0.0
        lines = [f"seed {self.seed}: {self.actions} actions in {self.seconds:.1f} s ({rate:.1f}/s), "
                 f"{self.skipped} picks that did not apply",
                 f"longest GUI stall {self.worst_stall * 1000:.0f} ms ({self.worst_stall_step}); "
                 f"{self.stalls_over_strict} steps over {STRICT_STALL_S * 1000:.0f} ms",
                 f"exports written {self.exports_written}, failed with a message {self.exports_refused}",
                 "worst stall by action: " + ", ".join(
                     f"{n} {s * 1000:.0f} ms" for n, s in sorted(self.stall_by_action.items(), key=lambda x: -x[1])),
                 "Qt objects under the window, widgets alive, with no store open (start, checkpoints): "
                 + " -> ".join(f"{o}/{w}" for o, w in self.qt_counts),
                 f"answers dropped for deleted receivers {self.answers_dropped}",
                 f"threads left after closing: {self.threads_left or 'none'}"]
        if self.slider_steps:
            lines.append(f"slider phase: {self.slider_steps} steps in {self.slider_seconds:.1f} s "
                         f"({self.slider_steps / max(self.slider_seconds, 1e-9):.0f}/s), RSS growth after warm-up "
                         f"{self.rss_growth / 2**20:.1f} MiB (from {self.slider_rss[0] / 2**20:.0f} MiB)"
                         if self.slider_rss else f"slider phase: {self.slider_steps} steps")
        lines.append("actions: " + ", ".join(f"{n} {c}" for n, c in self.done.most_common()))
        return "\n".join(lines)


def qt_counts(w: MainWindow) -> tuple[int, int]:
    """(QObjects under the window, widgets alive), after deferred deletions and a collection."""
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        pump(0.02)
        gc.collect()
    return len(w.findChildren(QObject)), len(QApplication.allWidgets())


class Monkey:
    """A window, the corpus and the instruments; ``run`` and ``slider_phase`` drive it."""

    def __init__(self, folder: Path, seed: int) -> None:
        QCoreApplication.setOrganizationName("zarrview-monkey")
        QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(folder / "settings"))
        self.problems = Problems()
        self.watch = Watch(self.problems)
        self.corpus = corpus_module.build(folder / "corpus")
        self.threads_before = {t.ident for t in threading.enumerate()}  # the writers' threads are not the window's
        self.io = GuiThreadIO(folder / "corpus", self.problems)
        init_bridge()
        collect_garbage_on_gui_thread()
        self.window = w = MainWindow(WorkerPool())
        w.show()
        exports = folder / "exports"
        exports.mkdir()
        self.hand = Hand(w, self.corpus, random.Random(seed), exports)
        w.exports.ask_path = self.hand.save_dialog
        self.figures = Figures(seed)
        self.beat = Heartbeat()
        self.settle()
        self.figures.qt_counts.append(qt_counts(w))

    # -- one step -----------------------------------------------------------------------------------
    def settle(self) -> None:
        w = self.window
        for _ in range(2):
            if not wait_until(w.is_settled, SETTLE_TIMEOUT_S):
                self.problems.add(f"the window did not settle within {SETTLE_TIMEOUT_S:.0f} s")
                return
            pump(0.03)

    def step(self, names: list[str] | None = None) -> bool:
        """One random action, its aftermath and the checks; whether an action applied."""
        act = pick(self.hand.rng, names)
        self.problems.step = f"#{self.figures.actions} {act.name}"
        asked = len(self.hand.asked)
        self.beat.restart()
        said = act.run(self.hand)
        if said is None:
            self.figures.skipped += 1
            return False
        self.problems.step = f"#{self.figures.actions} {said}"
        self.settle()
        stall = self.beat.stall()
        f = self.figures
        f.actions += 1
        f.done[act.name] += 1
        if stall > f.worst_stall:
            f.worst_stall, f.worst_stall_step = stall, self.problems.step
        f.stalls_over_strict += stall > STRICT_STALL_S
        f.stall_by_action[act.name] = max(stall, f.stall_by_action.get(act.name, 0.0))
        self.check(exported=len(self.hand.asked) > asked)
        return True

    def check(self, exported: bool) -> None:
        w = self.window
        check_answers(w.pool, self.problems)
        boxes = close_message_boxes(self.problems)
        texts = {"status bar": w.status_label.text(), "data view message": w.data.message.text()}
        texts.update({f"metadata {k}": v for k, v in w.meta.fields().items() if k == "Error"})
        check_sentences(texts, self.problems)
        if exported:
            self._check_export(boxes)

    def _check_export(self, boxes: list[str]) -> None:
        path = Path(self.hand.asked[-1])
        if path.parent == self.corpus.not_a_folder:  # the message must say which file could not be written
            reported = any(str(path) in b for b in boxes)
            self.figures.exports_refused += reported
            if path.exists() or not reported:
                self.problems.add(f"an export to {path} (inside a file) was not refused with a message")
        elif path.exists() and path.stat().st_size > 0:
            self.figures.exports_written += 1
        elif boxes:  # a plane that cannot be read (a corrupt chunk) is not exported: the box says why
            self.figures.exports_refused += 1
        else:
            self.problems.add(f"an export to {path} neither wrote the file nor said why; "
                              f"the status bar says {self.window.status_label.text()!r}")

    # -- runs ---------------------------------------------------------------------------------------
    def run(self, actions: int | None = None, seconds: float | None = None, names: list[str] | None = None) -> None:
        start = time.monotonic()
        done = 0
        while (actions is None or done < actions) and (seconds is None or time.monotonic() - start < seconds):
            done += self.step(names)
        self.figures.seconds += time.monotonic() - start

    def slider_phase(self, steps: int, warm_up: int = 500, block: int = 250) -> None:
        """``steps`` single steps of the slider of one volume, each waited for and every 50th
        checked against the values written; the RSS after each ``block`` once warmed up."""
        w = self.window
        self.problems.step = "slider phase"
        self.close_stores()
        if w.data.as_table.isChecked():
            w.data.as_table.setChecked(False)
        w.open_location(self.corpus.slider_volume)
        wait_until(lambda: w.data.array is not None and bool(shown_sliders(w)), SETTLE_TIMEOUT_S)
        sliders = shown_sliders(w)
        if not sliders or w.data.state is None or w.data.state.array.shape[0] != corpus_module.SLIDER_PLANES:
            self.problems.add("the slider volume shows no slider")
            return
        slider, planes = sliders[0], w.data.state.array.shape[0]
        expected = np.arange(planes * 48 * 40, dtype="f4").reshape(planes, 48, 40) / 7
        proc = psutil.Process()
        start = time.monotonic()
        for n in range(1, steps + 1):
            self.problems.step = f"slider step {n}"
            if slider.value() == slider.maximum():
                slider.setValue(0)
            else:
                slider.triggerAction(QAbstractSlider.SliderAction.SliderSingleStepAdd)
            if not wait_until(lambda: shows_plane(w), SETTLE_TIMEOUT_S):
                self.problems.add("a slider step was not shown")
                break
            if n % 50 == 0:
                pump(0.01)
                check_answers(w.pool, self.problems)
                rendered = w.data.image.getImageItem().rendered  # the values behind the colours drawn
                shown = None if rendered is None else rendered.tile.image
                if shown is None or not np.array_equal(shown, expected[slider.value()]):
                    self.problems.add(f"plane {slider.value()} is not what was written")
            if n >= warm_up and (n - warm_up) % block == 0:
                self.figures.slider_rss.append(proc.memory_info().rss)
        self.figures.slider_steps += steps
        self.figures.slider_seconds += time.monotonic() - start

    def close_stores(self) -> None:
        """Clear the filter and close every store, as a person would from the File menu."""
        w = self.window
        w.filter.clear()
        self.settle()
        for _ in range(w.model.rowCount()):
            w.tree.setCurrentIndex(w.proxy.index(0, 0))
            w.close_current_store()
            self.settle()
        if w.model.rowCount():
            self.problems.add(f"{w.model.rowCount()} stores still open after closing each")

    def checkpoint(self) -> None:
        """Close every store and count the Qt objects and widgets left."""
        self.close_stores()
        check_answers(self.window.pool, self.problems)
        self.figures.qt_counts.append(qt_counts(self.window))

    def close(self) -> None:
        """Close every store, count what is left under the window, close it, count threads."""
        w = self.window
        self.problems.step = "closing"
        self.checkpoint()
        f = self.figures
        f.answers_dropped = sum(c.answered - c.delivered for c in w.pool.tally.counts().values())
        self.beat.timer.stop()
        w.close()
        pump(0.1)
        w.deleteLater()
        pump(0.1)
        time.sleep(0.5)
        self.io.close()
        f.threads_left = sorted(t.name for t in threading.enumerate()
                                if t.ident not in self.threads_before and t.is_alive())
        self.watch.close()


def shows_plane(w: MainWindow) -> bool:
    """The plane the sliders ask for is drawn, at full resolution, and nothing is being read."""
    state, scene = w.data.state, w.data.scene
    return state is not None and not scene.busy and scene.detail is not None \
        and scene.detail.plane_key == state.plane_key() and w.is_settled()


def action_names() -> list[str]:
    return sorted(REGISTRY)
