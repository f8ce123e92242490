"""Scheduling: immutable read requests, a worker that always serves the newest one, and a
shared decoded-chunk cache. No Qt here: the app wraps the callbacks in queued signals."""

from .requests import ReadRequest, ReadResult
from .scheduler import ReadScheduler

__all__ = ["ReadRequest", "ReadResult", "ReadScheduler"]
