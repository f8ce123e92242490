"""What a view cost, as the I/O dock, its CSV export and the status bar say it: one summary per
view (a job's reads, ``zarrlib.io_log``) and one row per request."""

from __future__ import annotations

from dataclasses import dataclass

from ..zarrlib.io_log import IoLog, RequestRecord
from .metadata import human_bytes

VIEW_COLUMNS = ("View", "Requests", "Retried", "Bytes", "Cache hits", "Chunks decoded", "Decode ms",
                "First chunk ms", "Last chunk ms", "Total ms", "MB/s")
REQUEST_COLUMNS = ("Key", "Range", "Bytes", "Landed ms", "Tries", "Outcome")


@dataclass(frozen=True)
class ViewCost:
    """One job's I/O and how long the job took in all."""

    log: IoLog
    seconds: float
    cancelled: bool = False

    def row(self) -> tuple[str, ...]:
        log = self.log
        rate = log.bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0
        return (log.label + (" (cancelled)" if self.cancelled else ""), str(log.request_count), str(log.retried),
                str(log.bytes),
                str(log.cache_hits), str(log.chunks_decoded), f"{log.decode_seconds * 1e3:.1f}",
                _ms(log.first_chunk), _ms(log.last_chunk), f"{self.seconds * 1e3:.1f}", f"{rate:.1f}")

    def line(self) -> str:
        """The view in one line, for the status bar."""
        log = self.log
        first = "" if log.first_chunk is None else f", first chunk after {log.first_chunk * 1e3:.0f} ms"
        hits = f", {log.cache_hits} from the cache" if log.cache_hits else ""
        hits += f", {log.retried} tried again" if log.retried else ""
        return (f"{log.label}: {log.request_count} request{'s' if log.request_count != 1 else ''}, "
                f"{human_bytes(log.bytes)}{hits}, {log.chunks_decoded} decoded in {log.decode_seconds * 1e3:.0f} ms"
                f"{first}, done in {self.seconds * 1e3:.0f} ms")


def request_row(r: RequestRecord, log: IoLog) -> tuple[str, ...]:
    """A request of ``log`` as a row; its tries are those the store needed for its object."""
    span = "whole" if r.start is None else f"last {-r.start}" if r.start < 0 else \
        f"{r.start}-{'' if r.stop is None else r.stop}"
    return (r.key, span, str(r.nbytes), f"{r.seconds * 1e3:.1f}", str(log.tries.get(r.key, 1)), r.outcome)


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e3:.1f}"
