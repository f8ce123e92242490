"""Process-wide tuning, applied only when the program that owns the process asks for it.

zarrlib is a library: opening a store or reading an array must not change how the whole
process allocates memory or where its threads run, since the process may be someone
else's (a notebook, a pipeline, a test runner). zarrview's own entry points (the window and
the command line) call :func:`tune_process` once at start; other programs may call it too.

What it applies: glibc keeps freed response buffers instead of returning them to the system
and faulting them in again for every remote response (measured in ``storage/allocator.py``;
off with ``ZARRVIEW_NO_MALLOPT=1``). Decode workers are no longer pinned to cores: on 16
cores pinned workers were slower (see ``decode_pool.default_executor``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .storage.allocator import keep_freed_memory


@dataclass(frozen=True)
class Tuning:
    """What :func:`tune_process` put in effect."""

    keep_freed_memory: bool  # False where the C library is not glibc, or the variable turns it off


_lock = threading.Lock()
_applied: Tuning | None = None


def tune_process() -> Tuning:
    """Apply zarrview's process-wide tuning once; later calls return what the first applied."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = Tuning(keep_freed_memory=keep_freed_memory())
        return _applied
