"""Fixtures every app test shares."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

import zarrview
import zarrview.scheduling.pool as worker_pool_module
from zarrview.zarrlib import reader

#: the app's own code: a read made from here, on whatever thread, is the app's
APP = Path(zarrview.__file__).resolve().parent / "app"
#: the worker pool's module: every job of the app runs below its worker loop
POOL = Path(worker_pool_module.__file__).resolve()


@dataclass(frozen=True)
class Fallback:
    """A read that decoded on zarrlib's process-wide pool instead of its job's executor."""

    thread: str
    stack: str


def made_by_the_app(stack: list[traceback.FrameSummary]) -> bool:
    """Whether a read with this call stack is the app's: it runs in a job of a worker pool (the
    pool's module is on the stack) or was called by the app's own code. The test's own oracle
    reads (zarrlib, viewing helpers, the CLI in-process, a job's work called by hand with a
    context made by hand) pass through neither."""
    for frame in stack:
        path = Path(frame.filename).resolve()
        if path == POOL or path.is_relative_to(APP):
            return True
    return False


@pytest.fixture(autouse=True)
def reads_decode_on_their_jobs_executor(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Fallback]]:
    """Every read the app makes decodes on the executor its job's context hands it (the worker
    pool's own): a read that finds no executor falls back on ``zarrlib``'s process-wide pool
    (``reader.default_executor``), which this records with its stack, and the test fails at
    teardown if the app made any such read."""
    fallbacks: list[Fallback] = []
    lock = threading.Lock()
    real = reader.default_executor

    def recording() -> ThreadPoolExecutor:
        stack = traceback.extract_stack()[:-1]
        if made_by_the_app(stack):
            with lock:
                fallbacks.append(Fallback(threading.current_thread().name, "".join(traceback.format_list(stack))))
        return real()

    monkeypatch.setattr(reader, "default_executor", recording)
    yield fallbacks
    with lock:
        seen = list(fallbacks)
    if seen:
        threads: dict[str, set[str]] = {}  # each distinct stack once, with the threads it ran on
        for f in seen:
            threads.setdefault(f.stack, set()).add(f.thread)
        pytest.fail(f"{len(seen)} read(s) of the app decoded on zarrlib's default pool, not on their job's executor "
                    "(Context.executor):\n\n" + "\n".join(f"on {', '.join(sorted(names))}:\n{stack}"
                                                            for stack, names in threads.items()), pytrace=False)
