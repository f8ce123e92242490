"""The parent's side of a worker: start it under limits, hand it cases, time them out.

A worker runs many cases (starting Python and importing numpy per case would cost more than
the cases). The parent enforces each case's wall-clock limit itself: on timeout it asks the
worker for its stacks (SIGUSR1, faulthandler), kills it, and starts a fresh one; a worker that
dies on its own crashed, or ran out of memory. Either way the case it held gets the blame.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

from .process import WorkerProcess

REPO = Path(__file__).resolve().parents[2]
MEMORY_WORDS = ("MemoryError", "bad_alloc", "Cannot allocate memory", "out of memory", "std::length_error")
#: worst outcome first: a case's category is its worst finding
SEVERITY = ["harness_error", "crash", "memory", "hang", "store_modified", "silent_corruption", "contract",
            "other_exception", "unclear_error", "zarr_error", "ok"]
GOOD = {"ok", "zarr_error"}


def frame_from_dump(text: str) -> str:
    """The innermost zarrview frame of a faulthandler dump: for a hang, of the thread that is busy
    (not waiting on a lock or a queue); for a crash, of the thread that crashed."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", text)
    best = ""
    for block in blocks:
        frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', block)
        if not frames:
            continue
        idle = frames[0][0].endswith(("threading.py", "queue.py", "selectors.py")) or "thread.py" in frames[0][0]
        ours = [f for f in frames if "/zarrview/" in f[0] and "/tests/fuzz/" not in f[0]]
        where = f"{os.path.relpath(ours[0][0], REPO)}:{ours[0][1]} in {ours[0][2]}" if ours else \
            f"{os.path.basename(frames[0][0])}:{frames[0][1]} in {frames[0][2]}"
        if block.startswith("Current thread") and not best or not idle:
            best = where
            if not idle:
                break
    return best or "?"


class Worker(WorkerProcess):
    """One ``python -m tests.fuzz.worker`` process and its log (its stderr)."""

    def __init__(self, log: Path, as_bytes: int, read_bytes: int, selftest: bool = False) -> None:
        env = dict(os.environ, ZARRVIEW_FUZZ_AS_BYTES=str(as_bytes), ZARRVIEW_FUZZ_READ_BYTES=str(read_bytes),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
                   ZARRVIEW_FUZZ_SELFTEST="1" if selftest else "0", PYTHONFAULTHANDLER="1")
        env.pop("ZARRVIEW_LIMITS", None)  # the library's defaults, whatever this shell raised
        super().__init__(log, [sys.executable, "-m", "tests.fuzz.worker"], env, REPO, 120.0)

    def run(self, msg: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The worker's answer for one case, or a finding for the hang or death it caused."""
        line, offset, waited = self.ask(msg, timeout)
        if line:
            result: dict[str, Any] = json.loads(line)
            if result.get("restart"):
                self.stop()
            return result
        if line is None:  # timed out: take the stacks, then the process
            dump = self.take_stacks(offset)
            return _death("hang", f"no answer after {timeout:.0f} s", frame_from_dump(dump), dump, waited)
        sig, what, dump = self.death(offset)
        memory = sig == signal.SIGKILL or any(w in dump for w in MEMORY_WORDS)
        return _death("memory" if memory else "crash", what, frame_from_dump(dump), dump, waited)


def _death(category: str, message: str, where: str, dump: str, seconds: float) -> dict[str, Any]:
    return {"findings": [{"category": category, "step": "worker", "type": category, "where": where,
                          "message": message, "traceback": dump[-6000:]}],
            "zarr_errors": 0, "seconds": seconds, "rss_peak": 0, "vm_peak": 0}


def category_of(result: dict[str, Any]) -> str:
    """A case's category: its worst finding, else whether any step failed with a ZarrError."""
    cats = {f["category"] for f in result["findings"]}
    for cat in SEVERITY:
        if cat in cats:
            return cat
    return "zarr_error" if result.get("zarr_errors") else "ok"
