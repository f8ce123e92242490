"""Process-wide tuning, applied only when the program that owns the process asks for it.

zarrlib is a library: opening a store or reading an array must not change how the whole
process allocates memory or where its threads run, since the process may be someone
else's (a notebook, a pipeline, a test runner). zarrview's own entry points (the window and
the command line) call :func:`tune_process` once at start; other programs may call it too.

What it applies: glibc keeps freed response buffers instead of returning them to the system
and faulting them in again for every remote response (measured in ``storage/allocator.py``;
``tune_process(keep_freed_memory=False)`` leaves the allocator alone). numcodecs' blosc stops starting threads of its own
when called from the main thread (``numcodecs.blosc.use_threads = False``, unless the program
chose a value): a read's calling thread is one of its decode workers, and blosc's threads
there competed with the others for the cores and woke each other per chunk (a 2-core read of
blosc chunks 2-6 % faster without them).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from .storage.allocator import keep_freed_memory as pin_allocator


@dataclass(frozen=True)
class Tuning:
    """What :func:`tune_process` put in effect."""

    keep_freed_memory: bool  # False where the C library is not glibc, or the program said no
    blosc_single_threaded: bool  # False where the program had set numcodecs.blosc.use_threads itself


_lock = threading.Lock()
_applied: Tuning | None = None


def tune_process(*, keep_freed_memory: bool = True) -> Tuning:
    """Apply zarrview's process-wide tuning once; later calls return what the first applied.
    ``keep_freed_memory=False`` leaves the C allocator's policy as it is."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = Tuning(keep_freed_memory=keep_freed_memory and pin_allocator(),
                              blosc_single_threaded=_blosc_single_threaded())
        return _applied


def _blosc_single_threaded() -> bool:
    from numcodecs import blosc

    if blosc.use_threads is not None:  # the program's own choice
        return False
    blosc.use_threads = False
    return True
