"""The one event loop every remote request is awaited on, and the one pool of its blocking calls.

Every remote store, obstore's and fsspec's alike (fsspec's asynchronous file systems are made
on this loop, not on fsspec's own), awaits its requests on one daemon thread, started on first
use: remote reads of several stores share it, as they share the network, and no client library
starts an I/O thread of its own. The calls of a synchronous file system (``asyncio.to_thread``)
run in this loop's default executor, a bounded pool named for what it does.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

#: threads for blocking calls made from the loop (a synchronous fsspec driver's reads)
BLOCKING_THREADS = 8
THREAD_NAME = "zarrlib-io"

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def io_loop() -> asyncio.AbstractEventLoop:
    """The I/O loop, running (started here on first use)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            loop.set_default_executor(ThreadPoolExecutor(BLOCKING_THREADS, thread_name_prefix=f"{THREAD_NAME}-blocking"))
            threading.Thread(target=loop.run_forever, name=THREAD_NAME, daemon=True).start()
            _loop = loop
        return _loop
