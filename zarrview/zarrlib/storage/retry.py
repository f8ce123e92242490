"""Which remote failures are worth another try, and how long to wait before it.

Networks fail in passing (a dropped connection, a 503 from a busy server, a stalled
socket) far more often than for good. Those are retried a bounded number of times with
exponential backoff and jitter; answers that will not change (404, 403, a bad range) are
not, so a missing chunk or a private bucket is reported at once.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from dataclasses import dataclass

#: statuses a retry can cure: timeouts, throttling, server errors
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4  # tries in all, the first included
    first_delay: float = 0.1  # seconds before the second try; doubles each time
    max_delay: float = 2.0
    timeout: float = 30.0  # seconds one try may take, from request to last byte

    def delays(self) -> Iterator[float]:
        """Waits before each retry: exponential with full jitter (no synchronized retry storms)."""
        delay = self.first_delay
        for _ in range(max(0, self.attempts - 1)):
            yield random.uniform(delay / 2, delay)
            delay = min(self.max_delay, delay * 2)


def http_status(error: BaseException) -> int | None:
    """The HTTP status an fsspec driver's exception carries, where it carries one."""
    for name in ("status", "status_code", "code"):
        value = getattr(error, name, None)
        if isinstance(value, int) and 100 <= value < 600:
            return value
    return None


def is_transient(error: BaseException) -> bool:
    if isinstance(error, (FileNotFoundError, PermissionError)):
        return False
    if isinstance(error, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    status = http_status(error)
    if status is not None:
        return status in TRANSIENT_STATUS
    try:
        import aiohttp
    except ImportError:  # pragma: no cover - aiohttp is a run-time dependency
        return False
    # payload cut short, server hung up, connection refused or reset
    return isinstance(error, (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError))
