"""A long-lived worker process that answers one JSON line for each JSON line it is handed.

Both harnesses that run reads which may go wrong in every way (the store fuzzer's worker, the
hostile-server reader) keep one worker process for many cases, started under limits set in its
environment, and time each case out from the parent's side: no sleeps, a deadline on the
worker's answer. Past it, the worker's stacks are taken (SIGUSR1 to faulthandler) and it is
replaced; a worker that dies on its own has its last words in its log. What an answer, a hang
or a death means is each harness's own; this is only the process and its pipes.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import IO, Any


class WorkerProcess:
    """``argv`` run with ``env`` (stderr to ``log``); its first line is its baseline report."""

    def __init__(self, log: Path, argv: list[str], env: dict[str, str], cwd: Path, start_seconds: float) -> None:
        self.log_path = log
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.start_seconds = start_seconds
        self.proc: subprocess.Popen[bytes] | None = None
        self.log: IO[bytes] | None = None
        self.baseline: dict[str, Any] = {}

    def __enter__(self) -> WorkerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log)
        line = self.read_line(self.start_seconds)
        if not line:
            raise RuntimeError(f"the worker did not start; see {self.log_path}:\n{self.log_tail(0)}")
        self.baseline = json.loads(line)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def read_line(self, timeout: float) -> bytes | None:
        """The worker's next line; None after ``timeout`` seconds without one, b"" once it died."""
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        return self.proc.stdout.readline()

    def log_tail(self, offset: int) -> str:
        """The last 20,000 characters the worker wrote to its log from ``offset`` on."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read()[-20000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def ask(self, message: dict[str, Any], timeout: float) -> tuple[bytes | None, int, float]:
        """``message`` handed over, and the answer line (None: none in time; b"": the worker
        died), the log's offset before it, and the seconds waited."""
        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        offset = self.log_path.stat().st_size
        t0 = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self.read_line(timeout)
        return line, offset, time.monotonic() - t0

    def take_stacks(self, offset: int) -> str:
        """A worker that did not answer: its stacks (written to its log), then the process."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGUSR1)
        self.read_line(0.5)  # the dump goes to the log; a moment for it (woken by any output)
        self.stop()
        return self.log_tail(offset)

    def death(self, offset: int) -> tuple[int, str, str]:
        """A worker that died: the signal that killed it (0: it exited), how it ended, its last words."""
        assert self.proc is not None
        rc = self.proc.wait()
        self.stop()
        sig = -rc if rc < 0 else 0
        what = f"killed by {signal.Signals(sig).name}" if sig else f"exited with status {rc}"
        return sig, what, self.log_tail(offset)
